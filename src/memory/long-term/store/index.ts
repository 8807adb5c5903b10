/**
 * The long-term memory store: memories in Dexie (`db.memories`), every change in
 * `db.memoryHistory` (Mem0-style history: old text, new text, event, time, source), and two
 * indexes kept in sync with the table — a lexical BM25 index (MiniSearch, CJK-aware
 * tokenization) and an exact vector index over contiguous f32 blocks — fused by a convex combination of
 * normalized scores at search time (`retrieval/fusion.ts`).
 *
 * Over 300 lines: it composes the four store modules and holds every write path (add, update,
 * delete, bulk add), which share the one write queue and transaction helper.
 *
 * Opening without a rebuild: the index is persisted in `db.memoryIndex` (layout in
 * `retrieval/blocks.ts`): meta and vector blocks, a header (generation, row count), one record
 * per write of the ids it changed since the lexical snapshot (`DirtyIdsRecord` in
 * `./index-sync.ts`) and a MiniSearch snapshot. `createMemoryStore` reads its header
 * and meta blocks (no memory row, no vector) and answers; the vector blocks, then the snapshot
 * (only the dirty ids re-indexed) load in the background, the first tasks of the write queue
 * (`IndexSync.open`; vector searches wait for the vectors, `whenVectorsLoaded`). When the
 * header is missing, its row count disagrees with `db.memories`, or rows are marked `pending`
 * (written behind the store's back with an inline vector: an import's undo putting previous
 * versions back; see `MemoryRecord.pending`), the whole index is rebuilt from the rows and persisted
 * again (`rebuildIndexes`, also run after an erase and after a failed import's undo).
 *
 * Writes are serialized (one mutation at a time), so the duplicate check and the index updates
 * never interleave. Each write puts the memory row, its history entry, the blocks it changes and
 * the header and its dirty-id record in ONE Dexie transaction; the live index changes only after it committed, so a
 * write that fails leaves rows, persisted index and live index as they were. The lexical
 * snapshot is written later (idle, `SNAPSHOT_DELAY_MS`; serialized in slices that yield,
 * `LexicalIndex.toJSONSliced`); until then the dirty-id records say
 * which memories to re-index on open. A failed embedding never loses a memory: it is stored
 * without a vector (lexical only) until `reembed`.
 *
 * Rows no longer hold their `embedding` (schema v3): it lives in the vector blocks. While a store
 * is open over a database, reading a row through Dexie gives the `MemoryRecord` shape back
 * (`embedding` filled from the blocks by a reading hook), so export, maintenance and
 * consolidation read vectors as before. A row written by someone else WITH an `embedding` field
 * (an import's undo) keeps it until `rebuildIndexes` moves it into the blocks, in one transaction.
 *
 * The store is cut along its seams: `./rows.ts` (rows, accesses, tombstones, the reading hook),
 * `./index-sync.ts` (blocks + lexical snapshot: open, repair, the write transaction),
 * `./search.ts` (hybrid search and ranking), `./reembed.ts` (re-embedding); this file composes
 * them and holds the writes (add, update, invalidate, remove, and `putMemories`, the bulk write of
 * an import batch: rows and blocks in the batch's own transaction, so an import needs no rebuild).
 *
 * Voy (k-d tree) is loaded but not used for search: measured side by side with the block scan
 * (bench/vector-layout.bench.ts) it never beat the exact scan at 384 dimensions, from 1k to 100k
 * vectors, and costs seconds of build and several times the vectors' size in memory.
 */
import type { Embedder } from '../../../engines/types';
import type { RecallDB } from '../../../db/schema';
import type { MemoryEvent } from '../../../model/memory';
import type { MemoryHistoryRecord, MemoryRecord } from '../../../model/records';
import type { LongTermStore, MemoryPatch, NewMemory, StoreOpenStats, WrittenMemory } from '../types';
import { embeddingInput, memoryHash } from '../text';
import { l2normalize } from '../retrieval/vector';
import { loadVoy, type VoyClass } from '../retrieval/voy';
import { indexedOf } from '../retrieval/blocks';
import { convexFusion, type FusionWeights } from '../retrieval/fusion';
import { createSerial, indexLexical, IndexSync, type ForegroundWork } from './index-sync';
import { checkText, installReadingHook, KINDS, recordAccess, toRow, validAt } from './rows';
import { createStoreSearch } from './search';
import { missingVectors, reembed } from './reembed';
import { FeedbackBook } from './feedback';
import { EngineError, MemoryError, withItemContext } from '../../../model/errors';

