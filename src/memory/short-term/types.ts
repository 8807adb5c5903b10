/**
 * Short-term context strategies: how the recent conversation is put back into the prompt.
 * Names follow LangChain's classic conversation-memory patterns (ConversationBufferMemory,
 * ConversationBufferWindowMemory, ConversationTokenBufferMemory, ConversationSummaryMemory,
 * ConversationSummaryBufferMemory, ConversationEntityMemory, VectorStoreRetrieverMemory).
 */
import type { ShortTermContext } from '../../model/context';
import type { StrategyKind } from '../../model/strategies';

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
