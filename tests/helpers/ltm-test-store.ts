/**
 * Opens the real long-term store (`createMemoryStore`: Dexie + MiniSearch + Voy) for LTM-B's unit
 * tests, with the hashed n-gram TEST embedder of `bench/data/hashed-embedder.ts` (surface overlap
 * only, not a language model) and voy-search's WASM read from node_modules.
 */
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { RecallDB } from '../../src/db/schema';
import type { Embedder } from '../../src/engines/types';
import { createMemoryStore, type LongTermStore } from '../../src/memory/long-term/store';

/** A fresh database (unique name) and the store over it. `setNow` moves the store's clock. */
export async function openTestStore(options: { now?: number; embedder?: Embedder | null; name?: string } = {}): Promise<{
  db: RecallDB;
  store: LongTermStore;
  embedder: Embedder | null;
  setEmbedder(e: Embedder | null): void;
  setNow(t: number): void;
}> {
  const db = new RecallDB(`${options.name ?? 'ltm-b'}-${crypto.randomUUID()}`);
  let embedder: Embedder | null = options.embedder === undefined ? createHashedEmbedder() : options.embedder;
  let t = options.now ?? Date.now();
  const store = await createMemoryStore({
    db,
    embedder: () => embedder,
    now: () => t,
    loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
  });
  return { db, store, embedder, setEmbedder: (e) => (embedder = e), setNow: (x) => (t = x) };
}

/** Stores opened by `storeOf`, one per database. */
const storesByDb = new WeakMap<RecallDB, Promise<LongTermStore>>();

/**
 * The real long-term store over an existing database `db` (opened once per database, as the core
 * opens it: from the persisted index, repairing it from the rows when they disagree), with no
 * embedder unless `options.embedder` is given; for tests of code that writes through the store
 * (the import). Flush it (`flushSnapshot`) before deleting the database in tests that care.
 */
export function storeOf(db: RecallDB, options: { embedder?: Embedder | null; now?: () => number } = {}): Promise<LongTermStore> {
  let store = storesByDb.get(db);
  if (!store) {
    store = createMemoryStore({
      db,
      embedder: () => options.embedder ?? null,
      ...(options.now ? { now: options.now } : {}),
      loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
    });
    storesByDb.set(db, store);
  }
  return store;
}

/** Writes the pending lexical snapshot of the store `storeOf` opened over `db`, if any (call before deleting `db`). */
export async function flushStoreOf(db: RecallDB): Promise<void> {
  await (await storesByDb.get(db))?.flushSnapshot();
}
