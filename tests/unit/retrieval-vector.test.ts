/**
 * The Voy-backed vector index, against an exact brute-force reference: identical vectors (which
 * make Voy/kiddo panic without jitter), replacement and removal, filters that would starve a
 * plain top-k, and recovery from a failing Voy object. Vectors are seeded random unit vectors.
 */
import { describe, expect, it, vi } from 'vitest';
import { VectorIndex, dot, l2normalize } from '../../src/memory/long-term/retrieval/vector';
import { loadVoy, type VoyClass } from '../../src/memory/long-term/retrieval/voy';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { mulberry32 } from '../../bench/data/prng';

const randomVectors = (n: number, dim: number, seed: number) => {
  const r = mulberry32(seed);
  return Array.from({ length: n }, () => l2normalize(Float32Array.from({ length: dim }, () => r() - 0.5)));
};

/** Exact top-k by dot product: the reference. */
function bruteForce(vectors: Map<string, Float32Array>, q: Float32Array, k: number, filter: (id: string) => boolean = () => true) {
  return [...vectors]
    .filter(([id]) => filter(id))
    .map(([id, v]) => ({ id, similarity: dot(q, v) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, k)
    .map((h) => h.id);
}

async function build(n: number, dim = 32, seed = 1) {
  const Voy = await loadVoy(nodeVoyWasm);
  const index = new VectorIndex(Voy);
  const vectors = new Map<string, Float32Array>();
  randomVectors(n, dim, seed).forEach((v, i) => vectors.set(`m${i}`, v));
  await index.replaceAll(vectors, 'model-a');
  return { index, vectors, Voy };
}

describe('vector index over Voy', () => {
  it('returns the exact top-k with cosine similarities (Voy path)', async () => {
    const { index, vectors } = await build(1500);
    expect(index.stats()).toMatchObject({ size: 1500, voyReady: true, modelId: 'model-a', dimension: 32 });
    for (const q of randomVectors(20, 32, 99)) {
      const hits = index.search(q, 10);
      expect(hits.map((h) => h.id)).toEqual(bruteForce(vectors, q, 10));
      expect(hits[0]!.similarity).toBeCloseTo(dot(q, vectors.get(hits[0]!.id)!), 6);
    }
  });

  it('indexes 100 identical vectors (kiddo panics above 32 without jitter) and finds them all', async () => {
    const Voy = await loadVoy(nodeVoyWasm);
    const index = new VectorIndex(Voy);
    const same = l2normalize(Float32Array.from({ length: 16 }, (_, i) => (i === 0 ? 1 : 0)));
    const warn = vi.spyOn(console, 'warn');
    for (let i = 0; i < 100; i += 1) index.set(`dup${i}`, same, 'm');
    await index.whenReady();
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
    expect(index.stats()).toMatchObject({ size: 100, voyReady: true, voyFailures: 0 });
    const hits = index.search(same, 100);
    expect(new Set(hits.map((h) => h.id)).size).toBe(100);
    hits.forEach((h) => expect(h.similarity).toBeCloseTo(1, 5));
  });

  it('replacing and deleting vectors keeps Voy consistent (no ghosts, no stale positions)', async () => {
    const { index, vectors } = await build(1200, 24, 5);
    const [a, b] = randomVectors(2, 24, 77);
    // Move m3 to a new place; delete m7.
    index.set('m3', a!, 'model-a');
    vectors.set('m3', a!);
    index.delete('m7');
    const old7 = vectors.get('m7')!;
    vectors.delete('m7');
    expect(index.search(a!, 1).map((h) => h.id)).toEqual(['m3']);
    expect(index.search(old7, 5).map((h) => h.id)).toEqual(bruteForce(vectors, old7, 5));
    for (const q of [b!, ...randomVectors(10, 24, 8)]) expect(index.search(q, 8).map((h) => h.id)).toEqual(bruteForce(vectors, q, 8));
    expect(index.stats()).toMatchObject({ size: 1199, voyReady: true });
  });

  it('widens the over-fetch so a selective filter cannot starve the result', async () => {
    const { index, vectors } = await build(2000, 16, 11);
    const keep = (id: string) => Number(id.slice(1)) % 97 === 0; // 21 of 2000 ids
    for (const q of randomVectors(5, 16, 3)) {
      // No eligible count given: the index must over-fetch from Voy and widen until 10 pass.
      const hits = index.search(q, 10, keep);
      expect(hits).toHaveLength(10);
      expect(hits.map((h) => h.id)).toEqual(bruteForce(vectors, q, 10, keep));
      // With the count, it scans only the eligible ids; same answer.
      const eligible = [...vectors.keys()].filter(keep);
      expect(index.search(q, 10, keep, eligible.length, eligible).map((h) => h.id)).toEqual(bruteForce(vectors, q, 10, keep));
    }
    expect(index.search(randomVectors(1, 16, 4)[0]!, 50, keep)).toHaveLength(21);
  });

  it('falls back to the exact scan when Voy fails, then rebuilds it', async () => {
    const Voy = await loadVoy(nodeVoyWasm);
    let failNext = true;
    /** Wraps a real Voy object; its first search fails like a Rust panic does. */
    class FlakyVoy {
      private readonly inner = new Voy();
      add(resource: Parameters<InstanceType<VoyClass>['add']>[0]) {
        this.inner.add(resource);
      }
      remove(resource: Parameters<InstanceType<VoyClass>['remove']>[0]) {
        this.inner.remove(resource);
      }
      search(query: Float32Array, k: number) {
        if (failNext) {
          failNext = false;
          throw new Error('unreachable');
        }
        return this.inner.search(query, k);
      }
      free() {
        this.inner.free();
      }
    }
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const index = new VectorIndex(FlakyVoy as unknown as VoyClass);
    const vectors = new Map<string, Float32Array>();
    randomVectors(800, 16, 21).forEach((v, i) => vectors.set(`m${i}`, v));
    await index.replaceAll(vectors, 'm');
    const q = randomVectors(1, 16, 22)[0]!;
    expect(index.search(q, 5).map((h) => h.id)).toEqual(bruteForce(vectors, q, 5));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(index.stats().voyFailures).toBe(1);
    await index.whenReady();
    expect(index.stats().voyReady).toBe(true);
    expect(index.search(q, 5).map((h) => h.id)).toEqual(bruteForce(vectors, q, 5));
    warn.mockRestore();
  });

  it('a Voy constructor that throws in a background build is logged and counted, not an unhandled rejection; the exact scan keeps answering', async () => {
    // Vitest fails the run on an unhandled rejection: before the fix, `set` dropped the build's rejection.
    let constructed = 0;
    class BrokenVoy {
      constructor() {
        constructed += 1;
        throw new Error('wasm instance lost');
      }
    }
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const index = new VectorIndex(BrokenVoy as unknown as VoyClass);
    const vectors = new Map<string, Float32Array>();
    const vs = randomVectors(3, 8, 31);
    vs.forEach((v, i) => vectors.set(`m${i}`, v));
    index.set('m0', vs[0]!, 'm');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain('Voy index build failed (1/2)');
    expect(index.stats()).toMatchObject({ size: 1, voyReady: false, voyFailures: 1 });
    index.set('m1', vs[1]!, 'm');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(index.stats().voyFailures).toBe(2);
    // After MAX_VOY_FAILURES (2) no further build is attempted.
    index.set('m2', vs[2]!, 'm');
    await index.whenReady();
    expect(constructed).toBe(2);
    const q = randomVectors(1, 8, 32)[0]!;
    expect(index.search(q, 3).map((h) => h.id)).toEqual(bruteForce(vectors, q, 3));
    warn.mockRestore();
  });

  it('keeps one embedding model: a vector of another model or dimension clears the rest', async () => {
    const { index } = await build(600, 8, 2);
    index.set('x', randomVectors(1, 12, 3)[0]!, 'model-b');
    expect(index.stats()).toMatchObject({ size: 1, modelId: 'model-b', dimension: 12 });
    expect(index.search(randomVectors(1, 8, 4)[0]!, 3)).toEqual([]); // wrong dimension: nothing comparable
    index.delete('x');
    expect(index.stats()).toMatchObject({ size: 0, modelId: null });
  });

  it('a failed WASM load is reported and not cached', async () => {
    vi.resetModules(); // a fresh module registry = a context where Voy was never loaded
    const { loadVoy: freshLoad } = await import('../../src/memory/long-term/retrieval/voy');
    await expect(freshLoad(async () => new Uint8Array([0, 1, 2]))).rejects.toThrow('Could not load the voy-search WASM module');
    const Voy = await freshLoad(nodeVoyWasm);
    expect(new Voy().size()).toBe(0);
    expect(await freshLoad(async () => new Uint8Array([9]))).toBe(Voy); // loaded once per context
  });

  it('serves exact-scan searches while Voy is still building', async () => {
    const Voy = await loadVoy(nodeVoyWasm);
    const index = new VectorIndex(Voy);
    const vectors = new Map<string, Float32Array>();
    randomVectors(3000, 16, 31).forEach((v, i) => vectors.set(`m${i}`, v));
    const built = index.replaceAll(vectors, 'm');
    expect(index.stats().voyReady).toBe(false);
    const q = randomVectors(1, 16, 32)[0]!;
    expect(index.search(q, 5).map((h) => h.id)).toEqual(bruteForce(vectors, q, 5));
    await built;
    expect(index.stats().voyReady).toBe(true);
  });
});
