/**
 * The persisted index layout (schema v3, `retrieval/blocks.ts`): the v1 → v3 migration, opening
 * without a rebuild, crash / disagreement detection and repair, and recall@10 = 1.0 of the block
 * scan against a brute-force scan. Real Dexie on fake-indexeddb; embeddings from the hashed n-gram
 * TEST embedder (no semantics) or seeded random unit vectors. Nothing is faked.
 */
import 'fake-indexeddb/auto';
import Dexie from 'dexie';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import type { MemoryRecord } from '../../src/model/records';
import { createMemoryStore, type LongTermStore } from '../../src/memory/long-term/store';
import { createMemoryAdmin } from '../../src/core/memory-admin';
import { BLOCK_SLOTS, BlockIndex, exactTopK, type IndexHeaderRecord, type LexicalChunkRecord } from '../../src/memory/long-term/retrieval/blocks';
import { lexicalChunkKey } from '../../src/memory/long-term/retrieval/lexical-snapshot';
import { memoryHash } from '../../src/memory/long-term/text';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { mulberry32, randomUnitVectors as randomUnit } from '../../bench/data/prng';
import { quantizeSlot } from '../../src/memory/long-term/retrieval/blocks/f16';
import { V1_STORES } from '../helpers/published-schemas';
import { memoryRecord } from '../helpers/memory-record';

/** A unit vector as the index stores it since v4 (f16 components, re-normalized: `quantizeSlot`). */
function asStored(v: Float32Array): Float32Array {
  const out = new Float32Array(v.length);
  quantizeSlot(v, 0, v.length, new Uint16Array(v.length), new Float32Array(1), out);
  return out;
}

const T0 = Date.UTC(2025, 4, 1, 12);
const dbs: Dexie[] = [];
afterEach(async () => {
  for (const d of dbs.splice(0)) await d.delete();
});

function newDb(name = `ltm-layout-${crypto.randomUUID()}`): RecallDB {
  const db = new RecallDB(name);
  dbs.push(db);
  return db;
}

/** A connection to database `name` that records every read of `memories` rows (DBCore middleware) and the rows returned. */
function countingDb(name: string): { db: RecallDB; reads: { calls: string[]; rows: number; withEmbedding: number } } {
  const reads = { calls: [] as string[], rows: 0, withEmbedding: 0 };
  const seen = (values: unknown[]) => {
    for (const v of values) {
      if (!v || typeof v !== 'object') continue;
      reads.rows += 1;
      if ('embedding' in v) reads.withEmbedding += 1;
    }
  };
  const db = newDb(name);
  db.use({
    stack: 'dbcore',
    name: 'count-memory-reads',
    create: (down) => ({
      ...down,
      table(tableName) {
        const table = down.table(tableName);
        if (tableName !== 'memories') return table;
        return {
          ...table,
          get: async (req) => {
            reads.calls.push('get');
            const v = await table.get(req);
            seen([v]);
            return v;
          },
          getMany: async (req) => {
            reads.calls.push('getMany');
            const v = await table.getMany(req);
            seen(v);
            return v;
          },
          query: async (req) => {
            reads.calls.push('query');
            const res = await table.query(req);
            if (req.values) seen(res.result);
            return res;
          },
          openCursor: (req) => (reads.calls.push('openCursor'), table.openCursor(req)),
          count: (req) => (reads.calls.push('count'), table.count(req)),
        };
      },
    }),
  });
  return { db, reads };
}

const embedder = createHashedEmbedder();
const openStore = (db: RecallDB) => createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: nodeVoyWasm });
const ids = (results: { memory: { id: string } }[]) => results.map((r) => r.memory.id);

const TEXTS = [
  'I live in Hangzhou near the West Lake',
  'My sister Ana works as a nurse in Lisbon',
  'I am allergic to peanuts',
  '我每天早上跑步五公里',
  'The dentist appointment is on Friday',
  '我喜欢喝绿茶',
  'My cat is called Mochi',
  'I prefer window seats on long flights',
];

async function fill(store: LongTermStore): Promise<string[]> {
  const out: string[] = [];
  for (const [i, text] of TEXTS.entries())
    out.push((await store.add({ namespace: i % 3 === 2 ? 'work' : 'default', kind: 'fact', text, createdAt: T0 - i * 1000 }, 'test')).memory.id);
  return out;
}

