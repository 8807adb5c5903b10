/**
 * Short-term context strategies: their kinds and the configuration stored per conversation.
 * Names follow LangChain's classic conversation-memory patterns (see
 * `src/memory/short-term/types.ts`). Leaf module: imports nothing from `src/`.
 */

/** The seven strategies, in the order the UI lists them. */
export const STRATEGY_KINDS = ['full-buffer', 'buffer-window', 'token-buffer', 'summary', 'summary-buffer', 'entity', 'vector'] as const;

/** Kind of a short-term strategy (see `STRATEGY_KINDS`). */
export type StrategyKind = (typeof STRATEGY_KINDS)[number];

/**
 * A strategy and its parameters, stored per conversation.
 * - `k`: exchanges kept by `buffer-window`, or turns kept verbatim next to `entity`/`vector`.
 * - `maxTokens`: token limit of `token-buffer` and of `summary-buffer` (summary + buffer).
 * - `topK`: exchanges retrieved by `vector`.
 */
export interface StrategyConfig {
  kind: StrategyKind;
  k?: number;
  maxTokens?: number;
  topK?: number;
}

/** Default strategy for new conversations: summary + buffer, 2,000 tokens (LangChain's default). */
export const DEFAULT_STRATEGY: StrategyConfig = { kind: 'summary-buffer', maxTokens: 2000 };
