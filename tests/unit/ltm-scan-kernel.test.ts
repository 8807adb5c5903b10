/**
 * The vector scan's WebAssembly kernel (`retrieval/blocks/kernel/`): the committed bytes are what
 * `scan.wat` compiles to; the int8 bounds hold for every slot (`lo ≤ dotAt ≤ hi`, on random and on
 * awkward vectors); `BlockIndex.search` on the quantized path returns exactly the plain f32 scan's
 * hits (ids, scores, order) and the reference `exactTopK`'s, with validity and time filters, ties,
 * and after mixed writes (add, update, delete, slot reuse, namespace move) through `IndexBatch`.
 * Seeded random vectors; nothing is faked.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { compileScanKernel, SCAN_WAT_PATH } from '../../scripts/build/scan-kernel';
import { SCAN_WASM_BASE64 } from '../../src/memory/long-term/retrieval/blocks/kernel/scan-wasm';
import { scanKernelModule } from '../../src/memory/long-term/retrieval/blocks/kernel/kernel';
import { QuantizedMirror } from '../../src/memory/long-term/retrieval/blocks/kernel/mirror';
import { codeStride, quantizeQuery, queryCodeMax } from '../../src/memory/long-term/retrieval/blocks/kernel/quantize';
import { emptyVectorBlock, encodeVectorBlock } from '../../src/memory/long-term/retrieval/blocks/records';
import { dotAt } from '../../src/memory/long-term/retrieval/blocks/scan';
import { BLOCK_SLOTS, BlockIndex, exactTopK, type IndexedMemory, type ScanFilter } from '../../src/memory/long-term/retrieval/blocks';
import { mulberry32, randomUnitVectors } from '../../bench/data/prng';
import { indexedMemory } from '../helpers/memory-record';

const T0 = Date.UTC(2025, 0, 1);
const DAY = 86_400_000;

function mem(id: string, i: number, over: Partial<IndexedMemory> = {}): IndexedMemory {
  return indexedMemory({ id, createdAt: T0 + i * DAY, updatedAt: T0 + i * DAY, ...over });
}

const unit = (v: Float32Array): Float32Array => {
  let n = 0;
  for (const x of v) n += x * x;
  return v.map((x) => x / Math.sqrt(n));
};

describe('scan kernel: build', () => {
  it('the committed bytes are what scan.wat compiles to', async () => {
    const built = await compileScanKernel(readFileSync(SCAN_WAT_PATH, 'utf8'));
    expect(Buffer.from(built).toString('base64')).toBe(SCAN_WASM_BASE64);
  });

  it('compiles in Node 20 (WebAssembly SIMD)', () => {
    expect(scanKernelModule()).not.toBeNull();
  });
});

describe('scan kernel: int8 bounds', () => {
  /** Every slot's bounds against `q`, checked against the exact f32 score. Returns the widest hi − lo. */
  function checkBounds(vectors: Float32Array, dim: number, q: Float32Array): number {
    const n = vectors.length / dim;
    const blocks = [];
    for (let b = 0; b * BLOCK_SLOTS < n; b += 1) {
      const block = emptyVectorBlock('m', 'ns', b, dim);
      const count = Math.min(BLOCK_SLOTS, n - b * BLOCK_SLOTS);
      block.vectors.set(vectors.subarray(b * BLOCK_SLOTS * dim, (b * BLOCK_SLOTS + count) * dim));
      blocks.push(block);
    }
    const mirror = new QuantizedMirror(dim);
    mirror.sync(blocks);
    mirror.score(q, n);
    let widest = 0;
    for (let i = 0; i < n; i += 1) {
      const bounds = mirror.boundsOf(i >> 8);
      const lo = bounds[2 * (i & 255)]!;
      const hi = bounds[2 * (i & 255) + 1]!;
      const exact = dotAt(q, vectors, i * dim, dim);
      if (!(lo <= exact && exact <= hi)) throw new Error(`slot ${i}: ${lo} ≤ ${exact} ≤ ${hi} fails`);
      widest = Math.max(widest, hi - lo);
    }
    return widest;
  }

  it('hold for every slot of 1,000 random 384-d unit vectors and 20 queries, and are tight (< 0.03 wide)', () => {
    const data = randomUnitVectors(1000, 384, 11);
    const queries = randomUnitVectors(20, 384, 12);
    for (let qi = 0; qi < 20; qi += 1) expect(checkBounds(data, 384, queries.subarray(qi * 384, (qi + 1) * 384))).toBeLessThan(0.03);
  });

  it('hold for awkward vectors: one-hot, constant, ties at half a code, huge spread, negative, the zero vector', () => {
    const dim = 32;
    const rows: Float32Array[] = [];
    const oneHot = new Float32Array(dim);
    oneHot[5] = 1;
    rows.push(oneHot, unit(new Float32Array(dim).fill(1)), unit(new Float32Array(dim).fill(-1)));
    // Components at exactly half a code step of the scale max/127 (round-half cases).
    rows.push(unit(Float32Array.from({ length: dim }, (_, i) => (i === 0 ? 127 : (i % 7) + 0.5))));
    rows.push(unit(Float32Array.from({ length: dim }, (_, i) => (i === 3 ? 1 : 1e-6 * (i + 1)))));
    rows.push(unit(Float32Array.from({ length: dim }, (_, i) => (i % 2 ? 1 : -1) * (1 + i / 10))));
    rows.push(new Float32Array(dim));
    const rand = mulberry32(5);
    for (let r = 0; r < 40; r += 1) rows.push(unit(Float32Array.from({ length: dim }, () => (rand() - 0.5) ** 3)));
    const data = new Float32Array(rows.length * dim);
    rows.forEach((r, i) => data.set(r, i * dim));
    const queries = [...rows.slice(0, 7), Float32Array.from({ length: dim }, (_, i) => 3 * Math.sin(i)), new Float32Array(dim)];
    for (const q of queries) checkBounds(data, dim, q);
  });

  it('codes a query in i16 within the i32 range of the kernel, and rejects a non-finite one', () => {
    expect(queryCodeMax(384)).toBe(32767);
    expect(queryCodeMax(1024)).toBe(Math.floor((2 ** 31 - 1) / (127 * 1024)));
    const q = Float32Array.from({ length: 20 }, (_, i) => (i - 10) / 10);
    const out = new Int16Array(codeStride(20));
    const code = quantizeQuery(q, out);
    expect(out[0]).toBe(-queryCodeMax(20)); // −1.0 is the largest magnitude
    expect(out[10]).toBe(0);
    expect([...out.subarray(20)]).toEqual(new Array(12).fill(0));
    expect(code.scale).toBeCloseTo(1 / queryCodeMax(20), 12);
    q[3] = NaN;
    expect(() => quantizeQuery(q, out)).toThrow(RangeError);
  });
});

