/**
 * The long-term memory store: memories in Dexie (`db.memories`), every change in
 * `db.memoryHistory` (Mem0-style history: old text, new text, event, time, source), and two
 * in-memory indexes kept in sync with the table — a lexical BM25 index (MiniSearch, CJK-aware
 * tokenization) and a vector index (Voy) — fused by reciprocal rank fusion at search time.
 *
 * Index restore when a context starts: the indexes are rebuilt from the stored texts and
 * embeddings (`rebuildIndexes`), the Voy part in the background while searches use an exact
 * scan. Restoring a serialized Voy snapshot instead was measured and rejected (see BENCHMARKS.md,
 * "Long-term retrieval": at 10k memories the snapshot is ~84 MB of JSON, and it goes stale on
 * every change), so no snapshot is stored.
 *
 * Writes are serialized (one mutation at a time), so the duplicate check and the index updates
 * never interleave. A write that fails in Dexie leaves the indexes untouched; a failed embedding
 * never loses a memory: it is stored with `embedding: null` (lexical only) until `reembed`.
 */
import type { Embedder } from '../../engines/types';
import type { MemoryEvent, MemoryHistoryRecord, MemoryKind, MemoryRecord, RecallDB } from '../../db/schema';
import type { MemoryPatch, MemoryStore, MemoryView, NewMemory, RetrievalQuery, RetrievedMemory } from './types';
import { MAX_MEMORY_TEXT_CHARS, memoryHash, MemoryTextTooLongError } from './text';
import { memorySlot, type SlotKey } from './slots';
import { contentTerms, termCoverage } from './extraction/language';
import { LexicalIndex } from './retrieval/lexical';
import { VectorIndex, l2normalize, type VectorIndexStats } from './retrieval/vector';
import { loadVoy, type VoyClass } from './retrieval/voy';
import {
  CURRENT_STATE_WEIGHTING,
  DEFAULT_FUSION_WEIGHTS,
  DEFAULT_WEIGHTING,
  reciprocalRankFusion,
  recencyTieBreak,
  weightedScore,
  type FusionWeights,
  type WeightingOptions,
} from './retrieval/fusion';
import { asksForCurrentState, parseTimeFilter, type TimeFilter } from './retrieval/time-filter';

/** Share of a fact's content words a round's text must contain to count as stating it (`roundsStating`). */
export const ROUND_COVERAGE = 0.75;

/** Which retrievers a search uses (benchmarks compare them; the app always uses `hybrid`). */
export type RetrievalMode = 'hybrid' | 'lexical' | 'vector';

/** Options of `search` beyond the shared `RetrievalQuery`. */
export interface SearchOptions {
  /** Default `hybrid`. */
  mode?: RetrievalMode;
  /** Candidates taken from each retriever before fusion (default `max(50, 5·k)`). */
  depth?: number;
  /** Recency/importance weighting (default `DEFAULT_WEIGHTING`). */
  weighting?: WeightingOptions;
  /** Weights of the lexical and vector lists in RRF (default: the store's `fusionWeights`). */
  fusion?: FusionWeights;
  /** Recency tie-break between candidates that match the same query terms (default true). */
  recencyTieBreak?: boolean;
  /** Apply time filters stated in the query (default true). */
  timeFilters?: boolean;
}

/** Sizes and state of the indexes. */
export interface IndexStats {
  /** Memories in the store (all namespaces, valid or not). */
  memories: number;
  /** Memories in the lexical index (= `memories` when in sync). */
  lexical: number;
  /** Vector index state (memories embedded with its model). */
  vector: VectorIndexStats;
}

