/**
 * The context strategy picker's logic (src/ui/lib/strategies.ts) over the `STRATEGIES` list
 * (src/model/strategies.ts). Defaults and ranges are read from that list and labels from the
 * locale files, so these tests check the picker's behaviour, not the list's numbers or words.
 */
import { describe, expect, it } from 'vitest';
import type { StrategyKind } from '../../src/model/strategies';
import en from '../../src/ui/i18n/locales/en.json';
import zh from '../../src/ui/i18n/locales/zh_CN.json';
import { describeStrategy, setStrategyParam, STRATEGY_LIST, strategyInfo, strategyParamValue, switchStrategy } from '../../src/ui/lib/strategies';

const spec = (kind: StrategyKind, key: 'k' | 'maxTokens' | 'topK') => strategyInfo(kind).params.find((p) => p.key === key)!;

describe('STRATEGY_LIST', () => {
  it('lists each of the seven strategies once', () => {
    expect(STRATEGY_LIST.map((s) => s.kind).sort()).toEqual(['buffer-window', 'entity', 'full-buffer', 'summary', 'summary-buffer', 'token-buffer', 'vector']);
  });
  it('exposes at least the parameters named in the issue', () => {
    const keys = (kind: StrategyKind) => strategyInfo(kind).params.map((p) => p.key);
    expect(keys('buffer-window')).toContain('k');
    expect(keys('token-buffer')).toContain('maxTokens');
    expect(keys('summary-buffer')).toContain('maxTokens');
    expect(keys('vector')).toContain('topK');
    expect(keys('full-buffer')).toEqual([]);
  });
  it('throws on an unknown kind', () => {
    expect(() => strategyInfo('nope' as StrategyKind)).toThrow('Unknown context strategy: nope');
  });
});

describe('switchStrategy', () => {
  it('takes the new kind’s defaults and drops parameters it does not use', () => {
    expect(switchStrategy({ kind: 'summary-buffer', maxTokens: 3000 }, 'buffer-window')).toEqual({
      kind: 'buffer-window',
      k: spec('buffer-window', 'k').default,
    });
    expect(switchStrategy({ kind: 'vector', k: 2, topK: 3 }, 'full-buffer')).toEqual({ kind: 'full-buffer' });
  });
  it('keeps a value the user set for a parameter the new kind also uses', () => {
    expect(switchStrategy({ kind: 'buffer-window', k: 8 }, 'vector')).toEqual({ kind: 'vector', k: 8, topK: spec('vector', 'topK').default });
    expect(switchStrategy({ kind: 'summary-buffer', maxTokens: 900 }, 'token-buffer')).toEqual({ kind: 'token-buffer', maxTokens: 900 });
  });
  it('clamps a kept value into the new kind’s range', () => {
    const max = spec('summary-buffer', 'maxTokens').max;
    expect(switchStrategy({ kind: 'token-buffer', maxTokens: max + 5000 }, 'summary-buffer')).toEqual({ kind: 'summary-buffer', maxTokens: max });
  });
});

describe('strategyParamValue', () => {
  it('reads the value or the default', () => {
    expect(strategyParamValue({ kind: 'buffer-window', k: 3 }, spec('buffer-window', 'k'))).toBe(3);
    expect(strategyParamValue({ kind: 'buffer-window' }, spec('buffer-window', 'k'))).toBe(spec('buffer-window', 'k').default);
  });
});

describe('setStrategyParam', () => {
  it('parses whole numbers, also full-width digits from Chinese input methods', () => {
    const k = spec('buffer-window', 'k');
    expect(setStrategyParam({ kind: 'buffer-window', k: 5 }, k, ` ${k.min + 1} `)).toEqual({ ok: true, config: { kind: 'buffer-window', k: k.min + 1 } });
    const maxTokens = spec('token-buffer', 'maxTokens');
    const typed = String(maxTokens.min).replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d)));
    expect(setStrategyParam({ kind: 'token-buffer' }, maxTokens, typed)).toEqual({ ok: true, config: { kind: 'token-buffer', maxTokens: maxTokens.min } });
  });
  it('rejects text, fractions and values out of range, with the range', () => {
    const topK = spec('vector', 'topK');
    const range = { min: topK.min, max: topK.max };
    expect(setStrategyParam({ kind: 'vector' }, topK, 'five')).toEqual({ ok: false, error: 'not_integer', ...range });
    expect(setStrategyParam({ kind: 'vector' }, topK, '2.5')).toEqual({ ok: false, error: 'not_integer', ...range });
    expect(setStrategyParam({ kind: 'vector' }, topK, String(topK.max + 1))).toEqual({ ok: false, error: 'out_of_range', ...range });
    expect(setStrategyParam({ kind: 'vector' }, topK, String(topK.min - 1))).toEqual({ ok: false, error: 'out_of_range', ...range });
    expect(setStrategyParam({ kind: 'vector' }, topK, '')).toEqual({ ok: false, error: 'not_integer', ...range });
  });
});

describe('labels', () => {
  it('describe a config with its parameters, in the given language', () => {
    expect(describeStrategy({ kind: 'vector', k: 2, topK: 6 }, 'zh-CN')).toBe(
      `${zh.strategies.vector.label} (${zh.strategyParams.k.label} 2, ${zh.strategyParams.topK.label} 6)`,
    );
    expect(describeStrategy({ kind: 'full-buffer' }, 'en')).toBe(en.strategies['full-buffer'].label);
  });
  it('group token numbers like the rest of the panel', () => {
    expect(describeStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, 'en')).toBe(
      `${en.strategies['summary-buffer'].label} (${en.strategyParams.maxTokens.label} 2,000)`,
    );
    expect(describeStrategy({ kind: 'summary-buffer', maxTokens: 12000 }, 'zh-CN')).toBe(
      `${zh.strategies['summary-buffer'].label} (${zh.strategyParams.maxTokens.label} 12,000)`,
    );
  });
});
