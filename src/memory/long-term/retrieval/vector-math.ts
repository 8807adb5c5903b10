/** Float vector math shared by the vector index, the block layout, consolidation and backups. */

/** Dot product of two vectors of the same length (= cosine similarity for unit vectors). */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) sum += a[i]! * b[i]!;
  return sum;
}

/** Returns `v / ‖v‖₂` (a copy); the zero vector is returned unchanged. */
export function l2normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i += 1) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  const out = new Float32Array(v.length);
  if (norm === 0) return out;
  for (let i = 0; i < v.length; i += 1) out[i] = v[i]! / norm;
  return out;
}

/** Cosine similarity of two vectors of the same length, of any norm (dot product over the norms; 0 for a zero vector or different lengths). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Whether a vector can be indexed: at least one component, every component finite, norm > 0.
 * @param v any float vector.
 */
export function isUsableVector(v: Float32Array): boolean {
  if (v.length === 0) return false;
  let norm = 0;
  for (let i = 0; i < v.length; i += 1) {
    const x = v[i]!;
    if (!Number.isFinite(x)) return false;
    norm += x * x;
  }
  return norm > 0 && Number.isFinite(norm);
}