/** The store returned by `createMemoryStore`: `MemoryStore` plus retrieval and maintenance. */
export interface LongTermStore extends MemoryStore {
  /**
   * Hybrid retrieval: BM25 (MiniSearch) and vector (Voy) candidates, each filtered to the
   * namespace, to currently valid memories (unless `includeInvalid`) and to a time range stated
   * in the query ("last week", "上个月", see `retrieval/time-filter.ts`), fused with (weighted)
   * reciprocal rank fusion (k = 60) and weighted by recency and importance (`retrieval/fusion.ts`;
   * a query that asks for the current state, "… now?" / "现在…", weights recency more); then,
   * among candidates that match the same query terms, the newest comes first (`recencyTieBreak`).
   * When a time filter leaves candidates but neither retriever matches, the newest memories in
   * the range are returned. Does not record accesses (see `recordAccess`).
   * @returns at most `query.k` (default 8) memories, best first.
   */
  search(query: RetrievalQuery, options?: SearchOptions): Promise<RetrievedMemory[]>;
  /** Re-reads every memory from Dexie and rebuilds both indexes (Voy in the background). */
  rebuildIndexes(): Promise<void>;
  /** Sets `lastAccessedAt = at` and increments `accessCount` of the given memories (unknown ids are ignored). */
  recordAccess(ids: string[], at?: number): Promise<void>;
  /**
   * Embeds every memory whose `embeddingModel` is not the current embedder's model (after an
   * embedding-model change, or stored while no embedder was available), in batches. Idempotent
   * and resumable: an aborted run leaves finished batches done. No history event (the text does
   * not change). Without an embedder it embeds nothing.
   * @returns how many were embedded and how many still need it.
   * @throws the embedder's EngineError when embedding fails, or the abort reason when aborted.
   */
  reembed(options?: { batchSize?: number; signal?: AbortSignal; onProgress?: (done: number, total: number) => void }): Promise<{ embedded: number; remaining: number }>;
  /** Resolves when the Voy index holds every vector (searches work before, by exact scan). */
  whenIndexed(): Promise<void>;
  /**
   * The episodic rounds of `fact.namespace` that state `fact`: rounds citing one of its source
   * messages (the round it was extracted from), and rounds whose text contains nearly all of its
   * content words (coverage ≥ `ROUND_COVERAGE`, the "forget" command's strong match). For a fact
   * that is itself a round, `[]`. Newest first; valid or not.
   */
  roundsStating(fact: Pick<MemoryRecord, 'id' | 'namespace' | 'kind' | 'text' | 'sourceMessageIds'>): Promise<MemoryView[]>;
  indexStats(): IndexStats;
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
   * file in `node_modules/voy-search/`). When it fails the store still works, with an exact
   * vector scan instead of Voy.
   */
  loadVoyWasm: () => Promise<BufferSource>;
  /** Weights of the lexical and vector lists in RRF, default `DEFAULT_FUSION_WEIGHTS` (plain RRF). */
  fusionWeights?: FusionWeights;
  /**
   * Called (synchronously, after the write) whenever a memory was stored or re-written without a
   * vector (no embedder was ready, or embedding failed): the core queues `ltm.reembed` so every
   * memory eventually gets its vector. Must not throw.
   */
  onMissingEmbedding?: () => void;
}

/** What the indexes need about a memory to filter and weight candidates without Dexie. */
interface Meta {
  namespace: string;
  createdAt: number;
  updatedAt: number;
  validFrom: number | null;
  validUntil: number | null;
  importance: number;
  pinned: boolean;
  kind: MemoryKind;
  /** `subject:slot` of the text (`memorySlot`), `null` when it is about no slot. */
  slot: string | null;
}

const KINDS: ReadonlySet<MemoryKind> = new Set(['profile', 'preference', 'event', 'fact', 'instruction', 'episodic', 'summary']);

const metaOf = (r: MemoryRecord): Meta => ({
  namespace: r.namespace,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
  validFrom: r.validFrom,
  validUntil: r.validUntil,
  importance: r.importance,
  pinned: r.pinned,
  kind: r.kind,
  slot: slotLabel(memorySlot(r.text)),
});

/** One string per slot key, for comparing in the index (`null` when the text is about no slot). */
const slotLabel = (key: SlotKey | null): string | null => (key ? `${key.subject}:${key.slot}` : null);

/** Whether a memory is valid at `t`: its validity has not ended (a future `validFrom` is fine: plans). */
const validAt = (m: { validUntil: number | null }, t: number) => m.validUntil === null || m.validUntil > t;

/** Whether a memory's time (when it happened, or when it was said) is in the filter's range. */
const inRange = (m: Meta, f: TimeFilter) =>
  (m.validFrom !== null && m.validFrom >= f.start && m.validFrom < f.end) || (m.createdAt >= f.start && m.createdAt < f.end);

/**
 * Records that memories were retrieved: `lastAccessedAt = at` (ms epoch), `accessCount + 1`, in
 * one Dexie transaction. Unknown ids are ignored; content and `updatedAt` do not change.
 */
