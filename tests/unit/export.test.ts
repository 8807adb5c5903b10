import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import type { MemoryRecord } from '../../src/model/records';
import { base64ToVector, exportAll, importAll as importFile, ImportError, parseExportFile, vectorToBase64, type ImportStore } from '../../src/backup';
import { importReportView } from '../../src/ui/lib/import-report';
import { flushStoreOf, openTestStore, storeOf } from '../helpers/ltm-test-store';
import { memoryRecord } from '../helpers/memory-record';

/** `importAll` over the text of a file (as the extension does over the OPFS copy of the picked file). */
const importAll = (db: RecallDB, store: ImportStore, json: string, options?: Parameters<typeof importFile>[3]) =>
  importFile(db, store, new Blob([json]), options);

const dbs: RecallDB[] = [];
const open = () => {
  const db = new RecallDB(`export-${crypto.randomUUID()}`);
  dbs.push(db);
  return db;
};
afterEach(async () => {
  await Promise.all(dbs.map(flushStoreOf));
  await Promise.all(dbs.splice(0).map((d) => d.delete()));
});

const T0 = new Date(2024, 4, 10, 14, 30).getTime();

function memory(id: string, text: string, extra: Partial<MemoryRecord> = {}): MemoryRecord {
  return memoryRecord({
    id,
    text,
    embedding: new Float32Array([0.6, -0.8, 1e-7, -0]),
    embeddingModel: 'test/model',
    createdAt: T0,
    validFrom: T0,
    sourceConversationId: 'c1',
    sourceMessageIds: ['m1', 'm2'],
    ...extra,
  });
}

async function seed(db: RecallDB) {
  await db.conversations.add({
    id: 'c1',
    title: '出差计划',
    namespace: 'default',
    strategy: { kind: 'summary-buffer', maxTokens: 2000 },
    createdAt: T0,
    updatedAt: T0,
  });
  await db.messages.bulkAdd([
    { id: 'm1', conversationId: 'c1', seq: 0, role: 'user', content: '我下周三去北京出差', createdAt: T0, status: 'complete' },
    {
      id: 'm2',
      conversationId: 'c1',
      seq: 1,
      role: 'assistant',
      content: '好的，祝你出差顺利！',
      createdAt: T0 + 1,
      status: 'complete',
      modelId: 'qwen',
      usage: { promptTokens: 12, completionTokens: 8 },
      truncated: true,
    },
    { id: 'm3', conversationId: 'c1', seq: 2, role: 'user', content: '记住：我住在杭州', createdAt: T0 + 2, status: 'complete', command: { kind: 'remember' } },
    {
      id: 'm4',
      conversationId: 'c1',
      seq: 3,
      role: 'assistant',
      content: '好的，我记住了：\n- 我住在杭州',
      createdAt: T0 + 3,
      status: 'complete',
      command: { kind: 'remember', affected: [{ id: 'b', kind: 'profile', text: '我住在杭州' }] },
    },
    {
      id: 'm5',
      conversationId: 'c1',
      seq: 4,
      role: 'assistant',
      content: '',
      createdAt: T0 + 4,
      status: 'error',
      error: 'No language model is loaded.',
      errorCode: 'not_loaded',
    },
  ]);
  await db.memories.bulkAdd([
    memory('a', '下周三（2024-05-15）去北京出差', { kind: 'event', validUntil: new Date(2024, 4, 16).getTime(), topic: '出差' }),
    memory('b', 'Lives in Hangzhou', { kind: 'profile', pinned: true, importance: 0.9 }),
    memory('c', 'Lives in Shenzhen', { kind: 'profile', current: 0, validUntil: T0, supersededBy: 'b', embedding: null, embeddingModel: null }),
  ]);
  await db.memoryHistory.bulkAdd([
    { memoryId: 'a', event: 'ADD', oldText: null, newText: '下周三（2024-05-15）去北京出差', at: T0, source: 'conversation:c1' },
    { memoryId: 'c', event: 'ADD', oldText: null, newText: 'Lives in Shenzhen', at: T0 - 10, source: 'conversation:c0' },
    { memoryId: 'c', event: 'INVALIDATE', oldText: 'Lives in Shenzhen', newText: null, at: T0, source: 'conversation:c1' },
    { memoryId: 'gone', event: 'DELETE', oldText: 'old thing', newText: null, at: T0 - 5, source: 'user' },
  ]);
}

