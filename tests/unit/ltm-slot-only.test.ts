/**
 * The asked slot's members that no retriever listed, ranked on the index's columns
 * (`store/slot-only.ts`, `slotOnlyMembers`) and in the store (`search` against its reference,
 * `rankEverySlotMember`: every member a candidate, none bounded out).
 * - On a `BlockIndex` with random columns (validity, `current`, times, importance, pinned, subjects,
 *   two namespaces, two labels): the count, the window count and the kept members with their scores
 *   must be those of the store's former object path — each member's `meta`, the relevance sums
 *   written out, `weightedScore`, a `SlotOnlyCandidate` per member, `boundSlotOnly` — and a small
 *   case computed by hand.
 * - Through the real store (Dexie on fake-indexeddb, MiniSearch, hashed test embedder): a slot of
 *   hundreds of members (superseded and expired ones among them, several subjects, filler rounds that
 *   share the query's words, feedback rows), queries with and without a time window, several k and
 *   modes: the results (ids, scores, order, list ranks) equal the reference's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BlockIndex, type IndexedMemory } from '../../src/memory/long-term/retrieval/blocks';
import {
  boundSlotOnly,
  CURRENT_STATE_WEIGHTING,
  DEFAULT_WEIGHTING,
  SLOT_MATCH_WEIGHT,
  weightedScore,
  type SlotOnlyCandidate,
  type WeightingOptions,
} from '../../src/memory/long-term/retrieval/fusion';
import { aboutAnotherPerson, SUBJECT_MISMATCH_PENALTY } from '../../src/memory/long-term/retrieval/subject';
import { TIME_MATCH_WEIGHT } from '../../src/memory/long-term/retrieval/time-filter';
import { slotOnlyMembers, type SlotOnlyQuery } from '../../src/memory/long-term/store/slot-only';
import { memorySlotLabel } from '../../src/memory/long-term/retrieval/blocks';
import type { RecallDB } from '../../src/db/schema';
import { mulberry32 } from '../../bench/data/prng';
import { indexedMemory } from '../helpers/memory-record';
import { openTestStore } from '../helpers/ltm-test-store';

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 5, 18, 12);
const byLocale = new Intl.Collator().compare;

/** The store's former path (before the columnar pass): one `meta` object and one `SlotOnlyCandidate` per member, then `boundSlotOnly`. */
function reference(index: BlockIndex, q: SlotOnlyQuery): { count: number; inWindow: number; kept: { id: string; score: number }[] } {
  const members: SlotOnlyCandidate[] = [];
  let inWindow = 0;
  for (const id of index.slotMembers(q.namespace, q.label, q.now)) {
    if (q.listed.has(id)) continue;
    const m = index.meta(id)!;
    let relevance = 0 + SLOT_MATCH_WEIGHT;
    if (aboutAnotherPerson(q.asked, m.subject)) relevance = relevance - SUBJECT_MISMATCH_PENALTY;
    const dated = q.window !== null && index.accepts(id, q.namespace, q.window);
    if (dated) [relevance, inWindow] = [relevance + TIME_MATCH_WEIGHT, inWindow + 1];
    members.push({
      id,
      score: weightedScore(relevance, q.now - m.updatedAt, m.pinned ? 1 : m.importance, q.weighting),
      dated,
      current: m.current === 1 && (m.validUntil ?? Infinity) > q.now,
      time: m.validFrom ?? m.createdAt,
    });
  }
  const rankBefore = (a: SlotOnlyCandidate, b: SlotOnlyCandidate) => a.score > b.score || (a.score === b.score && byLocale(a.id, b.id) < 0);
  const kept = boundSlotOnly(members, q.head, q.margin, rankBefore).map(({ id, score }) => ({ id, score }));
  return { count: members.length, inWindow, kept };
}

