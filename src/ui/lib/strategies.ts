/**
 * The context strategy picker's logic over the one list of strategies (`STRATEGIES` in
 * `src/model/strategies.ts`: translation keys of labels and descriptions, parameter specs with
 * ranges and defaults; the strings are in the locale files). The UI adds only what a form needs:
 * switching kinds while keeping compatible values, and parsing what the user typed.
 */
import {
  normalizeStrategyConfig,
  STRATEGIES,
  strategyInfo,
  type StrategyConfig,
  type StrategyInfo,
  type StrategyKind,
  type StrategyParamSpec,
} from '../../model/strategies';
import { translate } from '../i18n/instance';
import type { UiLanguage } from './locale';
import { formatCount } from './format';
import { parseIntInRange, type NumberFieldError } from './settings-form';

export { strategyInfo, type StrategyInfo, type StrategyParamSpec };

/** The strategies in the order the picker lists them. */
export const STRATEGY_LIST: readonly StrategyInfo<StrategyKind>[] = STRATEGIES;

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
  const params = info.params.map((spec) => `${translate(spec.labelKey, { lng: lang })} ${formatCount(strategyParamValue(config, spec), lang)}`);
  const label = translate(info.labelKey, { lng: lang });
  return params.length ? `${label} (${params.join(', ')})` : label;
}
