/**
 * Long-term memory: facts, preferences, events and summaries distilled from conversations,
 * stored with embeddings in Dexie and retrieved by relevance, recency and importance across
 * conversations. This file is the interface the chat core uses; `src/memory/long-term/*`
 * implements it.
 */
import type { AffectedMemory, MemoryCommand, MemoryEvent, MemoryKind } from '../../model/memory';
import type { FeedbackRecord, MemoryView, MemoryRecord, SpeakerNames } from '../../model/records';
import type { RetrievedMemory } from '../../model/context';
import type { SlotKey } from './slots';
import type { FusionWeights, WeightingOptions } from './retrieval/fusion';
import type { VectorIndexStats } from './retrieval/vector';
import type { Table } from 'dexie';

/** A retrieval request. */
export interface RetrievalQuery {
  /** The user's message (any language). */
  text: string;
  namespace: string;
  /** Number of memories to return (top-k), default 8. */
  k?: number;
  /** Reference time for recency and "last week"-style filters (ms epoch), default now. */
  now?: number;
  /** Include memories whose validity ended (default false: only currently valid ones). */
  includeInvalid?: boolean;
  /**
   * Runs a step of the search and measures it with the caller's clock (the chat turn's
   * `TurnTimings.queryEmbeddingMs`); the search calls it around its query embedding, once per
   * embedded query. Absent: the step just runs. Never changes what the search returns.
   */
  timeStep?: RetrievalStepTimer;
  /**
   * Called once with the store's top-k (ranked, before the neighbour expansion and the past-round
   * marks), so the caller can start reads that depend only on them while those run (the chat turn
   * reads the cited conversations' titles: the expansion keeps each hit's conversation among the
   * results, so the set is the same). Absent: nothing is called. Never changes what is returned.
   */
  onRanked?: (ranked: readonly RetrievedMemory[]) => void;
}

/** Steps of a search that a `RetrievalStepTimer` is asked to time: `queryEmbedding`, the query text embedded by the current embedder. */
export type RetrievalStep = 'queryEmbedding';

/** Runs `run` (one `step` of a search), measures it and resolves or rejects as `run` does (see `RetrievalQuery.timeStep`). */
export type RetrievalStepTimer = <T>(step: RetrievalStep, run: () => Promise<T>) => Promise<T>;

/** The exchange that just finished, handed to long-term memory for background ingestion. */
export interface ExchangeInput {
  conversationId: string;
  namespace: string;
  userMessageId: string;
  assistantMessageId: string;
}

/** Result of an explicit memory command ("remember that …", "forget …", "记住…", "忘记…"). */
export interface MemoryCommandResult {
  command: MemoryCommand;
  /** Memories stored (remember) or removed (forget). */
  affected: AffectedMemory[];
  /**
   * Set when the command was understood but not carried out: "forget everything" is done in
   * Memory → Erase everything… (`forget_all`); a "remember …" text longer than
   * `MAX_MEMORY_TEXT_CHARS` is not stored (`too_long`); "remember …" in a temporary chat stores
   * nothing (`temporary`: the chat service answers it so, without running the command).
   */
  refused?: 'forget_all' | 'too_long' | 'temporary';
}

/** What the chat core needs from long-term memory. */
export interface LongTermMemory {
  /** Hybrid retrieval (see implementation for the formula). Records an access on returned memories. */
  retrieve(query: RetrievalQuery): Promise<RetrievedMemory[]>;
  /** Enqueues background ingestion of an exchange (embedding, extraction, consolidation). Returns quickly. */
  onExchange(input: ExchangeInput): Promise<void>;
  /**
   * Runs an explicit memory command if `text` is one, else returns `null`.
   * @param source conversation id or `'user'`, recorded in the memory history.
   */
  /** `context.page`: the page attached to the message, if any (see `MemoryCommandContext.page`). */
  runCommand(
    text: string,
    context: { namespace: string; conversationId: string; messageId: string; page?: { url: string; title: string } },
  ): Promise<MemoryCommandResult | null>;
}

