/**
 * What memory hands to prompt assembly (`src/prompt/assemble.ts`): the retrieved long-term
 * memories, and a short-term strategy's recent turns, summary, entity notes and retrieved past
 * exchanges. Leaf module: imports nothing from
 * `src/` but other model files.
 */
import type { ChatMessage } from './engine';
import type { MemoryView } from './records';

/** A verbatim message of the short-term context, with its id and position. */
export interface ContextMessage extends ChatMessage {
  id: string;
  seq: number;
}

/** A past exchange retrieved by the vector strategy. */
export interface RetrievedExchange {
  text: string;
  conversationId: string;
  messageIds: string[];
  /** Cosine similarity to the query, -1..1; `null` when found by keywords (no embedder). */
  similarity: number | null;
}

/** Entity notes injected by the entity strategy. */
export interface EntityNote {
  name: string;
  summary: string;
}

/** What a strategy contributes to the next prompt. */
export interface ShortTermContext {
  /** Running / progressive summary, or `null`. */
  summary: string | null;
  entities: EntityNote[];
  retrieved: RetrievedExchange[];
  /** Verbatim messages, oldest first (never includes the new user message). */
  recent: ContextMessage[];
  /**
   * Summary strategies: messages that are due to be summarized but are not yet (kept verbatim
   * meanwhile), and why the last summarizer reply was rejected, if it was.
   */
  pending?: { messages: number; lastError: string | null };
}

/** One retrieved memory with its final score and per-retriever ranks (1-based). */
export interface RetrievedMemory {
  memory: MemoryView;
  score: number;
  ranks: { lexical?: number; vector?: number };
  /**
   * `'catalog'` when the search ran while the lexical index was still loading (the first moments
   * after the store opened): its lexical list is a term match over the catalog's normalized texts
   * (most query terms contained first), not BM25. Absent otherwise.
   */
  lexicalFrom?: 'catalog';
  /**
   * Neighbour expansion (`LongTermMemory.retrieve`, for an episodic round): the rounds right before
   * and after it in the same conversation. The prompt shows them with this memory as one unit when
   * they fit the memory section's budget (the answer to a question is often the next turn).
   */
  neighbours?: RoundNeighbours;
}

/** The rounds adjacent to a retrieved episodic round (see `RetrievedMemory.neighbours`); either may be absent. */
export interface RoundNeighbours {
  before?: MemoryView;
  after?: MemoryView;
}