const byId = (xs: { id: string; score: number }[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

function indexOf(memories: readonly IndexedMemory[]): BlockIndex {
  const index = new BlockIndex();
  const batch = index.batch();
  for (const m of memories) batch.put(m, null, null);
  batch.commit();
  return index;
}

describe('slotOnlyMembers (on the columns)', () => {
  it('keeps the members, scores and counts of the object path, on 200 seeded indexes', () => {
    let dropped = 0;
    for (let seed = 1; seed <= 200; seed += 1) {
      const rand = mulberry32(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
      const n = 20 + Math.floor(rand() * 600);
      // Times on a coarse grid (ties in updatedAt, validFrom and createdAt occur).
      const time = () => NOW - Math.floor(rand() * 40) * 5 * DAY;
      const memories = Array.from({ length: n }, (_, i) =>
        indexedMemory({
          id: `m${i}`,
          namespace: rand() < 0.9 ? 'default' : 'work',
          createdAt: time(),
          updatedAt: time(),
          validFrom: rand() < 0.3 ? time() : null,
          validUntil: rand() < 0.15 ? NOW + pick([-DAY, 0, DAY]) : null,
          importance: pick([0, 0.25, 0.5, 1]),
          pinned: rand() < 0.05,
          current: rand() < 0.8 ? 1 : 0,
          slot: pick(['user:residence', 'user:residence', 'user:residence', 'user:work', null]),
          subject: pick(['user', 'user', 'colleague', 'partner', 'sister', null]),
        }),
      );
      const index = indexOf(memories);
      const listed = new Map(memories.filter(() => rand() < 0.05).map((m) => [m.id, 1]));
      const windowed = rand() < 0.4;
      const start = NOW - pick([10, 50, 100]) * DAY;
      const query: SlotOnlyQuery = {
        namespace: 'default',
        label: 'user:residence',
        now: NOW,
        listed,
        asked: pick(['user', 'colleague']),
        window: windowed ? { now: NOW, includeInvalid: rand() < 0.5, range: { start, end: start + pick([1, 20]) * DAY } } : null,
        weighting: pick<WeightingOptions>([DEFAULT_WEIGHTING, CURRENT_STATE_WEIGHTING]),
        head: pick([1, 3, 8, 20]),
        margin: pick([0.05, 1, Infinity]),
      };
      const got = slotOnlyMembers(index, query);
      const want = reference(index, query);
      expect({ ...got, kept: byId(got.kept) }, `seed ${seed}`).toEqual({ ...want, kept: byId(want.kept) });
      dropped += got.count - got.kept.length;
    }
    // The bound does drop members in these cases (not only its keep-all fallbacks).
    expect(dropped).toBeGreaterThan(200 * 50);
  });

  it('scores a small slot as computed by hand', () => {
    // DEFAULT_WEIGHTING: score = relevance + 0.02 · 0.5^(ageDays / 30) + 0.01 · importance (pinned: 1).
    const memories = [
      indexedMemory({ id: 'a', updatedAt: NOW - 30 * DAY, importance: 0.5, slot: 'user:residence', subject: 'user' }), // 1 + 0.01 + 0.005
      indexedMemory({ id: 'b', updatedAt: NOW, importance: 0, pinned: true, slot: 'user:residence', subject: 'colleague' }), // 1 − 0.5 + 0.02 + 0.01
      indexedMemory({ id: 'c', createdAt: NOW - 3 * DAY, updatedAt: NOW - 60 * DAY, importance: 1, slot: 'user:residence', subject: null }), // 1 + 1 (window) + 0.005 + 0.01
      indexedMemory({ id: 'd', validUntil: NOW, slot: 'user:residence' }), // expired at NOW: not a member
      indexedMemory({ id: 'e', slot: 'user:residence' }), // listed: not slot-only
      indexedMemory({ id: 'f', slot: 'user:work' }), // another slot
      indexedMemory({ id: 'g', namespace: 'work', slot: 'user:residence' }), // another namespace
    ];
    const query: SlotOnlyQuery = {
      namespace: 'default',
      label: 'user:residence',
      now: NOW,
      listed: new Map([['e', 0.7]]),
      asked: 'user',
      window: { now: NOW, range: { start: NOW - 7 * DAY, end: NOW } },
      weighting: DEFAULT_WEIGHTING,
      head: 8,
      margin: 1,
    };
    const got = slotOnlyMembers(indexOf(memories), query);
    expect(got.count).toBe(3);
    expect(got.inWindow).toBe(1);
    const scores = Object.fromEntries(got.kept.map((c) => [c.id, c.score]));
    expect(Object.keys(scores).sort()).toEqual(['a', 'b', 'c']);
    expect(scores.a).toBeCloseTo(1.015, 12);
    expect(scores.b).toBeCloseTo(0.53, 12);
    expect(scores.c).toBeCloseTo(2.015, 12);
  });

  it('of a slot within the margin keeps the best by rank, the first by the in-group order and the lowest score', () => {
    // Ten current members, equal importance, updatedAt i days ago: score falls with i (rank order m0 … m9).
    const memories = Array.from({ length: 10 }, (_, i) =>
      indexedMemory({ id: `m${i}`, createdAt: NOW - (20 + i) * DAY, updatedAt: NOW - i * DAY, slot: 'user:residence', subject: 'user' }),
    );
    // In-group order: in the window first, then current, then newest stated (validFrom, else createdAt).
    memories[4] = { ...memories[4]!, current: 0 };
    memories[6] = { ...memories[6]!, validFrom: NOW - DAY }; // stated most recently
    const query: SlotOnlyQuery = {
      namespace: 'default',
      label: 'user:residence',
      now: NOW,
      listed: new Map(),
      asked: 'user',
      window: null,
      weighting: DEFAULT_WEIGHTING,
      head: 2,
      margin: 1,
    };
    const got = slotOnlyMembers(indexOf(memories), query);
    // rank: m0, m1; in-group: m6 (validFrom), then m0 (newest createdAt); lowest score: m9.
    expect(got.kept.map((c) => c.id).sort()).toEqual(['m0', 'm1', 'm6', 'm9']);
    // A margin narrower than the scores' spread keeps all ten.
    expect(slotOnlyMembers(indexOf(memories), { ...query, margin: 0.001 }).kept).toHaveLength(10);
  });
});

describe('store search about a large slot', () => {
  const dbs: RecallDB[] = [];
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.delete();
  });

  it('gives the reference ranking (every slot member a candidate): ids, scores, order and list ranks', { timeout: 120_000 }, async () => {
    const rand = mulberry32(9);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const { db, store, setNow } = await openTestStore({ now: NOW, name: 'slot-only' });
    dbs.push(db);
    const cities = ['Porto', 'Lyon', 'Berlin', 'Oslo', 'Riga', 'Vienna', 'Madrid', 'Tokyo', 'Lima', 'Quito', 'Accra', 'Perth'];
    const statements = [
      (c: string) => `User: I live in ${c}.\nAssistant: Noted.`,
      (c: string) => `User: I've moved to ${c}.\nAssistant: Congratulations!`,
      (c: string) => `User: We live in ${c} now.\nAssistant: Nice.`,
      (c: string) => `User: I rent a flat in ${c}.\nAssistant: How is it?`,
      (c: string) => `User: My colleague lives in ${c}.\nAssistant: OK.`,
      (c: string) => `User: I live in ${c}. My colleague lives in ${pick(cities)}.\nAssistant: OK.`,
      (c: string) => `User: I love live music in ${c}.\nAssistant: Fun.`,
      (c: string) => `User: What should I cook tonight in ${c}?\nAssistant: Pasta.`,
    ];
    // Distinct texts (the store merges a text it already holds): a house number per memory.
    const inputs = Array.from({ length: 700 }, (_, i) => {
      const createdAt = NOW - Math.floor(rand() * 400) * DAY - Math.floor(rand() * 24) * 3_600_000;
      return {
        namespace: 'default',
        kind: pick(['episodic', 'episodic', 'fact'] as const),
        text: pick(statements)(`${pick(cities)}, number ${i + 1}`),
        createdAt,
        importance: pick([0, 0.3, 0.6, 1]),
        pinned: rand() < 0.03,
        validUntil: rand() < 0.08 ? NOW - Math.floor(rand() * 30) * DAY : null,
      };
    });
    // Yesterday: one slot member that shares no query word ("moved", not "live") and a round about
    // something else, so a one-day window has few candidates and the same-day fill runs.
    inputs.push(
      {
        ...inputs[0]!,
        kind: 'episodic',
        text: 'User: I have moved to Faro, number 9001.\nAssistant: Congratulations!',
        createdAt: NOW - DAY,
        validUntil: null,
      },
      { ...inputs[0]!, kind: 'episodic', text: 'User: What should I cook tonight in Faro?\nAssistant: Fish.', createdAt: NOW - DAY, validUntil: null },
    );
    setNow(NOW - DAY);
    const added = (await store.addMany(inputs, 'test')).map((r) => r.memory);
    expect(new Set(added.map((m) => m.id)).size).toBe(inputs.length);
    // Superseded members (still valid, not current).
    for (const m of added.filter(() => rand() < 0.1)) await store.update(m.id, { supersededBy: pick(added).id }, 'test');
    await store.whenIndexed();
    setNow(NOW);
    const residence = added.filter((m) => memorySlotLabel(m.text, 'statement') === 'user:residence').length;
    expect(residence).toBeGreaterThan(300);

    const queries = [
      'Where do I live now?',
      'Where do I live?',
      'Where did I live last week?',
      'Where did I live in March 2025?',
      'Where did I live yesterday?',
      'Where does my colleague live?',
    ];
    let compared = 0;
    let slotOnlyHits = 0;
    const compareAll = async () => {
      for (const text of queries)
        for (const k of [1, 3, 8])
          for (const options of [{}, { mode: 'lexical' as const }, { recencyTieBreak: false }])
            for (const includeInvalid of [false, true]) {
              const query = { text, namespace: 'default', k, includeInvalid };
              const got = await store.search(query, options);
              const want = await store.search(query, { ...options, rankEverySlotMember: true });
              expect(got, `${text} k=${k} ${JSON.stringify(options)} includeInvalid=${includeInvalid}`).toEqual(want);
              compared += got.length;
              slotOnlyHits += got.filter((r) => r.ranks.lexical === undefined && r.ranks.vector === undefined).length;
            }
    };
    await compareAll();
    // Feedback rows ("not relevant here") on the first results of the "now" question, slot-only ones
    // among them: the places they leave are taken by members further down.
    const top = await store.search({ text: queries[0]!, namespace: 'default', k: 8 });
    for (const r of top.slice(0, 4))
      await store.addFeedback({ memoryId: r.memory.id, namespace: 'default', query: queries[0]!, messageId: 'm1', conversationId: 'c1' });
    await compareAll();
    expect(compared).toBeGreaterThan(400);
    // Slot-only members (no list found them) do reach the results: the bound is what decides them.
    expect(slotOnlyHits).toBeGreaterThan(50);
  });
});
