/**
 * The strategies without an LLM (full buffer, buffer window, token buffer), exchange grouping,
 * and the strategy metadata. Expected contexts are computed by hand on scripted conversations.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createStrategy, groupExchanges, normalizeStrategyConfig, STRATEGIES } from '../../src/memory/short-term';
import type { ContextMessage } from '../../src/model/context';
import { strategyInfo } from '../../src/model/strategies';
import { createHarness, wordCounter, type Harness } from '../../bench/data/strategy-harness';
import { qwenCounter } from '../../bench/data/qwen-tokenizer';

let h: Harness;
afterEach(async () => h?.close());

/** Stores exchanges "u1"/"a1" … "uN"/"aN" and returns the ids per exchange. */
async function fiveExchanges(conversationId = 'c1', n = 5) {
  const ids: { userMessageId: string; assistantMessageId: string }[] = [];
  for (let i = 1; i <= n; i++) ids.push(await h.addExchange(conversationId, `u${i}`, `a${i}`));
  return ids;
}
const text = (recent: ContextMessage[]) => recent.map((m) => m.content);

describe('full buffer', () => {
  it('returns every message verbatim, oldest first', async () => {
    h = createHarness();
    await fiveExchanges();
    const ctx = await createStrategy({ kind: 'full-buffer' }, h.deps).load('c1', { userText: 'next', budgetTokens: 100 });
    expect(text(ctx.recent)).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'u4', 'a4', 'u5', 'a5']);
    expect(ctx.recent.map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ctx).toMatchObject({ summary: null, entities: [], retrieved: [] });
  });

  it('skips failed and empty messages, keeps aborted partial replies, and never includes the new message twice', async () => {
    h = createHarness();
    await h.addExchange('c1', 'u1', 'a1');
    await h.addMessage('c1', 'user', 'u2');
    await h.addMessage('c1', 'assistant', '', 'error'); // the model failed
    await h.addMessage('c1', 'user', 'u3');
    await h.addMessage('c1', 'assistant', 'partial', 'aborted');
    await h.addMessage('c1', 'user', 'the new message'); // the core stored it before load() read
    const ctx = await createStrategy({ kind: 'full-buffer' }, h.deps).load('c1', { userText: 'the new message', budgetTokens: 100 });
    expect(text(ctx.recent)).toEqual(['u1', 'a1', 'u2', 'u3', 'partial']);
  });

  it('keeps other conversations apart', async () => {
    h = createHarness();
    await fiveExchanges('c1', 2);
    await h.addExchange('c2', 'other', 'conversation');
    const ctx = await createStrategy({ kind: 'full-buffer' }, h.deps).load('c2', { userText: 'x', budgetTokens: 100 });
    expect(text(ctx.recent)).toEqual(['other', 'conversation']);
  });
});