export { recordAccess, recordAccesses, isTombstoned, tombstonedHashes, toView } from './rows';
export { SNAPSHOT_DELAY_MS } from './index-sync';
export { ROUND_COVERAGE } from './search';
export type { CatalogEntry, IndexStats, LongTermStore, RetrievalMode, SearchOptions, StoreOpenStats } from '../types';

/**
 * Awaits a Dexie bulk write and throws the first failed item's own error (e.g. a
 * `QuotaExceededError`, a `ConstraintError`) instead of Dexie's `BulkError` wrapping it, so the
 * caller's transaction aborts with the cause a single write would have given.
 */
async function throwingBulk(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    const failures = (error as { name?: string; failures?: unknown[] }).name === 'BulkError' ? (error as { failures?: unknown[] }).failures : undefined;
    throw failures?.[0] ?? error;
  }
}

/** Dependencies of `createMemoryStore`. */
export interface MemoryStoreDeps {
  db: RecallDB;
  /** The current embedder, or `null` while none is loaded. */
  embedder: () => Embedder | null;
  /** Clock (ms epoch), default `Date.now`. */
  now?: () => number;
  /**
   * Bytes of `voy_search_bg.wasm` (browser: `loadVoyWasm` of `src/platform/assets.ts`; Node: the
   * file in `node_modules/voy-search/`). Loaded in the background (the store does not wait for it;
   * `whenIndexed` does); a failure is logged and changes nothing (search is an exact block scan either way).
   */
  loadVoyWasm: () => Promise<BufferSource>;
  /** Weights of the lexical and vector lists in convex fusion, default the embedder's calibrated weights (`fusionWeightsFor`). */
  fusionWeights?: FusionWeights;
  /**
   * Called (synchronously, after the write) whenever a memory was stored or re-written without a
   * vector (no embedder was ready, or embedding failed): the core queues `ltm.reembed` so every
   * memory eventually gets its vector. Must not throw. Not called by `putMemories`, whose caller
   * (the import) queues the re-embedding itself once all its batches are written.
   */
  onMissingEmbedding?: () => void;
  /**
   * Called after every committed write (add, update, invalidate, remove, an import's `putMemories`)
   * with the memories it touched (`WrittenMemory`; exact duplicates that stored nothing are not
   * reported), and awaited inside the write queue, so what it queues is queued when the write
   * resolves. The composition queues the profile rebuild from here (`queueProfileRebuildsFor`).
   * A rejection is logged and never fails the write (it has committed).
   */
  onWrite?: (written: readonly WrittenMemory[]) => Promise<void> | void;
  /**
   * When the open's background work (vector blocks, lexical snapshot, row check) may start: it
   * waits for this to settle (default: at once). The core passes a promise of the end of its own
   * start-up, so the first request is answered before that work competes with it.
   */
  background?: PromiseLike<unknown>;
  /** Short ids per chunk of the lexical snapshot (default `LEXICAL_CHUNK_DOCS`, 1024; tests pass a small one). */
  lexicalChunkDocs?: number;
  /**
   * Foreground work (a chat turn: `JobQueue.foregroundActive` / `whenForegroundIdle`) the idle
   * lexical snapshot steps aside for: it starts once none runs, and a turn that starts while it is
   * serialized makes it stop (nothing written) and try again later. Default: never any.
   */
  foreground?: ForegroundWork;
}

/**
 * Opens the store over `deps.db`: reads the persisted index (see module doc) and repairs it from
 * the rows when it disagrees with them. Resolves when searches are answered; `indexStats().open`
 * says how long that took. The lexical snapshot then loads in the background (searches meanwhile
 * take their lexical list from the catalog and say so: `RetrievedMemory.lexicalFrom`); writes and
 * `whenIndexed` wait for it.
 * @throws RangeError when `deps.fusionWeights` holds a negative or non-finite weight; otherwise
 *   only when Dexie cannot be read (a missing Voy WASM is logged and changes nothing).
 */