async function snapshot(db: RecallDB) {
  return {
    memories: await db.memories.toArray(),
    history: (await db.memoryHistory.toArray()).map(({ id: _id, ...h }) => h),
    conversations: await db.conversations.toArray(),
    messages: await db.messages.toArray(),
  };
}

/** The real store over `db` (see `storeOf`), counting its index rebuilds. */
const indexed = async (db: RecallDB) => {
  const store = await storeOf(db);
  let rebuilt = 0;
  const rebuild = store.rebuildIndexes;
  store.rebuildIndexes = async () => {
    rebuilt += 1;
    await rebuild();
  };
  return { store, rebuilt: () => rebuilt };
};

describe('vector base64', () => {
  it('round-trips float32 values bit for bit (little-endian)', () => {
    const v = new Float32Array([1, -2.5, 3.4028234663852886e38, 1.401298464324817e-45, -0]);
    const back = base64ToVector(vectorToBase64(v));
    expect(Array.from(back)).toEqual(Array.from(v));
    // 1.0f little-endian is 00 00 80 3F.
    expect(vectorToBase64(new Float32Array([1]))).toBe(btoa(String.fromCharCode(0, 0, 0x80, 0x3f)));
  });

  it('rejects a byte count that is not a multiple of 4', () => {
    expect(() => base64ToVector(btoa('abc'))).toThrow(/multiple of 4/);
  });
});