const QUERIES: [string, string][] = [
  ['where do I live', 'default'],
  ['peanut allergy', 'work'],
  ['跑步', 'default'],
  ['cat name', 'default'],
  ['flight seat', 'default'],
];

async function answers(store: LongTermStore) {
  const out: unknown[] = [];
  for (const [text, namespace] of QUERIES) {
    for (const mode of ['hybrid', 'lexical', 'vector'] as const) {
      out.push((await store.search({ text, namespace, includeInvalid: true }, { mode })).map((r) => [r.memory.id, r.score.toFixed(9), r.ranks]));
    }
  }
  return out;
}

describe('persisted index layout', () => {
  it('migrates a v1 database: embeddings move from the rows into vector blocks, searches are unchanged', async () => {
    const name = `ltm-layout-v1-${crypto.randomUUID()}`;
    // The v1 schema exactly as published (src/db/schema.ts, version 1).
    const v1 = new Dexie(name);
    v1.version(1).stores(V1_STORES);
    const vectors = await embedder.embed(TEXTS);
    const rows = TEXTS.map((text, i) =>
      memoryRecord({
        id: `m${i}`,
        namespace: i % 3 === 2 ? 'work' : 'default',
        text,
        embedding: i === 5 ? null : vectors[i]!,
        embeddingModel: i === 5 ? null : embedder.modelId,
        createdAt: T0 - i * 1000,
        validUntil: i === 4 ? T0 - 1 : null,
        current: i === 4 ? 0 : 1,
      }),
    );
    await v1.table('memories').bulkAdd(rows);
    v1.close();

    const db = newDb(name);
    await db.open();
    expect(db.verno).toBeGreaterThanOrEqual(4); // and every later version ran too
    const raw = (await db.memories.toCollection().raw().toArray()) as object[];
    expect(raw).toHaveLength(TEXTS.length);
    expect(raw.some((r) => 'embedding' in r)).toBe(false);
    const header = (await db.memoryIndex.get('header')) as IndexHeaderRecord;
    expect(header).toMatchObject({ count: TEXTS.length, dirty: [] });

    const store = await openStore(db);
    expect(store.indexStats().open.via).toBe('blocks'); // no rebuild from the rows
    await store.whenIndexed(); // the lexical snapshot loads in the background
    expect(store.indexStats()).toMatchObject({ memories: 8, lexical: 8, vector: { size: 7, modelId: embedder.modelId, dimension: embedder.dimension } });
    // The vector of every row is back when read through Dexie, as stored since v4: its f16 quantization (`quantizeSlot`).
    for (const [i, r] of rows.entries()) {
      const read = await db.memories.get(r.id);
      expect(read!.embedding === null ? null : Array.from(read!.embedding)).toEqual(i === 5 ? null : Array.from(asStored(vectors[i]!)));
    }
    // Same answers as a store built the old way (rows with embeddings written by a plain writer, then rebuilt).
    const reference = newDb();
    await reference.memories.bulkAdd(rows);
    const rebuilt = await openStore(reference);
    expect(rebuilt.indexStats().open.via).toBe('rebuilt');
    expect(await answers(store)).toEqual(await answers(rebuilt));
    expect(ids(await store.search({ text: 'where do I live', namespace: 'default' }, { mode: 'vector' }))[0]).toBe('m0');
  });

  it('opens from the blocks and the lexical snapshot without reading the rows, with the same answers', async () => {
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    await store.invalidate(added[4]!, T0 - 1, 'test');
    await store.remove([added[6]!], 'DELETE', 'test');
    await store.flushSnapshot();
    const before = await answers(store);
    // A second connection that counts every read of `memories` rows (Dexie middleware, below the API).
    const { db: counted, reads } = countingDb(db.name);
    dbs.pop(); // same database as `db`: deleted once
    const reopened = await openStore(counted);
    // No row, text or vector read, and no row count (IndexedDB's count walks the store in Chromium).
    expect(reads.calls).toEqual([]);
    const db2 = counted;
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', replayed: 0 });
    await reopened.whenIndexed(); // the lexical snapshot loads in the background, then the rows are checked
    expect(reads.calls).toEqual(['count', 'count']); // the row check: row count and `pending` rows; no row read
    expect(reopened.indexStats()).toMatchObject({ memories: 7, lexical: 7, vector: { size: 7 } });
    expect(await answers(reopened)).toEqual(before);
    expect((await db2.memories.toCollection().raw().toArray()).some((r) => 'embedding' in (r as object))).toBe(false);
  });

  it('a crash before the lexical snapshot is written: the next open replays the changed memories', async () => {
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    await store.flushSnapshot();
    // Changes after the snapshot; the context dies before the idle snapshot (no flush).
    await store.update(added[0]!, { text: 'I moved to Shenzhen last spring' }, 'test');
    await store.remove([added[3]!], 'FORGET', 'test');
    const late = await store.add({ namespace: 'default', kind: 'fact', text: 'My bike is green' }, 'test');
    const before = await answers(store);
    const reopened = await openStore(db);
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', replayed: 3 });
    await reopened.whenIndexed(); // the snapshot is loaded and the 3 changes replayed in the background
    expect(reopened.indexStats().lexical).toBe(TEXTS.length);
    expect(ids(await reopened.search({ text: 'Shenzhen', namespace: 'default' }, { mode: 'lexical' }))).toEqual([added[0]]);
    expect(ids(await reopened.search({ text: 'Hangzhou', namespace: 'default' }, { mode: 'lexical' }))).toEqual([]);
    expect(ids(await reopened.search({ text: '跑步', namespace: 'default' }, { mode: 'lexical' }))).toEqual([]);
    expect(ids(await reopened.search({ text: 'green bike', namespace: 'default' }, { mode: 'lexical' }))).toEqual([late.memory.id]);
    expect(await answers(reopened)).toEqual(before);
  });

  it('a write that fails inside its transaction changes neither the rows, the persisted index nor the live index', async () => {
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    const before = await answers(store);
    const persisted = await db.memoryIndex.toArray();
    // The history write fails after the row and the blocks were written in the same transaction.
    const spy = vi.spyOn(db.memoryHistory, 'add').mockImplementation(() => Promise.reject(new Error('disk full')) as never);
    const bulkSpy = vi.spyOn(db.memoryHistory, 'bulkAdd').mockImplementation(() => Promise.reject(new Error('disk full')) as never); // add() writes through addMany
    await expect(store.add({ namespace: 'default', kind: 'fact', text: 'I play the violin' }, 'test')).rejects.toThrow('disk full');
    await expect(store.update(added[1]!, { text: 'My sister Ana moved to Porto' }, 'test')).rejects.toThrow('disk full');
    spy.mockRestore();
    bulkSpy.mockRestore();
    expect(await db.memories.count()).toBe(TEXTS.length);
    expect(await db.memoryIndex.toArray()).toEqual(persisted);
    expect(await answers(store)).toEqual(before);
    const reopened = await openStore(db);
    expect(reopened.indexStats().open.via).toBe('blocks');
    expect(await answers(reopened)).toEqual(before);
  });

  it('rows changed behind the store are detected on open (row count) and the index is repaired', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    // Simulates a crash between two separate writes of an older layout, or any writer bypassing the store.
    await db.memories.delete(added[0]!);
    const [vector] = await embedder.embed(['I collect vinyl records']);
    await db.memories.add({
      ...(await db.memories.get(added[1]!))!,
      id: 'foreign',
      text: 'I collect vinyl records',
      hash: memoryHash('I collect vinyl records'),
      embedding: vector!,
    });
    await db.memories.delete(added[2]!);
    const reopened = await openStore(db);
    // Searchable from the blocks at once; the row check runs in the background (IndexedDB's count walks the store).
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', repairedAfterOpen: false });
    await reopened.whenIndexed();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('disagrees with the 7 stored memories'));
    warn.mockRestore();
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', repairedAfterOpen: true });
    expect(reopened.indexStats()).toMatchObject({ memories: 7, lexical: 7, vector: { size: 7 } });
    for (const mode of ['lexical', 'vector', 'hybrid'] as const) {
      expect(ids(await reopened.search({ text: 'Hangzhou West Lake', namespace: 'default' }, { mode }))).not.toContain(added[0]);
      expect(ids(await reopened.search({ text: 'vinyl records', namespace: 'default' }, { mode }))[0]).toBe('foreign');
    }
    // The foreign row's vector moved into the blocks in the repair transaction.
    const raw = (await db.memories.where('id').equals('foreign').raw().first()) as object;
    expect('embedding' in raw).toBe(false);
    expect(Array.from((await db.memories.get('foreign'))!.embedding!)).toEqual(Array.from(asStored(vector!)));
    // Repaired once: the next open is from the blocks again.
    const again = await openStore(db);
    await again.whenIndexed();
    expect(again.indexStats().open).toMatchObject({ via: 'blocks', repairedAfterOpen: false }); // repaired once
  });

  it('rows rewritten behind the store with the same row count (an import killed before its rebuildIndexes) are found on open', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    await store.flushSnapshot();
    // What an import batch writes: whole records, vector inline. The context dies before `rebuildIndexes`.
    const old = (await db.memories.get(added[0]!))!;
    const [vector] = await embedder.embed(['I live in Chengdu near the panda base']);
    await db.memories.put({
      ...old,
      text: 'I live in Chengdu near the panda base',
      hash: memoryHash('I live in Chengdu near the panda base'),
      updatedAt: T0 + 1,
      embedding: vector!,
    });
    expect(((await db.memories.where('id').equals(added[0]!).raw().first()) as MemoryRecord).pending).toBe(1);
    expect(await db.memories.get(added[0]!)).not.toHaveProperty('pending'); // internal: reads never show it
    const reopened = await openStore(db);
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', repairedAfterOpen: false });
    await reopened.whenIndexed(); // the row check (and repair) runs after the lexical snapshot is loaded
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('(1 written behind it)'));
    warn.mockRestore();
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', repairedAfterOpen: true });
    for (const mode of ['lexical', 'vector'] as const) {
      expect(ids(await reopened.search({ text: 'Chengdu panda', namespace: 'default' }, { mode }))[0]).toBe(added[0]);
    }
    expect(ids(await reopened.search({ text: 'Hangzhou West Lake', namespace: 'default' }, { mode: 'lexical' }))).toEqual([]);
    const raw = (await db.memories.where('id').equals(added[0]!).raw().first()) as MemoryRecord;
    expect(raw).not.toHaveProperty('pending');
    expect(raw).not.toHaveProperty('embedding');
    const again = await openStore(db);
    await again.whenIndexed();
    expect(again.indexStats().open).toMatchObject({ via: 'blocks', repairedAfterOpen: false }); // repaired once
  });

  it('an unreadable lexical snapshot is rebuilt from the rows, answers unchanged', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const db = newDb();
    const store = await openStore(db);
    await fill(store);
    await store.flushSnapshot();
    const before = await answers(store);
    const chunk = (await db.memoryIndex.get(lexicalChunkKey(0))) as LexicalChunkRecord;
    await db.memoryIndex.put({ ...chunk, json: '{"not": "minisearch"' });
    const reopened = await openStore(db);
    await reopened.whenIndexed(); // the snapshot is read in the background
    expect(warn).toHaveBeenCalledWith('[ltm] the lexical snapshot is unreadable; rebuilding it from the rows:', expect.any(Error));
    warn.mockRestore();
    expect(await answers(reopened)).toEqual(before);
  });
});

