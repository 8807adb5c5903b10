/**
 * What a backup carries (issue 13, item 3) and the progress of encrypted backups (item 2),
 * through the core as the extension runs them: a core with conversations, messages, memories
 * with history in two namespaces, entity notes, a strategy state and settings is exported; a
 * fresh core imports the file and holds the same state — but for the engine choices, which name
 * models of the first device. A version-1 file (before these sections) still imports. Real Dexie
 * (fake-indexeddb), the real fixture embedder (tests/helpers/core-harness.ts), the in-memory OPFS
 * of tests/helpers/fixture-opfs.ts (Node has none); no chat model is needed but where feedback
 * under a reply is restored (the scripted note-taking model answers there).
 */
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/index';
import type { RecallDB } from '../../src/db/schema';
import type { TransferProgress } from '../../src/model/backup';
import { DEFAULT_SETTINGS } from '../../src/model/settings';
import { REEMBED_JOB } from '../../src/memory/long-term/jobs';
import { importAll } from '../../src/backup';
import { RecallDB as Database } from '../../src/db/schema';
import { flushStoreOf, storeOf } from '../helpers/ltm-test-store';
import { BACKUPS_DIR, openModelFile } from '../../src/platform/model-files';
import { stageImportFile } from '../../src/ui/lib/import-file';
import { FIXTURE_EMBEDDER_ID, noteTakingEngine, useTestCores } from '../helpers/core-harness';
import { rejectSuggestion, suggestItems } from '../../src/memory/long-term/review';
import { createFakeOpfs, type FakeOpfs } from '../helpers/fixture-opfs';

const cores = useTestCores();

/** A core on `opfs`; with the fixture embedder unless `embedder: false`; transfer progress into `progress`. */
async function start(opfs: FakeOpfs, options: { embedder?: boolean; progress?: TransferProgress[] } = {}): Promise<Core> {
  const withEmbedder = options.embedder !== false;
  const { core } = await cores.start({
    ...(withEmbedder ? {} : { embedder: () => null, noEmbedderModel: true }),
    events: { transfer: (p) => void options.progress?.push(p) },
    extra: { fileRoot: opfs.root, scryptWorkFactor: 10 },
  });
  return core;
}

/** Exports `core` (options as `exportToFile`) and returns the file from its OPFS. */
async function exportFile(core: Core, opfs: FakeOpfs, passphrase?: string, options?: { includeEmbeddings?: boolean; namespace?: string }): Promise<File> {
  const { fileName } = await core.exportToFile(passphrase, options);
  return openModelFile(fileName, { root: opfs.root, folder: BACKUPS_DIR });
}

/** Imports `file` into `core` the way the panel does (staged into its OPFS, then by name). */
async function importInto(core: Core, opfs: FakeOpfs, file: Blob, passphrase?: string) {
  return core.importFile(await stageImportFile(file, undefined, { root: opfs.root }), passphrase);
}

/** The user's state in comparable form: rows of every restored table (history without its auto-increment ids). */
async function state(db: RecallDB) {
  const byId = <T extends { id: string }>(rows: T[]) => rows.sort((a, b) => a.id.localeCompare(b.id));
  return {
    conversations: byId(await db.conversations.toArray()),
    messages: byId(await db.messages.toArray()),
    memories: byId(await db.memories.toArray()).map(({ embedding: _e, lastAccessedAt: _l, accessCount: _a, ...m }) => m),
    history: (await db.memoryHistory.toArray())
      .filter((h) => h.event !== 'IMPORT')
      .map(({ id: _id, ...h }) => h)
      .sort((a, b) => a.at - b.at || a.memoryId.localeCompare(b.memoryId) || a.event.localeCompare(b.event)),
    entities: byId(await db.entities.toArray()),
    strategyState: await db.strategyState.toArray(),
    profiles: await db.profiles.toArray(),
  };
}

