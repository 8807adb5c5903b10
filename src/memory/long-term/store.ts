/**
 * The long-term memory store: memories in Dexie (`db.memories`), every change in
 * `db.memoryHistory` (Mem0-style history: old text, new text, event, time, source), and two
 * indexes kept in sync with the table — a lexical BM25 index (MiniSearch, CJK-aware
 * tokenization) and an exact vector index over contiguous f32 blocks — fused by a convex
 * combination of normalized scores at search time (`retrieval/fusion.ts`).
 *
 * Opening without a rebuild: the index is persisted in `db.memoryIndex` (layout in
 * `retrieval/blocks.ts`): meta and vector blocks, a header (generation, row count, ids changed
 * since the lexical snapshot) and a MiniSearch snapshot. `createMemoryStore` reads that table
 * (no memory row, no text), loads the snapshot and re-indexes only the `dirty` ids. When the
 * header is missing, its row count disagrees with `db.memories`, or rows are marked `pending`
 * (written behind the store's back with an inline vector: an import killed before its
 * `rebuildIndexes`; see `MemoryRecord.pending`), the whole index is rebuilt from the rows and persisted
 * again (`rebuildIndexes`, also run after an import or an erase).
 *
 * Writes are serialized (one mutation at a time), so the duplicate check and the index updates
 * never interleave. Each write puts the memory row, its history entry, the blocks it changes and
 * the header in ONE Dexie transaction; the live index changes only after it committed, so a
 * write that fails leaves rows, persisted index and live index as they were. The lexical
 * snapshot is written later (idle, `SNAPSHOT_DELAY_MS`); until then the header's `dirty` list
 * says which memories to re-index on open. A failed embedding never loses a memory: it is stored
 * without a vector (lexical only) until `reembed`.
 *
 * Rows no longer hold their `embedding` (schema v3): it lives in the vector blocks. While a store
 * is open over a database, reading a row through Dexie gives the `MemoryRecord` shape back
 * (`embedding` filled from the blocks by a reading hook), so export, maintenance and
 * consolidation read vectors as before. A row written by someone else WITH an `embedding` field
 * (an import) keeps it until `rebuildIndexes` moves it into the blocks, in one transaction.
 *
 * Voy (k-d tree) is loaded but not used for search: measured side by side with the block scan
 * (bench/vector-layout.bench.ts) it never beat the exact scan at 384 dimensions, from 1k to 100k
 * vectors, and costs seconds of build and several times the vectors' size in memory.
 */
import Dexie from 'dexie';
import type { Embedder } from '../../engines/types';
import type { MemoryEvent, MemoryHistoryRecord, MemoryKind, MemoryRecord, RecallDB } from '../../db/schema';
import type { MemoryPatch, MemoryStore, MemoryView, NewMemory, RetrievalQuery, RetrievedMemory } from './types';
import { MAX_MEMORY_TEXT_CHARS, memoryHash, MemoryTextTooLongError, normalizeMemoryText } from './text';
import type { SlotKey } from './slots';
import { contentTerms, termCoverage } from '../../text/terms';
import { LexicalIndex } from './retrieval/lexical';
import { l2normalize, type VectorIndexStats } from './retrieval/vector';
import { loadVoy, type VoyClass } from './retrieval/voy';
import {
  BlockIndex,
  indexedOf,
  layoutFromRows,
  type IndexBatch,
  type LayoutRow,
  type IndexHeaderRecord,
  type LexicalSnapshotRecord,
  type ScanFilter,
} from './retrieval/blocks';
import {
  CURRENT_STATE_WEIGHTING,
  DEFAULT_WEIGHTING,
  convexFusion,
  fusionWeightsFor,
  recencyTieBreak,
  weightedScore,
  type FusionWeights,
  type WeightingOptions,
} from './retrieval/fusion';
import { asksForCurrentState, parseTimeFilter } from './retrieval/time-filter';

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
  /** Weights of the lexical and vector lists in convex fusion (default: the store's `fusionWeights`). */
  fusion?: FusionWeights;
  /** Recency tie-break between candidates that match the same query terms (default true). */
  recencyTieBreak?: boolean;
  /** Apply time filters stated in the query (default true). */
  timeFilters?: boolean;
}

/** One memory as the memory manager filters it (see `LongTermStore.catalog`). */
export interface CatalogEntry {
  id: string;
  kind: MemoryKind;
  current: 0 | 1;
  pinned: boolean;
  /** ms epoch. */
  updatedAt: number;
  /** The text normalized by `normalizeMemoryText` (NFKC, lower case, spaces collapsed). */
  normalized: string;
}