/** Fields of a new memory; the store fills ids, times, hash, embedding and validity flags. */
export interface NewMemory {
  namespace: string;
  kind: MemoryKind;
  text: string;
  topic?: string;
  importance?: number;
  validFrom?: number | null;
  validUntil?: number | null;
  pinned?: boolean;
  sourceConversationId?: string | null;
  sourceMessageIds?: string[];
  /** Creation time (ms epoch), default now; imports and evaluations pass the original time. */
  createdAt?: number;
  /** Named speakers of the source conversation (see `MemoryRecord.speakers`); absent for the app's own chats. */
  speakers?: SpeakerNames;
  /** The web page the text was saved from (`MemoryRecord.sourceUrl` / `sourceTitle`). */
  sourceUrl?: string;
  sourceTitle?: string;
}

/** Fields that may change on an existing memory. */
export type MemoryPatch = Partial<
  Pick<MemoryRecord, 'text' | 'kind' | 'topic' | 'importance' | 'pinned' | 'validFrom' | 'validUntil' | 'supersededBy' | 'sourceMessageIds'>
>;

/**
 * One memory a committed store write touched, as `MemoryStoreDeps.onWrite` reports it: its
 * namespace, its kind (a kind change reports the old and the new kind, one entry each) and the
 * history event (`IMPORT` for a row restored by an import batch, `putMemories`).
 */
export interface WrittenMemory {
  namespace: string;
  kind: MemoryKind;
  event: MemoryEvent;
}

/** Which retrievers a search uses (benchmarks compare them; the app always uses `hybrid`). */
export type RetrievalMode = 'hybrid' | 'lexical' | 'vector';

/** Options of `LongTermStore.search` beyond the shared `RetrievalQuery`. */
export interface SearchOptions {
  /** Default `hybrid`. */
  mode?: RetrievalMode;
  /** Candidates taken from each retriever before fusion (default `max(50, 5·k)`). */
  depth?: number;
  /** Recency/importance weighting (default `DEFAULT_WEIGHTING`). */
  weighting?: WeightingOptions;
  /** Weights of the lexical and vector scores in the convex fusion (default: `fusionWeightsFor` the embedding model). */
  fusion?: FusionWeights;
  /** Recency tie-break between candidates that match the same query terms (default true). */
  recencyTieBreak?: boolean;
  /**
   * Apply time filters stated in the query (default true). `false` turns off time filters parsed
   * from the query text (a memory text such as "下周三（2024-05-15）…" is not a question about next Wednesday).
   */
  timeFilters?: boolean;
  /**
   * The reference ranking of a query about a slot (default false; tests compare): every member of
   * the asked slot joins the candidates as a listed one does, instead of only those that can reach
   * the top k (`slotOnlyMembers`, `boundSlotOnly`). The results are the same, slower on a large slot.
   */
  rankEverySlotMember?: boolean;
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
  /**
   * `true` once the row check after an open from the blocks found the persisted index disagreeing
   * with the rows (row count, rows written behind the store) and rebuilt it from them (see
   * `IndexSync.open`); `false` before that check and when it agreed.
   */
  repairedAfterOpen: boolean;
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
   * the store's module doc); `voyFailures` is always 0.
   */
  vector: VectorIndexStats;
  /** How the store opened. */
  open: StoreOpenStats;
}

/**
 * The persistent long-term memory store — the one interface of the store (`createMemoryStore`
 * in `./store` implements it): CRUD over `db.memories`, every change written to
 * `db.memoryHistory`, the lexical + vector indexes kept in sync, retrieval and maintenance. Text
 * changes are (re-)embedded with the current embedder; without one, the memory is stored with
 * `embedding: null` (lexical-only) and re-embedded later.
 */
