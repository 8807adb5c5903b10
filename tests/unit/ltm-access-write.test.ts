/**
 * Writing retrieval accesses (`recordAccesses`, batched after each chat turn) must leave the
 * persisted index in agreement with the rows: the rows it rewrites carry no `embedding` (the
 * vector lives in the blocks) and are not marked `pending`, so the next start opens from the
 * blocks instead of rebuilding every memory (10 s at 10k memories in Node). Real Dexie on
 * fake-indexeddb, the hashed n-gram test embedder; nothing is faked.
 */
import 'fake-indexeddb/auto';
import { afterEach, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { createMemoryStore, recordAccesses } from '../../src/memory/long-term/store';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';

const T0 = Date.UTC(2025, 4, 1, 12);
const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const d of dbs.splice(0)) await d.delete();
});

const embedder = createHashedEmbedder();
const openStore = (db: RecallDB) => createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: nodeVoyWasm });

it('rows rewritten by an access write hold no vector and are not pending: the next open reads the blocks, no rebuild', async () => {
  const db = new RecallDB(`ltm-access-${crypto.randomUUID()}`);
  dbs.push(db);
  const store = await openStore(db);
  const a = await store.add({ namespace: 'default', kind: 'fact', text: 'My cat is called Mochi' }, 'test');
  const b = await store.add({ namespace: 'default', kind: 'fact', text: 'I live in Hangzhou' }, 'test');
  await store.flushSnapshot();
  await recordAccesses(
    db,
    new Map([
      [a.memory.id, { count: 2, at: T0 + 5 }],
      [b.memory.id, { count: 1, at: T0 + 7 }],
    ]),
  );
  const raw = (await db.memories.toCollection().raw().toArray()) as unknown as Record<string, unknown>[];
  const byId = new Map(raw.map((r) => [r.id, [r.accessCount, 'embedding' in r, r.pending]]));
  expect(byId.get(a.memory.id)).toEqual([2, false, undefined]);
  expect(byId.get(b.memory.id)).toEqual([1, false, undefined]);
  const reopened = await openStore(db);
  expect(reopened.indexStats().open.via).toBe('blocks');
  expect((await reopened.search({ text: 'cat Mochi', namespace: 'default' })).map((r) => r.memory.id)).toContain(a.memory.id);
});