describe('buffer window', () => {
  it('k=2 after five exchanges holds exactly exchanges 4 and 5', async () => {
    h = createHarness();
    const ids = await fiveExchanges();
    const ctx = await createStrategy({ kind: 'buffer-window', k: 2 }, h.deps).load('c1', { userText: 'next', budgetTokens: 1000 });
    expect(ctx.recent.map((m) => m.id)).toEqual([ids[3]!.userMessageId, ids[3]!.assistantMessageId, ids[4]!.userMessageId, ids[4]!.assistantMessageId]);
    expect(text(ctx.recent)).toEqual(['u4', 'a4', 'u5', 'a5']);
  });

  it('holds everything when there are fewer than k exchanges, and counts an unanswered message as an exchange', async () => {
    h = createHarness();
    await fiveExchanges('c1', 1);
    await h.addMessage('c1', 'user', 'unanswered');
    await h.addMessage('c1', 'assistant', '', 'error');
    const s = createStrategy({ kind: 'buffer-window', k: 5 }, h.deps);
    expect(text((await s.load('c1', { userText: 'x', budgetTokens: 1000 })).recent)).toEqual(['u1', 'a1', 'unanswered']);
    const k1 = createStrategy({ kind: 'buffer-window', k: 1 }, h.deps);
    expect(text((await k1.load('c1', { userText: 'x', budgetTokens: 1000 })).recent)).toEqual(['unanswered']);
  });

  it('a turn reads only the last rows (2k + 4), not the whole conversation, with another conversation stored', async () => {
    h = createHarness();
    await fiveExchanges('c1', 100); // seq 0..199
    await fiveExchanges('c2', 3);
    let read = 0;
    const counting = (row: unknown) => {
      read += 1;
      return row;
    };
    h.db.messages.hook('reading', counting);
    const ctx = await createStrategy({ kind: 'buffer-window', k: 2 }, h.deps).load('c1', { userText: 'next', budgetTokens: 1000 });
    h.db.messages.hook('reading').unsubscribe(counting);
    expect(text(ctx.recent)).toEqual(['u99', 'a99', 'u100', 'a100']);
    expect(read).toBe(8); // rows seq 192..199: exchanges 97..100, more than k = 2
  });

  it('reads further back when the newest rows do not hold k + 1 exchanges (failed replies, long reply runs)', async () => {
    h = createHarness();
    await fiveExchanges('c1', 2); // seq 0..3
    await h.addMessage('c1', 'user', 'q');
    for (let i = 1; i <= 6; i++) await h.addMessage('c1', 'assistant', i % 2 ? `p${i}` : '', i % 2 ? 'aborted' : 'error');
    let read = 0;
    const counting = (row: unknown) => {
      read += 1;
      return row;
    };
    h.db.messages.hook('reading', counting);
    const ctx = await createStrategy({ kind: 'buffer-window', k: 1 }, h.deps).load('c1', { userText: 'next', budgetTokens: 1000 });
    h.db.messages.hook('reading').unsubscribe(counting);
    // First page: the 6 newest rows (all replies, one partial exchange); second page: 12 > 11 rows, all of them.
    expect(text(ctx.recent)).toEqual(['q', 'p1', 'p3', 'p5']);
    expect(read).toBe(6 + 11);
  });
});

describe('token buffer', () => {
  it('keeps the most recent whole messages within maxTokens (100 tokens per word, overhead 200)', async () => {
    h = createHarness({ counter: wordCounter(200, 0, 100) });
    await h.addExchange('c1', 'one two three', 'four five'); // costs 500, 400
    await h.addExchange('c1', 'six', 'seven eight nine ten'); // costs 300, 600
    // Newest first: 600 (≤ 1300), +300 = 900, +400 = 1300 (≤ 1300), +500 = 1800 > 1300 → three messages.
    const s = createStrategy({ kind: 'token-buffer', maxTokens: 1300 }, h.deps);
    expect(text((await s.load('c1', { userText: 'x', budgetTokens: 10_000 })).recent)).toEqual(['four five', 'six', 'seven eight nine ten']);
    // 1200 tokens: 600 + 300 = 900, + 400 = 1300 > 1200 → two messages.
    const s12 = createStrategy({ kind: 'token-buffer', maxTokens: 1200 }, h.deps);
    expect(text((await s12.load('c1', { userText: 'x', budgetTokens: 10_000 })).recent)).toEqual(['six', 'seven eight nine ten']);
    // A smaller prompt budget wins over maxTokens: 900 → two messages; 500 → none (600 > 500).
    expect(text((await s.load('c1', { userText: 'x', budgetTokens: 900 })).recent)).toEqual(['six', 'seven eight nine ten']);
    expect((await s.load('c1', { userText: 'x', budgetTokens: 500 })).recent).toEqual([]);
  });

  it('a turn reads the newest rows only, in doubling pages (32, 64) until the limit stops inside them', async () => {
    h = createHarness({ counter: wordCounter(0, 0, 1) }); // every "uN" / "aN" costs 1
    await fiveExchanges('c1', 100); // 200 messages, seq 0..199
    let read = 0;
    const counting = (row: unknown) => {
      read += 1;
      return row;
    };
    h.db.messages.hook('reading', counting);
    const s = createStrategy({ kind: 'token-buffer', maxTokens: 1000 }, h.deps);
    const ten = await s.load('c1', { userText: 'x', budgetTokens: 10 }); // the prompt budget is the limit
    expect(text(ten.recent)).toEqual(['u96', 'a96', 'u97', 'a97', 'u98', 'a98', 'u99', 'a99', 'u100', 'a100']);
    expect(read).toBe(32); // 10 kept of the 32 read
    read = 0;
    const fifty = await s.load('c1', { userText: 'x', budgetTokens: 50 });
    expect(fifty.recent.map((m) => m.seq)).toEqual(Array.from({ length: 50 }, (_, i) => 150 + i));
    expect(read).toBe(32 + 64); // all 32 fit, so 64 more; 50 kept of those
    read = 0;
    const all = await s.load('c1', { userText: 'x', budgetTokens: 10_000 }); // maxTokens 1000 ≥ 200
    h.db.messages.hook('reading').unsubscribe(counting);
    expect(all.recent).toHaveLength(200);
    expect(read).toBe(32 + 64 + 128 + 200); // the page of 256 holds the whole conversation
  });

  it('uses the real tokenizer counts (Qwen2.5, ChatML overhead 5)', async () => {
    const qwen = qwenCounter();
    h = createHarness({ counter: qwen });
    await h.addExchange('c1', 'My cat is called Mochi.', '好的，我记住了：你的猫叫麻薯。');
    await h.addExchange('c1', 'She is eleven years old.', 'Eleven is a good age for a cat!');
    const m = ['She is eleven years old.', 'Eleven is a good age for a cat!'];
    const lastTwo = qwen.count(m[0]!) + 5 + qwen.count(m[1]!) + 5;
    const s = createStrategy({ kind: 'token-buffer', maxTokens: 200 }, h.deps);
    expect(text((await s.load('c1', { userText: 'x', budgetTokens: lastTwo })).recent)).toEqual(m);
    expect(text((await s.load('c1', { userText: 'x', budgetTokens: lastTwo - 1 })).recent)).toEqual([m[1]]);
  });
});

