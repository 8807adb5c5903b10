/**
 * Time expressions as soft boosts: absolute dates in English and Chinese, ordinal sessions
 * ("our first conversation", 第一次聊天), the boost and same-day fill (`applyTimeBoost`), and the
 * store's search with them (real Dexie on fake-indexeddb, MiniSearch, lexical mode so every score
 * is BM25 + the stated bonuses). Expected values are computed by hand from the stated conventions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { createMemoryStore, type LongTermStore } from '../../src/memory/long-term/store';
import { applyTimeBoost, parseSessionReference, parseTimeFilter, sessionWindow } from '../../src/memory/long-term/retrieval/time-filter';
import { nodeVoyWasm } from '../../bench/data/node-voy';

// Wednesday 14 May 2025, 15:00 local time; ranges are local midnights.
const now = new Date(2025, 4, 14, 15).getTime();
const local = (y: number, m: number, d: number) => new Date(y, m - 1, d).getTime();
const dayRange = (y: number, m: number, d: number) => [local(y, m, d), local(y, m, d + 1)];
const range = (q: string) => {
  const f = parseTimeFilter(q, now);
  return f && [f.start, f.end];
};

describe('relative dates', () => {
  // Each needs a different word of the prefilter (TIME_WORD): 'ago', 前 without 天 or 年 before it.
  it('parses "N units ago" and Chinese 前 expressions against the week, day and year of now (Wed 14 May 2025)', () => {
    // This week starts on Monday 12 May; two weeks back is the week of Monday 28 April.
    expect(range('What did I cook two weeks ago?')).toEqual([local(2025, 4, 28), local(2025, 5, 5)]);
    expect(range('我3天前说了什么')).toEqual(dayRange(2025, 5, 11));
    expect(range('前天我们聊了什么')).toEqual(dayRange(2025, 5, 12));
    expect(range('我前年住在哪里')).toEqual([local(2023, 1, 1), local(2024, 1, 1)]);
  });
});

describe('absolute dates', () => {
  it('parses English month-day dates, the most recent one that has started', () => {
    expect(range('What did I eat on May 3?')).toEqual(dayRange(2025, 5, 3));
    expect(parseTimeFilter('What did I eat on May 3?', now)?.rest).toBe('What did I eat ?');
    expect(range('May 3rd')).toEqual(dayRange(2025, 5, 3));
    expect(range('on 3 May')).toEqual(dayRange(2025, 5, 3));
    expect(range('the 3rd of May')).toEqual(dayRange(2025, 5, 3));
    // 20 May is still to come on 14 May 2025: last year's.
    expect(range('on May 20')).toEqual(dayRange(2024, 5, 20));
    expect(range('December 3rd')).toEqual(dayRange(2024, 12, 3));
    expect(range('Sept 9')).toEqual(dayRange(2024, 9, 9));
    expect(range('on May 3, 2023')).toEqual(dayRange(2023, 5, 3));
    // A month and a year is still a month; a day the month lacks is no date.
    expect(range('in May 2023')).toEqual([local(2023, 5, 1), local(2023, 6, 1)]);
    expect(parseTimeFilter('February 30', now)).toBeNull();
  });

  it('parses Chinese month-day dates written with 号 or 日, Arabic or Chinese numerals', () => {
    expect(range('5月3号我吃了什么')).toEqual(dayRange(2025, 5, 3));
    expect(range('5月3日')).toEqual(dayRange(2025, 5, 3));
    expect(range('五月三号')).toEqual(dayRange(2025, 5, 3));
    expect(range('5月20号')).toEqual(dayRange(2024, 5, 20));
    expect(range('2023年5月3日')).toEqual(dayRange(2023, 5, 3));
  });
});

describe('ordinal sessions', () => {
  it('finds the ordinal conversation a query names', () => {
    expect(parseSessionReference('What did we talk about in our first conversation?')).toEqual({
      ordinal: 1,
      expression: 'our first conversation',
      rest: 'What did we talk about in ?',
    });
    expect(parseSessionReference('the second time we talked')?.ordinal).toBe(2);
    expect(parseSessionReference('what did I say in our last chat')?.ordinal).toBe(-1);
    expect(parseSessionReference('我们第一次聊天说了什么')).toEqual({ ordinal: 1, expression: '第一次聊天', rest: '我们 说了什么' });
    expect(parseSessionReference('第二次对话')?.ordinal).toBe(2);
    expect(parseSessionReference('上次聊天你说了什么')?.ordinal).toBe(-1);
    for (const q of ['my first car', 'the first time I cooked', '第一次去北京', 'What did I say last week?']) expect(parseSessionReference(q), q).toBeNull();
  });

  it('resolves it to a local calendar day of the stated memories', () => {
    const times = [local(2025, 3, 2) + 3_600_000, local(2025, 1, 10) + 9 * 3_600_000, local(2025, 1, 10) + 20 * 3_600_000, local(2025, 5, 14) + 1000];
    expect(sessionWindow(1, times, now)).toEqual({ start: local(2025, 1, 10), end: local(2025, 1, 11) });
    expect(sessionWindow(2, times, now)).toEqual({ start: local(2025, 3, 2), end: local(2025, 3, 3) });
    // "last": the latest day before the question's day (14 May is today).
    expect(sessionWindow(-1, times, now)).toEqual({ start: local(2025, 3, 2), end: local(2025, 3, 3) });
    expect(sessionWindow(4, times, now)).toBeNull();
  });
});

describe('applyTimeBoost', () => {
  const day = { start: local(2025, 5, 3), end: local(2025, 5, 4) };
  const month = { start: local(2025, 5, 1), end: local(2025, 6, 1) };
  const inWindow = (id: string) => id === 'a' || id === 'c';

  it('adds the weight to the candidates in the window and fills a date with its other memories', () => {
    const fused = new Map([
      ['a', 0.8],
      ['b', 0.9],
    ]);
    expect(applyTimeBoost(fused, day, inWindow, () => ['a', 'c'], 3, 0.5)).toBe(2);
    expect([...fused]).toEqual([
      ['a', 1.3],
      ['b', 0.9],
      ['c', 0.5],
    ]);
  });

  it('fills only a one-day window, and only when at most k candidates are in it', () => {
    const wide = new Map([['a', 0.8]]);
    expect(applyTimeBoost(wide, month, inWindow, () => ['a', 'c'], 3, 0.5)).toBe(1);
    expect([...wide]).toEqual([['a', 1.3]]);
    const many = new Map([
      ['a', 0.8],
      ['c', 0.2],
    ]);
    expect(applyTimeBoost(many, day, inWindow, () => ['a', 'c', 'd'], 1, 0.5)).toBe(2);
    expect([...many].map(([id]) => id)).toEqual(['a', 'c']);
  });

  it('counts the held-out candidates in the window towards k and does not fill them in again', () => {
    // One held out in the window: 'a' and it make 2 > k = 1, so no fill ('c' would join without it).
    const one = new Map([['a', 0.8]]);
    expect(applyTimeBoost(one, day, inWindow, () => ['a', 'c'], 1, 0.5, { inside: 1, has: () => false })).toBe(2);
    expect([...one]).toEqual([['a', 1.3]]);
    // 'c' is held out (outside the window count): the fill adds 'd' only.
    const fill = new Map([['a', 0.8]]);
    expect(applyTimeBoost(fill, day, inWindow, () => ['a', 'c', 'd'], 3, 0.5, { inside: 0, has: (id) => id === 'c' })).toBe(2);
    expect([...fill]).toEqual([
      ['a', 1.3],
      ['d', 0.5],
    ]);
  });
});

describe('store search with time expressions', () => {
  let db: RecallDB;
  afterEach(async () => db?.delete());
  const NOW = new Date(2025, 5, 18, 12).getTime(); // Wednesday 18 June 2025
  async function open(): Promise<LongTermStore> {
    db = new RecallDB(`retrieval-time-${crypto.randomUUID()}`);
    return createMemoryStore({ db, embedder: () => null, now: () => NOW, loadVoyWasm: nodeVoyWasm });
  }
  const add = async (store: LongTermStore, text: string, createdAt: number) =>
    (await store.add({ namespace: 'default', kind: 'episodic', text, createdAt }, 'test')).memory.id;
  const ids = async (store: LongTermStore, text: string, k = 5) => {
    const r = await store.search({ text, namespace: 'default', k }, { mode: 'lexical' });
    return r.map((x) => x.memory.id);
  };

  it('does not shut out a memory dated outside the window (its own text may say "last year")', async () => {
    const store = await open();
    // Said this year about last year, and said last year: both match only "marathon" ("ran" is
    // not "run"); the window (2024) adds +1 to the second; the first stays a candidate (a filter
    // on the question's "last year" shut it out).
    const saidThisYear = await add(store, 'Last year I ran the Berlin marathon', new Date(2025, 2, 1).getTime());
    const saidLastYear = await add(store, 'I ran the Paris marathon', new Date(2024, 3, 7).getTime());
    await add(store, 'We baked bread together', new Date(2024, 5, 1).getTime());
    const ranked = await ids(store, 'Which marathon did I run last year?');
    expect(ranked.slice(0, 2)).toEqual([saidLastYear, saidThisYear]);
  });

  it('reads "on May 3" and 5月3号 as that day, and fills the day when it has few matches', async () => {
    const store = await open();
    const at = (d: number, h: number) => new Date(2025, 4, d, h).getTime();
    const market = await add(store, 'We went to the farmers market', at(3, 10));
    const picnic = await add(store, 'Picnic in the park with Ana', at(3, 15));
    const otherMarket = await add(store, 'The farmers market was crowded', at(10, 9));
    const zh = await add(store, '我们去了花市', at(3, 18));
    // Lexical: both markets match "farmers market" (relevance ≈ 1 each); May 3's gets
    // +TIME_MATCH_WEIGHT (1) and comes first; the day's two other memories join with relevance 1
    // (same-day fill: 1 match ≤ k = 5), level with the other market.
    const english = await ids(store, 'Which farmers market did we visit on May 3?');
    expect(english[0]).toBe(market);
    expect(new Set(english.slice(1))).toEqual(new Set([otherMarket, picnic, zh]));
    const chinese = await ids(store, '5月3号我们去了哪里');
    expect(chinese[0]).toBe(zh);
    expect(new Set(chinese)).toEqual(new Set([zh, market, picnic]));
  });

  it('answers "our first conversation" / 第一次聊天 with the earliest day\'s memories first', async () => {
    const store = await open();
    const first = await add(store, 'We talked about my garden and the tomatoes', new Date(2025, 0, 5, 10).getTime());
    const firstToo = await add(store, 'I said I want to learn the cello', new Date(2025, 0, 5, 11).getTime());
    const later = await add(store, 'We talked about the trip to Rome', new Date(2025, 2, 9, 10).getTime());
    const english = await ids(store, 'What did we talk about in our first conversation?');
    expect(english[0]).toBe(first);
    expect(new Set(english)).toEqual(new Set([first, firstToo, later]));
    // No word of 第一次聊天 matches: the bare session answers with that day's memories, newest first.
    expect(await ids(store, '第一次聊天')).toEqual([firstToo, first]);
  });
});