describe('exportAll / importAll', () => {
  it('round-trips memories with history and conversations with messages', async () => {
    const source = open();
    await seed(source);
    const { fileName, json } = await exportAll(source, { now: () => T0 });
    expect(fileName).toBe('recall-export-2024-05-10.json');
    const target = open();
    await target.settings.put({ key: 'state.ltmMaintenance', value: { mergedThrough: T0 } });
    const idx = await indexed(target);
    const report = await importAll(target, idx.store, json, { now: () => T0 });
    // Imported memories keep old times: the next maintenance must compare everything again.
    expect(await target.settings.get('state.ltmMaintenance')).toBeUndefined();
    // 3 memories + 4 history rows + 1 conversation + 5 messages.
    expect(report).toEqual({ added: 13, updated: 0, skipped: 0, errors: [], needsEmbedding: 1, vectorsDropped: 0, forgotten: 0 });
    // Each batch wrote its memories into the store's index in its own transaction: no rebuild, every memory indexed.
    expect(idx.rebuilt()).toBe(0);
    expect(idx.store.indexStats()).toMatchObject({ memories: 3, lexical: 3 });

    const before = await snapshot(source);
    const after = await snapshot(target);
    const byId = <T extends { id: string }>(rows: T[]) => [...rows].sort((a, b) => a.id.localeCompare(b.id));
    // Vectors come back from the store's blocks (stored quantized): equal up to the quantization step.
    const withoutVectors = (rows: MemoryRecord[]) => byId(rows).map(({ embedding: _e, ...row }) => row);
    expect(withoutVectors(after.memories)).toEqual(withoutVectors(before.memories));
    for (const m of before.memories) {
      const back = after.memories.find((x) => x.id === m.id)!.embedding;
      if (!m.embedding) expect(back).toBeNull();
      else Array.from(m.embedding).forEach((x, i) => expect(back![i]).toBeCloseTo(x, 2));
    }
    expect(byId(after.conversations)).toEqual(byId(before.conversations));
    expect(byId(after.messages)).toEqual(byId(before.messages));
    const imported = after.history.filter((h) => h.event === 'IMPORT');
    expect(imported.map((h) => h.memoryId).sort()).toEqual(['a', 'b', 'c']);
    expect(after.history.filter((h) => h.event !== 'IMPORT')).toEqual(expect.arrayContaining(before.history));
    expect(after.history).toHaveLength(before.history.length + 3);
    // The vector survived (up to the store's quantization step: it is read back from the blocks).
    Array.from((await target.memories.get('a'))!.embedding!).forEach((x, i) => expect(x).toBeCloseTo([0.6, -0.8, 1e-7, -0][i]!, 2));
  });

  it('exports without vectors on request; imported memories then need embedding', async () => {
    const source = open();
    await seed(source);
    const { json } = await exportAll(source, { includeEmbeddings: false });
    expect(parseExportFile(json).memories.every((m) => m.embedding === null && m.embeddingModel === null)).toBe(true);
    const target = open();
    const report = await importAll(target, await storeOf(target), json, { now: () => T0 });
    expect(report.needsEmbedding).toBe(3);
  });

  it('importing the same file twice adds nothing the second time; a newer record wins', async () => {
    const source = open();
    await seed(source);
    const target = open();
    await importAll(target, await storeOf(target), (await exportAll(source)).json, { now: () => T0 });
    const second = await importAll(target, await storeOf(target), (await exportAll(source)).json, { now: () => T0 });
    expect(second).toEqual({ added: 0, updated: 0, skipped: 13, errors: [], needsEmbedding: 0, vectorsDropped: 0, forgotten: 0 });

    await source.memories.update('b', { text: 'Lives in Hangzhou, Xihu district', updatedAt: T0 + 1000 });
    const third = await importAll(target, await storeOf(target), (await exportAll(source)).json, { now: () => T0 + 2000 });
    expect(third.updated).toBe(1);
    expect((await target.memories.get('b'))!.text).toBe('Lives in Hangzhou, Xihu district');
    const last = (await target.memoryHistory.where('memoryId').equals('b').toArray()).at(-1);
    expect(last).toMatchObject({ event: 'IMPORT', oldText: 'Lives in Hangzhou', newText: 'Lives in Hangzhou, Xihu district', source: 'import' });
  });

  it('a re-import of an old export does not bring back what the user deleted or forgot here (tombstones), and says so', async () => {
    const source = open();
    await seed(source);
    const json = (await exportAll(source)).json;
    const { db: target, store } = await openTestStore({ embedder: null, now: T0 });
    dbs.push(target);
    await importAll(target, store, json, { now: () => T0 });
    await store.remove(['b'], 'DELETE', 'user'); // the user deletes "Lives in Hangzhou"
    await store.remove(['a'], 'FORGET', 'user'); // and forgets the trip
    // Under other ids too: the tombstone is on the (recomputed) text hash, not on the id.
    const file = JSON.parse(json) as { memories: { id: string }[] };
    file.memories = file.memories.map((m) => ({ ...m, id: `again-${m.id}` }));
    const report = await importAll(target, store, json, { now: () => T0 });
    const renamed = await importAll(target, store, JSON.stringify(file), { now: () => T0 });
    for (const r of [report, renamed]) expect(r.forgotten).toBe(2);
    expect(await target.memories.get('a')).toBeUndefined();
    expect(await target.memories.get('b')).toBeUndefined();
    expect(await target.memories.get('again-b')).toBeUndefined();
    // The past fact that was not deleted still comes in under its new id.
    expect((await target.memories.get('again-c'))?.text).toBe('Lives in Shenzhen');
    expect(importReportView(report).lines).toContainEqual({ key: 'memory.importReport.forgotten', count: 2 });
  });

  it('skips a memory that duplicates a current one (same text, by the recomputed hash)', async () => {
    const source = open();
    await seed(source);
    const target = open();
    await target.conversations.add({ id: 'c1', title: 'x', namespace: 'default', strategy: { kind: 'full-buffer' }, createdAt: T0, updatedAt: T0 + 99 });
    await target.memories.add(memory('zz', 'lives in  HANGZHOU'));
    const report = await importAll(target, await storeOf(target), (await exportAll(source)).json, { now: () => T0 });
    expect(report.errors).toEqual([]);
    expect(await target.memories.get('b')).toBeUndefined();
    // The local conversation is newer: kept.
    expect((await target.conversations.get('c1'))!.title).toBe('x');
  });

  it('refuses the whole file when a message position is already taken by another message (nothing written)', async () => {
    const source = open();
    await seed(source);
    const target = open();
    await target.conversations.add({ id: 'c1', title: 'x', namespace: 'default', strategy: { kind: 'full-buffer' }, createdAt: T0, updatedAt: T0 + 99 });
    await target.messages.add({ id: 'other', conversationId: 'c1', seq: 0, role: 'user', content: 'hi', createdAt: T0, status: 'complete' });
    const before = await snapshot(target);
    await expect(importAll(target, await storeOf(target), (await exportAll(source)).json, { now: () => T0 })).rejects.toThrow(
      'Message m1 cannot be imported: position 0 of conversation c1 already holds another message (other). Nothing was imported.',
    );
    expect(await snapshot(target)).toEqual(before);
    expect((await target.settings.toArray()).map((r) => r.key)).toEqual([]);
  });

  describe('a bad file changes nothing', () => {
    async function expectRefused(json: string, message: RegExp) {
      const target = open();
      await seed(target);
      // The store opens first (it moves the seeded rows' vectors into its blocks): `before` is what it serves.
      const idx = await indexed(target);
      const before = await snapshot(target);
      await expect(importAll(target, idx.store, json)).rejects.toThrow(ImportError);
      await expect(importAll(target, idx.store, json)).rejects.toThrow(message);
      expect(await snapshot(target)).toEqual(before);
      expect(idx.rebuilt()).toBe(0);
    }

    it('invalid JSON', async () => {
      await expectRefused('{"format": "recall-export", "version": 1, "memories": [', /not valid JSON/);
    });

    it('a truncated export', async () => {
      const source = open();
      await seed(source);
      const { json } = await exportAll(source);
      await expectRefused(json.slice(0, Math.floor(json.length / 2)), /not valid JSON/);
    });

    it('another format and another version', async () => {
      await expectRefused(JSON.stringify({ conversations: [] }), /not a Recall export file/);
      await expectRefused(JSON.stringify({ format: 'recall-export', version: 3, memories: [] }), /version 3; this version of Recall reads versions 1 and 2/);
    });

    it('one invalid record among valid ones (nothing of the file is written)', async () => {
      const source = open();
      await seed(source);
      const file = JSON.parse((await exportAll(source)).json);
      file.memories.push({ ...file.memories[0], id: 'new-one', hash: 'h-new' });
      file.conversations.push({ ...file.conversations[0], id: 'c-new' });
      file.memories[1].importance = 2;
      await expectRefused(JSON.stringify(file), /memories\.1\.importance/);
    });

    it('a damaged vector', async () => {
      const source = open();
      await seed(source);
      const file = JSON.parse((await exportAll(source)).json);
      file.memories[0].embedding = btoa('abcde');
      await expectRefused(JSON.stringify(file), /memories\.0\.embedding.*multiple of 4/);
    });

    it('a message whose conversation is missing', async () => {
      const source = open();
      await seed(source);
      const file = JSON.parse((await exportAll(source)).json);
      file.messages[0].conversationId = 'nowhere';
      await expectRefused(JSON.stringify(file), /conversation nowhere, which is not in the file/);
    });
  });

  it('a write that fails mid-import rolls back every table (one transaction)', async () => {
    const source = open();
    await seed(source);
    const { json } = await exportAll(source);
    const target = open();
    // The third memory write fails (e.g. quota exceeded): conversations and messages written
    // before it in the same transaction must disappear too.
    let writes = 0;
    target.memories.hook('creating', () => {
      writes += 1;
      if (writes === 3) throw new Error('QuotaExceededError (simulated)');
    });
    await expect(importAll(target, await storeOf(target), json)).rejects.toThrow(/QuotaExceeded/);
    expect(await snapshot(target)).toEqual({ memories: [], history: [], conversations: [], messages: [] });
  });
});