describe('cold start: the lexical snapshot loads in the background', () => {
  it('a search during the load is answered by the ready paths (catalog texts, exact vector scan) and says so; once loaded, every answer is as before the restart', async () => {
    const db = newDb();
    const first = await openStore(db);
    const added = await fill(first);
    await first.flushSnapshot();
    const before = await answers(first);
    const reopened = await openStore(db);
    // Searchable before the lexical index is loaded.
    expect(reopened.indexStats()).toMatchObject({ memories: TEXTS.length, lexical: 0 });
    const lexical = reopened.search({ text: 'Mochi', namespace: 'default' }, { mode: 'lexical' });
    const hybrid = reopened.search({ text: 'my cat Mochi', namespace: 'default' });
    const vector = reopened.search({ text: 'where do I live', namespace: 'default', includeInvalid: true }, { mode: 'vector' });
    // A write meanwhile waits for the load and is not lost.
    const late = reopened.add({ namespace: 'other', kind: 'fact', text: 'My kite is orange' }, 'test');
    expect((await lexical).map((r) => [r.memory.id, r.lexicalFrom])).toEqual([[added[6], 'catalog']]);
    expect((await hybrid).map((r) => [r.memory.id, r.lexicalFrom])[0]).toEqual([added[6], 'catalog']);
    // The vector path does not depend on the lexical index: the same answer as before, unflagged.
    expect((await vector).map((r) => [r.memory.id, r.score.toFixed(9), r.ranks])).toEqual(before[2]);
    expect((await vector).every((r) => r.lexicalFrom === undefined)).toBe(true);
    await reopened.whenIndexed();
    expect(reopened.indexStats()).toMatchObject({ memories: TEXTS.length + 1, lexical: TEXTS.length + 1 });
    expect(await answers(reopened)).toEqual(before);
    const loaded = await reopened.search({ text: 'my cat Mochi', namespace: 'default' });
    expect(loaded[0]?.memory.id).toBe(added[6]);
    expect(loaded.every((r) => r.lexicalFrom === undefined)).toBe(true);
    expect(ids(await reopened.search({ text: 'orange kite', namespace: 'other' }, { mode: 'lexical' }))).toEqual([(await late).memory.id]);
  });
});

