/**
 * Long-term memory: facts, preferences, events and summaries distilled from conversations,
 * stored with embeddings in Dexie and retrieved by relevance, recency and importance across
 * conversations. This file is the interface the chat core uses; `src/memory/long-term/*`
 * implements it.
 */
import type { AffectedMemory, MemoryCommand, MemoryEvent, MemoryKind } from '../../model/memory';
import type { MemoryView, MemoryRecord } from '../../model/records';
import type { RetrievedMemory } from '../../model/context';
import type { SlotKey } from './slots';

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
}

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
   * `MAX_MEMORY_TEXT_CHARS` is not stored (`too_long`).
   */
  refused?: 'forget_all' | 'too_long';
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
  runCommand(text: string, context: { namespace: string; conversationId: string; messageId: string }): Promise<MemoryCommandResult | null>;
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
}

/** Fields that may change on an existing memory. */
export type MemoryPatch = Partial<
  Pick<MemoryRecord, 'text' | 'kind' | 'topic' | 'importance' | 'pinned' | 'validFrom' | 'validUntil' | 'supersededBy' | 'sourceMessageIds'>
>;

/**
 * The persistent long-term store: CRUD over `db.memories`, every change written to
 * `db.memoryHistory`, and the lexical + vector indexes kept in sync. Text changes are
 * (re-)embedded with the current embedder; without one, the memory is stored with
 * `embedding: null` (lexical-only) and re-embedded later.
 */
export interface MemoryStore {
  get(id: string): Promise<MemoryRecord | undefined>;
  /**
   * Adds a memory. Exact duplicates (same namespace + normalized-text hash, still valid) return the
   * existing record. An add by the user (`source === 'user'`) lifts a tombstone of the same text.
   */
  add(input: NewMemory, source: string): Promise<{ memory: MemoryRecord; created: boolean }>;
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
}
