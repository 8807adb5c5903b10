/**
 * "Erase everything" leaves nothing derived from the user: a secret is planted everywhere a user
 * action can put it (chat turns with several strategies, an extraction failure, "remember …",
 * memory manager add/delete, OPFS staging files), then, after erase, EVERY table of the schema
 * (`db.tables`, so a table added later is covered), every settings key and the OPFS listing are
 * searched for it and for the conversation/message ids. Preferences and model files stay. The
 * daily maintenance is scheduled again at once. The whole core runs (tests/helpers/core-harness.ts);
 * only the chat model is scripted (an instruction-following LLM cannot run here); OPFS is the
 * in-memory fake (tests/helpers/fixture-opfs.ts), as Node has none.
 */
import { describe, expect, it } from 'vitest';
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
  it('leaves no trace of the user in any table, setting, index or OPFS file, keeps preferences and models, and reschedules maintenance', async () => {
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
      expect(after[table.name], table.name).not.toContain(SECRET);
      for (const id of ids) expect(after[table.name], `${table.name} keeps id ${id}`).not.toContain(id);
      if (kind === 'user') expect(await table.count(), table.name).toBe(table.name === 'jobs' ? 1 : 0);
    }
    // Only preferences stay in settings: no stats.*, state.* or unknown key.
    const keys = (await db.settings.toArray()).map((r) => r.key).sort();
    expect(keys.every((k) => Object.hasOwn(DEFAULT_SETTINGS, k))).toBe(true);
    expect(await c.settings.get()).toMatchObject({ memoryTopK: 3, locale: 'zh_CN' });
    // OPFS: only the model folder and its file remain.
    expect(opfs.list([])).toEqual(['models']);
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
