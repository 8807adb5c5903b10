/**
 * "Erase all data" leaves nothing derived from the user: a secret is planted everywhere a user
 * action can put it (chat turns with several strategies, an extraction failure, "remember …",
 * memory manager add/delete, OPFS staging files), then, after erase, EVERY table of the schema
 * (`db.tables`, so a table added later is covered), every settings key and the OPFS listing are
 * searched for it and for the conversation/message ids. Settings go too (preferences included);
 * model files stay. "Erase all memories" removes the long-term memory only. The
 * daily maintenance is scheduled again at once. The whole core runs (tests/helpers/core-harness.ts);
 * only the chat model is scripted (an instruction-following LLM cannot run here); OPFS is the
 * in-memory fake (tests/helpers/fixture-opfs.ts), as Node has none.
 */
import { describe, expect, it } from 'vitest';
import { CORE_HANDLERS } from '../../src/core/handlers';
import type { Core } from '../../src/core/index';
import { DEFAULT_SETTINGS } from '../../src/model/settings';
import { TABLE_DATA, type RecallDB } from '../../src/db/schema';
import { EXTRACTION_STATS_KEY, MAINTENANCE_JOB } from '../../src/memory/long-term/jobs';
import type { LongTermStore } from '../../src/memory/long-term/store';
import { saveModelFile } from '../../src/platform/model-files';
import { eraseUserFiles } from '../../src/platform/user-files';
import { createFakeOpfs, type FakeOpfs } from '../helpers/fixture-opfs';
import { useTestCores } from '../helpers/core-harness';
import { createScriptedEngine } from '../helpers/scripted-engine';

const SECRET = '4711';
const cores = useTestCores();
let core: Core | null = null;
let db: RecallDB | null = null;

/** Every row of every table, as text (vectors included as numbers). */
async function dump(d: RecallDB): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of d.tables) out[table.name] = JSON.stringify(await table.toArray(), (_k, v: unknown) => (v instanceof Float32Array ? [...v] : v));
  return out;
}

async function writeFile(opfs: FakeOpfs, dir: string, name: string, text: string) {
  const folder = await (await opfs.root()).getDirectoryHandle(dir, { create: true });
  const writable = await (await folder.getFileHandle(name, { create: true })).createWritable();
  await writable.write(new TextEncoder().encode(text));
  await writable.close();
}