/** A core holding a bit of everything a user makes. */
async function filled(opfs: FakeOpfs, embedder = true): Promise<Core> {
  const a = await start(opfs, { embedder });
  await a.updateSettings({
    memoryTopK: 3,
    locale: 'zh_CN',
    defaultStrategy: { kind: 'entity', k: 2 },
    // Engine choices: models of this device.
    preferredEngine: 'wllama',
    wllamaSource: { type: 'opfs', fileName: 'mine.gguf' },
  });
  const home = await a.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'Lives in Hangzhou' });
  await a.memoryAdmin.update({ id: home.id, text: 'Lives in Lisbon since May' });
  // A profile the user named (schema v9): its name travels with its namespace.
  await a.db.profiles.put({ id: 'work', name: 'Work 工作', createdAt: 5 });
  await a.memoryAdmin.add({ namespace: 'work', kind: 'preference', text: '喜欢早上开会' });
  const conversation = await a.conversations.create({ strategy: { kind: 'entity', k: 2 }, namespace: 'work' });
  await a.conversations.append({
    id: 'm-1',
    conversationId: conversation.id,
    role: 'user',
    content: 'Anna joins on Monday',
    createdAt: 10,
    status: 'complete',
  });
  await a.conversations.append({ id: 'm-2', conversationId: conversation.id, role: 'assistant', content: 'Noted.', createdAt: 11, status: 'complete' });
  await a.db.entities.put({ id: 'e-1', conversationId: conversation.id, key: 'anna', name: 'Anna', summary: 'joins on Monday', updatedAt: 12, lastSeenSeq: 0 });
  await a.db.strategyState.put({
    conversationId: conversation.id,
    strategy: 'summary-buffer',
    state: { summary: 'Anna joins', foldedThroughSeq: 0 },
    updatedAt: 13,
  });
  return a;
}

describe('what a backup restores', () => {
  it('conversations, messages, memories with history, entity notes, strategy states, settings and namespaces; engine choices stay on their device', async () => {
    const source = createFakeOpfs();
    const a = await filled(source, false);
    const file = await exportFile(a, source);
    const parsed = JSON.parse(await file.text());
    expect(parsed).toMatchObject({ format: 'recall-export', version: 2, embeddingModel: DEFAULT_SETTINGS.embeddingModelId });
    expect(parsed.profiles).toEqual([{ namespace: 'default' }, { namespace: 'work', name: 'Work 工作', createdAt: 5 }]);
    expect(parsed.settings.map((s: { key: string }) => s.key).sort()).toEqual(['defaultStrategy', 'locale', 'memoryTopK']);

    const target = createFakeOpfs();
    const b = await start(target, { embedder: false });
    const report = await importInto(b, target, file);
    expect(report).toMatchObject({ errors: [], settingsRestored: 3 });
    expect(await state(b.db)).toEqual(await state(a.db));
    expect((await state(b.db)).entities).toHaveLength(1);
    expect(await b.db.profiles.toArray()).toEqual([{ id: 'work', name: 'Work 工作', createdAt: 5 }]);
    expect(await b.settings.get()).toEqual({
      ...DEFAULT_SETTINGS,
      memoryTopK: 3,
      locale: 'zh_CN',
      defaultStrategy: (await a.settings.get()).defaultStrategy,
    });
    // The memory manager lists the restored memories of each namespace.
    expect((await b.memoryAdmin.list({ namespace: 'default' })).map((m) => m.text)).toEqual(['Lives in Lisbon since May']);
    expect((await b.memoryAdmin.list({ namespace: 'work' })).map((m) => m.text)).toEqual(['喜欢早上开会']);

    // Imported again: nothing new, nothing changed.
    const again = await importInto(b, target, file);
    expect(again).toMatchObject({ added: 0, updated: 0 });
    expect(await state(b.db)).toEqual(await state(a.db));
  });

  it('a one-profile export (issue 14) holds that profile only: its memories with history, its conversations with their messages, notes and states', async () => {
    const source = createFakeOpfs();
    const a = await filled(source, false);
    const parsed = JSON.parse(await (await exportFile(a, source, undefined, { namespace: 'work' })).text());
    expect(parsed.memories.map((m: { text: string }) => m.text)).toEqual(['喜欢早上开会']);
    expect(new Set(parsed.memoryHistory.map((h: { memoryId: string }) => h.memoryId))).toEqual(new Set([parsed.memories[0].id]));
    expect(parsed.conversations.map((c: { namespace: string }) => c.namespace)).toEqual(['work']);
    expect(parsed.messages.map((m: { content: string }) => m.content)).toEqual(['Anna joins on Monday', 'Noted.']);
    expect(parsed.entities).toHaveLength(1);
    expect(parsed.strategyState).toHaveLength(1);
    expect(parsed.profiles).toEqual([{ namespace: 'work', name: 'Work 工作', createdAt: 5 }]);

    // The same home memory is in the whole export, and in a default-profile export without Work's.
    const home = JSON.parse(await (await exportFile(a, source, undefined, { namespace: 'default' })).text());
    expect(home.memories.map((m: { text: string }) => m.text)).toEqual(['Lives in Lisbon since May']);
    expect([home.conversations, home.messages, home.entities, home.strategyState]).toEqual([[], [], [], []]);
  });

  it('a file without embeddings carries no vector; the importing core embeds every memory again', async () => {
    const source = createFakeOpfs();
    const a = await filled(source);
    await a.jobs.drain();
    expect((await a.db.memories.toArray()).every((m) => m.embeddingModel === FIXTURE_EMBEDDER_ID)).toBe(true);
    const file = await exportFile(a, source, undefined, { includeEmbeddings: false });
    const memories = JSON.parse(await file.text()).memories as { embedding: string | null; embeddingModel: string | null }[];
    expect(memories.map((m) => [m.embedding, m.embeddingModel])).toEqual([
      [null, null],
      [null, null],
    ]);

    const target = createFakeOpfs();
    const b = await start(target);
    await importInto(b, target, file);
    expect((await b.db.jobs.toArray()).some((j) => j.type === REEMBED_JOB && j.status === 'queued')).toBe(true);
    await b.jobs.drain();
    expect((await b.db.memories.toArray()).map((m) => m.embeddingModel)).toEqual([FIXTURE_EMBEDDER_ID, FIXTURE_EMBEDDER_ID]);
    expect(b.store.missingVectors(FIXTURE_EMBEDDER_ID)).toBe(0);
  });

  it('a version-1 file (written before entity notes, strategy states and settings were exported) still imports', async () => {
    const v1 = JSON.stringify({
      format: 'recall-export',
      version: 1,
      exportedAt: 1,
      memories: [],
      memoryHistory: [],
      conversations: [{ id: 'c-1', title: 'Old', namespace: 'default', strategy: { kind: 'full-buffer' }, createdAt: 1, updatedAt: 2 }],
      messages: [{ id: 'c-1#0', conversationId: 'c-1', seq: 0, role: 'user', content: 'hello from v1', createdAt: 1, status: 'complete' }],
    });
    const target = createFakeOpfs();
    const b = await start(target, { embedder: false });
    const report = await importInto(b, target, new Blob([v1]));
    expect(report).toMatchObject({ added: 2, updated: 0, skipped: 0, errors: [] });
    expect(report.settingsRestored).toBeUndefined();
    expect((await b.db.messages.get('c-1#0'))?.content).toBe('hello from v1');
    expect(await b.settings.get()).toEqual(DEFAULT_SETTINGS);
  });

  it('a setting with a value that is not valid refuses the whole file, nothing written', async () => {
    const source = createFakeOpfs();
    const a = await filled(source, false);
    const text = (await (await exportFile(a, source)).text()).replace('{"key":"memoryTopK","value":3}', '{"key":"memoryTopK","value":-7}');
    expect(text).toContain('"value":-7');
    const target = createFakeOpfs();
    const b = await start(target, { embedder: false });
    await expect(importInto(b, target, new Blob([text]))).rejects.toThrow(/settings\.\d+ \(memoryTopK\) is not a valid value/);
    expect(await b.db.conversations.count()).toBe(0);
    expect(await b.db.memories.count()).toBe(0);
    expect(await b.db.settings.get('memoryTopK')).toBeUndefined();
  });
});