describe('groupExchanges', () => {
  it('starts an exchange at each user message; leading replies form their own group', () => {
    const msg = (seq: number, role: 'user' | 'assistant'): ContextMessage => ({ id: `m${seq}`, seq, role, content: `${role}${seq}` });
    const groups = groupExchanges([msg(0, 'assistant'), msg(1, 'user'), msg(2, 'assistant'), msg(3, 'assistant'), msg(4, 'user')]);
    expect(groups.map((g) => g.map((m) => m.seq))).toEqual([[0], [1, 2, 3], [4]]);
  });
});

describe('STRATEGIES metadata and config normalization', () => {
  it('lists all seven strategies once, with defaults inside their ranges', () => {
    expect(STRATEGIES.map((s) => s.kind).sort()).toEqual(['buffer-window', 'entity', 'full-buffer', 'summary', 'summary-buffer', 'token-buffer', 'vector']);
    for (const info of STRATEGIES) {
      expect(info.defaults.kind).toBe(info.kind);
      expect(info.labelKey).toBe(`strategies.${info.kind}.label`);
      expect(info.descriptionKey).toBe(`strategies.${info.kind}.description`);
      for (const p of info.params) {
        expect(info.defaults[p.key]).toBe(p.default);
        expect(p.default).toBeGreaterThanOrEqual(p.min);
        expect(p.default).toBeLessThanOrEqual(p.max);
      }
      expect(normalizeStrategyConfig(info.defaults)).toEqual(info.defaults);
    }
    expect(strategyInfo('summary-buffer').defaults).toEqual({ kind: 'summary-buffer', maxTokens: 2000 });
  });

  it('fills, rounds and clamps parameters; drops unused ones; falls back on unknown kinds', () => {
    expect(normalizeStrategyConfig({ kind: 'buffer-window' })).toEqual({ kind: 'buffer-window', k: 5 });
    expect(normalizeStrategyConfig({ kind: 'buffer-window', k: 2.6, maxTokens: 9 })).toEqual({ kind: 'buffer-window', k: 3 });
    expect(normalizeStrategyConfig({ kind: 'token-buffer', maxTokens: 10 })).toEqual({ kind: 'token-buffer', maxTokens: 200 });
    expect(normalizeStrategyConfig({ kind: 'vector', k: 0, topK: 1e9 })).toEqual({ kind: 'vector', k: 1, topK: 20 });
    expect(normalizeStrategyConfig({ kind: 'summary-buffer', maxTokens: Number.NaN })).toEqual({ kind: 'summary-buffer', maxTokens: 2000 });
    expect(normalizeStrategyConfig({ kind: 'telepathy' })).toEqual({ kind: 'summary-buffer', maxTokens: 2000 });
    expect(normalizeStrategyConfig(null)).toEqual({ kind: 'summary-buffer', maxTokens: 2000 });
  });

  it('creates a strategy of each kind', () => {
    h = createHarness();
    for (const { kind } of STRATEGIES) expect(createStrategy({ kind }, h.deps).kind).toBe(kind);
  });
});
