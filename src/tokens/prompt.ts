/**
 * Token cost of a whole chat prompt.
 */
import type { ChatMessage } from '../model/engine';
import type { TokenCounter } from '../model/tokens';
import { isChatTokenCounter } from './counter';

/**
 * Tokens the engine will feed the model for `messages`: every message's content, the chat
 * template's overhead around each message, the once-per-prompt tokens (BOS, a template's default
 * system message) and the reply primer (`add_generation_prompt`).
 * Exact for counters from `createHfTokenCounter`/`createGgufTokenCounter` (the prompt is
 * rendered with the model's template family and tokenized); for any other counter (the
 * estimator) it is `Σ (count(content) + perMessageOverhead) + replyPrimerTokens`.
 * @returns tokens (≥ 0).
 */
export function countPromptTokens(counter: TokenCounter, messages: readonly ChatMessage[]): number {
  if (isChatTokenCounter(counter)) return counter.countChat(messages);
  let n = counter.replyPrimerTokens;
  for (const m of messages) n += counter.count(m.content) + counter.perMessageOverhead;
  return n;
}