/** An index of `n` random unit vectors (`dim`), ~20 % of them invalid, spread over 100 days. */
function seeded(n: number, dim: number, seed: number) {
  const data = randomUnitVectors(n, dim, seed);
  const rand = mulberry32(seed + 1);
  const index = new BlockIndex();
  const batch = index.batch();
  for (let i = 0; i < n; i += 1) {
    const invalid = rand() < 0.2;
    batch.put(mem(`m${i}`, i % 100, { validUntil: invalid ? T0 - 1 : null }), data.subarray(i * dim, (i + 1) * dim), 'model');
  }
  batch.commit();
  return { index, data };
}

/** Both scan paths on the same index, with `filter`: equal hits, bit for bit. */
function bothPaths(index: BlockIndex, q: Float32Array, k: number, filter: ScanFilter, namespace = 'default') {
  index.scanPath = 'auto';
  const fast = index.search('model', namespace, q, k, filter);
  index.scanPath = 'js';
  const plain = index.search('model', namespace, q, k, filter);
  index.scanPath = 'auto';
  expect(fast).toEqual(plain);
  return fast;
}

/** `exactTopK` over the vectors of `ids` packed in slot order (the index's own floats). */
function reference(index: BlockIndex, ids: string[], q: Float32Array, k: number) {
  const dim = q.length;
  const packed = new Float32Array(ids.length * dim);
  ids.forEach((id, j) => packed.set(index.vector(id)!.vector, j * dim));
  return exactTopK(q, packed, ids.length, dim, k).map(([j, s]) => ({ id: ids[j]!, similarity: s }));
}

