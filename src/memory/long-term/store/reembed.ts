/**
 * Re-embedding of the long-term store: gives every memory a vector of the current embedder's
 * model, a batch at a time, each batch written to its rows and vector block slots in one
 * transaction (`IndexSync.writeIndexed`), so the index is up to date after every batch and no
 * rebuild is needed afterwards. The embedding input is `embeddingInput` (speakers named,
 * resolved relative dates); vectors embedded from an older format of it (`IndexSync.staleVectors`)
 * count as missing and are embedded again, once.
 */
import type { Embedder } from '../../../engines/types';
import type { RecallDB } from '../../../db/schema';
import type { MemoryRecord } from '../../../model/records';
import type { LongTermStore } from '../types';
import { indexedOf } from '../retrieval/blocks';
import { l2normalize } from '../retrieval/vector';
import type { IndexSync, Serial } from './index-sync';
import { toRow } from './rows';
import { embeddingInput } from '../text';
import { EngineError } from '../../../model/errors';

/** What `reembed` reads and writes. */
export interface ReembedContext {
  db: RecallDB;
  sync: IndexSync;
  serial: Serial;
  embedder: () => Embedder | null;
}

/**
 * How many memories lack a vector of `modelId` (`null`: lack any vector) or hold one embedded from
 * an older indexed-text format (`IndexSync.staleVectors`), from the index: no row is read.
 * O(memories) for a model id, O(segments + stale ids) for `null`.
 */
export function missingVectors(sync: IndexSync, modelId: string | null): number {
  const index = sync.index;
  if (modelId === null) {
    let withVector = 0;
    for (const { count } of index.vectorCounts().values()) withVector += count;
    let stale = 0;
    for (const id of sync.staleVectors) if (index.vector(id) !== null) stale += 1;
    // A memory has at most one vector, so the memories without one are the rest.
    return index.size - withVector + stale;
  }
  let missing = 0;
  for (const id of index.ids()) if (!index.hasVector(id, modelId) || sync.staleVectors.has(id)) missing += 1;
  return missing;
}

/** See `LongTermStore.reembed`. */
export async function reembed(ctx: ReembedContext, options: Parameters<LongTermStore['reembed']>[0] = {}): ReturnType<LongTermStore['reembed']> {
  const { db, sync, serial } = ctx;
  // Rows rewritten behind the store (a bulk `modify`, an import batch) first: their vectors decide what is missing.
  await serial(() => sync.reconcilePending());
  const embedder = ctx.embedder();
  if (!embedder) return { embedded: 0, remaining: sync.index.size };
  const model = embedder.modelId;
  const hadStale = sync.staleVectors.size > 0;
  const needs = (id: string) => sync.index.has(id) && (!sync.index.hasVector(id, model) || sync.staleVectors.has(id));
  // From the index, not the rows: ids only (36 bytes each); texts are read a batch at a time.
  const ids = [...sync.index.ids()].filter(needs);
  const total = ids.length;
  const batchSize = Math.max(1, options.batchSize ?? 32);
  let embedded = 0;
  let done = 0;
  for (let start = 0; start < ids.length; start += batchSize) {
    options.signal?.throwIfAborted();
    const slice = ids.slice(start, start + batchSize);
    done += slice.length;
    const batch = (await db.memories.bulkGet(slice.filter(needs))).filter((r): r is MemoryRecord => r !== undefined);
    if (batch.length > 0) {
      const texts = batch.map(embeddingInput);
      const vectorsOut = await embedder.embed(texts, options.signal);
      if (vectorsOut.length !== texts.length)
        throw new EngineError('embedding', `Embedder ${model} returned ${vectorsOut.length} vectors for ${texts.length} texts`);
      await serial(() =>
        sync.writeIndexed([], async (ib) => {
          let stored = 0;
          const renewed: string[] = [];
          for (const [i, r] of batch.entries()) {
            const fresh = await db.memories.get(r.id);
            if (!fresh || fresh.text !== r.text) continue; // removed or edited meanwhile (the edit embedded it)
            if (!ib.put(indexedOf(fresh), l2normalize(vectorsOut[i]!), model)) continue;
            await db.memories.put(toRow({ ...fresh, embedding: null, embeddingModel: model }));
            renewed.push(r.id);
            stored += 1;
          }
          embedded += stored;
          // After the commit: these vectors are made from the current indexed text.
          return { countDelta: 0, lexical: () => renewed.forEach((id) => sync.staleVectors.delete(id)) };
        }),
      );
    }
    options.onProgress?.(Math.min(total, done), total);
  }
  // The header keeps the old text version until no stale vector is left.
  if (hadStale) await serial(() => sync.markTextVersionCurrent());
  return { embedded, remaining: missingVectors(sync, model) };
}