describe('erase everything', () => {
  it('leaves no trace of the user in any table, setting, index or OPFS file, keeps the model files, and reschedules maintenance', async () => {
    const opfs = createFakeOpfs();
    // Chat replies repeat the secret; extraction replies are unusable and quote it (an extraction failure is recorded).
    const chat = createScriptedEngine({
      fallback: (request) =>
        request.responseFormat?.type === 'json_object' ? `Sure! Your locker code is ${SECRET}, noted.` : `Your locker code is ${SECRET}.`,
    });
    ({ core, db } = await cores.start({ chat: () => chat, extra: { eraseUserFiles: () => eraseUserFiles({ root: opfs.root }) } }));
    const c = core;
    await c.updateSettings({ memoryTopK: 3, locale: 'zh_CN' });
    await saveModelFile(new File([new Uint8Array([71, 71, 85, 70, 3, 0, 0, 0])], 'tiny.gguf'), undefined, { root: opfs.root });
    // A catalog GGUF wllama downloaded into its OPFS cache (weights, not the user's words).
    await writeFile(opfs, 'cache', `${'a'.repeat(40)}_tiny.gguf`, 'GGUF');
    await db.localModels.put({ fileName: 'tiny.gguf', displayName: 'tiny.gguf', sizeBytes: 8, source: 'file', addedAt: 1 });

    const ids: string[] = [];
    for (const strategy of [
      { kind: 'summary-buffer', maxTokens: 2000 },
      { kind: 'entity', k: 2 },
      { kind: 'vector', k: 2, topK: 2 },
    ] as const) {
      const conversation = await c.conversations.create({ strategy, namespace: strategy.kind === 'vector' ? 'work' : 'default' });
      const turn = await c.chat.send({ conversationId: conversation.id, text: `My locker code is ${SECRET}`, requestId: `r-${strategy.kind}` });
      ids.push(conversation.id, turn.userMessage.id, turn.assistantMessage.id);
    }
    await c.chat.send({ conversationId: ids[0]!, text: `remember that the gym locker code is ${SECRET}`, requestId: 'remember' });
    const manual = await c.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: `Bike lock ${SECRET}` });
    await c.memoryAdmin.update({ id: manual.id, text: `Bike lock code ${SECRET}` });
    await c.memoryAdmin.delete(manual.id); // history + tombstone
    await c.jobs.drain();
    // What a strategy keeps per conversation (a running summary, entity notes), as the strategies write it.
    await db.strategyState.put({
      conversationId: ids[0]!,
      strategy: 'summary-buffer',
      state: { summary: `Locker code ${SECRET}`, foldedThroughSeq: 1 },
      updatedAt: 1,
    });
    await db.entities.put({ id: 'e1', conversationId: ids[3]!, key: 'locker', name: 'Locker', summary: `code ${SECRET}`, updatedAt: 1, lastSeenSeq: 1 });
    // Staging files of an export and an import.
    await writeFile(opfs, 'exports', 'recall-export.json', `{"memories":[{"text":"locker ${SECRET}"}]}`);
    await writeFile(opfs, 'imports', 'upload.json', `{"text":"locker ${SECRET}"}`);

    // The extraction failure was recorded without the model's reply (it quoted the user's secret).
    const stats = await db.settings.get(EXTRACTION_STATS_KEY);
    expect((stats?.value as { failed: number }).failed).toBeGreaterThan(0);
    expect(JSON.stringify(stats)).not.toContain(SECRET);
    // The secret really is everywhere before the erase (so the checks below can fail).
    const planted = await dump(db);
    for (const name of ['conversations', 'messages', 'strategyState', 'entities', 'memories', 'memoryHistory', 'promptTraces'])
      expect(planted[name], name).toContain(SECRET);
    expect(planted.tombstones).not.toBe('[]');
    expect(planted.jobs).not.toBe('[]');

    await c.eraseAll();

    const after = await dump(db);
    for (const table of db.tables) {
      const kind = TABLE_DATA[table.name] ?? 'user';
      // Random UUIDs (row ids) masked: one can spell "4711" by chance, which is no leak.
      expect(after[table.name]?.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>'), table.name).not.toContain(SECRET);
      for (const id of ids) expect(after[table.name], `${table.name} keeps id ${id}`).not.toContain(id);
      if (kind === 'user') expect(await table.count(), table.name).toBe(table.name === 'jobs' ? 1 : 0);
    }
    // No setting stays (the user's choices are theirs too): the defaults of a fresh install.
    expect(await db.settings.count()).toBe(0);
    expect(await c.settings.get()).toEqual(DEFAULT_SETTINGS);
    // OPFS: only the model folders and their files remain.
    expect(opfs.list([])?.sort()).toEqual(['cache', 'models']);
    expect(opfs.list(['cache'])).toEqual([`${'a'.repeat(40)}_tiny.gguf`]);
    expect(opfs.list(['models'])).toEqual(['tiny.gguf']);
    expect(await db.localModels.count()).toBe(1);
    // In-memory indexes are empty.
    expect((c.store as unknown as LongTermStore).indexStats()).toMatchObject({ memories: 0, lexical: 0 });
    for (const mode of ['lexical', 'vector', 'hybrid'] as const) {
      expect(await c.store.search({ text: `locker code ${SECRET}`, namespace: 'default', k: 10, includeInvalid: true }, { mode })).toEqual([]);
    }
    // The one job left is the daily maintenance, scheduled again at once (not after a browser restart).
    expect((await db.jobs.toArray()).map((j) => [j.type, j.status])).toEqual([[MAINTENANCE_JOB, 'queued']]);
  });
});