/** How the store became searchable when it was created (the cold-start hook of the benchmarks). */
export interface StoreOpenStats {
  /** `blocks`: from the persisted index (+ snapshot); `rebuilt`: repaired from the rows; `empty`: nothing stored. */
  via: 'blocks' | 'rebuilt' | 'empty';
  /** Milliseconds from `createMemoryStore` being called to the store answering searches. */
  ms: number;
  /** When it became searchable (ms epoch, `Date.now()`). */
  at: number;
  /** Ids re-indexed from the header's `dirty` list (changes the lexical snapshot had not caught). */
  replayed: number;
}

/** Sizes and state of the indexes. */
export interface IndexStats {
  /** Memories in the store (all namespaces, valid or not). */
  memories: number;
  /** Memories in the lexical index (= `memories` when in sync). */
  lexical: number;
  /**
   * Vectors of the active model (the current embedder's, else the most common stored one), all
   * namespaces. `voyReady` says whether the Voy module loaded (Voy is not on the search path, see
   * the module doc); `voyFailures` is always 0.
   */
  vector: VectorIndexStats;
  /** How the store opened. */
  open: StoreOpenStats;
}

/** The store returned by `createMemoryStore`: `MemoryStore` plus retrieval and maintenance. */
export interface LongTermStore extends MemoryStore {
  /**
   * Adds many memories at once, with the rules of `add` (exact duplicates of a stored, still
   * valid memory of the same namespace — or of an earlier input of the batch — return that
   * memory with `created: false`): one read transaction for the duplicate check, one embedding call,
   * one transaction for the rows and their `ADD` history, then the index updates. `add` is this
   * with one input. Results are in input order.
   * @throws Error naming the input (1-based) when one has an empty text or namespace or an
   *   unknown kind; nothing is written then.
   */
  addMany(inputs: readonly NewMemory[], source: string): Promise<{ memory: MemoryRecord; created: boolean }[]>;
  /**
   * Hybrid retrieval: BM25 (MiniSearch) and exact vector (block scan) candidates, each filtered to the
   * namespace, to currently valid memories (unless `includeInvalid`) and to a time range stated
   * in the query ("last week", "上个月", see `retrieval/time-filter.ts`), fused by a convex
   * combination of normalized scores with the embedding model's calibrated weights, plus a small
   * recency and importance bonus (`retrieval/fusion.ts`; a query that asks for the current
   * state, "… now?" / "现在…", gets a larger recency bonus); then,
   * among candidates that match the same query terms, the newest comes first (`recencyTieBreak`).
   * When a time filter leaves candidates but neither retriever matches, the newest memories in
   * the range are returned. Does not record accesses (see `recordAccess`).
   * @returns at most `query.k` (default 8) memories, best first.
   */
  search(query: RetrievalQuery, options?: SearchOptions): Promise<RetrievedMemory[]>;
  /**
   * Re-reads every memory row from Dexie and rebuilds the persisted index (blocks, header,
   * lexical snapshot) in one transaction that also moves any `embedding` found in a row into the
   * blocks (rows written by an import). The repair path: O(rows).
   */
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
  reembed(options?: {
    batchSize?: number;
    signal?: AbortSignal;
    onProgress?: (done: number, total: number) => void;
  }): Promise<{ embedded: number; remaining: number }>;
  /** Resolves when pending index writes are done (the index itself is complete once the store is created). */
  whenIndexed(): Promise<void>;
  /** Writes the lexical snapshot now if changes are pending (otherwise done when idle). */
  flushSnapshot(): Promise<void>;
  /**
   * What the memory manager lists and filters by, for every memory of `namespace`, without
   * vectors: built by one text-only read of the namespace's rows on first use, then kept up to
   * date by the store's writes (dropped by `rebuildIndexes`). Order: unspecified.
   */
  catalog(namespace: string): Promise<readonly CatalogEntry[]>;
  /**
   * How many memories lack a vector of `modelId` (`null`: lack any vector), from the index: no
   * row is read. The core queues `ltm.reembed` when it is > 0.
   */
  missingVectors(modelId: string | null): number;
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
   * file in `node_modules/voy-search/`). Loaded while the index opens; a failure is logged and
   * changes nothing (search is an exact block scan either way).
   */
  loadVoyWasm: () => Promise<BufferSource>;
  /** Weights of the lexical and vector lists in convex fusion, default the embedder's calibrated weights (`fusionWeightsFor`). */
  fusionWeights?: FusionWeights;
  /**
   * Called (synchronously, after the write) whenever a memory was stored or re-written without a
   * vector (no embedder was ready, or embedding failed): the core queues `ltm.reembed` so every
   * memory eventually gets its vector. Must not throw.
   */
  onMissingEmbedding?: () => void;
}

