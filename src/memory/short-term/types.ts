/**
 * Short-term context strategies: how the recent conversation is put back into the prompt.
 * Names follow LangChain's classic conversation-memory patterns (ConversationBufferMemory,
 * ConversationBufferWindowMemory, ConversationTokenBufferMemory, ConversationSummaryMemory,
 * ConversationSummaryBufferMemory, ConversationEntityMemory, VectorStoreRetrieverMemory).
 */
import type { ChatMessage } from '../../engines/types';
import type { StrategyKind } from '../../model/strategies';

export type { StrategyConfig, StrategyKind } from '../../model/strategies';
export { DEFAULT_STRATEGY } from '../../model/strategies';

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

/**
 * A short-term context strategy. Strategies keep no state in memory: what they need between
 * turns is stored in Dexie (`strategyState`, `entities`, `memories`), so they survive restarts.
 */
export interface ContextStrategy {
  readonly kind: StrategyKind;
  /**
   * Builds the short-term context for the next prompt of `conversationId`, excluding the new
   * user message `userText`. `budgetTokens` is the room the prompt assembler can give to the
   * short-term sections (tokens); a strategy should stay within its own limits (`k`, `maxTokens`)
   * and may return less. It never drops a message that is not yet covered by a stored summary.
   */
  load(conversationId: string, input: { userText: string; budgetTokens: number }): Promise<ShortTermContext>;
  /**
   * Called after a user message and its reply were stored. Must return quickly: LLM or embedding
   * work is enqueued as background jobs so the user's next message is never blocked.
   */
  onExchange(conversationId: string, exchange: { userMessageId: string; assistantMessageId: string }): Promise<void>;
}