describe('feedback in a backup: "not relevant here" and rejected suggestions', () => {
  /**
   * A core (fixture embedder, the scripted note-taking chat model: an instruction-following LLM
   * cannot run here) where the user marked a memory "not relevant here" under a reply, in each of
   * two profiles, and rejected a suggestion in each.
   */
  async function withFeedback(opfs: FakeOpfs) {
    const { core } = await cores.start({ chat: () => noteTakingEngine('nothing', 'nothing'), extra: { fileRoot: opfs.root, scryptWorkFactor: 10 } });
    const marked: Record<string, string> = {};
    for (const namespace of ['default', 'work']) {
      for (const text of ['My favourite colour is green', 'The colour of my car is red', 'My sister lives in Porto'])
        await core.memoryAdmin.add({ namespace, kind: 'fact', text });
      const conversation = await core.conversations.create({ strategy: { kind: 'full-buffer' }, namespace });
      const turn = await core.chat.send({ conversationId: conversation.id, text: 'What is my favourite colour?', requestId: `ask-${namespace}` });
      const green = (await core.db.memories.toArray()).find((m) => m.namespace === namespace && m.text === 'My favourite colour is green')!;
      await core.feedback.mark({ messageId: turn.assistantMessage.id, memoryId: green.id });
      marked[namespace] = green.id;
      const [suggestion] = await suggestItems(
        core.db,
        [{ kind: 'fact', text: `I collect stamps (${namespace})`, importance: 0.5, validFrom: null, validUntil: null }],
        {
          namespace,
          conversationId: conversation.id,
          sourceMessageIds: [],
          messageTime: 1,
        },
      );
      await rejectSuggestion(core.db, suggestion!.id, 7);
    }
    await core.jobs.drain();
    return { core, marked };
  }
  /** The rows of both tables in comparable form (rejected suggestions only). */
  const choicesOf = async (db: RecallDB) => ({
    feedback: (await db.feedback.toArray()).sort((a, b) => a.id.localeCompare(b.id)),
    rejected: (await db.suggestions.toArray()).filter((s) => s.status === 'rejected').sort((a, b) => a.id.localeCompare(b.id)),
  });
  /** The texts the prompt of a new "favourite colour" question used in `namespace`, best first. */
  const colourAnswer = async (core: Core, namespace: string) => {
    const conversation = await core.conversations.create({ strategy: { kind: 'full-buffer' }, namespace });
    const turn = await core.chat.send({ conversationId: conversation.id, text: 'What is my favourite colour?', requestId: crypto.randomUUID() });
    return (await core.db.promptTraces.get(turn.assistantMessage.id))!.trace.memories.map((m) => m.text);
  };

  it('export → erase everything → import keeps both: the memory still ranks last for that question, the rejected text is not suggested again; a second import adds nothing', async () => {
    const opfs = createFakeOpfs();
    const { core } = await withFeedback(opfs);
    const before = await choicesOf(core.db);
    expect([before.feedback.length, before.rejected.length]).toEqual([2, 2]);
    expect((await colourAnswer(core, 'default'))[0]).not.toBe('My favourite colour is green');
    const file = await exportFile(core, opfs);
    const parsed = JSON.parse(await file.text());
    expect(parsed.feedback).toHaveLength(2);
    expect(parsed.rejectedSuggestions.map((r: { namespace: string }) => r.namespace).sort()).toEqual(['default', 'work']);

    await core.eraseAll();
    expect(await choicesOf(core.db)).toEqual({ feedback: [], rejected: [] });
    expect((await colourAnswer(core, 'default')).length).toBe(0); // nothing left to answer from
    const report = await importInto(core, opfs, file);
    expect(report.errors).toEqual([]);
    await core.jobs.drain();
    const after = await choicesOf(core.db);
    expect(after.feedback).toEqual(before.feedback);
    expect(after.rejected.map(({ id, namespace, hash, kind, text, status, createdAt }) => ({ id, namespace, hash, kind, text, status, createdAt }))).toEqual(
      before.rejected.map(({ id, namespace, hash, kind, text, status, createdAt }) => ({ id, namespace, hash, kind, text, status, createdAt })),
    );
    // Used again: ranking demotes the memory for the same question, and the rejected text is not suggested.
    const ranked = await colourAnswer(core, 'default');
    expect(ranked).toContain('My favourite colour is green');
    expect(ranked[0]).not.toBe('My favourite colour is green');
    const again = await suggestItems(core.db, [{ kind: 'fact', text: 'I collect stamps (default)', importance: 0.5, validFrom: null, validUntil: null }], {
      namespace: 'default',
      conversationId: null,
      sourceMessageIds: [],
      messageTime: 1,
    });
    expect(again).toEqual([]);

    const second = await importInto(core, opfs, file);
    expect(second).toMatchObject({ added: 0, updated: 0 });
    expect((await choicesOf(core.db)).feedback).toHaveLength(2);
    expect((await choicesOf(core.db)).rejected).toHaveLength(2);
  });

  it('a one-profile export carries that profile’s rows only; a file without the two sections still imports', async () => {
    const opfs = createFakeOpfs();
    const { core, marked } = await withFeedback(opfs);
    const work = JSON.parse(await (await exportFile(core, opfs, undefined, { namespace: 'work' })).text());
    expect(work.feedback.map((f: { memoryId: string }) => f.memoryId)).toEqual([marked.work]);
    expect(work.rejectedSuggestions.map((r: { namespace: string }) => r.namespace)).toEqual(['work']);

    const whole = JSON.parse(await (await exportFile(core, opfs)).text());
    delete whole.feedback;
    delete whole.rejectedSuggestions;
    const target = createFakeOpfs();
    const b = await start(target, { embedder: false });
    const report = await importInto(b, target, new Blob([JSON.stringify(whole)]));
    expect(report.errors).toEqual([]);
    expect(await b.db.memories.count()).toBe(await core.db.memories.count());
    expect(await choicesOf(b.db)).toEqual({ feedback: [], rejected: [] });
  });
});