export async function createMemoryStore(deps: MemoryStoreDeps): Promise<LongTermStore> {
  const startedAt = performance.now();
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const fusionWeights = deps.fusionWeights;
  if (fusionWeights) convexFusion([], [], fusionWeights); // validates: RangeError when < 0 or not finite
  const serial = createSerial();
  const sync = new IndexSync(db, serial, deps.lexicalChunkDocs, deps.foreground);
  const feedback = new FeedbackBook(db, now);
  const reader = createStoreSearch({ db, sync, embedder: deps.embedder, now, fusionWeights, feedback: (ns) => feedback.signals(ns) });

  /** Embeds `memory` for storage (its `embeddingInput`); a failure is logged and gives `null` (the memory is kept, lexical only). */
  async function embedForStorage(memory: MemoryRecord): Promise<{ embedding: Float32Array | null; embeddingModel: string | null }> {
    const embedder = deps.embedder();
    if (!embedder) return { embedding: null, embeddingModel: null };
    try {
      return { embedding: await reader.embed(embeddingInput(memory)), embeddingModel: embedder.modelId };
    } catch (error) {
      console.warn('[ltm] embedding failed; memory stored without a vector until re-embedding:', error);
      return { embedding: null, embeddingModel: null };
    }
  }

  /** Reports a committed write to `deps.onWrite` (see there); never throws. */
  async function written(memories: readonly WrittenMemory[]): Promise<void> {
    if (!deps.onWrite || memories.length === 0) return;
    try {
      await deps.onWrite(memories);
    } catch (error) {
      console.warn('[ltm] a write listener failed (the write is kept):', error);
    }
  }

  async function applyUpdate(id: string, patch: MemoryPatch, source: string, event: MemoryEvent): Promise<MemoryRecord> {
    const old = await db.memories.get(id);
    if (!old) throw new MemoryError('not_found', `Unknown memory id "${id}"`);
    const t = now();
    // Marking a memory superseded changes nothing it says: its `updatedAt` (what recency weighting reads) stays.
    const onlySuperseded = Object.keys(patch).every((key) => key === 'supersededBy');
    const next: MemoryRecord = { ...old, ...patch, updatedAt: onlySuperseded ? old.updatedAt : t };
    if (patch.kind !== undefined && !KINDS.has(patch.kind)) {
      throw new MemoryError('unknown_kind', `Unknown memory kind "${String(patch.kind)}"`, { params: { kind: String(patch.kind).slice(0, 40) } });
    }
    if (patch.importance !== undefined) next.importance = Math.min(1, Math.max(0, patch.importance));
    if (patch.text !== undefined && patch.text !== old.text) {
      checkText(patch.text);
      next.hash = memoryHash(patch.text);
      Object.assign(next, await embedForStorage(next));
    }
    // Superseded (`supersededBy`) is not current even while valid: an episodic round restated with another value (`consolidation/supersede.ts`).
    next.current = validAt(next, t) && next.supersededBy === undefined ? 1 : 0;
    const missingVector = patch.text !== undefined && patch.text !== old.text && next.embedding === null;
    const history: MemoryHistoryRecord = { memoryId: id, event, oldText: old.text, newText: next.text, at: t, source };
    await sync.writeIndexed([id], async (batch) => {
      // Keep access statistics written meanwhile by `recordAccess` (which is not serialized).
      const fresh = await db.memories.get(id);
      if (!fresh) throw new MemoryError('removed_during_update', `Memory "${id}" was removed during the update`);
      next.lastAccessedAt = fresh.lastAccessedAt;
      next.accessCount = fresh.accessCount;
      const indexed = batch.put(indexedOf(next), next.embedding, next.embeddingModel);
      if (!indexed && next.embedding) Object.assign(next, { embedding: null, embeddingModel: null });
      await db.memories.put(toRow(next));
      await db.memoryHistory.add(history);
      return {
        countDelta: 0,
        lexical: () => {
          indexLexical(sync.lexical, next, old);
          // A new text was embedded from the current indexed-text format.
          if (patch.text !== undefined && patch.text !== old.text) sync.staleVectors.delete(id);
        },
      };
    });
    if (missingVector) deps.onMissingEmbedding?.();
    await written([
      { namespace: next.namespace, kind: next.kind, event },
      ...(old.kind !== next.kind ? [{ namespace: old.namespace, kind: old.kind, event }] : []),
    ]);
    return next;
  }

  const store: LongTermStore = {
    get: (id) => db.memories.get(id),

    async add(input: NewMemory, source: string) {
      return (await store.addMany([input], source))[0]!;
    },

    addMany(inputs: readonly NewMemory[], source: string) {
      return serial(async () => {
        // Every input is checked before anything is written: a bad one rejects the whole batch.
        inputs.forEach((input, i) => {
          try {
            checkText(input.text);
            if (!input.namespace) throw new MemoryError('namespace_missing', 'Memory namespace is empty');
            if (!KINDS.has(input.kind)) {
              throw new MemoryError('unknown_kind', `Unknown memory kind "${String(input.kind)}"`, { params: { kind: String(input.kind).slice(0, 40) } });
            }
          } catch (error) {
            if (inputs.length === 1) throw error;
            throw withItemContext(error, `Memory ${i + 1} of ${inputs.length}: `, { item: i + 1, items: inputs.length });
          }
        });
        const t = now();
        const hashes = inputs.map((input) => memoryHash(input.text));
        // Exact duplicates of a stored, still valid memory of the same namespace: one keyed index
        // read per distinct hash, in one transaction (`anyOf` would walk a cursor instead).
        const stored = new Map<string, MemoryRecord>();
        const unique = [...new Set(hashes)];
        const found = await db.transaction('r', db.memories, () => Promise.all(unique.map((h) => db.memories.where('hash').equals(h).toArray())));
        for (const r of found.flat()) {
          const key = `${r.namespace}\u0000${r.hash}`;
          if (validAt(r, t) && !stored.has(key)) stored.set(key, r);
        }
        const results: { memory: MemoryRecord; created: boolean }[] = [];
        const fresh: { record: MemoryRecord; index: number }[] = [];
        inputs.forEach((input, i) => {
          const key = `${input.namespace}\u0000${hashes[i]}`;
          const duplicate = stored.get(key);
          if (duplicate) {
            results.push({ memory: duplicate, created: false });
            return;
          }
          const createdAt = input.createdAt ?? t;
          const validUntil = input.validUntil ?? null;
          const record: MemoryRecord = {
            id: crypto.randomUUID(),
            namespace: input.namespace,
            kind: input.kind,
            text: input.text,
            ...(input.topic ? { topic: input.topic } : {}),
            ...(input.speakers && (input.speakers.user || input.speakers.assistant) ? { speakers: { ...input.speakers } } : {}),
            ...(input.sourceUrl ? { sourceUrl: input.sourceUrl, sourceTitle: input.sourceTitle ?? input.sourceUrl } : {}),
            embedding: null,
            embeddingModel: null,
            importance: Math.min(1, Math.max(0, input.importance ?? 0.5)),
            createdAt,
            updatedAt: createdAt,
            validFrom: input.validFrom ?? null,
            validUntil,
            current: validAt({ validUntil }, t) ? 1 : 0,
            lastAccessedAt: null,
            accessCount: 0,
            sourceConversationId: input.sourceConversationId ?? null,
            sourceMessageIds: input.sourceMessageIds ?? [],
            pinned: input.pinned ?? false,
            hash: hashes[i]!,
          };
          // A later copy in the same batch is a duplicate of this one (when this one is valid).
          if (validAt(record, t)) stored.set(key, record);
          results.push({ memory: record, created: true });
          fresh.push({ record, index: i });
        });
        if (fresh.length === 0) return results;
        // One embedding call for the batch; a failure stores the batch without vectors (lexical only) until `reembed`.
        const embedder = deps.embedder();
        if (embedder) {
          try {
            const vectorsOut = await embedder.embed(fresh.map((f) => embeddingInput(f.record)));
            if (vectorsOut.length !== fresh.length)
              throw new EngineError('embedding', `Embedder ${embedder.modelId} returned ${vectorsOut.length} vectors for ${fresh.length} texts`);
            fresh.forEach((f, i) => {
              f.record.embedding = l2normalize(vectorsOut[i]!);
              f.record.embeddingModel = embedder.modelId;
            });
          } catch (error) {
            console.warn('[ltm] embedding failed; memories stored without a vector until re-embedding:', error);
          }
        }
        // Rows, history and their block slots in one transaction (see `writeIndexed`).
        await sync.writeIndexed(
          fresh.map((f) => f.record.id),
          async (batch) => {
            for (const { record } of fresh) {
              const indexed = batch.put(indexedOf(record), record.embedding, record.embeddingModel);
              if (!indexed && record.embedding) Object.assign(record, { embedding: null, embeddingModel: null });
            }
            await db.memories.bulkAdd(fresh.map((f) => toRow(f.record)));
            // No copy of the text: the row holds it (`db/history.ts` derives it when the history is read).
            await db.memoryHistory.bulkAdd(fresh.map((f) => ({ memoryId: f.record.id, event: 'ADD' as const, oldText: null, newText: null, at: t, source })));
            // The user stores this text again on purpose ("remember …", memory manager): lift its tombstone.
            if (source === 'user') await db.tombstones.bulkDelete(fresh.map((f) => [f.record.namespace, f.record.hash] as [string, string]));
            return {
              countDelta: fresh.length,
              lexical: () => {
                for (const { record } of fresh) {
                  indexLexical(sync.lexical, record);
                }
              },
            };
          },
        );
        if (fresh.some((f) => f.record.embedding === null)) deps.onMissingEmbedding?.();
        await written(fresh.map((f) => ({ namespace: f.record.namespace, kind: f.record.kind, event: 'ADD' as const })));
        return results;
      });
    },

    putMemories(write, options = {}) {
      return serial(async () => {
        let out: Awaited<ReturnType<typeof write>> | null = null;
        const unindexed: string[] = [];
        await sync.writeIndexed(
          [],
          async (batch) => {
            const written = (out = await write());
            const all = [...written.added, ...written.updated];
            for (const record of all) {
              const indexed = batch.put(indexedOf(record), record.embedding, record.embeddingModel);
              if (!indexed && record.embedding) {
                Object.assign(record, { embedding: null, embeddingModel: null });
                unindexed.push(record.id);
              }
            }
            if (written.added.length > 0) await throwingBulk(db.memories.bulkAdd(written.added.map(toRow)));
            if (written.updated.length > 0) await throwingBulk(db.memories.bulkPut(written.updated.map(toRow)));
            return {
              countDelta: written.added.length,
              dirty: all.map((r) => r.id),
              lexical: () => {
                for (const record of all) indexLexical(sync.lexical, record);
              },
            };
          },
          { tables: options.tables ?? [], idleSnapshot: true },
        );
        await written([...out!.added, ...out!.updated].map((r) => ({ namespace: r.namespace, kind: r.kind, event: 'IMPORT' as const })));
        return { result: out!.result, unindexed };
      });
    },

    update(id, patch, source, event = 'UPDATE') {
      return serial(() => applyUpdate(id, patch, source, event));
    },

    async invalidate(id, at, source, supersededBy) {
      await serial(() => applyUpdate(id, { validUntil: at, ...(supersededBy ? { supersededBy } : {}) }, source, 'INVALIDATE'));
    },

    remove(ids, event, source) {
      return serial(async () => {
        const unique = [...new Set(ids)];
        const t = now();
        let found: string[] = [];
        let removed: WrittenMemory[] = [];
        await sync.writeIndexed(
          unique,
          async (batch) => {
            const records = (await db.memories.bulkGet(unique)).filter((r): r is MemoryRecord => r !== undefined);
            found = records.map((r) => r.id);
            removed = records.map((r) => ({ namespace: r.namespace, kind: r.kind, event }));
            await db.memories.bulkDelete(found);
            // What the user removed stays removed: re-runs and imports check these (no text is stored).
            if (source === 'user') {
              await db.tombstones.bulkPut(records.map((r) => ({ namespace: r.namespace, hash: r.hash, deletedAt: t, reason: event })));
            }
            if (event === 'FORGET') {
              // Erase every trace of the text; keep a content-free record that something was forgotten.
              await db.memoryHistory.where('memoryId').anyOf(found).delete();
              await db.memoryHistory.bulkAdd(found.map((memoryId) => ({ memoryId, event: 'FORGET' as const, oldText: null, newText: null, at: t, source })));
            } else {
              await db.memoryHistory.bulkAdd(
                records.map((r) => ({ memoryId: r.id, event: 'DELETE' as const, oldText: r.text, newText: null, at: t, source, namespace: r.namespace })),
              );
            }
            unique.forEach((id) => batch.remove(id));
            await feedback.dropForMemories(found); // its "not relevant here" rows go with it
            return {
              countDelta: -found.length,
              lexical: () => {
                unique.forEach((id) => {
                  sync.lexical.delete(id);
                });
                feedback.forgetMemories(found);
              },
            };
          },
          { tables: [db.feedback] },
        );
        await written(removed);
      });
    },

    // Vector searches wait for the vector blocks, which load in the background after a cold start;
    // lexical ones (the memory manager) and searches with no embedder to ask (no query vector) do not.
    nearest: async (vector, options) => {
      await sync.vectorLoad;
      return reader.nearest(vector, options);
    },
    inSlot: reader.inSlot,
    embed: reader.embed,
    search: async (query, options) => {
      if ((options?.mode ?? 'hybrid') !== 'lexical' && deps.embedder() !== null) await sync.vectorLoad;
      return reader.search(query, options);
    },
    roundsStating: async (fact) => {
      await sync.vectorLoad;
      return reader.roundsStating(fact);
    },

    rebuildIndexes: () =>
      serial(() => {
        feedback.reset(); // after an erase the rows are gone too
        return sync.rebuild();
      }),

    async addFeedback(input) {
      const model = deps.embedder()?.modelId ?? null;
      const vector = await reader.embed(input.query).catch((error: unknown) => {
        console.warn('[ltm] feedback query not embedded; similar queries are matched by their words:', error);
        return null;
      });
      return feedback.add(input, vector, model);
    },
    removeFeedback: (id) => feedback.remove(id),
    reloadFeedback: () => feedback.reset(),
    feedbackFor: (messageId) => feedback.forMessage(messageId),

    recordAccess: (ids, at = now()) => recordAccess(db, ids, at),

    reembed: (options) => reembed({ db, sync, serial, embedder: deps.embedder }, options),

    missingVectors: (modelId) => missingVectors(sync, modelId),

    staleVectors: () => sync.staleVectors.size,

    whenVectorsLoaded: () => sync.vectorLoad,

    whenIndexed: async () => {
      await Promise.all([serial(async () => undefined), voyLoad]);
    },

    catalog: async (namespace) => sync.catalog(namespace),
    listIds: (namespace, where) =>
      sync.index.listIds(namespace, {
        includeInvalid: where.includeInvalid === true,
        kinds: where.kinds ? new Set(where.kinds) : null,
        contains: where.contains ?? null,
        ...(where.exclude ? { exclude: where.exclude } : {}),
        limit: where.limit,
      }),

    flushSnapshot: () => sync.flushSnapshot(),

    indexStats: () => {
      const model = reader.activeModel();
      const counts = model ? sync.index.vectorCounts().get(model) : undefined;
      return {
        memories: sync.index.size,
        lexical: sync.lexical.size,
        vector: { size: counts?.count ?? 0, modelId: counts ? model : null, dimension: counts?.dim ?? null, voyReady: Voy !== null, voyFailures: 0 },
        open: { ...openStats, repairedAfterOpen: sync.repairedAfterOpen },
      };
    },
  };

  // Voy is not on the search path: the store does not wait for its WASM (`whenIndexed` does). It is
  // fetched and compiled after the open's background work (lexical snapshot, row check), off the
  // start-up path.
  let Voy: VoyClass | null = null;
  const opened = await sync.open(deps.background);
  const voyLoad: Promise<VoyClass | null> = sync.lexicalLoad
    .then(() => loadVoy(deps.loadVoyWasm))
    .catch((error: unknown) => {
      console.warn('[ltm] voy-search unavailable, vector search uses an exact scan:', error);
      return null;
    });
  void voyLoad.then((v) => (Voy = v));
  installReadingHook(db, (id, model) => {
    const v = sync.index.vector(id);
    return v && v.model === model ? v.vector : null;
  });
  const openStats: Omit<StoreOpenStats, 'repairedAfterOpen'> = { ...opened, ms: performance.now() - startedAt, at: Date.now() };
  return store;
}
