/**
 * Full buffer (LangChain `ConversationBufferMemory`): every message, verbatim. When the prompt no
 * longer fits the context window, the prompt assembler drops the oldest turns from that prompt
 * (the stored conversation is never changed).
 */
import { defineStrategy } from './define';
import type { StrategyDeps } from './deps';
import { loadContextMessages } from './messages';
import type { ContextStrategy } from './types';

/** Creates the full-buffer strategy. No background work. */
export function createFullBuffer(deps: StrategyDeps): ContextStrategy {
  return {
    kind: 'full-buffer',
    async load(conversationId, { userText }) {
      const recent = await loadContextMessages(deps.db, conversationId, userText);
      return { summary: null, entities: [], retrieved: [], recent };
    },
    async onExchange() {},
  };
}

/** `full-buffer`: every message verbatim, no parameters, no background work. */
export const fullBufferStrategy = defineStrategy({ kind: 'full-buffer', create: (deps) => createFullBuffer(deps) });
