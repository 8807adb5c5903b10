/**
 * Column walks of the block index that replaced O(N) work, each checked against the reference it
 * replaced over seeded random indexes (several blocks and namespaces, removed and reused slots):
 * the memory manager's listing (`BlockIndex.listIds`: the whole catalog filtered, stably sorted by
 * pinned first and newest `updatedAt`, sliced), a time range's members with blocks outside it
 * skipped (`idsWhere`: the per-id filter), and the window's vector list scored over its members
 * only (`searchAmong`: a full scan with the window filter). Pure (no database): the index is
 * built through its own batches.
 */
import { describe, expect, it } from 'vitest';
import { BLOCK_SLOTS, BlockIndex, type IndexedMemory } from '../../src/memory/long-term/retrieval/blocks';
import type { CatalogEntry } from '../../src/memory/long-term/types';
import { mulberry32, randomUnitVectors } from '../../bench/data/prng';
import { indexedMemory } from '../helpers/memory-record';

const T0 = Date.UTC(2025, 4, 1, 12);
const KINDS = ['fact', 'preference', 'episodic'] as const;
const WORDS = ['coffee', 'hangzhou', 'tea', '杭州', 'mochi', 'work'];

/** The listing as `memory-admin.ts` computed it before `listIds`: catalog → filter → stable sort → slice. */
function reference(
  catalog: readonly CatalogEntry[],
  where: { includeInvalid: boolean; kinds: ReadonlySet<string> | null; contains: string | null; exclude?: ReadonlySet<string>; limit: number },
): string[] {
  return catalog
    .filter(
      (e) =>
        (where.includeInvalid || e.current === 1) &&
        (!where.kinds || where.kinds.has(e.kind)) &&
        (where.contains === null || e.normalized.includes(where.contains)) &&
        !where.exclude?.has(e.id),
    )
    .sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updatedAt - a.updatedAt)
    .slice(0, Math.max(0, where.limit))
    .map((e) => e.id);
}

/** A seeded index of `n` memories over two namespaces, with coarse times (many ties), then removals and reused slots. */
function seededIndex(n: number, seed: number): BlockIndex {
  const rand = mulberry32(seed);
  const index = new BlockIndex();
  const memory = (id: string): IndexedMemory =>
    indexedMemory({
      id,
      namespace: rand() < 0.8 ? 'default' : 'other',
      createdAt: T0,
      // Coarse times: many memories share one `updatedAt` (ties must keep slot order).
      updatedAt: T0 + Math.floor(rand() * 20) * 60_000,
      pinned: rand() < 0.1,
      current: rand() < 0.85 ? 1 : 0,
      kind: KINDS[Math.floor(rand() * KINDS.length)]!,
      normalized: `${WORDS[Math.floor(rand() * WORDS.length)]} ${WORDS[Math.floor(rand() * WORDS.length)]} memory ${id}`,
    });
  let batch = index.batch();
  for (let i = 0; i < n; i += 1) batch.put(memory(`m${i}`), null, null);
  batch.commit();
  batch = index.batch();
  for (let i = 0; i < n; i += 7) batch.remove(`m${i}`);
  batch.commit();
  batch = index.batch();
  for (let i = 0; i < n / 10; i += 1) batch.put(memory(`r${i}`), null, null); // reuse the freed slots
  batch.commit();
  return index;
}

describe('Memory tab listing on the meta columns', () => {
  it('gives the same ids in the same order as filtering, stably sorting and slicing the whole catalog', () => {
    let cases = 0;
    for (const seed of [1, 2, 3]) {
      const index = seededIndex(3 * BLOCK_SLOTS + 41, seed);
      for (const namespace of ['default', 'other', 'missing']) {
        const catalog = index.catalog(namespace);
        for (const includeInvalid of [false, true]) {
          for (const kinds of [null, new Set(['fact']), new Set(['preference', 'episodic'])]) {
            for (const contains of [null, 'coffee', '杭州', 'memory m1', 'nothing like this']) {
              for (const limit of [0, 1, 7, 200, 10_000]) {
                const exclude = contains === 'coffee' ? new Set(catalog.slice(0, 30).map((e) => e.id)) : undefined;
                const where = { includeInvalid, kinds, contains, limit, ...(exclude ? { exclude } : {}) };
                expect(
                  index.listIds(namespace, where),
                  JSON.stringify({ seed, namespace, includeInvalid, kinds: kinds && [...kinds], contains, limit }),
                ).toEqual(reference(catalog, where));
                cases += 1;
              }
            }
          }
        }
      }
    }
    expect(cases).toBe(3 * 3 * 2 * 3 * 5 * 5);
  });

  it('keeps the newest first when the slots come oldest first (the heap, not insertion order), pinned above all', () => {
    const index = new BlockIndex();
    const batch = index.batch();
    const n = 2 * BLOCK_SLOTS + 5;
    for (let i = 0; i < n; i += 1) {
      batch.put(
        {
          id: `m${i}`,
          namespace: 'default',
          createdAt: T0,
          updatedAt: T0 + i * 1000,
          validFrom: null,
          validUntil: null,
          importance: 0.5,
          pinned: i === 3,
          current: 1,
          kind: 'fact',
          slot: null,
          subject: null,
          normalized: `memory ${i}`,
        },
        null,
        null,
      );
    }
    batch.commit();
    // Computed by hand: the pinned m3, then the newest four (the last slots, newest last).
    expect(index.listIds('default', { includeInvalid: false, kinds: null, contains: null, limit: 5 })).toEqual([
      'm3',
      `m${n - 1}`,
      `m${n - 2}`,
      `m${n - 3}`,
      `m${n - 4}`,
    ]);
  });
});

