/**
 * IEEE 754 binary16 ("half precision", f16) codec of the persisted vector blocks (schema v4): each
 * component of a unit vector is stored as the 16 bits of the nearest f16 (round to nearest, ties to
 * even), with one f32 factor per vector that scales the decoded f16 components back to norm 1.
 * The scan runs over the decoded f32 values (`quantizeSlot` when a vector is put, `decodeSlot` when
 * a block is read: the same floats both times). Unit vectors' components lie in [−1, 1], where f16
 * keeps 11 significant bits (relative error ≤ 2⁻¹¹ per component); the cosine of two 384-d unit
 * vectors moves by at most ~1e-4 (measured on the retrieval benchmark's embedders, where the top-10
 * over the quantized vectors equals the top-10 over the f32 originals, and in `tests/unit/ltm-f16.test.ts`).
 *
 * Own code, not `Float16Array`: Node 20 (tests, benches) lacks it; the conversion is a few lines of
 * bit arithmetic, checked over every f16 bit pattern in `tests/unit/ltm-f16.test.ts`.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * The f16 bits nearest to `x` (round to nearest, ties to even); ±Infinity beyond the f16 range,
 * a quiet NaN for NaN, signed zero below the smallest subnormal's half.
 */
export function toF16Bits(x: number): number {
  f32[0] = x;
  const u = u32[0]!;
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = mant & ((1 << shift) - 1);
    let r = mant >>> shift;
    if (rest > half || (rest === half && (r & 1) === 1)) r += 1;
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to Infinity).
  if (rest > 0x1000 || (rest === 0x1000 && (r & 1) === 1)) r += 1;
  return sign | r;
}

let table: Float32Array | null = null;

/** The value of every f16 bit pattern (65,536 floats, 256 KiB; built on first use). */
function decodeTable(): Float32Array {
  if (table) return table;
  table = new Float32Array(65536);
  for (let h = 0; h < 65536; h += 1) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    table[h] = exp === 0 ? sign * mant * 2 ** -24 : exp === 0x1f ? (mant ? NaN : sign * Infinity) : sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return table;
}

/** The number the f16 bits `h` (0–65535) stand for. */
export const fromF16Bits = (h: number): number => decodeTable()[h & 0xffff]!;

/**
 * Quantizes the unit vector `src` (`dim` floats) into slot `slot` of a block: `bits[slot·dim …]` get
 * its components as f16 and `out[slot·dim …]` the unit vector those bits stand for (decoded, then
 * scaled by `1 / norm`, the norm summed in float64) — what the scan reads. `scales[slot]` gets that
 * factor, which is stored with the bits so `decodeSlot` rebuilds exactly the same floats.
 * Re-normalizing keeps a vector's cosine with itself at 1 and halves the cosine error of near
 * neighbours against plain f16 values (measured on the retrieval benchmark's embedders).
 */
export function quantizeSlot(src: ArrayLike<number>, slot: number, dim: number, bits: Uint16Array, scales: Float32Array, out: Float32Array): void {
  const t = decodeTable();
  const base = slot * dim;
  let norm = 0;
  for (let i = 0; i < dim; i += 1) {
    const h = toF16Bits(src[i]!);
    bits[base + i] = h;
    norm += t[h]! * t[h]!;
  }
  scales[slot] = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  decodeSlot(bits, slot, dim, scales, out);
}

/** Writes slot `slot` of `out` (`dim` floats) from its f16 bits and scale: `bits[i] · scales[slot]` as f32. */
export function decodeSlot(bits: Uint16Array, slot: number, dim: number, scales: Float32Array, out: Float32Array): void {
  const t = decodeTable();
  const base = slot * dim;
  const scale = scales[slot]!;
  for (let i = base; i < base + dim; i += 1) out[i] = t[bits[i]!]! * scale;
}

/**
 * Every slot of a stored block at once (`decodeSlot` for slots `0 … scales.length`, one loop: this
 * runs for every block when the store opens): `bits.length / scales.length` floats per slot. A
 * free slot (factor 0, bits 0) decodes to zeros.
 */
export function decodeBlock(bits: Uint16Array, scales: Float32Array): Float32Array {
  const t = decodeTable();
  const dim = bits.length / scales.length;
  const out = new Float32Array(bits.length);
  for (let s = 0, base = 0; s < scales.length; s += 1, base += dim) {
    const scale = scales[s]!;
    if (scale === 0) continue;
    for (let i = base; i < base + dim; i += 1) out[i] = t[bits[i]!]! * scale;
  }
  return out;
}

/**
 * The f16 bits of slot `slot` of `vectors` (`dim` floats written by `quantizeSlot` with factor
 * `scales[slot]`), into `bits`: each float divided by the factor is within a few f32 ulps of the f16
 * it came from, so it rounds back to exactly those bits.
 */
export function encodeSlot(vectors: Float32Array, slot: number, dim: number, scales: Float32Array, bits: Uint16Array): void {
  const scale = scales[slot]!;
  const base = slot * dim;
  if (scale === 0) {
    bits.fill(0, base, base + dim);
    return;
  }
  for (let i = base; i < base + dim; i += 1) bits[i] = toF16Bits(vectors[i]! / scale);
}
