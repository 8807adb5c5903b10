/**
 * The one seeded PRNG of the test and benchmark data: mulberry32 (Tommy Ettinger, public domain),
 * a small 32-bit generator. Same seed, same sequence, on every machine.
 * @returns a function giving floats in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `n` seeded random unit vectors of `dim` dimensions in one contiguous array (`n · dim` floats,
 * vector i at `[i·dim, (i+1)·dim)`): components uniform in [−1, 1) from `mulberry32(seed)`, then
 * L2-normalized.
 */
export function randomUnitVectors(n: number, dim: number, seed: number): Float32Array {
  const rand = mulberry32(seed);
  const data = new Float32Array(n * dim);
  for (let i = 0; i < n; i += 1) {
    let norm = 0;
    for (let j = 0; j < dim; j += 1) {
      const x = rand() * 2 - 1;
      data[i * dim + j] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    for (let j = 0; j < dim; j += 1) data[i * dim + j]! /= norm;
  }
  return data;
}
