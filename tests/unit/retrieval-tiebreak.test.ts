/**
 * `recencyTieBreak`'s same-slot near-tie links are found from the sorted scores (O(n log n))
 * rather than by comparing every pair (O(n²); a slot asked about can have thousands of
 * candidates). This checks the result against the all-pairs rule, written out below as the
 * reference (the algorithm the function used before), on seeded random rankings: same slots,
 * scores on a coarse grid (so many differences fall exactly on the margin), term groups and
 * current flags. Non-finite scores take the all-pairs path and are checked too.
 */
import { describe, expect, it } from 'vitest';
import { recencyTieBreak, type SameSubjectInfo } from '../../src/memory/long-term/retrieval/fusion';
import { mulberry32 } from '../../bench/data/prng';

/** The all-pairs reference: the same union-find and group ordering, every same-slot pair compared. */
function referenceTieBreak(
  ranked: readonly string[],
  matched: ReadonlyMap<string, readonly string[]>,
  timeOf: (id: string) => number,
  minTerms: number,
  info: SameSubjectInfo,
): string[] {
  const parent = ranked.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const firstWithKey = new Map<string, number>();
  const bySlot = new Map<string, number[]>();
  ranked.forEach((id, position) => {
    const terms = matched.get(id);
    if (terms && new Set(terms).size >= minTerms) {
      const key = [...new Set(terms)].sort().join('\u0000');
      const first = firstWithKey.get(key);
      if (first === undefined) firstWithKey.set(key, position);
      else parent[find(position)] = find(first);
    }
    const slot = info.slotOf?.(id);
    if (slot) bySlot.set(slot, [...(bySlot.get(slot) ?? []), position]);
  });
  const score = info.scoreOf ?? (() => 0);
  const margin = info.slotMargin ?? Infinity;
  for (const positions of bySlot.values())
    for (let i = 0; i < positions.length; i += 1)
      for (let j = i + 1; j < positions.length; j += 1)
        if (Math.abs(score(ranked[positions[i]!]!) - score(ranked[positions[j]!]!)) <= margin) parent[find(positions[j]!)] = find(positions[i]!);
  const groups = new Map<number, number[]>();
  ranked.forEach((_, position) => groups.set(find(position), [...(groups.get(find(position)) ?? []), position]));
  const current = (id: string) => (info.isCurrent ? (info.isCurrent(id) ? 1 : 0) : 1);
  const out = [...ranked];
  for (const positions of groups.values()) {
    if (positions.length < 2) continue;
    const members = positions.map((p) => ranked[p]!).sort((a, b) => current(b) - current(a) || timeOf(b) - timeOf(a));
    positions.forEach((p, i) => (out[p] = members[i]!));
  }
  // Then each non-current candidate with matched terms, from the bottom up, goes just below the
  // last current candidate after it that shares one of its matched terms.
  if (info.isCurrent) {
    for (let i = out.length - 2; i >= 0; i -= 1) {
      const id = out[i]!;
      const terms = matched.get(id) ?? [];
      if (terms.length === 0 || current(id) === 1) continue;
      const after = out.slice(i + 1);
      const last = after
        .map((x, k) => (current(x) === 1 && (matched.get(x) ?? []).some((t) => terms.includes(t)) ? k : -1))
        .reduce((a, b) => Math.max(a, b), -1);
      if (last >= 0) out.splice(i, last + 2, ...after.slice(0, last + 1), id);
    }
  }
  return out;
}

/** A random ranking of `n` candidates over `slots` slots; `special` adds non-finite scores. */
function randomCase(seed: number, n: number, slots: number, special: boolean) {
  const rand = mulberry32(seed);
  const ids = Array.from({ length: n }, (_, i) => `m${i}`);
  const slot = new Map(ids.map((id) => [id, rand() < 0.7 ? `user:s${Math.floor(rand() * slots)}` : null]));
  // Scores on a 0.05 grid: differences of exactly 0.15 (the margin) and of 0 are common.
  const scores = new Map(ids.map((id) => [id, Math.round(rand() * 30) * 0.05]));
  if (special) for (const id of ids) if (rand() < 0.1) scores.set(id, [Infinity, -Infinity, NaN][Math.floor(rand() * 3)]!);
  const words = ['home', 'work', 'cat', 'tea'];
  const matched = new Map<string, string[]>();
  for (const id of ids)
    if (rand() < 0.4)
      matched.set(
        id,
        words.filter(() => rand() < 0.5),
      );
  const time = new Map(ids.map((id) => [id, Math.floor(rand() * 20)]));
  const current = new Map(ids.map((id) => [id, rand() < 0.8]));
  const ranked = [...ids].sort(() => rand() - 0.5);
  const info: SameSubjectInfo = {
    slotOf: (id) => slot.get(id) ?? null,
    scoreOf: (id) => scores.get(id)!,
    slotMargin: rand() < 0.2 ? undefined : 0.15,
    isCurrent: (id) => current.get(id)!,
  };
  return { ranked, matched, timeOf: (id: string) => time.get(id)!, info };
}

describe('recencyTieBreak: same-slot near-ties from the sorted scores', () => {
  it('orders exactly as the all-pairs rule on 300 seeded random rankings (finite scores, margin 0.15 or none)', () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const c = randomCase(seed, 5 + (seed % 60), 1 + (seed % 4), false);
      expect(recencyTieBreak(c.ranked, c.matched, c.timeOf, 2, c.info), `seed ${seed}`).toEqual(referenceTieBreak(c.ranked, c.matched, c.timeOf, 2, c.info));
    }
  });

  it('orders exactly as the all-pairs rule when scores are ±∞ or NaN', () => {
    for (let seed = 1; seed <= 100; seed += 1) {
      const c = randomCase(1000 + seed, 5 + (seed % 40), 1 + (seed % 3), true);
      expect(recencyTieBreak(c.ranked, c.matched, c.timeOf, 2, c.info), `seed ${seed}`).toEqual(referenceTieBreak(c.ranked, c.matched, c.timeOf, 2, c.info));
    }
  });

  it('links a chain of near-ties into one group (0.0 – 0.1 – 0.2: the ends are 0.2 apart, linked through the middle)', () => {
    // Scores 0.2 (a, oldest), 0.1 (b), 0 (c, newest), margin 0.15: a–b and b–c are near-ties, so
    // all three form one group and take their positions newest first: c, b, a.
    const score: Record<string, number> = { a: 0.2, b: 0.1, c: 0 };
    const time: Record<string, number> = { a: 1, b: 2, c: 3 };
    const info: SameSubjectInfo = { slotOf: () => 'user:residence', scoreOf: (id) => score[id]!, slotMargin: 0.15 };
    expect(recencyTieBreak(['a', 'b', 'c'], new Map(), (id) => time[id]!, 2, info)).toEqual(['c', 'b', 'a']);
    // Without the middle one, a and c are 0.2 apart: no group, nothing moves.
    expect(recencyTieBreak(['a', 'c'], new Map(), (id) => time[id]!, 2, info)).toEqual(['a', 'c']);
  });
});
