/**
 * Token buffer (LangChain `ConversationTokenBufferMemory`): the most recent whole messages whose
 * total stays within `maxTokens` (and within the budget the prompt assembler offers). A message's
 * cost is its content tokens plus the chat template's per-message overhead (`messageTokens`).
 */
import type { TokenCounter } from '../../model/tokens';
import { defineStrategy } from './define';
import type { StrategyDeps } from './deps';
import { loadNewestMessages, messageTokens } from './messages';
import type { ContextStrategy } from './types';
import type { ContextMessage } from '../../model/context';

/** The longest suffix of `messages` whose total cost is ≤ `limit` tokens, oldest first. */
export function newestWithin(counter: TokenCounter, messages: readonly ContextMessage[], limit: number): ContextMessage[] {
  let used = 0;
  let start = messages.length;
  while (start > 0) {
    const cost = messageTokens(counter, messages[start - 1]!);
    if (used + cost > limit) break;
    used += cost;
    start -= 1;
  }
  return messages.slice(start);
}

/** Creates the token-buffer strategy with limit `maxTokens`. No background work. */
export function createTokenBuffer(deps: StrategyDeps, maxTokens: number): ContextStrategy {
  return {
    kind: 'token-buffer',
    async load(conversationId, { userText, budgetTokens }) {
      const counter = deps.tokens();
      const limit = Math.min(maxTokens, budgetTokens);
      // Newest rows first (32, 64, …) until the limit stops the suffix before the oldest row read.
      const recent = await loadNewestMessages(deps.db, conversationId, userText, 32, (messages, complete) => {
        const kept = newestWithin(counter, messages, limit);
        return kept.length < messages.length || complete ? kept : null;
      });
      return { summary: null, entities: [], retrieved: [], recent };
    },
    async onExchange() {},
  };
}

/** `token-buffer`: the newest whole messages within `maxTokens`. */
export const tokenBufferStrategy = defineStrategy({ kind: 'token-buffer', create: (deps, config) => createTokenBuffer(deps, config.maxTokens!) });