export async function recordAccess(db: RecallDB, ids: string[], at: number): Promise<void> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return;
  await db.memories
    .where('id')
    .anyOf(unique)
    .modify((r) => {
      r.lastAccessedAt = at;
      r.accessCount += 1;
    });
}

/**
 * Whether the user deleted or forgot a memory with this normalized-text hash (`memoryHash`) in
 * `namespace` (a `tombstones` row; see `TombstoneRecord`). Work that re-creates memories on its
 * own — extraction/consolidation re-runs, episodic rounds, import — must skip such a text.
 */
export async function isTombstoned(db: RecallDB, namespace: string, hash: string): Promise<boolean> {
  return (await db.tombstones.get([namespace, hash])) !== undefined;
}

/** Batch form of `isTombstoned`: the subset of `hashes` tombstoned in `namespace` (one indexed read). */
export async function tombstonedHashes(db: RecallDB, namespace: string, hashes: string[]): Promise<Set<string>> {
  const unique = [...new Set(hashes)];
  if (unique.length === 0) return new Set();
  const rows = await db.tombstones.bulkGet(unique.map((hash) => [namespace, hash] as [string, string]));
  return new Set(rows.flatMap((r) => (r ? [r.hash] : [])));
}

/** The memory without its embedding. */
export function toView(record: MemoryRecord): MemoryView {
  const { embedding: _embedding, ...view } = record;
  return view;
}

/**
 * Opens the store over `deps.db` and builds its indexes from the stored memories.
 * @throws RangeError when `deps.fusionWeights` holds a negative or non-finite weight; otherwise
 *   only when Dexie cannot be read (a missing Voy WASM degrades to an exact vector scan).
 */
