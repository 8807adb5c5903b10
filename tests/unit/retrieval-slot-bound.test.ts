/**
 * `boundSlotOnly`: of the asked slot's members that no retriever listed, the store ranks only those
 * that can reach the top k. This checks the final top-k (ids and scores) against the unbounded
 * rule on seeded rankings, with the store's ranking stage written out: the score sort (score desc,
 * then the id order), `recencyTieBreak` with the same-slot rule (near-ties within the margin,
 * current first, the query's window first, newest first; superseded below current), scores taken
 * by position, then the feedback demotion (`FEEDBACK_PENALTY` off, a stable re-sort). The listed
 * candidates have matched terms, slots (the asked one among them), current flags and window flags;
 * scores on a coarse grid so that ties and exact-margin differences occur.
 */
import { describe, expect, it } from 'vitest';
import { boundSlotOnly, recencyTieBreak, type SlotOnlyCandidate } from '../../src/memory/long-term/retrieval/fusion';
import { FEEDBACK_PENALTY } from '../../src/memory/long-term/retrieval/feedback';
import { mulberry32 } from '../../bench/data/prng';

const byLocale = new Intl.Collator().compare;
const rankBefore = (a: { id: string; score: number }, b: { id: string; score: number }) =>
  a.score > b.score || (a.score === b.score && byLocale(a.id, b.id) < 0);

interface Candidate {
  id: string;
  score: number;
  terms: string[];
  slot: string | null;
  current: boolean;
  dated: boolean;
  time: number;
}

/** The store's ranking stage (`store/search.ts`) over `candidates`: the first `k` ids and scores. */
function rank(candidates: readonly Candidate[], k: number, margin: number, demoted: ReadonlySet<string>): { id: string; score: number }[] {
  const byId = new Map(candidates.map((c) => [c.id, c]));
  const sorted = [...candidates].sort((a, b) => b.score - a.score || byLocale(a.id, b.id));
  const order = recencyTieBreak(
    sorted.map((c) => c.id),
    new Map(candidates.filter((c) => c.terms.length > 0).map((c) => [c.id, c.terms])),
    (id) => byId.get(id)!.time,
    undefined,
    {
      slotOf: (id) => byId.get(id)!.slot,
      scoreOf: (id) => byId.get(id)!.score,
      slotMargin: margin,
      isCurrent: (id) => byId.get(id)!.current,
      inWindow: (id) => byId.get(id)!.dated,
    },
  );
  let ranked = order.map((id, i) => ({ id, score: sorted[i]!.score }));
  if (demoted.size > 0) ranked = ranked.map((r) => (demoted.has(r.id) ? { ...r, score: r.score - FEEDBACK_PENALTY } : r)).sort((a, b) => b.score - a.score);
  return ranked.slice(0, k);
}

/** One seeded case: `listed` candidates (some in the asked slot `user:home`) and `slotOnly` members. */
function seededCase(seed: number) {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const grid = (step: number, max: number) => Math.round((rand() * max) / step) * step;
  const margin = pick([0.05, 0.25, 1]);
  const k = pick([1, 3, 8]);
  const terms = ['rent', 'live', 'city', 'move', 'flat'];
  const listed: Candidate[] = Array.from({ length: 5 + Math.floor(rand() * 30) }, (_, i) => ({
    id: `f${i}`,
    score: grid(0.05, 3),
    terms: terms.filter(() => rand() < 0.4),
    slot: pick(['user:home', 'user:home', 'user:work', null]),
    current: rand() < 0.7,
    dated: rand() < 0.2,
    time: Math.floor(rand() * 50),
  }));
  // Slot-only scores: a narrow band (the bound applies) or, one case in five, wider than the margin.
  const base = grid(0.05, 2);
  const width = rand() < 0.8 ? margin * pick([0, 0.5, 1]) : margin * 3;
  const slotOnly: SlotOnlyCandidate[] = Array.from({ length: 50 + Math.floor(rand() * 300) }, (_, i) => ({
    id: `s${i}`,
    score: base + grid(width / 4 || 1, width),
    dated: rand() < 0.1,
    current: rand() < 0.8,
    time: Math.floor(rand() * 50),
  }));
  const all = [...listed.map((c) => c.id), ...slotOnly.map((c) => c.id)];
  const demoted = new Set(all.filter(() => rand() < 0.01));
  return { margin, k, listed, slotOnly, demoted };
}

const asCandidate = (m: SlotOnlyCandidate): Candidate => ({ ...m, terms: [], slot: 'user:home' });

describe('boundSlotOnly', () => {
  it('gives the same top-k as ranking every slot-only member, on 400 seeded rankings', () => {
    let dropped = 0;
    for (let seed = 1; seed <= 400; seed += 1) {
      const { margin, k, listed, slotOnly, demoted } = seededCase(seed);
      const full = rank([...listed, ...slotOnly.map(asCandidate)], k, margin, demoted);
      // The places the later passes can empty: one per superseded candidate with matched terms, one per demoted memory.
      const movable = listed.filter((c) => c.terms.length > 0 && !c.current).length;
      const kept = boundSlotOnly(slotOnly, k + movable + demoted.size, margin, rankBefore);
      dropped += slotOnly.length - kept.length;
      expect(rank([...listed, ...kept.map(asCandidate)], k, margin, demoted), `seed ${seed}`).toEqual(full);
    }
    // The cases do exercise the bound (most slot-only members are dropped), not only its fallback.
    expect(dropped).toBeGreaterThan(400 * 50);
  });

  it('keeps the best by rank, the first by the in-group order and the lowest score; nothing else', () => {
    const members: SlotOnlyCandidate[] = Array.from({ length: 20 }, (_, i) => ({
      id: `m${String(i).padStart(2, '0')}`,
      score: 1 - i * 0.01,
      dated: false,
      current: true,
      time: i,
    }));
    members[15] = { ...members[15]!, dated: true }; // first in the in-group order (in the window)
    const kept = boundSlotOnly(members, 2, 1, rankBefore).map((m) => m.id);
    // rank: m00, m01; in-group order: m15 (dated), then newest m19; lowest score: m19.
    expect(kept.sort()).toEqual(['m00', 'm01', 'm15', 'm19']);
  });

  it('keeps every member when their scores are further apart than the margin, or one is not finite', () => {
    const members: SlotOnlyCandidate[] = Array.from({ length: 20 }, (_, i) => ({ id: `m${i}`, score: i * 0.1, dated: false, current: true, time: i }));
    expect(boundSlotOnly(members, 2, 1, rankBefore)).toHaveLength(20);
    // best by rank and newest: m19, m18; lowest: m0.
    expect(
      boundSlotOnly(members, 2, 2, rankBefore)
        .map((m) => m.id)
        .sort(),
    ).toEqual(['m0', 'm18', 'm19']);
    members[3] = { ...members[3]!, score: Number.NaN };
    expect(boundSlotOnly(members, 2, 2, rankBefore)).toHaveLength(20);
  });
});
