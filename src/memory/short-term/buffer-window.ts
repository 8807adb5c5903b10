/**
 * Buffer window (LangChain `ConversationBufferWindowMemory`): the last `k` exchanges verbatim,
 * an exchange being one user message and the reply to it.
 */
import { defineStrategy } from './define';
import type { StrategyDeps } from './deps';
import { groupExchanges, loadLastExchanges } from './messages';
import type { ContextStrategy } from './types';
import type { ContextMessage } from '../../model/context';

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
      // Reads only the rows of the last k exchanges (and a few before), not the conversation.
      return { summary: null, entities: [], retrieved: [], recent: await loadLastExchanges(deps.db, conversationId, k, userText) };
    },
    async onExchange() {},
  };
}

/** `buffer-window`: the last `k` exchanges verbatim. */
export const bufferWindowStrategy = defineStrategy({ kind: 'buffer-window', create: (deps, config) => createBufferWindow(deps, config.k!) });