describe('rebuild', () => {
  it('does not block searches for its duration: a search started during a rebuild is answered before the rebuild ends, and the rebuilt index answers the same', async () => {
    const db = newDb();
    const store = await openStore(db);
    const inputs = Array.from({ length: 1200 }, (_, i) => ({
      namespace: 'default',
      kind: 'fact' as const,
      text: `Note ${i}: the ${['red', 'green', 'blue'][i % 3]} kite number ${i} flew over hill ${i % 17}`,
      createdAt: T0 - i * 1000,
    }));
    await store.addMany(inputs, 'test');
    const query = { text: 'green kite hill 5', namespace: 'default', k: 5 };
    const before = (await store.search(query)).map((r) => r.memory.id);
    const order: string[] = [];
    const rebuilding = store.rebuildIndexes().then(() => order.push('rebuild'));
    await new Promise((resolve) => setTimeout(resolve, 0)); // the rebuild has started (its read is under way)
    const searched = store.search(query).then((hits) => (order.push('search'), hits.map((r) => r.memory.id)));
    expect(await searched).toEqual(before);
    await rebuilding;
    expect(order).toEqual(['search', 'rebuild']);
    expect((await store.search(query)).map((r) => r.memory.id)).toEqual(before);
    expect((await openStore(db)).indexStats().open.via).toBe('blocks');
  });

  it('a row written behind the store while it rebuilds is not lost: the rebuild starts again from a fresh read', async () => {
    const db = newDb();
    const store = await openStore(db);
    await fill(store);
    // An import batch: a whole record with its vector inline, written behind the store. Built (and
    // embedded) before the rebuild starts, so the write lands while the rebuild runs, not after it.
    const row: MemoryRecord = {
      ...(await db.memories.toCollection().first())!,
      id: 'behind',
      text: 'My kite is orange',
      hash: memoryHash('My kite is orange'),
      embedding: await embedder.embed(['My kite is orange']).then(([v]) => v!),
      embeddingModel: embedder.modelId,
    };
    const rebuilding = store.rebuildIndexes();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await db.memories.add(row);
    await rebuilding;
    expect(store.indexStats().memories).toBe(TEXTS.length + 1);
    expect((await store.search({ text: 'orange kite', namespace: row.namespace }, { mode: 'vector' }))[0]?.memory.id).toBe('behind');
    expect(await db.memories.where('pending').equals(1).count()).toBe(0);
  });
});

