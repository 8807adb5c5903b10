/** The context strategy picker's table and parameter parsing (src/ui/lib/strategies.ts). */
import { describe, expect, it } from 'vitest';
import type { StrategyKind } from '../../src/memory/short-term/types';
import { DEFAULT_STRATEGY } from '../../src/memory/short-term/types';
import { setStrategyParam, STRATEGY_TABLE, strategyInfo, strategyParamValue, switchStrategy } from '../../src/ui/lib/strategies';

const ALL: Record<StrategyKind, true> = {
  'full-buffer': true,
  'buffer-window': true,
  'token-buffer': true,
  summary: true,
  'summary-buffer': true,
  entity: true,
  vector: true,
};

describe('STRATEGY_TABLE', () => {
  it('lists each of the seven strategies once', () => {
    expect(STRATEGY_TABLE.map((s) => s.kind).sort()).toEqual(Object.keys(ALL).sort());
  });
  it('exposes the parameters named in the issue', () => {
    expect(Object.fromEntries(STRATEGY_TABLE.map((s) => [s.kind, s.param]))).toEqual({
      'full-buffer': null,
      'buffer-window': 'k',
      'token-buffer': 'maxTokens',
      summary: null,
      'summary-buffer': 'maxTokens',
      entity: null,
      vector: 'topK',
    });
  });
  it('defaults summary-buffer to the same 2,000 tokens as DEFAULT_STRATEGY', () => {
    expect(strategyInfo('summary-buffer').defaultValue).toBe(DEFAULT_STRATEGY.maxTokens);
  });
  it('throws on an unknown kind', () => {
    expect(() => strategyInfo('nope' as StrategyKind)).toThrow('Unknown context strategy: nope');
  });
});

describe('switchStrategy', () => {
  it('fills the new parameter with its default and keeps the others', () => {
    expect(switchStrategy({ kind: 'summary-buffer', maxTokens: 3000 }, 'buffer-window')).toEqual({ kind: 'buffer-window', maxTokens: 3000, k: 5 });
    expect(switchStrategy({ kind: 'buffer-window', k: 8 }, 'vector')).toEqual({ kind: 'vector', k: 8, topK: 4 });
  });
  it('keeps a value the user set before', () => {
    expect(switchStrategy({ kind: 'summary', maxTokens: 900 }, 'token-buffer')).toEqual({ kind: 'token-buffer', maxTokens: 900 });
  });
  it('adds nothing for strategies without a parameter', () => {
    expect(switchStrategy({ kind: 'vector', topK: 3 }, 'full-buffer')).toEqual({ kind: 'full-buffer', topK: 3 });
  });
});

describe('strategyParamValue', () => {
  it('reads the value or the default', () => {
    expect(strategyParamValue({ kind: 'buffer-window', k: 3 })).toBe(3);
    expect(strategyParamValue({ kind: 'buffer-window' })).toBe(5);
    expect(strategyParamValue({ kind: 'entity', k: 3 })).toBeNull();
  });
});

describe('setStrategyParam', () => {
  it('parses whole numbers, also full-width digits from Chinese input methods', () => {
    expect(setStrategyParam({ kind: 'buffer-window', k: 5 }, ' 12 ')).toEqual({ ok: true, config: { kind: 'buffer-window', k: 12 } });
    expect(setStrategyParam({ kind: 'token-buffer' }, '１５００')).toEqual({ ok: true, config: { kind: 'token-buffer', maxTokens: 1500 } });
  });
  it('rejects text, fractions and values out of range with the range', () => {
    expect(setStrategyParam({ kind: 'vector' }, 'five')).toEqual({ ok: false, error: 'not_integer', min: 1, max: 50 });
    expect(setStrategyParam({ kind: 'vector' }, '2.5')).toEqual({ ok: false, error: 'not_integer', min: 1, max: 50 });
    expect(setStrategyParam({ kind: 'vector' }, '51')).toEqual({ ok: false, error: 'out_of_range', min: 1, max: 50 });
    expect(setStrategyParam({ kind: 'token-buffer' }, '63')).toEqual({ ok: false, error: 'out_of_range', min: 64, max: 131_072 });
    expect(setStrategyParam({ kind: 'buffer-window' }, '')).toEqual({ ok: false, error: 'not_integer', min: 1, max: 100 });
  });
});
