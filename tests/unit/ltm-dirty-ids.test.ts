/**
 * The ids changed since the lexical snapshot (`IndexSync`, `src/memory/long-term/store/index-sync.ts`):
 * each write adds one `DirtyIdsRecord` holding its own ids, in its own transaction, instead of
 * rewriting one list of all of them in the header (measured before: at 20k memories after an
 * import, ~1 MB of header a write). The crash repair on open is the same: every id of every record
 * (and an older build's header list) is replayed onto the snapshot. Real Dexie on fake-indexeddb,
 * the hashed n-gram TEST embedder (surface overlap only); nothing is faked but the failing writes.
 */
import 'fake-indexeddb/auto';
import type Dexie from 'dexie';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { createMemoryStore, type LongTermStore } from '../../src/memory/long-term/store';
import { DIRTY_KEY_PREFIX, dirtyKey } from '../../src/memory/long-term/store/index-sync';
import type { DirtyIdsRecord } from '../../src/memory/long-term/retrieval/blocks';
import type { IndexHeaderRecord } from '../../src/memory/long-term/retrieval/blocks';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';

const T0 = Date.UTC(2025, 4, 1, 12);
const dbs: Dexie[] = [];
afterEach(async () => {
  for (const d of dbs.splice(0)) await d.delete();
});

const embedder = createHashedEmbedder();
const newDb = () => {
  const db = new RecallDB(`ltm-dirty-${crypto.randomUUID()}`);
  dbs.push(db);
  return db;
};
const openStore = (db: RecallDB) => createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: nodeVoyWasm });
const ids = (results: { memory: { id: string } }[]) => results.map((r) => r.memory.id);
const lexicalIds = async (store: LongTermStore, text: string) => ids(await store.search({ text, namespace: 'default' }, { mode: 'lexical' }));

const TEXTS = ['I live in Hangzhou near the West Lake', 'My sister Ana works as a nurse in Lisbon', 'I am allergic to peanuts', 'My cat is called Mochi'];

async function fill(store: LongTermStore): Promise<string[]> {
  const out: string[] = [];
  for (const text of TEXTS) out.push((await store.add({ namespace: 'default', kind: 'fact', text }, 'test')).memory.id);
  await store.flushSnapshot();
  return out;
}

const header = async (db: RecallDB) => (await db.memoryIndex.get('header')) as IndexHeaderRecord;
const dirtyRecords = async (db: RecallDB) => (await db.memoryIndex.where('key').startsWith(DIRTY_KEY_PREFIX).toArray()) as unknown as DirtyIdsRecord[];