describe('scan kernel: BlockIndex.search on the quantized path', () => {
  it('equals the plain scan and exactTopK at 3,000 vectors: validity, includeInvalid, a time range, k = 1, 10, 50', () => {
    const { index } = seeded(3000, 384, 21);
    const queries = randomUnitVectors(8, 384, 22);
    const filters: ScanFilter[] = [{ now: T0 }, { now: T0, includeInvalid: true }, { now: T0, range: { start: T0 + 10 * DAY, end: T0 + 20 * DAY } }];
    for (let qi = 0; qi < 8; qi += 1) {
      const q = queries.subarray(qi * 384, (qi + 1) * 384);
      for (const filter of filters) {
        for (const k of [1, 10, 50]) {
          const hits = bothPaths(index, q, k, filter);
          const ids = index.idsWhere('default', filter).filter((id) => index.hasVector(id, 'model'));
          expect(hits).toEqual(reference(index, ids, q, k));
        }
      }
    }
    expect(index.mirrorBytes()).toBeGreaterThan(0); // the quantized path ran
  });

  it('breaks ties as the plain scan does (lower slot first) among duplicated vectors', () => {
    const dim = 64;
    const base = randomUnitVectors(40, dim, 31);
    const index = new BlockIndex();
    index.kernelMinVectors = 1;
    const batch = index.batch();
    // 1,200 vectors, each one of 40 distinct ones: every score comes 30 times.
    for (let i = 0; i < 1200; i += 1) batch.put(mem(`d${i}`, 0), base.subarray((i % 40) * dim, ((i % 40) + 1) * dim), 'model');
    batch.commit();
    const q = base.subarray(7 * dim, 8 * dim);
    const hits = bothPaths(index, q, 45, { now: T0 });
    expect(hits.slice(0, 30).map((h) => h.id)).toEqual(Array.from({ length: 30 }, (_, j) => `d${7 + 40 * j}`));
  });

  it('rescores a wide-bound vector whose upper bound reaches the k-th lower bound (spiky vectors among flat ones)', () => {
    // q = (1, …, 1)/8 in 64-d. "Flat" vectors (components ±1/8: 35 plus, 29 minus) score 6/64 with
    // bounds ±0.004; "spiky" ones (0.94, −0.06, 0, …) score 0.11 with bounds ±0.03. The 10th lower
    // bound is a flat one's (≈ 0.090), above every spiky lower bound (≈ 0.080): the spiky vectors,
    // the true top-5, are found only through their upper bounds.
    const dim = 64;
    const q = new Float32Array(dim).fill(1 / 8);
    const rand = mulberry32(71);
    const index = new BlockIndex();
    index.kernelMinVectors = 1;
    const batch = index.batch();
    for (let i = 0; i < 40; i += 1) {
      const signs = Array.from({ length: dim }, (_, j) => (j < 35 ? 1 : -1)).sort(() => rand() - 0.5);
      batch.put(
        mem(`flat${i}`, 0),
        Float32Array.from(signs, (x) => x / 8),
        'model',
      );
    }
    const x = (0.88 + Math.sqrt(2 - 0.88 ** 2)) / 2;
    for (let i = 0; i < 5; i += 1) {
      const v = new Float32Array(dim);
      v[2 * i] = x;
      v[2 * i + 1] = 0.88 - x;
      batch.put(mem(`spiky${i}`, 0), v, 'model');
    }
    batch.commit();
    const hits = bothPaths(index, q, 10, { now: T0 });
    expect(
      hits
        .slice(0, 5)
        .map((h) => h.id)
        .sort(),
    ).toEqual(['spiky0', 'spiky1', 'spiky2', 'spiky3', 'spiky4']);
    expect(hits[0]!.similarity).toBeCloseTo(0.11, 3);
    expect(hits[9]!.similarity).toBeCloseTo(6 / 64, 6);
  });

  it('stays exact after mixed writes: updates, deletes, freed slots reused, a namespace move, a new block', () => {
    const dim = 128;
    const { index, data } = seeded(1500, dim, 41);
    const rand = mulberry32(42);
    const fresh = randomUnitVectors(2000, dim, 43);
    let f = 0;
    const live = new Set(Array.from({ length: 1500 }, (_, i) => `m${i}`));
    const queries = randomUnitVectors(4, dim, 44);
    const check = () => {
      for (let qi = 0; qi < 4; qi += 1) {
        const q = queries.subarray(qi * dim, (qi + 1) * dim);
        const hits = bothPaths(index, q, 10, { now: T0 });
        expect(hits).toEqual(reference(index, index.idsWhere('default', { now: T0 }), q, 10));
      }
    };
    // A first search codes every block; the writes below must be seen by the next one.
    check();
    for (let round = 0; round < 6; round += 1) {
      const batch = index.batch();
      for (let j = 0; j < 60; j += 1) {
        const id = `m${Math.floor(rand() * 1500)}`;
        const r = rand();
        if (r < 0.35) {
          batch.remove(id);
          live.delete(id);
        } else if (r < 0.7) {
          batch.put(mem(id, j), fresh.subarray(f * dim, ++f * dim), 'model');
          live.add(id);
        } else if (r < 0.8) {
          batch.put(mem(id, j, { namespace: 'other' }), data.subarray(0, dim), 'model');
          live.delete(id);
        } else {
          const nid = `n${round}-${j}`;
          batch.put(mem(nid, j), fresh.subarray(f * dim, ++f * dim), 'model');
          live.add(nid);
        }
      }
      batch.commit();
      check();
    }
    // Grow past the last block: 300 more vectors.
    const batch = index.batch();
    for (let j = 0; j < 300; j += 1) batch.put(mem(`g${j}`, j), fresh.subarray(f * dim, ++f * dim), 'model');
    batch.commit();
    check();
    expect(new Set(index.idsWhere('default', { now: T0, includeInvalid: true }))).toEqual(
      new Set([...live, ...Array.from({ length: 300 }, (_, j) => `g${j}`)]),
    );
  });

  it('recodes a searched segment with the write that changed it (commit), and codes none that was never searched', () => {
    const dim = 128;
    const sync = vi.spyOn(QuantizedMirror.prototype, 'sync');
    try {
      const data = randomUnitVectors(1400, dim, 61);
      const index = new BlockIndex();
      const first = index.batch();
      for (let i = 0; i < 1200; i += 1) first.put(mem(`m${i}`, i), data.subarray(i * dim, (i + 1) * dim), 'model');
      first.commit();
      // Never searched: no mirror yet, and the commit makes none.
      expect(sync).not.toHaveBeenCalled();
      expect(index.mirrorBytes()).toBe(0);
      const q = randomUnitVectors(1, dim, 62);
      bothPaths(index, q, 10, { now: T0 }); // the first search codes the mirror
      expect(index.mirrorBytes()).toBeGreaterThan(0);
      sync.mockClear();
      const more = index.batch();
      for (let i = 1200; i < 1400; i += 1) more.put(mem(`m${i}`, i), data.subarray(i * dim, (i + 1) * dim), 'model');
      more.commit();
      expect(sync).toHaveBeenCalledTimes(1); // at the commit, before any search
      expect(bothPaths(index, q, 10, { now: T0 })).toEqual(reference(index, index.idsWhere('default', { now: T0 }), q, 10));
    } finally {
      sync.mockRestore();
    }
  });

  it('codes the vectors when an index is built from stored records (the open), and searches them exactly', () => {
    const { index } = seeded(1100, 384, 51);
    // The stored form of every block (vector blocks as f16, as IndexedDB holds them), read back through fromRecords.
    const metas = [...index._internals().metas.values()].flatMap((s) => s.blocks);
    const vectors = [...index._internals().vectorSegs.values()].flatMap((s) => s.blocks);
    const reopened = BlockIndex.fromRecords([...metas, ...vectors.map((b) => encodeVectorBlock(b))]);
    expect(reopened.mirrorBytes()).toBeGreaterThan(0);
    const q = randomUnitVectors(1, 384, 52);
    expect(bothPaths(reopened, q, 10, { now: T0 })).toEqual(bothPaths(index, q, 10, { now: T0 }));
  });

  it('takes the plain scan for a small segment, a dimension not a multiple of 16, or scanPath js', () => {
    const small = seeded(500, 384, 61).index;
    const odd = seeded(1500, 20, 62).index;
    const forced = seeded(1500, 384, 63).index;
    forced.scanPath = 'js';
    small.search('model', 'default', randomUnitVectors(1, 384, 1), 10, { now: T0 });
    odd.search('model', 'default', randomUnitVectors(1, 20, 1), 10, { now: T0 });
    forced.search('model', 'default', randomUnitVectors(1, 384, 1), 10, { now: T0 });
    expect([small.mirrorBytes(), odd.mirrorBytes(), forced.mirrorBytes()]).toEqual([0, 0, 0]);
    const q = randomUnitVectors(1, 20, 2);
    const ids = odd.idsWhere('default', { now: T0 });
    expect(odd.search('model', 'default', q, 10, { now: T0 })).toEqual(reference(odd, ids, q, 10));
  });

  it('falls back to the plain scan, with the same hits, when the mirror cannot grow its WebAssembly memory', () => {
    const { index } = seeded(1100, 384, 81);
    const q = randomUnitVectors(1, 384, 82);
    const grow = vi.spyOn(WebAssembly.Memory.prototype, 'grow').mockImplementation(() => {
      throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
    });
    try {
      const hits = index.search('model', 'default', q, 10, { now: T0 });
      expect(index.mirrorBytes()).toBe(0);
      expect(hits).toEqual(reference(index, index.idsWhere('default', { now: T0 }), q, 10));
    } finally {
      grow.mockRestore();
    }
  });

  it('answers a query with a non-finite component as the plain scan does (no hit), without throwing', () => {
    const { index } = seeded(1100, 384, 91);
    const q = randomUnitVectors(1, 384, 92);
    q[17] = NaN;
    expect(bothPaths(index, q, 10, { now: T0 })).toEqual([]);
  });

  it("searchAmong (a time window's members) on the quantized path equals the plain one and exactTopK", () => {
    const { index } = seeded(4000, 384, 101);
    const queries = randomUnitVectors(4, 384, 102);
    // 40 of the 100 days: ~1,300 valid members spread over every block; and a window below kernelMinVectors.
    for (const range of [
      { start: T0 + 30 * DAY, end: T0 + 70 * DAY },
      { start: T0, end: T0 + 5 * DAY },
    ]) {
      const ids = index.idsWhere('default', { now: T0, range });
      for (let qi = 0; qi < 4; qi += 1) {
        const q = queries.subarray(qi * 384, (qi + 1) * 384);
        index.scanPath = 'auto';
        const fast = index.searchAmong('model', 'default', q, 20, ids);
        index.scanPath = 'js';
        const plain = index.searchAmong('model', 'default', q, 20, ids);
        index.scanPath = 'auto';
        expect(fast).toEqual(plain);
        expect(fast).toEqual(reference(index, index.idsWhere('default', { now: T0, range }), q, 20));
        expect(fast).toEqual(index.search('model', 'default', q, 20, { now: T0, range }));
      }
    }
  });
});
