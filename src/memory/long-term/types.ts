/**
 * Long-term memory: facts, preferences, events and summaries distilled from conversations,
 * stored with embeddings in Dexie and retrieved by relevance, recency and importance across
 * conversations. This file is the interface the chat core uses; `src/memory/long-term/*`
 * implements it.
 */
import type { MemoryKind, MemoryRecord } from '../../db/schema';

/** A memory as shown outside the store: everything but the embedding vector. */
export type MemoryView = Omit<MemoryRecord, 'embedding'>;

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

/** One retrieved memory with its final score and per-retriever ranks (1-based). */
export interface RetrievedMemory {
  memory: MemoryView;
  score: number;
  ranks: { lexical?: number; vector?: number };
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
  command: 'remember' | 'forget';
  /** Memories stored (remember) or removed (forget). */
  affected: { id: string; kind: MemoryKind; text: string }[];
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