describe('an import that fails undoes the entity notes and strategy states it wrote', () => {
  it('added notes are removed and replaced states come back, settings untouched', async () => {
    const db = new Database(`restore-undo-${Math.random()}`);
    try {
      await db.conversations.put({ id: 'c', title: 't', namespace: 'default', strategy: { kind: 'entity', k: 2 }, createdAt: 1, updatedAt: 1 });
      await db.strategyState.put({ conversationId: 'c', strategy: 'summary-buffer', state: { summary: 'old' }, updatedAt: 1 });
      const before = { entities: await db.entities.toArray(), strategyState: await db.strategyState.toArray(), settings: await db.settings.toArray() };
      const file = JSON.stringify({
        format: 'recall-export',
        version: 2,
        exportedAt: 5,
        embeddingModel: null,
        memories: [],
        memoryHistory: [],
        conversations: [],
        messages: [],
        entities: [{ id: 'e', conversationId: 'c', key: 'anna', name: 'Anna', summary: 'new', updatedAt: 5, lastSeenSeq: 0 }],
        strategyState: [{ conversationId: 'c', strategy: 'summary-buffer', state: { summary: 'new' }, updatedAt: 5 }],
        settings: [{ key: 'memoryTopK', value: 4 }],
        profiles: [{ namespace: 'default' }],
      });
      const store = await storeOf(db);
      // Batches of one record: the entity and the state are committed (each with its undo row) before the failure.
      const fail = (p: TransferProgress) => {
        if (p.phase === 'write' && p.done === 2) throw new Error('disk unplugged');
      };
      await expect(importAll(db, store, new Blob([file]), { batchSize: 1, onProgress: fail })).rejects.toThrow('disk unplugged');
      expect({ entities: await db.entities.toArray(), strategyState: await db.strategyState.toArray(), settings: await db.settings.toArray() }).toEqual(before);

      // The same file imported whole: the note is added, the newer state replaces the old, the setting is written.
      const report = await importAll(db, store, new Blob([file]), { batchSize: 1 });
      expect(report).toMatchObject({ added: 1, updated: 1, skipped: 0, settingsRestored: 1 });
      expect((await db.strategyState.toArray()).map((r) => r.state)).toEqual([{ summary: 'new' }]);
      expect((await db.settings.get('memoryTopK'))?.value).toBe(4);
      await flushStoreOf(db);
    } finally {
      db.close();
      await Database.delete(db.name);
    }
  });
});

