/**
 * Vector memory (LangChain `VectorStoreRetrieverMemory`): the `topK` past exchanges most similar
 * to the new message by embedding similarity, across the conversations of the same namespace (the search is wired by the
 * core to long-term memory, which embeds every exchange as an episodic memory), plus the last `k`
 * exchanges verbatim. Retrieved exchanges already in that window are skipped.
 */
import { lastExchanges } from './buffer-window';
import { defineStrategy } from './define';
import type { StrategyDeps } from './deps';
import { loadContextMessages } from './messages';
import type { ContextStrategy } from './types';
import type { RetrievedExchange } from '../../model/context';
import { MemoryError } from '../../model/errors';

/** Creates the vector strategy. No background work of its own. */
export function createVector(deps: StrategyDeps, k: number, topK: number): ContextStrategy {
  return {
    kind: 'vector',
    async load(conversationId, { userText }) {
      const messages = await loadContextMessages(deps.db, conversationId, userText);
      const recent = lastExchanges(messages, k);
      const inWindow = new Set(recent.map((m) => m.id));
      const conversation = await deps.db.conversations.get(conversationId);
      if (!conversation) throw new MemoryError('conversation_not_found', `Unknown conversation "${conversationId}"`);
      let hits: RetrievedExchange[] = [];
      try {
        // Ask for more than topK: some hits may be the exchanges already in the window.
        hits = await deps.searchExchanges({ text: userText, k: topK + k, namespace: conversation.namespace });
      } catch {
        // No embedder yet (or it failed): the turn goes on with the recent window only.
        hits = [];
      }
      const seen = new Set<string>();
      const retrieved = hits
        .filter((h) => !h.messageIds.some((id) => inWindow.has(id)))
        .filter((h) => {
          const key = h.text.trim();
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        })
        .sort((a, b) => (b.similarity ?? 0) - (a.similarity ?? 0)) // keyword hits (null) keep their rank order
        .slice(0, topK);
      return { summary: null, entities: [], retrieved, recent };
    },
    async onExchange() {},
  };
}

/** `vector`: the `topK` most similar past exchanges plus the last `k` exchanges. */
export const vectorStrategy = defineStrategy({ kind: 'vector', create: (deps, config) => createVector(deps, config.k!, config.topK!) });