describe('Memory tab', () => {
  it("lists and searches without reading a vector or a whole namespace, from the first call on (the catalog is the index's meta columns), and writes keep it current", async () => {
    const name = `ltm-layout-${crypto.randomUUID()}`;
    const added = await fill(await openStore(newDb(name)));
    // A cold start: a new connection and store over the stored memories.
    const { db, reads } = countingDb(name);
    const store = await openStore(db);
    // The index's own background load (here: no snapshot yet, so the lexical index is built from the rows) is not the tab's reads.
    await store.whenIndexed();
    reads.calls.length = 0;
    const admin = createMemoryAdmin(db, store);
    const first = await admin.list({ namespace: 'default', search: 'Moch' });
    expect(first.map((m) => m.id)).toEqual([added[6]]);
    expect((await admin.list({ namespace: 'work' })).map((m) => m.text)).toEqual(['I am allergic to peanuts', '我喜欢喝绿茶']);
    expect(reads.withEmbedding).toBe(0);
    // Not even the first list reads a namespace's rows (`query`, a cursor): only rows by id, those shown.
    expect(new Set(reads.calls)).toEqual(new Set(['getMany']));
    reads.calls.length = 0;
    reads.rows = 0;
    // A partial word ("Hang") and a Chinese character: the catalog answers.
    expect((await admin.list({ namespace: 'default', search: 'Hang' })).map((m) => m.id)).toEqual([added[0]]);
    expect((await admin.list({ namespace: 'work', search: '茶' })).map((m) => m.text)).toEqual(['我喜欢喝绿茶']);
    // No whole-namespace read any more (`query`, a cursor): only rows by id — the lexical top-k and the rows shown.
    expect(new Set(reads.calls)).toEqual(new Set(['getMany']));
    expect(reads.rows).toBe(2);
    // Writes update the catalog: an edit, a new memory, a removal.
    await store.update(added[0]!, { text: 'I live in Hamburg now' }, 'user');
    const bike = await admin.add({ namespace: 'default', kind: 'fact', text: 'My bike is a Gazelle' });
    await store.remove([added[6]!], 'DELETE', 'user');
    expect((await admin.list({ namespace: 'default', search: 'Hamb' })).map((m) => m.id)).toEqual([added[0]]);
    expect((await admin.list({ namespace: 'default', search: 'Gazel' })).map((m) => m.id)).toEqual([bike.id]);
    expect(await admin.list({ namespace: 'default', search: 'Moch' })).toEqual([]);
    // Without a search: pinned first, then newest; same as sorting the rows themselves.
    const rows = (await db.memories.toArray())
      .filter((r) => r.namespace === 'default')
      .sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updatedAt - a.updatedAt);
    expect((await admin.list({ namespace: 'default' })).map((m) => m.id)).toEqual(rows.map((r) => r.id));
    expect(reads.withEmbedding).toBe(0);
  });

  it('a write that fails (a crash between the row and its block) changes neither the rows nor the catalog, also after reopening', async () => {
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    const admin = createMemoryAdmin(db, store);
    const before = await admin.list({ namespace: 'default', includeInvalid: true });
    // The transaction dies after the row was written and before the blocks and header are (put of `memoryIndex` fails).
    const put = vi.spyOn(db.memoryIndex, 'bulkPut').mockRejectedValueOnce(new Error('context killed'));
    await expect(store.update(added[0]!, { text: 'I live in Hamburg now', pinned: true }, 'user')).rejects.toThrow('context killed');
    put.mockRestore();
    expect((await db.memories.get(added[0]!))!.text).toBe(TEXTS[0]);
    expect(await admin.list({ namespace: 'default', includeInvalid: true })).toEqual(before);
    expect(await admin.list({ namespace: 'default', search: 'Hamb' })).toEqual([]);
    const reopened = createMemoryAdmin(db, await openStore(db));
    expect(await reopened.list({ namespace: 'default', includeInvalid: true })).toEqual(before);
    expect((await reopened.list({ namespace: 'default', search: 'Hang' })).map((m) => m.id)).toEqual([added[0]]);
  });

  it('meta blocks of the older layout (no catalog columns) are detected on open and repaired from the rows', async () => {
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    await store.update(added[1]!, { pinned: true }, 'user');
    await store.flushSnapshot();
    const expected = await createMemoryAdmin(db, store).list({ namespace: 'default', includeInvalid: true });
    // What a store of the previous version left: meta blocks without `current` and `normalized`.
    const metas = (await db.memoryIndex.toArray()).filter((r) => 'type' in r && r.type === 'meta');
    await db.memoryIndex.bulkPut(metas.map(({ current: _c, normalized: _n, ...old }: any) => old));
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    const reopened = await openStore(db);
    expect(info).toHaveBeenCalledWith('[ltm] the persisted memory index has an older layout; rebuilding it');
    info.mockRestore();
    expect(reopened.indexStats().open.via).toBe('rebuilt');
    const admin = createMemoryAdmin(db, reopened);
    expect(await admin.list({ namespace: 'default', includeInvalid: true })).toEqual(expected);
    expect((await admin.list({ namespace: 'default', search: '跑' })).map((m) => m.id)).toEqual([added[3]]);
    // The repaired blocks carry the columns: the next open uses them.
    expect((await openStore(db)).indexStats().open.via).toBe('blocks');
  });
});

