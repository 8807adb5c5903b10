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
