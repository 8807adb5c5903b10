/**
 * The context strategy picker's logic over the short-term memory module's own table
 * (`STRATEGIES` in `src/memory/short-term`: labels and descriptions in English and Chinese,
 * parameter specs with ranges and defaults). The UI adds only what a form needs: switching
 * kinds while keeping compatible values, and parsing what the user typed.
 */
import { normalizeStrategyConfig, STRATEGIES, type Localized, type StrategyInfo, type StrategyParamSpec } from '../../memory/short-term/config';
import type { StrategyConfig, StrategyKind } from '../../model/strategies';
import type { UiLanguage } from './locale';
import { formatCount } from './format';
import { parseIntInRange, type NumberFieldError } from './settings-form';

export type { StrategyInfo, StrategyParamSpec };

/** The strategies in the order the picker lists them. */
export const STRATEGY_LIST: readonly StrategyInfo[] = Object.values(STRATEGIES);

/** The table entry of `kind`. @throws Error for an unknown kind. */
export function strategyInfo(kind: StrategyKind): StrategyInfo {
  const info = (STRATEGIES as Partial<Record<string, StrategyInfo>>)[kind];
  if (!info) throw new Error(`Unknown context strategy: ${kind}`);
  return info;
}

/** Picks the string of a `Localized` pair for a UI language. */
export function localized(text: Localized, lang: UiLanguage): string {
  return lang === 'zh-CN' ? text.zh_CN : text.en;
}

/**
 * The config after the user picks another strategy: the new kind's defaults, except that a
 * parameter the new kind also uses keeps the value the user had (clamped to the new range).
 * Parameters the new kind does not use are dropped (see `normalizeStrategyConfig`).
 */
export function switchStrategy(current: StrategyConfig, kind: StrategyKind): StrategyConfig {
  const next: StrategyConfig = { ...strategyInfo(kind).defaults, kind };
  for (const spec of strategyInfo(kind).params) {
    const value = current[spec.key];
    if (typeof value === 'number') next[spec.key] = value;
  }
  return normalizeStrategyConfig(next);
}

/** The value of one parameter of `config` (its default when unset). */
export function strategyParamValue(config: StrategyConfig, spec: StrategyParamSpec): number {
  return config[spec.key] ?? spec.default;
}

/**
 * Parses what the user typed for one parameter (whole number within the spec's range; full-width
 * digits accepted).
 * @returns the new config, or the error with the allowed range.
 */
export function setStrategyParam(
  config: StrategyConfig,
  spec: StrategyParamSpec,
  input: string,
): { ok: true; config: StrategyConfig } | { ok: false; error: NumberFieldError; min: number; max: number } {
  const parsed = parseIntInRange(input, spec.min, spec.max);
  if (!parsed.ok) return { ok: false, error: parsed.error, min: spec.min, max: spec.max };
  return { ok: true, config: { ...config, [spec.key]: parsed.value } };
}

/**
 * One line describing a config, e.g. `Summary + recent messages (Token limit 2,000)`. Parameter
 * values use the locale's digit grouping, like every other token number in the panel.
 */
export function describeStrategy(config: StrategyConfig, lang: UiLanguage): string {
  const info = strategyInfo(config.kind);
  const params = info.params.map((spec) => `${localized(spec.label, lang)} ${formatCount(strategyParamValue(config, spec), lang)}`);
  const label = localized(info.label, lang);
  return params.length ? `${label} (${params.join(', ')})` : label;
}
