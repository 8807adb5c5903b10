/** Token-budget bar (src/ui/lib/budget.ts): every number below is worked out by hand. */
import { describe, expect, it } from 'vitest';
import { computeBudget, droppedReason } from '../../src/ui/lib/budget';
import type { PromptBudget, PromptSection } from '../../src/model/trace';

const section = (kind: PromptSection['kind'], tokens: number): PromptSection => ({ kind, text: '', tokens, items: 1, dropped: 0 });
const budget = (over: Partial<PromptBudget>): PromptBudget => ({
  contextWindow: 4096,
  reservedForAnswer: 512,
  promptTokens: 0,
  tokenizer: 'hf:test',
  exact: true,
  ...over,
});

describe('computeBudget', () => {
  it('lays out sections in prompt order, then overhead, reserve and free room', () => {
    // sections: 200 + 300 + 100 + 900 + 60 = 1560; prompt 1563 → overhead 3
    // used = 1563 + 512 = 2075 → free = 4096 − 2075 = 2021
    const view = computeBudget({
      sections: [section('user', 60), section('system', 200), section('recent', 900), section('memories', 300), section('summary', 100)],
      budget: budget({ promptTokens: 1563 }),
    });
    expect(view.segments.map((s) => [s.kind, s.tokens])).toEqual([
      ['system', 200],
      ['memories', 300],
      ['summary', 100],
      ['recent', 900],
      ['user', 60],
      ['overhead', 3],
      ['reserved', 512],
      ['free', 2021],
    ]);
    expect(view.freeTokens).toBe(2021);
    expect(view.overflow).toBe(false);
    expect(view.segments.find((s) => s.kind === 'recent')!.fraction).toBeCloseTo(900 / 4096, 10);
    expect(view.segments.reduce((a, s) => a + s.fraction, 0)).toBeCloseTo(1, 10);
  });

  it('adds up sections of the same kind and drops empty ones', () => {
    const view = computeBudget({
      sections: [section('recent', 10), section('recent', 15), section('entities', 0)],
      budget: budget({ contextWindow: 100, reservedForAnswer: 25, promptTokens: 25 }),
    });
    expect(view.segments.map((s) => [s.kind, s.tokens])).toEqual([
      ['recent', 25],
      ['reserved', 25],
      ['free', 50],
    ]);
  });

  it('never shows negative overhead when sections count more than promptTokens', () => {
    const view = computeBudget({
      sections: [section('system', 70), section('user', 40)],
      budget: budget({ contextWindow: 200, reservedForAnswer: 50, promptTokens: 100 }),
    });
    expect(view.promptTokens).toBe(110);
    expect(view.segments.some((s) => s.kind === 'overhead')).toBe(false);
    expect(view.freeTokens).toBe(40);
  });

  it('flags overflow and scales the bar to the total', () => {
    // 2000 + 300 = 2300 > 2048 → no free room; fractions are shares of 2300
    const view = computeBudget({ sections: [section('recent', 2000)], budget: budget({ contextWindow: 2048, reservedForAnswer: 300, promptTokens: 2000 }) });
    expect(view.overflow).toBe(true);
    expect(view.freeTokens).toBe(0);
    expect(view.segments.map((s) => s.kind)).toEqual(['recent', 'reserved']);
    expect(view.segments[0]!.fraction).toBeCloseTo(2000 / 2300, 10);
    expect(view.segments[1]!.fraction).toBeCloseTo(300 / 2300, 10);
  });

  it('passes the tokenizer id and exactness through', () => {
    const view = computeBudget({ sections: [], budget: budget({ tokenizer: 'estimator:v1', exact: false, promptTokens: 0 }) });
    expect(view).toMatchObject({ tokenizer: 'estimator:v1', exact: false, promptTokens: 0, freeTokens: 3584 });
  });
});

describe('droppedReason (issue 12 item 9: "6 left out" while the bar shows room to spare)', () => {
  it("names the section's share of the room for optional sections, the full window for recent turns", () => {
    expect(droppedReason('memories')).toEqual({ kind: 'share', percent: 25 });
    expect(droppedReason('summary')).toEqual({ kind: 'share', percent: 40 });
    expect(droppedReason('entities')).toEqual({ kind: 'share', percent: 15 });
    expect(droppedReason('retrieved')).toEqual({ kind: 'share', percent: 20 });
    expect(droppedReason('recent')).toEqual({ kind: 'window' });
    expect(droppedReason('user')).toBeNull();
  });
});
