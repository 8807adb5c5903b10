/**
 * The seven short-term context strategies as the picker shows them: which parameter each one
 * exposes, its default and its allowed range. Labels and descriptions are i18n keys
 * (`strategy.<kind>.label` / `.help`).
 *
 * This is the UI's single table of strategies until `src/memory/short-term/index.ts` exports
 * `STRATEGIES`; then the defaults should come from there. Defaults follow LangChain's classic
 * memories (ConversationBufferWindowMemory k = 5, ConversationTokenBufferMemory and
 * ConversationSummaryBufferMemory max_token_limit = 2000, VectorStoreRetrieverMemory k = 4);
 * ranges match the settings validation in the core (k 1–100, maxTokens 64–131,072, topK 1–50).
 */
import type { StrategyConfig, StrategyKind } from '../../memory/short-term/types';
import { parseIntInRange, type NumberFieldError } from './settings-form';

/** The parameter a strategy exposes in the picker. */
export type StrategyParam = 'k' | 'maxTokens' | 'topK';

/** One row of the picker. */
export interface StrategyInfo {
  kind: StrategyKind;
  /** Parameter shown next to the picker, or `null` when the strategy has none. */
  param: StrategyParam | null;
  /** Default value of `param`. */
  defaultValue: number | null;
  /** Inclusive range of `param`. */
  min: number;
  max: number;
  /** Unit of `param`, for its label: exchanges (k), tokens (maxTokens), retrieved exchanges (topK). */
  unit: 'exchanges' | 'tokens' | null;
}

/** Parameter ranges (inclusive). */
export const PARAM_RANGES: Record<StrategyParam, { min: number; max: number }> = {
  k: { min: 1, max: 100 },
  maxTokens: { min: 64, max: 131_072 },
  topK: { min: 1, max: 50 },
};

const row = (kind: StrategyKind, param: StrategyParam | null, defaultValue: number | null): StrategyInfo => ({
  kind,
  param,
  defaultValue,
  min: param ? PARAM_RANGES[param].min : 0,
  max: param ? PARAM_RANGES[param].max : 0,
  unit: param === 'maxTokens' ? 'tokens' : param ? 'exchanges' : null,
});

/** The seven strategies in picker order. */
export const STRATEGY_TABLE: readonly StrategyInfo[] = [
  row('full-buffer', null, null),
  row('buffer-window', 'k', 5),
  row('token-buffer', 'maxTokens', 2000),
  row('summary', null, null),
  row('summary-buffer', 'maxTokens', 2000),
  row('entity', null, null),
  row('vector', 'topK', 4),
];

/** The table row of `kind`. @throws Error for an unknown kind. */
export function strategyInfo(kind: StrategyKind): StrategyInfo {
  const info = STRATEGY_TABLE.find((s) => s.kind === kind);
  if (!info) throw new Error(`Unknown context strategy: ${kind}`);
  return info;
}

/**
 * The config after the user picks another strategy: other parameters already set are kept
 * (they are per-kind and harmless), and the new kind's parameter gets its default if unset.
 */
export function switchStrategy(current: StrategyConfig, kind: StrategyKind): StrategyConfig {
  const next: StrategyConfig = { ...current, kind };
  const info = strategyInfo(kind);
  if (info.param && next[info.param] === undefined && info.defaultValue !== null) next[info.param] = info.defaultValue;
  return next;
}

/** The value of the strategy's own parameter (its default when unset), or `null` when it has none. */
export function strategyParamValue(config: StrategyConfig): number | null {
  const info = strategyInfo(config.kind);
  if (!info.param) return null;
  return config[info.param] ?? info.defaultValue;
}

/**
 * Parses what the user typed for the strategy's parameter.
 * @returns the new config, or an error key: `'not_integer'` or `'out_of_range'` (with the range).
 */
export function setStrategyParam(
  config: StrategyConfig,
  input: string,
): { ok: true; config: StrategyConfig } | { ok: false; error: NumberFieldError; min: number; max: number } {
  const info = strategyInfo(config.kind);
  if (!info.param) return { ok: true, config };
  const parsed = parseIntInRange(input, info.min, info.max);
  if (!parsed.ok) return { ok: false, error: parsed.error, min: info.min, max: info.max };
  return { ok: true, config: { ...config, [info.param]: parsed.value } };
}
