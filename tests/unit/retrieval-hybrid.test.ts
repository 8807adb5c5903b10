/**
 * Hybrid retrieval scenarios through the real store (Dexie, MiniSearch, Voy): planted facts among
 * distractors in Chinese and English, updates, time filters, namespaces, weighting, and the
 * over-fetch under filters. Embeddings: the hashed n-gram TEST embedder (surface overlap only).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { createMemoryStore, type LongTermStore } from '../../src/memory/long-term/store';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { fusionWeightsFor } from '../../src/memory/long-term/retrieval/fusion';

let db: RecallDB;
afterEach(async () => db?.delete());

const DAY = 86_400_000;
const NOW = new Date(2025, 5, 18, 12).getTime(); // Wednesday 18 June 2025, local time

async function open(): Promise<LongTermStore> {
  db = new RecallDB(`retrieval-${crypto.randomUUID()}`);
  const embedder = createHashedEmbedder();
  return createMemoryStore({ db, embedder: () => embedder, now: () => NOW, loadVoyWasm: nodeVoyWasm });
}

const DISTRACTORS_EN = [
  'We talked about the weather in Berlin',
  'The new phone has a better camera',
  'I watched a documentary about whales',
  'The meeting moved to Thursday afternoon',
  'My neighbour plays the piano at night',
  'The bakery on the corner closed',
  'I read an article about electric cars',
  'We discussed the budget for the trip',
  'The printer at work is broken again',
  'I tried a new pasta recipe with mushrooms',
  'The football match ended in a draw',
  'I need to renew my passport soon',
];
const DISTRACTORS_ZH = [
  '今天北京下了很大的雨',
  '新手机的摄像头更好',
  '我看了一部关于鲸鱼的纪录片',
  '会议改到了周四下午',
  '邻居晚上弹钢琴',
  '街角的面包店关门了',
  '我读了一篇关于电动车的文章',
  '我们讨论了旅行的预算',
  '公司的打印机又坏了',
  '我试了一个新的蘑菇意面做法',
];

async function addAll(store: LongTermStore, texts: string[], at: (i: number) => number, namespace = 'default') {
  const out = [];
  for (const [i, text] of texts.entries()) out.push((await store.add({ namespace, kind: 'episodic', text, createdAt: at(i) }, 'test')).memory);
  return out;
}

describe('hybrid retrieval', () => {
  it('finds planted facts among distractors in English and Chinese (top-1)', async () => {
    const store = await open();
    await addAll(store, DISTRACTORS_EN, (i) => NOW - (i + 1) * DAY);
    await addAll(store, DISTRACTORS_ZH, (i) => NOW - (i + 1) * DAY);
    const [peanut, sister, tea, cat] = await addAll(
      store,
      ['I am allergic to peanuts', 'My sister Ana lives in Lisbon', '我最喜欢喝乌龙茶', '我的猫叫小白'],
      (i) => NOW - (20 + i) * DAY,
    );
    await store.whenIndexed();
    const top1 = async (text: string) => (await store.search({ text, namespace: 'default', k: 5 }))[0]?.memory.id;
    expect(await top1('Do I have any food allergies? peanut?')).toBe(peanut!.id);
    expect(await top1('Where does my sister live?')).toBe(sister!.id);
    expect(await top1('我喜欢喝什么茶？')).toBe(tea!.id);
    expect(await top1('我的猫叫什么名字')).toBe(cat!.id);
  });

  it('both retrievers contribute ranks and convex fusion combines their scores', async () => {
    const store = await open();
    await addAll(store, DISTRACTORS_EN, (i) => NOW - i * DAY);
    const results = await store.search({ text: 'passport renewal', namespace: 'default', k: 3 });
    expect(results[0]!.memory.text).toBe('I need to renew my passport soon');
    expect(results[0]!.ranks.lexical).toBe(1);
    expect(results[0]!.ranks.vector).toBe(1);
    // First in both lists: relevance 1 (normalized score 1 in each); score = 1 + 0.02 · 0.5^(age/30 d) + 0.01 · importance 0.5, age 11 days
    const age = 11;
    expect(results[0]!.score).toBeCloseTo(1 + 0.02 * 0.5 ** (age / 30) + 0.01 * 0.5, 10);
  });

  it('ranks an update above the stale statement it replaces (episodic only, no LLM)', async () => {
    const store = await open();
    await addAll(store, [...DISTRACTORS_EN, ...DISTRACTORS_ZH], (i) => NOW - (i + 1) * DAY);
    const [oldEn, oldZh] = await addAll(store, ['I live in Shenzhen with my parents', '我在腾讯做产品经理'], () => NOW - 120 * DAY);
    const [newEn, newZh] = await addAll(store, ['I moved out, now I live in Hangzhou', '我换工作了，现在在阿里巴巴做产品经理'], () => NOW - 10 * DAY);
    const en = await store.search({ text: 'Where do I live now?', namespace: 'default', k: 5 });
    expect(en.findIndex((r) => r.memory.id === newEn!.id)).toBeLessThan(en.findIndex((r) => r.memory.id === oldEn!.id));
    const zh = await store.search({ text: '我现在在哪里做产品经理？', namespace: 'default', k: 5 });
    const ids = zh.map((r) => r.memory.id);
    expect(ids).toContain(oldZh!.id);
    expect(ids.indexOf(newZh!.id)).toBeLessThan(ids.indexOf(oldZh!.id));
  });

  it('finds a memory about the asked slot that shares no word with the question', async () => {
    const store = await open();
    await addAll(store, DISTRACTORS_EN, (i) => NOW - (i + 1) * DAY);
    const [old, update] = await addAll(
      store,
      ['I work at Tencent as a product manager.', "New job! I'm a product manager at KPMG now."],
      (i) => NOW - (i === 0 ? 120 : 10) * DAY,
    );
    await store.whenIndexed();
    // Both texts are user:work, as is the question; the update matches no query term ("now" is a
    // stop word), so before the slot bonus it was not a candidate at all. By hand (lexical only,
    // 'now' query: recency weight 1, half-life 90 days, slot bonus 1): old 1 + 1 + 0.5^(120/90) ≈ 2.40,
    // update 0 + 1 + 0.5^(10/90) ≈ 1.93 (+0.01 · importance each) — 0.47 apart, within the
    // same-slot margin (1): the slot's memories trade places, newest first, and the update takes
    // the first position and its score.
    const hits = await store.search({ text: 'Where do I work now?', namespace: 'default', k: 3 }, { mode: 'lexical' });
    expect(hits[0]!.memory.id).toBe(update!.id);
    expect(hits[0]!.score).toBeCloseTo(1 + 1 + 0.5 ** (120 / 90) + 0.01 * old!.importance, 6);
    expect(hits.map((h) => h.memory.id)).toContain(old!.id);
  });

  it('ranks a statement of the asked slot that shares no word above recent rounds that share one word, in both languages', async () => {
    const store = await open();
    // Questions state no slot; each shares one word with the question ("work" / 上班), and lexical
    // relevance is normalized by the best hit, so the best of them has relevance 1.
    const chatter = [
      'Can you remind me how remote work works?',
      'Is remote work good for focus?',
      'How does hybrid work work in practice?',
      '上班族每天吃什么比较健康？',
      '上班路上听什么播客好？',
    ];
    await addAll(store, chatter, (i) => NOW - (i + 1) * DAY);
    const [job, zhJob] = await addAll(store, ["New job! I'm a product manager at Alibaba now.", '入职美团了，岗位是产品经理。'], () => NOW - 200 * DAY);
    await store.whenIndexed();
    // By hand (lexical only, no "now"): the statement scores 0 + 1 (slot) + 0.02 · 0.5^(200/30)
    // ≈ 1.0002 (+0.01 · importance), a one-word match at most 1 + 0.02 · 0.5^(1/30) ≈ 1.0196 and
    // the weaker ones (longer texts, lower BM25) less, so the statement is in the top 3; with the
    // slot bonus of 0.5 it scored ≈ 0.50, below every chatter round (the test failed).
    const en = await store.search({ text: 'Which company am I working for?', namespace: 'default', k: 3 }, { mode: 'lexical' });
    expect(en.map((h) => h.memory.id)).toContain(job!.id);
    const zh = await store.search({ text: '我在哪家公司上班？', namespace: 'default', k: 3 }, { mode: 'lexical' });
    expect(zh.map((h) => h.memory.id)).toContain(zhJob!.id);
  });

  it('puts the newer of two statements with the same matched terms first (recency tie-break)', async () => {
    const store = await open();
    await addAll(store, DISTRACTORS_EN, (i) => NOW - (i + 1) * DAY);
    // The older statement is shorter, so BM25 ranks it first; recency weighting alone (40 vs 35
    // days, default half-life 30 days) moves it by less than one RRF rank.
    const [older, newer] = await addAll(
      store,
      ['I have a dentist appointment on Monday.', 'I have a dentist appointment on Thursday afternoon at the new clinic downtown.'],
      (i) => NOW - (i === 0 ? 40 : 35) * DAY,
    );
    const ids = async (options = {}) =>
      (await store.search({ text: 'When is my dentist appointment?', namespace: 'default', k: 3 }, { mode: 'lexical', ...options })).map((r) => r.memory.id);
    expect((await ids({ recencyTieBreak: false })).slice(0, 2)).toEqual([older!.id, newer!.id]);
    expect((await ids()).slice(0, 2)).toEqual([newer!.id, older!.id]);
    // Scores stay in rank order (tied candidates trade scores with their positions).
    const results = await store.search({ text: 'When is my dentist appointment?', namespace: 'default', k: 3 });
    expect(results[0]!.memory.id).toBe(newer!.id);
    expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
  });

  it('ranks a planted fact above shorter statements about other people, in both languages', async () => {
    const store = await open();
    await addAll(store, [...DISTRACTORS_EN, ...DISTRACTORS_ZH], (i) => NOW - (i + 1) * DAY);
    // Said a few days apart: recency weighting (up to ×1.2) can outweigh a one-rank RRF margin,
    // so a much newer statement about someone else could still come first (see BENCHMARKS.md).
    const [mine, mineZh] = await addAll(
      store,
      ['My cat is called Mochi, she just turned three and loves boxes.', '我家的猫叫小白，刚满三岁，特别喜欢纸箱子。'],
      () => NOW - 30 * DAY,
    );
    await addAll(
      store,
      ["My colleague's cat is called Luna.", "My neighbour's cat is called Pepper.", '同事家的猫叫橘子。', '邻居家的猫叫豆豆。'],
      (i) => NOW - (27 + (i % 2)) * DAY,
    );
    await store.whenIndexed();
    // Lexical: the first-person terms (1p:cat, 1p:家) put the user's own fact first. Hybrid with
    // the weights calibrated for the hashed TEST embedder (surface overlap only, it prefers the
    // shorter statements about other people): its vector list does not outvote BM25.
    for (const options of [{ mode: 'lexical' as const }, { mode: 'hybrid' as const, fusion: fusionWeightsFor(createHashedEmbedder().modelId) }]) {
      expect((await store.search({ text: "What's my cat's name?", namespace: 'default', k: 5 }, options))[0]!.memory.id, options.mode).toBe(mine!.id);
      expect((await store.search({ text: '我家的猫叫什么名字？', namespace: 'default', k: 5 }, options))[0]!.memory.id, options.mode).toBe(mineZh!.id);
    }
  });

  it('weights the vector list as configured (per store, or per search)', async () => {
    db = new RecallDB(`retrieval-${crypto.randomUUID()}`);
    const embedder = createHashedEmbedder();
    const store = await createMemoryStore({
      db,
      embedder: () => embedder,
      now: () => NOW,
      loadVoyWasm: nodeVoyWasm,
      fusionWeights: { lexical: 0.7, vector: 0.3 },
    });
    await addAll(store, DISTRACTORS_EN, (i) => NOW - i * DAY);
    const age = 11;
    // Default weighting: +0.02 · recency + 0.01 · importance (0.5) on top of the fused relevance.
    const bonus = 0.02 * 0.5 ** (age / 30) + 0.01 * 0.5;
    const [top] = await store.search({ text: 'passport renewal', namespace: 'default', k: 3 });
    expect(top!.ranks).toEqual({ lexical: 1, vector: 1 });
    // First in both lists: normalized score 1 in each, so relevance 0.7 · 1 + 0.3 · 1 = 1 whatever the weights.
    expect(top!.score).toBeCloseTo(1 + bonus, 10);
    const [lexicalOnly] = await store.search({ text: 'passport renewal', namespace: 'default', k: 3 }, { fusion: { lexical: 1, vector: 0 } });
    expect(lexicalOnly!.score).toBeCloseTo(1 + bonus, 10);
    await expect(createMemoryStore({ db, embedder: () => embedder, loadVoyWasm: nodeVoyWasm, fusionWeights: { lexical: -1, vector: 1 } })).rejects.toThrow(
      RangeError,
    );
  });

  it('with the vector weight 0, hybrid ranks exactly as lexical, also when BM25 finds no query term (the vector list does not count alone)', async () => {
    const store = await open();
    // Newer distractors (not the meeting that "moved", which the slot classifier also reads as a
    // residence); the one memory about where the user lives shares no word with the question.
    await addAll(
      store,
      DISTRACTORS_EN.filter((t) => !t.includes('moved')),
      (i) => NOW - (i + 1) * DAY,
    );
    const [moved] = await addAll(store, ["I've moved to Bristol."], () => NOW - 60 * DAY);
    await store.whenIndexed();
    // "live" is in no memory, so the lexical list is empty; the slot bonus (user:residence) makes
    // the move the one lexical candidate. Before, an empty lexical list let the vector list count
    // alone at full scale, and with the "now" weighting its recent hits came first.
    const query = { text: 'Where do I live now?', namespace: 'default', k: 5 };
    const lexical = await store.search(query, { mode: 'lexical' });
    const hybrid = await store.search(query, { mode: 'hybrid', fusion: { lexical: 1, vector: 0 } });
    expect(lexical.map((r) => r.memory.id)).toEqual([moved!.id]);
    expect(hybrid.map((r) => [r.memory.id, r.score])).toEqual(lexical.map((r) => [r.memory.id, r.score]));
    // With a vector weight > 0 the vector hits join, scaled by their weight: the slot memory stays first.
    const weighted = await store.search(query, { mode: 'hybrid', fusion: { lexical: 0.8, vector: 0.2 } });
    expect(weighted[0]!.memory.id).toBe(moved!.id);
    expect(weighted.length).toBe(5);
  });

  it('lets relevance decide: a year-old best match stays above a new weak match (recency only breaks near-ties)', async () => {
    const store = await open();
    const [old] = await addAll(store, ['Passport renewal appointment at the embassy on the ninth.'], () => NOW - 365 * DAY);
    const [recent] = await addAll(store, ['Bought a new passport holder today.'], () => NOW - DAY);
    await store.whenIndexed();
    // Plain RRF with a ×(1 + 0.2·recency + 0.1·importance) multiplier put the new rank-2 memory
    // first (1/62 · 1.25 > 1/61 · 1.05). Convex fusion: the old one has relevance 1, the new one
    // a fraction of its BM25 score, and a +0.02 recency bonus cannot close that gap.
    for (const mode of ['lexical', 'hybrid'] as const) {
      const results = await store.search({ text: 'passport renewal appointment', namespace: 'default', k: 5 }, { mode });
      expect(results.map((r) => r.memory.id).slice(0, 2), mode).toEqual([old!.id, recent!.id]);
    }
    // Asked about the current state, recency weighs as much as relevance (up to +1), still not over a far better match.
    const now = await store.search({ text: 'what is my passport renewal appointment now?', namespace: 'default', k: 5 }, { mode: 'lexical' });
    expect(now[0]!.memory.id).toBe(old!.id);
  });

  it('boosts (never filters) the memories in the time window a query names, in both languages', async () => {
    const store = await open();
    const [lastWeek, lastMonth, inMay] = await addAll(
      store,
      ['I went hiking in the mountains', 'I went hiking by the lake', 'I went hiking near the sea'],
      (i) => [new Date(2025, 5, 10).getTime(), new Date(2025, 4, 20).getTime(), new Date(2024, 4, 2).getTime()][i]!,
    );
    // The three match "hiking" alike; the window's memory gets +TIME_MATCH_WEIGHT and comes
    // first, the others stay candidates (a filter returned only the first).
    const first = async (text: string) => {
      const ids = (await store.search({ text, namespace: 'default' })).map((r) => r.memory.id);
      expect(new Set(ids), text).toEqual(new Set([lastWeek!.id, lastMonth!.id, inMay!.id]));
      return ids[0];
    };
    expect(await first('Where did I go hiking last week?')).toBe(lastWeek!.id);
    expect(await first('上周我去哪里 hiking 了')).toBe(lastWeek!.id);
    expect(await first('hiking last month')).toBe(lastMonth!.id);
    expect(await first('上个月 hiking')).toBe(lastMonth!.id);
    // "in May" in June 2025 is May 2025; "in May 2024" names the year.
    expect(await first('hiking in May')).toBe(lastMonth!.id);
    expect(await first('hiking in May 2024')).toBe(inMay!.id);
    expect(await first('5月 hiking')).toBe(lastMonth!.id);
    expect(await store.search({ text: 'hiking last week', namespace: 'default' }, { timeFilters: false })).toHaveLength(3);
  });

  it('an event time (validFrom) inside the range matches even when said earlier', async () => {
    const store = await open();
    const { memory } = await store.add(
      { namespace: 'default', kind: 'event', text: '去上海出差', createdAt: new Date(2025, 3, 20).getTime(), validFrom: new Date(2025, 4, 12).getTime() },
      'test',
    );
    expect((await store.search({ text: '上个月我去哪里出差了', namespace: 'default' })).map((r) => r.memory.id)).toEqual([memory.id]);
  });

  it('answers a bare time question with the newest memories of that range', async () => {
    const store = await open();
    const [a, b] = await addAll(
      store,
      ['Bought a bike', '修好了自行车', 'Went to the dentist'],
      (i) => [new Date(2025, 5, 10).getTime(), new Date(2025, 5, 12).getTime(), new Date(2025, 4, 1).getTime()][i]!,
    );
    expect((await store.search({ text: '上周', namespace: 'default' })).map((r) => r.memory.id)).toEqual([b!.id, a!.id]);
  });

  it('keeps namespaces apart and is not starved by a large other namespace', async () => {
    const store = await open();
    const many = Array.from({ length: 700 }, (_, i) => `Work note ${i}: the deploy of service ${i % 17} went fine`);
    await addAll(store, many, (i) => NOW - i * 60_000, 'work');
    const [mine] = await addAll(store, ['Personal: the deploy of my blog went fine'], () => NOW - DAY, 'personal');
    await store.whenIndexed();
    for (const mode of ['hybrid', 'lexical', 'vector'] as const) {
      const results = await store.search({ text: 'deploy went fine', namespace: 'personal', k: 5 }, { mode });
      expect(results.map((r) => r.memory.id)).toEqual([mine!.id]);
    }
    expect(await store.search({ text: 'deploy', namespace: 'nobody' })).toEqual([]);
    const work = await store.search({ text: 'deploy of service 3', namespace: 'work', k: 10 });
    expect(work).toHaveLength(10);
    expect(work.every((r) => r.memory.namespace === 'work')).toBe(true);
  });

  it('breaks near-ties by importance and pinning', async () => {
    const store = await open();
    const low = await store.add({ namespace: 'default', kind: 'fact', text: 'Gym on Monday', importance: 0.1, createdAt: NOW - DAY }, 'test');
    const pinned = await store.add({ namespace: 'default', kind: 'fact', text: 'Gym on Friday', importance: 0.1, pinned: true, createdAt: NOW - DAY }, 'test');
    const results = await store.search({ text: 'gym', namespace: 'default' }, { mode: 'lexical' });
    expect(results.map((r) => r.memory.id)).toEqual([pinned.memory.id, low.memory.id]);
  });

  it('returns at most k results, best first, and nothing for an empty store', async () => {
    const store = await open();
    expect(await store.search({ text: 'anything', namespace: 'default' })).toEqual([]);
    await addAll(store, DISTRACTORS_EN, (i) => NOW - i * DAY);
    const results = await store.search({ text: 'the new camera and the broken printer', namespace: 'default', k: 2 });
    expect(results).toHaveLength(2);
    expect(results[0]!.score).toBeGreaterThanOrEqual(results[1]!.score);
  });
});