describe('block scan', () => {
  it('recall@10 = 1.0 against a brute-force scan, across blocks, reused slots, validity and time ranges', () => {
    const dim = 48;
    const n = 3 * BLOCK_SLOTS + 37;
    const data = randomUnit(n, dim, 7);
    const rand = mulberry32(11);
    const index = new BlockIndex();
    let batch = index.batch();
    const meta = Array.from({ length: n }, (_, i) => ({
      id: `v${i}`,
      namespace: i % 5 === 0 ? 'other' : 'default',
      createdAt: T0 - Math.floor(rand() * 100) * 86_400_000,
      updatedAt: T0,
      validFrom: null,
      validUntil: rand() < 0.2 ? T0 - 1 : null,
      importance: 0.5,
      pinned: false,
      current: 1 as const,
      kind: 'fact',
      slot: null,
      subject: null,
      normalized: '',
    }));
    for (let i = 0; i < n; i += 1) batch.put(meta[i]!, data.subarray(i * dim, (i + 1) * dim), 'model');
    batch.commit();
    // Remove 100, then add 60 new ones that reuse their slots.
    const removed = new Set<number>();
    batch = index.batch();
    while (removed.size < 100) {
      const i = Math.floor(rand() * n);
      if (removed.has(i)) continue;
      removed.add(i);
      batch.remove(`v${i}`);
    }
    batch.commit();
    const extra = randomUnit(60, dim, 13);
    batch = index.batch();
    for (let i = 0; i < 60; i += 1)
      batch.put({ ...meta[0]!, id: `x${i}`, namespace: 'default', validUntil: null }, extra.subarray(i * dim, (i + 1) * dim), 'model');
    batch.commit();

    const live: { id: string; vec: Float32Array; m: (typeof meta)[number] }[] = [];
    // The brute force runs over the vectors as the index stores them (f16-quantized since v4: `asStored`);
    // the top-10 against the f32 originals is checked in ltm-f16.test.ts.
    for (let i = 0; i < n; i += 1) if (!removed.has(i)) live.push({ id: `v${i}`, vec: asStored(data.subarray(i * dim, (i + 1) * dim)), m: meta[i]! });
    for (let i = 0; i < 60; i += 1)
      live.push({
        id: `x${i}`,
        vec: asStored(extra.subarray(i * dim, (i + 1) * dim)),
        m: { ...meta[0]!, id: `x${i}`, namespace: 'default', validUntil: null },
      });
    const queries = randomUnit(40, dim, 17);
    const range = { start: T0 - 30 * 86_400_000, end: T0 + 1 };
    let found = 0;
    let wanted = 0;
    for (let qi = 0; qi < 40; qi += 1) {
      const q = queries.subarray(qi * dim, (qi + 1) * dim);
      const filter = { now: T0, includeInvalid: qi % 2 === 0, range: qi % 4 === 1 ? range : null };
      const eligible = live.filter(
        (l) =>
          l.m.namespace === 'default' &&
          (filter.includeInvalid || l.m.validUntil === null) &&
          (!filter.range || (l.m.createdAt >= range.start && l.m.createdAt < range.end)),
      );
      const packed = new Float32Array(eligible.length * dim);
      eligible.forEach((l, i) => packed.set(l.vec, i * dim));
      const truth = exactTopK(q, packed, eligible.length, dim, 10).map(([i, s]) => [eligible[i]!.id, s]);
      const got = index.search('model', 'default', q, 10, filter).map((h) => [h.id, h.similarity]);
      wanted += truth.length;
      found += got.filter(([id]) => truth.some(([t]) => t === id)).length;
      for (const [i, [, s]] of got.entries()) expect(s).toBeCloseTo(truth[i]![1] as number, 6);
    }
    expect(wanted).toBe(400);
    expect(found / wanted).toBe(1);
  });

  it('exactTopK matches a sort of all dot products', () => {
    const dim = 384;
    const data = randomUnit(500, dim, 3);
    const q = randomUnit(1, dim, 5);
    const all = Array.from({ length: 500 }, (_, i) => {
      let s = 0;
      for (let j = 0; j < dim; j += 1) s += q[j]! * data[i * dim + j]!;
      return [i, s] as [number, number];
    }).sort((a, b) => b[1] - a[1]);
    const top = exactTopK(q, data, 500, dim, 10);
    expect(top.map(([i]) => i)).toEqual(all.slice(0, 10).map(([i]) => i));
  });
});
