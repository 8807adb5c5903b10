/**
 * The f16 codec of the persisted vector blocks (schema v4, `retrieval/blocks/f16.ts`): the
 * conversion against the IEEE 754 binary16 definition, the block codec's round trip, the bytes a
 * stored block takes, and the top-10 over the quantized vectors against the f32 originals.
 */
import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { decodeSlot, encodeSlot, fromF16Bits, quantizeSlot, toF16Bits } from '../../src/memory/long-term/retrieval/blocks/f16';
import { BLOCK_SLOTS, BlockIndex, decodeVectorBlock, encodeVectorBlock, exactTopK, isVectorRecord } from '../../src/memory/long-term/retrieval/blocks';
import { mulberry32, randomUnitVectors as randomUnit } from '../../bench/data/prng';

const T0 = Date.UTC(2025, 0, 1);

const memory = (id: string) => ({
  id,
  namespace: 'default',
  createdAt: T0,
  updatedAt: T0,
  validFrom: null,
  validUntil: null,
  importance: 0.5,
  pinned: false,
  current: 1 as const,
  kind: 'fact',
  slot: null,
  subject: null,
  normalized: '',
});

describe('f16 conversion', () => {
  it('gives the IEEE 754 binary16 bits of hand-computed values', () => {
    // 1/3 = 0.333251953125 in f16 (0 01101 0101010101), 0.1 = 0.0999755859375 (0 01011 1001100110).
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [1 / 3, 0x3555],
      [0.1, 0x2e66],
      [65504, 0x7bff], // largest finite f16
      [65520, 0x7c00], // halfway to the next (2^16): ties to even → Infinity
      [2 ** -14, 0x0400], // smallest normal
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -25, 0x0000], // halfway between 0 and 2^-24: ties to even → 0
      [1.5 * 2 ** -25, 0x0001],
      [Infinity, 0x7c00],
      [-Infinity, 0xfc00],
    ];
    for (const [x, bits] of cases) expect([x, toF16Bits(x)]).toEqual([x, bits]);
    expect(Number.isNaN(fromF16Bits(toF16Bits(NaN)))).toBe(true);
  });

  it('every finite f16 value converts back to its own bits (all 63,488 of them and the infinities)', () => {
    let checked = 0;
    for (let h = 0; h < 0x10000; h += 1) {
      const exp = (h >>> 10) & 0x1f;
      if (exp === 0x1f && (h & 0x3ff) !== 0) continue; // NaN payloads
      if (toF16Bits(fromF16Bits(h)) !== h) throw new Error(`bits ${h.toString(16)} → ${fromF16Bits(h)} → ${toF16Bits(fromF16Bits(h)).toString(16)}`);
      checked += 1;
    }
    expect(checked).toBe(0x10000 - 2 * 1023);
  });

  it('rounds to the nearest f16 (ties to even) across the range of unit-vector components', () => {
    const rand = mulberry32(5);
    for (let i = 0; i < 50_000; i += 1) {
      // Magnitudes from 2^-30 to 1, so subnormals and normals are both covered.
      const x = Math.fround(2 ** (-30 * rand()) * (0.5 + rand() / 2));
      const h = toF16Bits(x);
      const v = fromF16Bits(h);
      const below = h > 0 ? fromF16Bits(h - 1) : -Infinity;
      const above = fromF16Bits(h + 1);
      expect(Math.abs(x - v) <= Math.abs(x - below) && Math.abs(x - v) <= Math.abs(x - above)).toBe(true);
      if (Math.abs(x - v) === Math.abs(x - below) || Math.abs(x - v) === Math.abs(x - above)) expect(h & 1).toBe(0);
      expect(toF16Bits(-x)).toBe(h | 0x8000);
    }
  });
});

describe('vector block codec', () => {
  it('a quantized vector is a unit vector near the original, and decoding its stored bits gives the same floats', () => {
    const dim = 384;
    const n = 300;
    const data = randomUnit(n, dim, 3);
    const bits = new Uint16Array(n * dim);
    const scales = new Float32Array(n);
    const out = new Float32Array(n * dim);
    for (let s = 0; s < n; s += 1) quantizeSlot(data.subarray(s * dim, (s + 1) * dim), s, dim, bits, scales, out);
    const again = new Uint16Array(n * dim);
    const decoded = new Float32Array(n * dim);
    for (let s = 0; s < n; s += 1) {
      encodeSlot(out, s, dim, scales, again);
      decodeSlot(again, s, dim, scales, decoded);
      let norm = 0;
      let cos = 0;
      for (let j = 0; j < dim; j += 1) {
        norm += out[s * dim + j]! ** 2;
        cos += out[s * dim + j]! * data[s * dim + j]!;
      }
      expect(Math.abs(Math.sqrt(norm) - 1)).toBeLessThan(1e-6);
      expect(cos).toBeGreaterThan(1 - 1e-6);
    }
    expect(again).toEqual(bits);
    expect(decoded).toEqual(out);
  });

  it('a stored block (f16) takes about half the bytes of the f32 block and reads back as the same block', () => {
    const dim = 384;
    const index = new BlockIndex();
    const batch = index.batch();
    const data = randomUnit(BLOCK_SLOTS, dim, 9);
    for (let i = 0; i < BLOCK_SLOTS - 6; i += 1) batch.put(memory(`m${i}`), data.subarray(i * dim, (i + 1) * dim), 'model');
    const stored = batch.records().find(isVectorRecord)!;
    expect('vectors' in stored).toBe(false);
    expect('halves' in stored && stored.halves.length).toBe(BLOCK_SLOTS * dim);
    batch.commit();
    const decoded = decodeVectorBlock(structuredClone(stored) as Parameters<typeof decodeVectorBlock>[0]);
    const { vectors, ...rest } = decoded;
    // The same floats the live index holds (what it scans), and every other column unchanged.
    for (let i = 0; i < BLOCK_SLOTS - 6; i += 1) expect(vectors.subarray(i * dim, (i + 1) * dim)).toEqual(index.vector(`m${i}`)!.vector);
    expect(vectors.subarray((BLOCK_SLOTS - 6) * dim).every((x) => x === 0)).toBe(true);
    expect(encodeVectorBlock(decoded)).toEqual(stored);
    expect(rest.ids.slice(0, 2)).toEqual(['m0', 'm1']);
    // Bytes as IndexedDB serializes them (V8 ValueSerializer): 384 · 256 · 2 bytes of halves + 1 KiB of scales,
    // against 384 · 256 · 4 bytes of f32.
    const f32Bytes = serialize({ ...rest, vectors }).length;
    const f16Bytes = serialize(stored).length;
    expect(f16Bytes / f32Bytes).toBeLessThan(0.52);
    expect(f16Bytes).toBeGreaterThan(BLOCK_SLOTS * dim * 2);
  });
});