describe("a query's time window on the columns", () => {
  /** Memories written in time order (one every `stepMs`), some with a validFrom, some expired, in two namespaces; then removals and reused slots. */
  function timedIndex(n: number, dim: number, seed: number): { index: BlockIndex; vectors: Float32Array } {
    const rand = mulberry32(seed);
    const vectors = randomUnitVectors(n + n / 10, dim, seed + 1);
    const index = new BlockIndex();
    const memory = (id: string, i: number): IndexedMemory =>
      indexedMemory({
        id,
        namespace: i % 9 === 0 ? 'other' : 'default',
        createdAt: T0 + i * 3_600_000,
        updatedAt: T0 + i * 3_600_000,
        validFrom: rand() < 0.1 ? T0 + Math.floor(rand() * n) * 3_600_000 : null,
        validUntil: rand() < 0.15 ? T0 + (i + 5) * 3_600_000 : null,
        normalized: id,
      });
    let batch = index.batch();
    for (let i = 0; i < n; i += 1) batch.put(memory(`m${i}`, i), vectors.subarray(i * dim, (i + 1) * dim), 'model');
    batch.commit();
    batch = index.batch();
    for (let i = 3; i < n; i += 11) batch.remove(`m${i}`);
    batch.commit();
    batch = index.batch();
    // Reused slots get later times: a block's times are no longer in order.
    for (let i = 0; i < n / 10; i += 1) batch.put(memory(`r${i}`, n + i), vectors.subarray((n + i) * dim, (n + i + 1) * dim), 'model');
    batch.commit();
    return { index, vectors };
  }

  it('idsWhere with a range (blocks outside it skipped) lists exactly the slots that pass the filter, in slot order', () => {
    const { index } = timedIndex(5 * BLOCK_SLOTS + 17, 8, 5);
    const all = [...index.ids()];
    const hour = 3_600_000;
    for (const [startH, hours] of [
      [0, 24],
      [300, 24],
      [700, 200],
      [1300, 1],
      [-100, 50],
      [5000, 24],
      [0, 100_000],
    ] as const) {
      for (const now of [T0, T0 + 800 * hour]) {
        for (const includeInvalid of [false, true]) {
          const filter = { now, includeInvalid, range: { start: T0 + startH * hour, end: T0 + (startH + hours) * hour } };
          // The reference: every slot walked (no range: no block skipped), then the per-id filter; slot order kept.
          const expected = index.idsWhere('default', { now, includeInvalid: true }).filter((id) => index.accepts(id, 'default', filter));
          expect(index.idsWhere('default', filter)).toEqual(expected);
          expect(new Set(expected)).toEqual(new Set(all.filter((id) => index.accepts(id, 'default', filter))));
        }
      }
    }
  });

  it("searchAmong the window's members gives the hits, scores and order of a full scan filtered to the window", () => {
    const dim = 32;
    const { index } = timedIndex(4 * BLOCK_SLOTS + 9, dim, 9);
    const queries = randomUnitVectors(20, dim, 99);
    const hour = 3_600_000;
    let compared = 0;
    for (let qi = 0; qi < 20; qi += 1) {
      const q = queries.subarray(qi * dim, (qi + 1) * dim);
      for (const [startH, hours] of [
        [10, 24],
        [400, 168],
        [0, 100_000],
      ] as const) {
        const filter = { now: T0 + 600 * hour, includeInvalid: false, range: { start: T0 + startH * hour, end: T0 + (startH + hours) * hour } };
        const members = index.idsWhere('default', filter);
        for (const k of [1, 10, 50]) {
          expect(index.searchAmong('model', 'default', q, k, members)).toEqual(index.search('model', 'default', q, k, filter));
          compared += 1;
        }
      }
    }
    expect(compared).toBe(180);
    // Ids without a vector of that model and namespace are skipped; another model finds nothing.
    expect(index.searchAmong('other-model', 'default', queries.subarray(0, dim), 5, [...index.ids()])).toEqual([]);
  });
});