export interface LongTermStore {
  get(id: string): Promise<MemoryRecord | undefined>;
  /**
   * Adds a memory. Exact duplicates (same namespace + normalized-text hash, still valid) return the
   * existing record. An add by the user (`source === 'user'`) lifts a tombstone of the same text.
   */
  add(input: NewMemory, source: string): Promise<{ memory: MemoryRecord; created: boolean }>;
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
   * Bulk write of memories decided elsewhere (an import batch): runs `write` in the store's write
   * queue, inside ONE read-write transaction over the memory tables (`memories`, `memoryHistory`,
   * `memoryIndex`, `tombstones`) and `options.tables`. `write` reads and writes whatever it needs
   * (history, other tables, its undo record) except memory rows, and returns the memories to store:
   * `added` (new ids) and `updated` (replacing the stored row of the same id), complete records
   * (hash, `current`, times set by the caller; `embedding` L2-normalized or `null`, with its
   * `embeddingModel`). The store writes those rows (without their vector: it goes into the
   * blocks), their blocks and the header in the same transaction; the lexical index follows after
   * the commit; the lexical snapshot waits for idle (one after the last of many batches). No
   * history is written by the store and no duplicate or tombstone check is made: the caller decides.
   * A vector of another dimension than the stored vectors of its model and namespace is not
   * indexed: that memory is stored without one (`embeddingModel: null`, its record object changed
   * too) and listed in `unindexed`.
   * @returns what `write` returned (`result`) and the ids stored without their vector.
   * @throws what `write` or Dexie throws (a failed row write throws its own error, not Dexie's
   *   `BulkError`); nothing is written then.
   */
  putMemories<T>(
    write: () => Promise<{ added: MemoryRecord[]; updated: MemoryRecord[]; result: T }>,
    options?: { tables?: readonly Table[] },
  ): Promise<{ result: T; unindexed: string[] }>;
  /** Changes a memory and records `event` (default `UPDATE`) in the history. @throws when `id` is unknown. */
  update(id: string, patch: MemoryPatch, source: string, event?: MemoryEvent): Promise<MemoryRecord>;
  /** Closes a memory's validity at `at` (ms) instead of erasing it (history event `INVALIDATE`). */
  invalidate(id: string, at: number, source: string, supersededBy?: string): Promise<void>;
  /**
   * Removes memories from the store and indexes. `DELETE` keeps their history; `FORGET` also
   * erases their history so the text is nowhere searchable any more. A removal by the user
   * (`source === 'user'`) also writes a tombstone per memory (namespace + text hash, no text) in
   * the same transaction, so re-run jobs and imports do not bring it back (`isTombstoned`).
   */
  remove(ids: string[], event: 'DELETE' | 'FORGET', source: string): Promise<void>;
  /** Memories nearest to `vector` by cosine similarity (consolidation candidates), best first. */
  nearest(vector: Float32Array, options: { namespace: string; k: number; includeInvalid?: boolean }): Promise<{ memory: MemoryView; similarity: number }[]>;
  /**
   * Currently valid memories of `options.namespace` whose text is about the same slot of the same
   * subject as `key` (`memorySlot` of `slots.ts`, computed from each memory's text), newest
   * (`updatedAt`) first, at most `options.k`; only `options.kinds` when given. `[]` for a `null` key.
   */
  inSlot(key: SlotKey | null, options: { namespace: string; k: number; kinds?: readonly MemoryKind[] }): Promise<MemoryView[]>;
  /** Embeds a text with the current embedder, or `null` when none is available. */
  embed(text: string): Promise<Float32Array | null>;
  /**
   * Hybrid retrieval: BM25 (MiniSearch) and exact vector (block scan) candidates, each filtered to the
   * namespace, to currently valid memories (unless `includeInvalid`) and to a time range stated
   * in the query ("last week", "上个月", see `retrieval/time-filter.ts`), fused as a convex
   * combination of normalized scores with per-model weights, plus small recency/importance and
   * same-slot bonuses (`retrieval/fusion.ts`; a query that asks for the current state, "… now?" /
   * "现在…", weights recency more); then, among near-tied candidates of one slot or matching the
   * same query terms, the current and newest comes first (`recencyTieBreak`).
   * When a time filter leaves candidates but neither retriever matches, the newest memories in
   * the range are returned. Does not record accesses (see `recordAccess`).
   * @returns at most `query.k` (default 8) memories, best first.
   */
  search(query: RetrievalQuery, options?: SearchOptions): Promise<RetrievedMemory[]>;
  /**
   * Re-reads every memory row from Dexie and rebuilds the persisted index (blocks, header,
   * lexical snapshot) in one transaction that also moves any `embedding` found in a row into the
   * blocks (rows written behind the store, e.g. by an import's undo). The repair path: O(rows).
   */
  rebuildIndexes(): Promise<void>;
  /** Forgets the store's in-memory copy of the feedback rows (`db.feedback`), after rows were written behind it (an import): ranking reads them again on next use. */
  reloadFeedback(): void;
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
  /**
   * Resolves when pending index writes are done, the lexical snapshot loaded after opening (see
   * `RetrievedMemory.lexicalFrom`) and the Voy module loaded (or failed). Never rejects.
   */
  whenIndexed(): Promise<void>;
  /**
   * Settles once the vector blocks are in the live index (never rejects). After a cold start they
   * load in the background (metadata first: the catalog and lexical searches answer at once);
   * until then `missingVectors`, `staleVectors` and `indexStats().vector` count none, and vector
   * searches (`nearest`, hybrid `search` with an embedder) wait for them.
   */
  whenVectorsLoaded(): Promise<void>;
  /** Writes the lexical snapshot now if changes are pending (otherwise done when idle). */
  flushSnapshot(): Promise<void>;
  /**
   * What the memory manager lists and filters by, for every memory of `namespace`, without
   * vectors and without reading a row: from the meta columns of the persisted index (kind, flags,
   * time, normalized text), which every write updates in its own transaction. O(namespace size).
   * Order: unspecified.
   */
  catalog(namespace: string): Promise<readonly CatalogEntry[]>;
  /**
   * The memory manager's listing without building the catalog (same columns, no row read): ids
   * of `namespace` with the `current` flag (unless `includeInvalid`), a kind in `kinds` (absent:
   * any), a normalized text (`normalizeMemoryText`) containing `contains` (absent: any) and not in
   * `exclude` — at most `limit`, pinned first, then the most recently updated (ties: index order).
   * O(namespace size) column reads, O(limit) memory.
   */
  listIds(
    namespace: string,
    where: { includeInvalid?: boolean; kinds?: readonly string[]; contains?: string; exclude?: ReadonlySet<string>; limit: number },
  ): string[];
  /**
   * How many memories lack a vector of `modelId` (`null`: lack any vector) or hold one embedded
   * from an older indexed-text format (see `staleVectors`), from the index: no row is read. The
   * core queues `ltm.reembed` when it is > 0.
   */
  missingVectors(modelId: string | null): number;
  /**
   * How many vectors were embedded from an older format of `indexedMemoryText` (an index persisted
   * before `INDEXED_TEXT_VERSION`): still searched, and embedded again by `reembed`, once.
   */
  staleVectors(): number;
  /**
   * The episodic rounds of `fact.namespace` that state `fact`: rounds citing one of its source
   * messages (the round it was extracted from), and rounds whose text contains nearly all of its
   * content words (coverage ≥ `ROUND_COVERAGE`, the "forget" command's strong match). For a fact
   * that is itself a round, `[]`. Newest first; valid or not.
   */
  roundsStating(fact: Pick<MemoryRecord, 'id' | 'namespace' | 'kind' | 'text' | 'sourceMessageIds'>): Promise<MemoryView[]>;
  /** Sizes and state of the indexes (no row is read). */
  indexStats(): IndexStats;
  /**
   * Records "not relevant here" (issue 14): memory `input.memoryId` did not belong under the reply
   * to `input.query`. The query is embedded with the current embedder (none or a failure: its
   * content terms only); hybrid searches then demote that memory for similar queries
   * (`retrieval/feedback.ts`). The same memory under the same message twice gives the stored row.
   * Rows are deleted with their memory (`remove`) and by "Erase everything".
   */
  addFeedback(input: { memoryId: string; namespace: string; query: string; messageId: string; conversationId: string }): Promise<FeedbackRecord>;
  /** Deletes feedback row `id` (undo). @returns whether it existed. */
  removeFeedback(id: string): Promise<boolean>;
  /** The feedback rows recorded under assistant message `messageId`, oldest first. */
  feedbackFor(messageId: string): Promise<FeedbackRecord[]>;
}