describe('dirty ids since the lexical snapshot', () => {
  it('each write adds one record of its own ids at its generation; the header stays the same size; the snapshot removes them', async () => {
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    const clean = await header(db);
    expect(clean.dirty).toEqual([]);
    expect(await dirtyRecords(db)).toEqual([]);

    await store.update(added[0]!, { text: 'I moved to Shenzhen last spring' }, 'test');
    await store.remove([added[2]!], 'FORGET', 'test');
    const late = await store.add({ namespace: 'default', kind: 'fact', text: 'My bike is green' }, 'test');
    const after = await header(db);
    // Three writes, three generations, one record each with only the ids that write changed.
    expect(after.gen).toBe(clean.gen + 3);
    expect(await dirtyRecords(db)).toEqual([
      { key: dirtyKey(clean.gen + 1), gen: clean.gen + 1, ids: [added[0]] },
      { key: dirtyKey(clean.gen + 2), gen: clean.gen + 2, ids: [added[2]] },
      { key: dirtyKey(clean.gen + 3), gen: clean.gen + 3, ids: [late.memory.id] },
    ]);
    expect(after.dirty).toEqual([]);
    expect(JSON.stringify(after).length).toBe(JSON.stringify(clean).length);

    await store.flushSnapshot();
    expect(await dirtyRecords(db)).toEqual([]);
    expect((await header(db)).dirty).toEqual([]);
  });

  it('a crash between writes (no snapshot after them) repairs on open: every recorded id is replayed', async () => {
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    await store.update(added[0]!, { text: 'I moved to Shenzhen last spring' }, 'test');
    await store.remove([added[2]!], 'FORGET', 'test');
    // The second of two writes fails inside its transaction (the context dies in it): only the first stays recorded.
    await store.add({ namespace: 'default', kind: 'fact', text: 'My bike is green' }, 'test');
    const spy = vi.spyOn(db.memoryHistory, 'bulkAdd').mockImplementation(() => Promise.reject(new Error('context gone')) as never);
    await expect(store.add({ namespace: 'default', kind: 'fact', text: 'My kite is orange' }, 'test')).rejects.toThrow('context gone');
    spy.mockRestore();
    expect((await dirtyRecords(db)).map((r) => r.ids.length)).toEqual([1, 1, 1]);

    const reopened = await openStore(db);
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', replayed: 3 });
    await reopened.whenIndexed();
    expect(reopened.indexStats()).toMatchObject({ memories: 4, lexical: 4 });
    expect(await lexicalIds(reopened, 'Shenzhen')).toEqual([added[0]]);
    expect(await lexicalIds(reopened, 'Hangzhou')).toEqual([]);
    expect(await lexicalIds(reopened, 'peanuts')).toEqual([]);
    expect(await lexicalIds(reopened, 'green bike')).toHaveLength(1);
    expect(await lexicalIds(reopened, 'orange kite')).toEqual([]);
  });

  it('a snapshot write that fails keeps the records, and the next open still replays them', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    await store.update(added[1]!, { text: 'My sister Ana moved to Porto' }, 'test');
    const recorded = await dirtyRecords(db);
    expect(recorded).toHaveLength(1);
    const spy = vi.spyOn(db.memoryIndex, 'bulkPut').mockImplementation(() => Promise.reject(new Error('disk full')) as never);
    await store.flushSnapshot();
    spy.mockRestore();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('could not write the lexical snapshot'), expect.any(Error));
    warn.mockRestore();
    expect(await dirtyRecords(db)).toEqual(recorded);

    const reopened = await openStore(db);
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', replayed: 1 });
    await reopened.whenIndexed();
    expect(await lexicalIds(reopened, 'Porto')).toEqual([added[1]]);
    expect(await lexicalIds(reopened, 'Lisbon')).toEqual([]);
  });

  it("an older build's store (every dirty id in the header, no record) opens and replays them; the next snapshot clears the list", async () => {
    const db = newDb();
    const store = await openStore(db);
    const added = await fill(store);
    await store.update(added[0]!, { text: 'I moved to Shenzhen last spring' }, 'test');
    await store.remove([added[3]!], 'FORGET', 'test');
    // Rewritten into the older layout: the ids in the header's list, no dirty-id record.
    const old = await header(db);
    await db.transaction('rw', db.memoryIndex, async () => {
      await db.memoryIndex.where('key').startsWith(DIRTY_KEY_PREFIX).delete();
      await db.memoryIndex.put({ ...old, dirty: [added[0]!, added[3]!] });
    });

    const reopened = await openStore(db);
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', replayed: 2 });
    await reopened.whenIndexed();
    expect(await lexicalIds(reopened, 'Shenzhen')).toEqual([added[0]]);
    expect(await lexicalIds(reopened, 'Mochi')).toEqual([]);
    // A write keeps the older list as it is and records only its own id beside it.
    const late = await reopened.add({ namespace: 'default', kind: 'fact', text: 'My bike is green' }, 'test');
    expect((await header(db)).dirty).toEqual([added[0], added[3]]);
    expect((await dirtyRecords(db)).map((r) => r.ids)).toEqual([[late.memory.id]]);
    await reopened.flushSnapshot();
    expect((await header(db)).dirty).toEqual([]);
    expect(await dirtyRecords(db)).toEqual([]);
    const again = await openStore(db);
    expect(again.indexStats().open).toMatchObject({ via: 'blocks', replayed: 0 });
    await again.whenIndexed();
    expect(await lexicalIds(again, 'green bike')).toEqual([late.memory.id]);
  });
});