/** One string per slot key, for comparing in the index (`null` when the text is about no slot). */
const slotLabel = (key: SlotKey | null): string | null => (key ? `${key.subject}:${key.slot}` : null);

/**
 * Records that memories were retrieved: `lastAccessedAt = at` (ms epoch), `accessCount + 1`, in
 * one Dexie transaction. Unknown ids are ignored; content and `updatedAt` do not change.
 * Duplicate ids in one call count once.
 */
export async function recordAccess(db: RecallDB, ids: string[], at: number): Promise<void> {
  await recordAccesses(db, new Map([...new Set(ids)].map((id) => [id, { count: 1, at }])));
}

/**
 * Writes a batch of accesses in one read-write transaction on `memories`: for each memory id,
 * `accessCount += count` and `lastAccessedAt = max(stored, at)` (ms epoch). Reads the rows by
 * primary key (`bulkGet`) and writes them back (`bulkPut`): no cursor, so the cost is O(ids), not
 * O(table) (a `where('id').anyOf(…).modify` walks a key cursor). Unknown ids are ignored; content
 * and `updatedAt` do not change.
 */
export async function recordAccesses(db: RecallDB, accesses: ReadonlyMap<string, { count: number; at: number }>): Promise<void> {
  if (accesses.size === 0) return;
  const ids = [...accesses.keys()];
  await db.transaction('rw', db.memories, async () => {
    const rows = (await db.memories.bulkGet(ids)).filter((r): r is MemoryRecord => r !== undefined);
    for (const r of rows) {
      const a = accesses.get(r.id)!;
      r.lastAccessedAt = Math.max(r.lastAccessedAt ?? a.at, a.at);
      r.accessCount += a.count;
    }
    if (rows.length > 0) await db.memories.bulkPut(rows);
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

const KINDS: ReadonlySet<MemoryKind> = new Set(['profile', 'preference', 'event', 'fact', 'instruction', 'episodic', 'summary']);

/** Whether a memory is valid at `t`: its validity has not ended (a future `validFrom` is fine: plans). */
const validAt = (m: { validUntil: number | null }, t: number) => m.validUntil === null || m.validUntil > t;

/** Whether a row read raw from IndexedDB still holds its own `embedding` field (v1 rows, imports). */
const holdsEmbedding = (row: object): boolean => Object.prototype.hasOwnProperty.call(row, 'embedding');

/** Idle time after the last write before the lexical snapshot is written (ms). */
export const SNAPSHOT_DELAY_MS = 1500;
/** Dirty ids after which the snapshot is written without waiting for idle. */
const SNAPSHOT_DIRTY_MAX = 512;

/** Which live store's vectors the reading hook of a database attaches (the latest store opened over it). */
const hookTargets = new WeakMap<RecallDB, { vectorOf(id: string, model: string | null): Float32Array | null }>();

/**
 * Installs (once per database) the reading hook that gives rows their `embedding` back from the
 * latest store opened over `db`. A row that still holds an `embedding` field is left as it is.
 */
const hooked = new WeakSet<RecallDB>();
function installReadingHook(db: RecallDB): void {
  if (hooked.has(db)) return;
  hooked.add(db);
  db.memories.hook('reading', (row: MemoryRecord | undefined) => {
    if (row && !holdsEmbedding(row)) (row as MemoryRecord).embedding = hookTargets.get(db)?.vectorOf(row.id, row.embeddingModel) ?? null;
    return row as MemoryRecord;
  });
}

/** A row as stored since v3: the record without its embedding. */
const toRow = (record: MemoryRecord): MemoryRecord => {
  const { pending: _pending, ...row } = toView(record);
  return row as MemoryRecord;
};

/**
 * Opens the store over `deps.db`: reads the persisted index (see module doc) and repairs it from
 * the rows when it disagrees with them. Resolves when searches are answered; `indexStats().open`
 * says how long that took.
 * @throws RangeError when `deps.fusionWeights` holds a negative or non-finite weight; otherwise
 *   only when Dexie cannot be read (a missing Voy WASM is logged and changes nothing).
 */
export async function createMemoryStore(deps: MemoryStoreDeps): Promise<LongTermStore> {
  const startedAt = performance.now();
  const { db } = deps;
  const now = deps.now ?? Date.now;
  if (deps.fusionWeights) convexFusion([], [], deps.fusionWeights); // validates: RangeError when < 0 or not finite
  const voyLoad: Promise<VoyClass | null> = loadVoy(deps.loadVoyWasm).catch((error: unknown) => {
    console.warn('[ltm] voy-search unavailable, vector search uses an exact scan:', error);
    return null;
  });

  let index = new BlockIndex();
  let lexical = new LexicalIndex();
  /** Generation of the header the live index matches. */
  let gen = 0;
  let snapshotTimer: ReturnType<typeof setTimeout> | null = null;
  /** Catalog per namespace, built on first use (see `catalog`). */
  let catalogs = new Map<string, Map<string, CatalogEntry>>();
  const catalogEntry = (r: MemoryRecord): CatalogEntry => ({
    id: r.id,
    kind: r.kind,
    current: r.current,
    pinned: r.pinned,
    updatedAt: r.updatedAt,
    normalized: normalizeMemoryText(r.text),
  });
  function catalogPut(r: MemoryRecord): void {
    for (const [ns, entries] of catalogs) if (ns !== r.namespace) entries.delete(r.id);
    catalogs.get(r.namespace)?.set(r.id, catalogEntry(r));
  }
  function catalogDelete(id: string): void {
    for (const entries of catalogs.values()) entries.delete(id);
  }
  let snapshotRun: Promise<void> = Promise.resolve();

  let chain: Promise<unknown> = Promise.resolve();
  /** Runs mutations one at a time, in call order. */
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
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

  /** The model whose vectors answer: the current embedder's, else the one with most vectors. */
  function activeModel(): string | null {
    const current = deps.embedder()?.modelId;
    if (current) return current;
    let best: string | null = null;
    let most = 0;
    for (const [model, { count }] of index.vectorCounts()) if (count > most) [best, most] = [model, count];
    return best;
  }

  /**
   * Runs `write` in one transaction over the rows, the history and the index: `write` puts rows
   * and history and records its index changes in the batch; the touched blocks and the new
   * header (generation + 1, row count + `countDelta`, `ids` added to `dirty`) are written in the
   * same transaction. The live index and the lexical index change only after the commit.
   */
  async function writeIndexed(
    ids: string[],
    write: (batch: IndexBatch) => Promise<{ countDelta: number; lexical: () => void; dirty?: string[] }>,
  ): Promise<void> {
    const batch = index.batch();
    let after: { countDelta: number; lexical: () => void; dirty?: string[] } | null = null;
    let header: IndexHeaderRecord | null = null;
    await db.transaction('rw', [db.memories, db.memoryHistory, db.memoryIndex, db.tombstones], async () => {
      after = await write(batch);
      const old = (await db.memoryIndex.get('header')) as IndexHeaderRecord | undefined;
      const dirty = new Set(old?.dirty ?? []);
      for (const id of [...ids, ...(after.dirty ?? [])]) dirty.add(id);
      header = { key: 'header', gen: (old?.gen ?? gen) + 1, count: (old?.count ?? 0) + after.countDelta, dirty: [...dirty] };
      await db.memoryIndex.bulkPut([...batch.records(), header]);
    });
    batch.commit();
    after!.lexical();
    gen = header!.gen;
    scheduleSnapshot(header!.dirty.length);
  }

  function scheduleSnapshot(dirty: number): void {
    if (snapshotTimer) clearTimeout(snapshotTimer);
    snapshotTimer = setTimeout(
      () => {
        snapshotTimer = null;
        snapshotRun = writeSnapshot();
      },
      dirty >= SNAPSHOT_DIRTY_MAX ? 0 : SNAPSHOT_DELAY_MS,
    );
  }

  /** Writes the lexical snapshot at the live generation and clears `dirty` (one transaction). */
  function writeSnapshot(): Promise<void> {
    return serial(async () => {
      const at = gen;
      const json = lexical.toJSON();
      await db.transaction('rw', db.memoryIndex, async () => {
        const header = (await db.memoryIndex.get('header')) as IndexHeaderRecord | undefined;
        if (!header || header.gen !== at) return; // changed behind the store's back: the next open repairs
        const snapshot: LexicalSnapshotRecord = { key: 'lexical', gen: at, json };
        await db.memoryIndex.bulkPut([snapshot, { ...header, dirty: [] }]);
      });
    }).catch((error: unknown) => {
      if (error instanceof Dexie.DatabaseClosedError) return; // the context is going away; `dirty` covers it
      console.warn('[ltm] could not write the lexical snapshot (changes are replayed on the next open):', error);
    });
  }

  /** Builds the lexical index from rows. */
  function lexicalFrom(rows: Iterable<{ id: string; text: string; topic?: string }>): LexicalIndex {
    const out = new LexicalIndex();
    for (const r of rows) out.set(r.id, r.text, r.topic);
    return out;
  }

  /**
   * Full repair: one transaction reads every row (raw: a row's own `embedding` field, if any,
   * wins; otherwise the vector comes from the live index, when its model is the row's), writes the whole layout, the header and the lexical snapshot, and
   * strips `embedding` from the rows that had one.
   */
  async function rebuild(): Promise<void> {
    let next: { index: BlockIndex; lexical: LexicalIndex; gen: number } | null = null;
    const live = index;
    await db.transaction('rw', db.memories, db.memoryIndex, async () => {
      const rows = (await db.memories.toCollection().raw().toArray()) as MemoryRecord[];
      const old = (await db.memoryIndex.get('header')) as IndexHeaderRecord | undefined;
      const nextGen = Math.max(old?.gen ?? 0, gen) + 1;
      const vectorOf = (r: LayoutRow) => {
        if (holdsEmbedding(r)) return r.embedding ? l2normalize(r.embedding) : null;
        const v = live.vector(r.id);
        return v && v.model === r.embeddingModel ? v.vector : null;
      };
      const layout = layoutFromRows(rows, nextGen, vectorOf);
      const lex = lexicalFrom(rows);
      const snapshot: LexicalSnapshotRecord = { key: 'lexical', gen: nextGen, json: lex.toJSON() };
      await db.memoryIndex.clear();
      // No memory, no index: an empty store leaves nothing behind (erase everything).
      if (rows.length > 0) await db.memoryIndex.bulkPut([...layout.records, snapshot]);
      const changed = rows.filter(
        (r) => holdsEmbedding(r) || r.pending !== undefined || (r.embeddingModel !== null && !layout.index.hasVector(r.id, r.embeddingModel)),
      );
      if (changed.length > 0) {
        await db.memories.bulkPut(
          changed.map((r) => {
            const row = toRow(r);
            return layout.index.hasVector(r.id, r.embeddingModel ?? '') ? row : { ...row, embeddingModel: null };
          }),
        );
      }
      next = { index: layout.index, lexical: lex, gen: nextGen };
    });
    const done = next!;
    index = done.index;
    lexical = done.lexical;
    gen = done.gen;
    catalogs = new Map();
  }

  /**
   * Re-indexes the rows marked `pending` (written behind the store with an inline vector, e.g. a
   * bulk `modify` or an import batch while the store is open), in one transaction: the row's own
   * `embedding` field wins, the rows lose it (and the mark), and the blocks take it. Rows removed
   * behind the store are not seen here (the next open's row count catches them). Cheap when there
   * are none: one count on a sparse index.
   * @returns how many rows were re-indexed.
   */
  async function reconcilePending(): Promise<number> {
    if ((await db.memories.where('pending').equals(1).count()) === 0) return 0;
    let n = 0;
    await writeIndexed([], async (batch) => {
      const rows = (await db.memories.where('pending').equals(1).raw().toArray()) as MemoryRecord[];
      let added = 0;
      for (const r of rows) {
        if (!index.has(r.id)) added += 1;
        const own = holdsEmbedding(r) ? (r.embedding ? l2normalize(r.embedding) : null) : (index.vector(r.id)?.vector ?? null);
        const indexed = own !== null && r.embeddingModel !== null && batch.put(indexedOf(r), own, r.embeddingModel);
        if (!indexed) batch.put(indexedOf(r), null, null);
        await db.memories.put(indexed ? toRow(r) : { ...toRow(r), embeddingModel: null });
      }
      n = rows.length;
      return {
        countDelta: added,
        dirty: rows.map((r) => r.id),
        lexical: () =>
          rows.forEach((r) => {
            lexical.set(r.id, r.text, r.topic);
            catalogPut(r);
          }),
      };
    });
    return n;
  }

  /** Opens from the persisted index, or repairs. */
  async function open(): Promise<Omit<StoreOpenStats, 'ms' | 'at'>> {
    const [records, rowCount, pending] = await db.transaction('r', db.memories, db.memoryIndex, () =>
      Promise.all([db.memoryIndex.toArray(), db.memories.count(), db.memories.where('pending').equals(1).count()]),
    );
    const header = records.find((r): r is IndexHeaderRecord => r.key === 'header');
    if (!header && rowCount === 0) return { via: 'empty', replayed: 0 };
    const loaded = BlockIndex.fromRecords(records);
    if (!header || header.count !== rowCount || loaded.size !== rowCount || pending > 0) {
      if (rowCount > 0 || header) {
        console.warn(`[ltm] the persisted memory index disagrees with the ${rowCount} stored memories (${pending} written behind it); rebuilding it`);
      }
      // The persisted blocks are where the vectors of rows without an `embedding` field are.
      index = loaded;
      await rebuild();
      return { via: 'rebuilt', replayed: 0 };
    }
    index = loaded;
    gen = header.gen;
    const snapshot = records.find((r): r is LexicalSnapshotRecord => r.key === 'lexical');
    let replayed = 0;
    if (snapshot) {
      try {
        lexical = LexicalIndex.fromJSON(snapshot.json);
      } catch (error) {
        console.warn('[ltm] the lexical snapshot is unreadable; rebuilding it from the rows:', error);
        lexical = lexicalFrom((await db.memories.toCollection().raw().toArray()) as MemoryRecord[]);
        scheduleSnapshot(SNAPSHOT_DIRTY_MAX);
        return { via: 'blocks', replayed: 0 };
      }
      if (header.dirty.length > 0) {
        const rows = (await db.memories.bulkGet(header.dirty)).filter((r): r is MemoryRecord => r !== undefined);
        const present = new Set(rows.map((r) => r.id));
        for (const r of rows) lexical.set(r.id, r.text, r.topic);
        for (const id of header.dirty) if (!present.has(id)) lexical.delete(id);
        replayed = header.dirty.length;
        scheduleSnapshot(header.dirty.length);
      }
    } else {
      lexical = lexicalFrom((await db.memories.toCollection().raw().toArray()) as MemoryRecord[]);
      scheduleSnapshot(SNAPSHOT_DIRTY_MAX);
    }
    return { via: 'blocks', replayed };
  }

  const metaOf = (r: MemoryRecord) => indexedOf(r);

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
    await writeIndexed([id], async (batch) => {
      // Keep access statistics written meanwhile by `recordAccess` (which is not serialized).
      const fresh = await db.memories.get(id);
      if (!fresh) throw new Error(`Memory "${id}" was removed during the update`);
      next.lastAccessedAt = fresh.lastAccessedAt;
      next.accessCount = fresh.accessCount;
      const indexed = batch.put(metaOf(next), next.embedding, next.embeddingModel);
      if (!indexed && next.embedding) Object.assign(next, { embedding: null, embeddingModel: null });
      await db.memories.put(toRow(next));
      await db.memoryHistory.add(history);
      return {
        countDelta: 0,
        lexical: () => {
          lexical.set(id, next.text, next.topic);
          catalogPut(next);
        },
      };
    });
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
    const ns = query.namespace;
    if (index.count(ns) === 0) return [];
    const scan: ScanFilter = { now: t, includeInvalid: query.includeInvalid === true, range: filter ? { start: filter.start, end: filter.end } : null };
    const live = index;
    const isEligible = (id: string) => live.accepts(id, ns, scan);

    const lexicalHits = mode === 'vector' ? [] : lexical.search(text, depth, isEligible);
    const lexicalIds = lexicalHits.map((h) => h.id);
    let vectorHits: { id: string; score: number }[] = [];
    const embedder = deps.embedder();
    if (mode !== 'lexical' && embedder && text.trim() && index.vectorCounts().has(embedder.modelId)) {
      const q = await embed(text);
      if (q) vectorHits = index.search(embedder.modelId, ns, q, depth, scan).map((h) => ({ id: h.id, score: h.similarity }));
    }
    const vectorIds = vectorHits.map((h) => h.id);

    const fused = convexFusion(lexicalHits, vectorHits, options.fusion ?? deps.fusionWeights ?? fusionWeightsFor(embedder?.modelId));
    const metaOfId = (id: string) => index.meta(id)!;
    let ranked: { id: string; score: number }[];
    if (fused.size === 0 && filter) {
      // "What did I say last week?": nothing to match on but a time range — newest first.
      ranked = index
        .idsWhere(ns, scan)
        .map((id) => ({ id, score: 0, at: metaOfId(id).validFrom ?? metaOfId(id).createdAt }))
        .sort((a, b) => b.at - a.at)
        .map(({ id, score }) => ({ id, score }));
    } else {
      ranked = [...fused]
        .filter(([id]) => index.has(id))
        .map(([id, relevance]) => {
          const m = metaOfId(id);
          return { id, score: weightedScore(relevance, t - m.updatedAt, m.pinned ? 1 : m.importance, weighting) };
        });
      ranked.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
      if (options.recencyTieBreak !== false) {
        // Tied candidates trade places and scores (the score is the position's), so scores stay in rank order.
        const order = recencyTieBreak(
          ranked.map((r) => r.id),
          new Map(lexicalHits.map((h) => [h.id, h.terms])),
          (id) => metaOfId(id).updatedAt,
        );
        const before = ranked;
        ranked = order.map((id, i) => ({ id, score: before[i]!.score }));
      }
    }
    const top = ranked.slice(0, k);
    // Rows (texts) are read for the top-k only.
    const records = await db.memories.bulkGet(top.map((r) => r.id));
    const byId = new Map(records.flatMap((r) => (r ? [[r.id, r] as const] : [])));
    const lexicalRank = new Map(lexicalIds.map((id, i) => [id, i + 1]));
    const vectorRank = new Map(vectorIds.map((id, i) => [id, i + 1]));
    const results: RetrievedMemory[] = [];
    for (const { id, score } of top) {
      const record = byId.get(id);
      if (!record) continue; // removed between the index lookup and the read
      const ranks: RetrievedMemory['ranks'] = {};
      if (lexicalRank.has(id)) ranks.lexical = lexicalRank.get(id)!;
      if (vectorRank.has(id)) ranks.vector = vectorRank.get(id)!;
      results.push({ memory: toView(record), score, ranks });
    }
    return results;
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
            if (!input.namespace) throw new Error('Memory namespace is empty');
            if (!KINDS.has(input.kind)) throw new Error(`Unknown memory kind "${String(input.kind)}"`);
          } catch (error) {
            if (inputs.length === 1) throw error;
            throw new Error(`Memory ${i + 1} of ${inputs.length}: ${(error as Error).message}`, { cause: error });
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
            const vectorsOut = await embedder.embed(fresh.map((f) => f.record.text));
            if (vectorsOut.length !== fresh.length)
              throw new Error(`Embedder ${embedder.modelId} returned ${vectorsOut.length} vectors for ${fresh.length} texts`);
            fresh.forEach((f, i) => {
              f.record.embedding = l2normalize(vectorsOut[i]!);
              f.record.embeddingModel = embedder.modelId;
            });
          } catch (error) {
            console.warn('[ltm] embedding failed; memories stored without a vector until re-embedding:', error);
          }
        }
        // Rows, history and their block slots in one transaction (see `writeIndexed`).
        await writeIndexed(
          fresh.map((f) => f.record.id),
          async (batch) => {
            for (const { record } of fresh) {
              const indexed = batch.put(metaOf(record), record.embedding, record.embeddingModel);
              if (!indexed && record.embedding) Object.assign(record, { embedding: null, embeddingModel: null });
            }
            await db.memories.bulkAdd(fresh.map((f) => toRow(f.record)));
            await db.memoryHistory.bulkAdd(
              fresh.map((f) => ({ memoryId: f.record.id, event: 'ADD' as const, oldText: null, newText: f.record.text, at: t, source })),
            );
            // The user stores this text again on purpose ("remember …", memory manager): lift its tombstone.
            if (source === 'user') await db.tombstones.bulkDelete(fresh.map((f) => [f.record.namespace, f.record.hash] as [string, string]));
            return {
              countDelta: fresh.length,
              lexical: () => {
                for (const { record } of fresh) {
                  lexical.set(record.id, record.text, record.topic);
                  catalogPut(record);
                }
              },
            };
          },
        );
        if (fresh.some((f) => f.record.embedding === null)) deps.onMissingEmbedding?.();
        return results;
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
        await writeIndexed(unique, async (batch) => {
          const records = (await db.memories.bulkGet(unique)).filter((r): r is MemoryRecord => r !== undefined);
          found = records.map((r) => r.id);
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
          unique.forEach((id) => batch.remove(id));
          return {
            countDelta: -found.length,
            lexical: () =>
              unique.forEach((id) => {
                lexical.delete(id);
                catalogDelete(id);
              }),
          };
        });
      });
    },

    async nearest(vector, options) {
      const model = activeModel();
      if (!model) return [];
      const hits = index.search(model, options.namespace, l2normalize(vector), options.k, { now: now(), includeInvalid: options.includeInvalid === true });
      const records = await db.memories.bulkGet(hits.map((h) => h.id));
      const byId = new Map(records.flatMap((r) => (r ? [[r.id, r] as const] : [])));
      return hits.flatMap((h) => {
        const record = byId.get(h.id);
        return record ? [{ memory: toView(record), similarity: h.similarity }] : [];
      });
    },

    async inSlot(key, options) {
      const label = slotLabel(key);
      if (label === null) return [];
      const ids = index.inSlot(options.namespace, label, now(), options.kinds ? new Set<string>(options.kinds) : null);
      const records = await db.memories.bulkGet(ids.slice(0, Math.max(0, options.k)).map((x) => x.id));
      return records.flatMap((r) => (r ? [toView(r)] : []));
    },

    embed,

    search,

    rebuildIndexes: () => serial(rebuild),

    recordAccess: (ids, at = now()) => recordAccess(db, ids, at),

    async reembed(options = {}) {
      // Rows rewritten behind the store (a bulk `modify`, an import batch) first: their vectors decide what is missing.
      await serial(reconcilePending);
      const embedder = deps.embedder();
      if (!embedder) return { embedded: 0, remaining: index.size };
      const model = embedder.modelId;
      const needs = (id: string) => index.has(id) && !index.hasVector(id, model);
      // From the index, not the rows: ids only (36 bytes each); texts are read a batch at a time.
      const ids = [...index.ids()].filter(needs);
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
          const texts = batch.map((r) => r.text);
          const vectorsOut = await embedder.embed(texts, options.signal);
          if (vectorsOut.length !== texts.length) throw new Error(`Embedder ${model} returned ${vectorsOut.length} vectors for ${texts.length} texts`);
          await serial(() =>
            writeIndexed([], async (ib) => {
              let stored = 0;
              for (const [i, r] of batch.entries()) {
                const fresh = await db.memories.get(r.id);
                if (!fresh || fresh.text !== r.text) continue; // removed or edited meanwhile (the edit embedded it)
                if (!ib.put(metaOf(fresh), l2normalize(vectorsOut[i]!), model)) continue;
                await db.memories.put(toRow({ ...fresh, embedding: null, embeddingModel: model }));
                stored += 1;
              }
              embedded += stored;
              return { countDelta: 0, lexical: () => undefined };
            }),
          );
        }
        options.onProgress?.(Math.min(total, done), total);
      }
      return { embedded, remaining: store.missingVectors(model) };
    },

    missingVectors(modelId) {
      let missing = 0;
      if (modelId === null) {
        const counts = index.vectorCounts();
        let withVector = 0;
        for (const { count } of counts.values()) withVector += count;
        // A memory has at most one vector, so the memories without one are the rest.
        return index.size - withVector;
      }
      for (const id of index.ids()) if (!index.hasVector(id, modelId)) missing += 1;
      return missing;
    },

    whenIndexed: () => serial(async () => undefined),

    async catalog(namespace) {
      let entries = catalogs.get(namespace);
      if (!entries) {
        entries = await serial(async () => {
          const built = catalogs.get(namespace);
          if (built) return built;
          // Text-only: rows hold no vectors, and `raw()` skips the reading hook that attaches them.
          const rows = (await db.memories.where('namespace').equals(namespace).raw().toArray()) as MemoryRecord[];
          const map = new Map(rows.map((r) => [r.id, catalogEntry(r)]));
          catalogs.set(namespace, map);
          return map;
        });
      }
      return [...entries.values()];
    },

    async flushSnapshot() {
      if (snapshotTimer) {
        clearTimeout(snapshotTimer);
        snapshotTimer = null;
        snapshotRun = writeSnapshot();
      }
      await snapshotRun;
    },

    indexStats: () => {
      const model = activeModel();
      const counts = model ? index.vectorCounts().get(model) : undefined;
      return {
        memories: index.size,
        lexical: lexical.size,
        vector: { size: counts?.count ?? 0, modelId: counts ? model : null, dimension: counts?.dim ?? null, voyReady: Voy !== null, voyFailures: 0 },
        open: openStats,
      };
    },

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
  };

  const [opened, Voy] = await Promise.all([open(), voyLoad]);
  hookTargets.set(db, {
    vectorOf(id, model) {
      const v = index.vector(id);
      return v && v.model === model ? v.vector : null;
    },
  });
  installReadingHook(db);
  const openStats: StoreOpenStats = { ...opened, ms: performance.now() - startedAt, at: Date.now() };
  return store;
}