describe('progress of encrypted backups', () => {
  it('an encrypted export reports its records as `encrypt`; a decrypting import reports the encrypted bytes read of the file size', async () => {
    const source = createFakeOpfs();
    const exportProgress: TransferProgress[] = [];
    const a = await start(source, { embedder: false, progress: exportProgress });
    for (let i = 0; i < 40; i += 1) await a.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: `Fact ${i}: ${'x'.repeat(2000)}` });
    const encrypted = await exportFile(a, source, 'pass phrase');
    // 40 memories + 40 creation history rows, all counted under `encrypt`, ending at the total.
    expect(new Set(exportProgress.map((p) => p.phase))).toEqual(new Set(['encrypt']));
    expect(exportProgress.at(-1)).toEqual({ phase: 'encrypt', done: 80, total: 80 });

    const target = createFakeOpfs();
    const importProgress: TransferProgress[] = [];
    const b = await start(target, { embedder: false, progress: importProgress });
    await importInto(b, target, encrypted, 'pass phrase');
    const decrypt = importProgress.filter((p) => p.phase === 'decrypt');
    expect(decrypt.length).toBeGreaterThan(0); // Node's Blob streams in one chunk; Chromium's in pieces of 64 kB
    expect(decrypt.every((p) => p.total === encrypted.size)).toBe(true);
    expect(decrypt.map((p) => p.done)).toEqual([...decrypt.map((p) => p.done)].sort((x, y) => x - y));
    expect(decrypt.at(-1)!.done).toBe(encrypted.size);
    // Decryption comes first, then the two import passes.
    expect(importProgress.findIndex((p) => p.phase === 'check')).toBeGreaterThan(importProgress.findLastIndex((p) => p.phase === 'decrypt'));
    expect(await b.db.memories.count()).toBe(40);
  });
});