describe('erase all memories', () => {
  it('removes every memory, its history, index, tombstones and queued memory jobs; conversations, messages and settings stay', async () => {
    const chat = createScriptedEngine({ fallback: () => 'Noted.' });
    ({ core, db } = await cores.start({ chat: () => chat }));
    const c = core;
    await c.updateSettings({ memoryTopK: 3 });
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    await c.chat.send({ conversationId: conversation.id, text: `My locker code is ${SECRET}`, requestId: 'r1' });
    await c.jobs.drain(); // the round becomes an episodic memory
    const kept = await c.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: `Bike lock ${SECRET}` });
    const gone = await c.memoryAdmin.add({ namespace: 'work', kind: 'fact', text: 'Desk 12' });
    await c.memoryAdmin.delete(gone.id); // a tombstone
    // A memory job still queued (as after a turn whose extraction has not run yet).
    await c.jobs.enqueue('ltm.extract', { conversationId: conversation.id }, { delayMs: 60_000 });
    const messages = await db.messages.count();
    expect(await db.memories.count()).toBeGreaterThanOrEqual(2); // the round and the bike lock
    expect(await db.tombstones.count()).toBe(1);
    expect(kept.id).toBeTruthy();

    await c.eraseMemories();

    for (const table of ['memories', 'memoryHistory', 'memoryIndex', 'tombstones']) expect(await db.table(table).count(), table).toBe(0);
    expect((await db.jobs.toArray()).map((j) => [j.type, j.status])).toEqual([[MAINTENANCE_JOB, 'queued']]);
    expect(await db.conversations.count()).toBe(1);
    expect(await db.messages.count()).toBe(messages);
    expect((await c.settings.get()).memoryTopK).toBe(3);
    expect((c.store as unknown as LongTermStore).indexStats()).toMatchObject({ memories: 0, lexical: 0 });
    expect(await c.memoryAdmin.list({ namespace: 'default' })).toEqual([]);
    expect(await c.store.search({ text: `bike lock ${SECRET}`, namespace: 'default', k: 10, includeInvalid: true }, { mode: 'hybrid' })).toEqual([]);
  });
});

describe('erase all memories of one profile (issue 14: erase acts within the active profile)', () => {
  it("removes that profile's memories, history, tombstones, feedback, suggestions and about-me profile; the other profile keeps all of its own", async () => {
    const chat = createScriptedEngine({ fallback: () => 'Noted.' });
    ({ core, db } = await cores.start({ chat: () => chat }));
    const c = core;
    const work = await c.profiles.create('Work');
    const home = await c.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'Home wifi is called Meadow' });
    const desk = await c.memoryAdmin.add({ namespace: work.id, kind: 'fact', text: `Desk locker ${SECRET}` });
    const gone = await c.memoryAdmin.add({ namespace: work.id, kind: 'fact', text: 'Badge pin 2020' });
    await c.memoryAdmin.delete(gone.id); // a tombstone of Work
    await db.feedback.add({
      id: 'f1',
      memoryId: desk.id,
      namespace: work.id,
      query: 'locker',
      terms: ['locker'],
      embedding: null,
      embeddingModel: null,
      messageId: 'x',
      conversationId: 'c',
      createdAt: 1,
    });
    await db.suggestions.add({
      id: 's1',
      namespace: work.id,
      hash: 'h',
      status: 'pending',
      kind: 'fact',
      text: `Gym ${SECRET}`,
      importance: 0.5,
      validFrom: null,
      validUntil: null,
      sourceConversationId: null,
      sourceMessageIds: [],
      messageTime: 1,
      createdAt: 1,
    });
    await db.settings.put({ key: `aboutMe.${work.id}`, value: { namespace: work.id, lines: [{ text: `Locker ${SECRET}`, pinned: true }], updatedAt: 1 } });
    await db.settings.put({ key: 'aboutMe.default', value: { namespace: 'default', lines: [{ text: 'Lives near Meadow', pinned: true }], updatedAt: 1 } });

    await CORE_HANDLERS['memory.eraseMemories'](c, { namespace: work.id }, { startedAt: 0 } as never);

    expect((await db.memories.toArray()).map((m) => m.id)).toEqual([home.id]);
    expect((await db.memoryHistory.toArray()).map((h) => h.memoryId)).toEqual([home.id]);
    expect(await db.tombstones.count()).toBe(0);
    expect(await db.feedback.count()).toBe(0);
    expect(await db.suggestions.count()).toBe(0);
    expect(await db.settings.get(`aboutMe.${work.id}`)).toBeUndefined();
    expect(await db.settings.get('aboutMe.default')).toBeDefined();
    // The profile itself stays, empty; Home stays searchable, Work finds nothing.
    expect((await c.profiles.list()).profiles.map((p) => p.id)).toContain(work.id);
    expect((await c.store.search({ text: 'wifi Meadow', namespace: 'default', k: 5 })).map((r) => r.memory.id)).toEqual([home.id]);
    expect(await c.store.search({ text: `desk locker ${SECRET}`, namespace: work.id, k: 5, includeInvalid: true }, { mode: 'hybrid' })).toEqual([]);
  });
});