export async function createMemoryStore(deps: MemoryStoreDeps): Promise<LongTermStore> {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const fusionWeights = deps.fusionWeights ?? DEFAULT_FUSION_WEIGHTS;
  reciprocalRankFusion([], undefined, [fusionWeights.lexical, fusionWeights.vector]); // validates: RangeError when < 0 or not finite
  let Voy: VoyClass | null = null;
  try {
    Voy = await loadVoy(deps.loadVoyWasm);
  } catch (error) {
    console.warn('[ltm] voy-search unavailable, vector search uses an exact scan:', error);
  }
  const meta = new Map<string, Meta>();
  const lexical = new LexicalIndex();
  const vectors = new VectorIndex(Voy);

  let chain: Promise<unknown> = Promise.resolve();
  /** Runs mutations one at a time, in call order. */
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  }

  function indexRecord(r: MemoryRecord): void {
    meta.set(r.id, metaOf(r));
    lexical.set(r.id, r.text, r.topic);
    if (r.embedding && r.embeddingModel) vectors.set(r.id, r.embedding, r.embeddingModel);
    else vectors.delete(r.id);
  }

  function unindex(id: string): void {
    meta.delete(id);
    lexical.delete(id);
    vectors.delete(id);
  }

  async function embed(text: string): Promise<Float32Array | null> {
    const embedder = deps.embedder();
    if (!embedder) return null;
    const [vector] = await embedder.embed([text]);
    if (!vector) throw new Error(`Embedder ${embedder.modelId} returned no vector`);
    return l2normalize(vector);
  }

  /** Embeds for storage; a failure is logged and gives `null` (the memory is kept, lexical only). */
  async function embedForStorage(text: string): Promise<{ embedding: Float32Array | null; embeddingModel: string | null }> {
    const embedder = deps.embedder();
    if (!embedder) return { embedding: null, embeddingModel: null };
    try {
      return { embedding: await embed(text), embeddingModel: embedder.modelId };
    } catch (error) {
      console.warn('[ltm] embedding failed; memory stored without a vector until re-embedding:', error);
      return { embedding: null, embeddingModel: null };
    }
  }

  function checkText(text: string): string {
    if (typeof text !== 'string' || !text.trim()) throw new Error('Memory text is empty');
    if (text.length > MAX_MEMORY_TEXT_CHARS) throw new MemoryTextTooLongError(text.length);
    return text;
  }

  async function rebuildIndexes(): Promise<void> {
    const records = await db.memories.toArray();
    meta.clear();
    lexical.clear();
    for (const r of records) {
      meta.set(r.id, metaOf(r));
      lexical.set(r.id, r.text, r.topic);
    }
    // One model per vector index: the current embedder's, else the most common stored one.
    let model = deps.embedder()?.modelId ?? null;
    if (!model) {
      const counts = new Map<string, number>();
      for (const r of records) if (r.embedding && r.embeddingModel) counts.set(r.embeddingModel, (counts.get(r.embeddingModel) ?? 0) + 1);
      model = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
    }
    const entries = records.filter((r) => r.embedding && r.embeddingModel === model).map((r) => [r.id, r.embedding!] as [string, Float32Array]);
    const embedder = deps.embedder();
    // The current embedder fixes the dimension; otherwise the most common one wins (see replaceAll).
    void vectors.replaceAll(entries, model, embedder && embedder.modelId === model ? embedder.dimension : null);
  }

  async function applyUpdate(id: string, patch: MemoryPatch, source: string, event: MemoryEvent): Promise<MemoryRecord> {
    const old = await db.memories.get(id);
    if (!old) throw new Error(`Unknown memory id "${id}"`);
    const t = now();
    const next: MemoryRecord = { ...old, ...patch, updatedAt: t };
    if (patch.kind !== undefined && !KINDS.has(patch.kind)) throw new Error(`Unknown memory kind "${String(patch.kind)}"`);
    if (patch.importance !== undefined) next.importance = Math.min(1, Math.max(0, patch.importance));
    if (patch.text !== undefined && patch.text !== old.text) {
      checkText(patch.text);
      next.hash = memoryHash(patch.text);
      Object.assign(next, await embedForStorage(patch.text));
    }
    next.current = validAt(next, t) ? 1 : 0;
    const missingVector = patch.text !== undefined && patch.text !== old.text && next.embedding === null;
    const history: MemoryHistoryRecord = { memoryId: id, event, oldText: old.text, newText: next.text, at: t, source };
    await db.transaction('rw', db.memories, db.memoryHistory, async () => {
      // Keep access statistics written meanwhile by `recordAccess` (which is not serialized).
      const fresh = await db.memories.get(id);
      if (!fresh) throw new Error(`Memory "${id}" was removed during the update`);
      next.lastAccessedAt = fresh.lastAccessedAt;
      next.accessCount = fresh.accessCount;
      await db.memories.put(next);
      await db.memoryHistory.add(history);
    });
    indexRecord(next);
    if (missingVector) deps.onMissingEmbedding?.();
    return next;
  }

  async function search(query: RetrievalQuery, options: SearchOptions = {}): Promise<RetrievedMemory[]> {
    const t = query.now ?? now();
    const k = Math.max(1, Math.floor(query.k ?? 8));
    const mode = options.mode ?? 'hybrid';
    const depth = options.depth ?? Math.max(50, 5 * k);
    const filter = options.timeFilters === false ? null : parseTimeFilter(query.text, t);
    const weighting = options.weighting ?? (options.timeFilters !== false && asksForCurrentState(query.text) ? CURRENT_STATE_WEIGHTING : DEFAULT_WEIGHTING);
    const text = filter ? filter.rest : query.text;

    const eligibleIds: string[] = [];
    for (const [id, m] of meta) {
      if (m.namespace !== query.namespace) continue;
      if (!query.includeInvalid && !validAt(m, t)) continue;
      if (filter && !inRange(m, filter)) continue;
      eligibleIds.push(id);
    }
    if (eligibleIds.length === 0) return [];
    const eligible = new Set(eligibleIds);
    const isEligible = (id: string) => eligible.has(id);

    const lexicalHits = mode === 'vector' ? [] : lexical.search(text, depth, isEligible);
    const lexicalIds = lexicalHits.map((h) => h.id);
    let vectorIds: string[] = [];
    const embedder = deps.embedder();
    if (mode !== 'lexical' && embedder && vectors.size > 0 && vectors.modelId === embedder.modelId && text.trim()) {
      const q = await embed(text);
      if (q) vectorIds = vectors.search(q, depth, isEligible, eligibleIds.length, eligibleIds).map((h) => h.id);
    }

    const weights = options.fusion ?? fusionWeights;
    const fused = reciprocalRankFusion([lexicalIds, vectorIds], undefined, [weights.lexical, weights.vector]);
    let ranked: { id: string; score: number }[];
    if (fused.size === 0 && filter) {
      // "What did I say last week?": nothing to match on but a time range — newest first.
      ranked = eligibleIds
        .map((id) => ({ id, score: 0, at: meta.get(id)!.validFrom ?? meta.get(id)!.createdAt }))
        .sort((a, b) => b.at - a.at)
        .map(({ id, score }) => ({ id, score }));
    } else {
      ranked = [...fused].map(([id, rrf]) => {
        const m = meta.get(id)!;
        return { id, score: weightedScore(rrf, t - m.updatedAt, m.pinned ? 1 : m.importance, weighting) };
      });
      ranked.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
      if (options.recencyTieBreak !== false) {
        // Tied candidates trade places and scores (the score is the position's), so scores stay in rank order.
        const order = recencyTieBreak(ranked.map((r) => r.id), new Map(lexicalHits.map((h) => [h.id, h.terms])), (id) => meta.get(id)!.updatedAt);
        const before = ranked;
        ranked = order.map((id, i) => ({ id, score: before[i]!.score }));
      }
    }
    const top = ranked.slice(0, k);
    const records = await db.memories.bulkGet(top.map((r) => r.id));
    const lexicalRank = new Map(lexicalIds.map((id, i) => [id, i + 1]));
    const vectorRank = new Map(vectorIds.map((id, i) => [id, i + 1]));
    const results: RetrievedMemory[] = [];
    top.forEach(({ id, score }, i) => {
      const record = records[i];
      if (!record) return; // removed between the index lookup and the read
      const ranks: RetrievedMemory['ranks'] = {};
      if (lexicalRank.has(id)) ranks.lexical = lexicalRank.get(id)!;
      if (vectorRank.has(id)) ranks.vector = vectorRank.get(id)!;
      results.push({ memory: toView(record), score, ranks });
    });
    return results;
  }

  const store: LongTermStore = {
    get: (id) => db.memories.get(id),

    add(input: NewMemory, source: string) {
      return serial(async () => {
        const text = checkText(input.text);
        if (!input.namespace) throw new Error('Memory namespace is empty');
        if (!KINDS.has(input.kind)) throw new Error(`Unknown memory kind "${String(input.kind)}"`);
        const t = now();
        const hash = memoryHash(text);
        const duplicate = await db.memories
          .where('hash')
          .equals(hash)
          .filter((r) => r.namespace === input.namespace && validAt(r, t))
          .first();
        if (duplicate) return { memory: duplicate, created: false };
        const createdAt = input.createdAt ?? t;
        const validUntil = input.validUntil ?? null;
        const record: MemoryRecord = {
          id: crypto.randomUUID(),
          namespace: input.namespace,
          kind: input.kind,
          text,
          ...(input.topic ? { topic: input.topic } : {}),
          ...(await embedForStorage(text)),
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
          hash,
        };
        await db.transaction('rw', db.memories, db.memoryHistory, db.tombstones, async () => {
          await db.memories.add(record);
          await db.memoryHistory.add({ memoryId: record.id, event: 'ADD', oldText: null, newText: text, at: t, source });
          // The user stores this text again on purpose ("remember …", memory manager): lift its tombstone.
          if (source === 'user') await db.tombstones.delete([record.namespace, hash]);
        });
        indexRecord(record);
        if (record.embedding === null) deps.onMissingEmbedding?.();
        return { memory: record, created: true };
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
        await db.transaction('rw', db.memories, db.memoryHistory, db.tombstones, async () => {
          const records = (await db.memories.bulkGet(unique)).filter((r): r is MemoryRecord => r !== undefined);
          const found = records.map((r) => r.id);
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
            await db.memoryHistory.bulkAdd(records.map((r) => ({ memoryId: r.id, event: 'DELETE' as const, oldText: r.text, newText: null, at: t, source })));
          }
        });
        unique.forEach(unindex);
      });
    },

    async nearest(vector, options) {
      const current = deps.embedder()?.modelId;
      if (vectors.size === 0 || (current && vectors.modelId !== current)) return [];
      const t = now();
      const eligibleIds: string[] = [];
      for (const [id, m] of meta) if (m.namespace === options.namespace && (options.includeInvalid || validAt(m, t)) && vectors.has(id)) eligibleIds.push(id);
      const eligible = new Set(eligibleIds);
      const hits = vectors.search(vector, options.k, (id) => eligible.has(id), eligibleIds.length, eligibleIds);
      const records = await db.memories.bulkGet(hits.map((h) => h.id));
      return hits.flatMap((h, i) => (records[i] ? [{ memory: toView(records[i]!), similarity: h.similarity }] : []));
    },

    async inSlot(key, options) {
      const t = now();
      const label = slotLabel(key);
      if (label === null) return [];
      const kinds = options.kinds ? new Set(options.kinds) : null;
      const ids: { id: string; at: number }[] = [];
      for (const [id, m] of meta) {
        if (m.slot !== label || m.namespace !== options.namespace || !validAt(m, t) || (kinds && !kinds.has(m.kind))) continue;
        ids.push({ id, at: m.updatedAt });
      }
      ids.sort((a, b) => b.at - a.at || a.id.localeCompare(b.id));
      const records = await db.memories.bulkGet(ids.slice(0, Math.max(0, options.k)).map((x) => x.id));
      return records.flatMap((r) => (r ? [toView(r)] : []));
    },

    embed,

    search,

    rebuildIndexes: () => serial(rebuildIndexes),

    recordAccess: (ids, at = now()) => recordAccess(db, ids, at),

    async reembed(options = {}) {
      const embedder = deps.embedder();
      const needs = (r: MemoryRecord) => r.embeddingModel !== embedder?.modelId || r.embedding === null;
      if (!embedder) return { embedded: 0, remaining: await db.memories.count() };
      const total = await db.memories.filter(needs).count();
      const batchSize = Math.max(1, options.batchSize ?? 32);
      let embedded = 0;
      let done = 0;
      // Pages in primary-key order: at most `batchSize` records are held at a time, whatever the store's size.
      let after: string | null = null;
      for (;;) {
        options.signal?.throwIfAborted();
        const range = after === null ? db.memories.toCollection() : db.memories.where(':id').above(after);
        const batch: MemoryRecord[] = await range.filter(needs).limit(batchSize).toArray();
        if (batch.length === 0) break;
        after = batch[batch.length - 1]!.id;
        const texts = batch.map((r) => r.text);
        const vectorsOut = await embedder.embed(texts, options.signal);
        await serial(async () => {
          for (const [i, r] of batch.entries()) {
            const vector = vectorsOut[i];
            if (!vector) throw new Error(`Embedder ${embedder.modelId} returned ${vectorsOut.length} vectors for ${texts.length} texts`);
            const fresh = await db.memories.get(r.id);
            if (!fresh || fresh.text !== r.text) continue; // removed or edited meanwhile (the edit embedded it)
            const embedding = l2normalize(vector);
            await db.memories.update(r.id, { embedding, embeddingModel: embedder.modelId });
            vectors.set(r.id, embedding, embedder.modelId);
            embedded += 1;
          }
        });
        done += batch.length;
        options.onProgress?.(Math.min(total, done), total);
      }
      const remaining = await db.memories.filter(needs).count();
      return { embedded, remaining };
    },

    whenIndexed: () => vectors.whenReady(),

    async roundsStating(fact) {
      if (fact.kind === 'episodic') return [];
      const bySource = fact.sourceMessageIds.length > 0 ? await db.memories.where('sourceMessageIds').anyOf(fact.sourceMessageIds).toArray() : [];
      const terms = contentTerms(fact.text);
      const byText =
        terms.length === 0
          ? []
          : await search({ text: fact.text, namespace: fact.namespace, k: 50, includeInvalid: true }, { mode: 'lexical', timeFilters: false }).then((hits) =>
              hits.map((h) => h.memory).filter((m) => m.kind === 'episodic' && termCoverage(terms, m.text) >= ROUND_COVERAGE),
            );
      const rounds = new Map<string, MemoryView>();
      for (const m of [...bySource.map(toView), ...byText]) {
        if (m.kind === 'episodic' && m.namespace === fact.namespace && m.id !== fact.id) rounds.set(m.id, m);
      }
      return [...rounds.values()].sort((a, b) => b.createdAt - a.createdAt);
    },

    indexStats: () => ({ memories: meta.size, lexical: lexical.size, vector: vectors.stats() }),
  };

  await store.rebuildIndexes();
  return store;
}
