/**
 * Buffer window (LangChain `ConversationBufferWindowMemory`): the last `k` exchanges verbatim,
 * an exchange being one user message and the reply to it.
 */
import type { StrategyDeps } from './deps';
import { groupExchanges, loadContextMessages } from './messages';
import type { ContextMessage, ContextStrategy } from './types';

/** The messages of the last `k` exchanges of `messages`, oldest first. */
export function lastExchanges(messages: readonly ContextMessage[], k: number): ContextMessage[] {
  if (k <= 0) return [];
  return groupExchanges(messages).slice(-k).flat();
}

/** Creates the buffer-window strategy with window `k` (exchanges). No background work. */
export function createBufferWindow(deps: StrategyDeps, k: number): ContextStrategy {
  return {
    kind: 'buffer-window',
    async load(conversationId, { userText }) {
      const messages = await loadContextMessages(deps.db, conversationId, userText);
      return { summary: null, entities: [], retrieved: [], recent: lastExchanges(messages, k) };
    },
    async onExchange() {},
  };
}