describe('top-10 over the quantized vectors', () => {
  /** The index over `data` (`n` vectors), written as stored records and read back (what a restart does). */
  function reopened(data: Float32Array, n: number, dim: number): BlockIndex {
    const index = new BlockIndex();
    const batch = index.batch();
    for (let i = 0; i < n; i += 1) batch.put(memory(`v${i}`), data.subarray(i * dim, (i + 1) * dim), 'model');
    return BlockIndex.fromRecords(structuredClone(batch.records()));
  }

  it('finds a known top-10, in order, among 10,000 random 384-d vectors', () => {
    const dim = 384;
    const n = 10_000;
    const data = randomUnit(n, dim, 21);
    const q = randomUnit(1, dim, 22);
    // Vectors 100, 1100, …, 9100 are planted at cosine 0.60, 0.59, …, 0.51 with q: v = c·q + √(1−c²)·r,
    // r a random unit vector made orthogonal to q. Random 384-d unit vectors have |cosine| ≲ 0.25 with q.
    const planted: string[] = [];
    for (let k = 0; k < 10; k += 1) {
      const i = 100 + 1000 * k;
      const c = 0.6 - 0.01 * k;
      const r = data.subarray(i * dim, (i + 1) * dim);
      let along = 0;
      for (let j = 0; j < dim; j += 1) along += r[j]! * q[j]!;
      let norm = 0;
      for (let j = 0; j < dim; j += 1) norm += (r[j]! - along * q[j]!) ** 2;
      for (let j = 0; j < dim; j += 1) r[j] = c * q[j]! + (Math.sqrt(1 - c * c) * (r[j]! - along * q[j]!)) / Math.sqrt(norm);
      planted.push(`v${i}`);
    }
    const hits = reopened(data, n, dim).search('model', 'default', q, 10, { now: T0 });
    expect(hits.map((h) => h.id)).toEqual(planted);
    hits.forEach((h, k) => expect(h.similarity).toBeCloseTo(0.6 - 0.01 * k, 3));
  });

  it('against the exact f32 scan of the originals, a top-10 differs only by near-ties (10,000 random 384-d vectors, 100 queries, seeded)', () => {
    // Random 384-d vectors are the hard case: their top-10 cosines crowd together (≈ 0.17–0.22), so
    // neighbours closer than the quantization's error (≤ ~1e-4) exist; on the retrieval benchmark's
    // embedders the top-10 was identical (see the report / BENCHMARKS.md). Measured here for this seed:
    // 1 of 1,000 results differs (recall@10 0.999), 3 queries have two neighbours swapped.
    const dim = 384;
    const n = 10_000;
    const data = randomUnit(n, dim, 51);
    const index = reopened(data, n, dim);
    const queries = randomUnit(100, dim, 52);
    const cosine = (q: Float32Array, i: number) => {
      let s = 0;
      for (let j = 0; j < dim; j += 1) s += q[j]! * data[i * dim + j]!;
      return s;
    };
    let found = 0;
    let sameOrder = 0;
    for (let qi = 0; qi < 100; qi += 1) {
      const q = queries.subarray(qi * dim, (qi + 1) * dim);
      const truth = exactTopK(q, data, n, dim, 10);
      const got = index.search('model', 'default', q, 10, { now: T0 });
      const truthIds = truth.map(([i]) => `v${i}`);
      found += got.filter((h) => truthIds.includes(h.id)).length;
      if (got.every((h, k) => h.id === truthIds[k])) sameOrder += 1;
      got.forEach((h, k) => {
        // Rank k holds a memory whose f32 cosine is within 2e-4 of the exact rank k's, and its reported
        // similarity is within 1e-4 of its own f32 cosine.
        const own = cosine(q, Number(h.id.slice(1)));
        expect(Math.abs(own - truth[k]![1])).toBeLessThan(2e-4);
        expect(Math.abs(h.similarity - own)).toBeLessThan(1e-4);
      });
    }
    expect(found / 1000).toBeGreaterThanOrEqual(0.999);
    expect(sameOrder).toBeGreaterThanOrEqual(95);
  });
});
