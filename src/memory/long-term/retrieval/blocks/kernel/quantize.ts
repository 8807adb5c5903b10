/**
 * The int8 codes of the quantized first pass (`./mirror.ts`) and the error bounds that make it exact.
 *
 * A stored vector `v` (the f32 floats the exact scan reads, `dim` of them) is coded per vector by
 * the kernel's `encode` (`./scan.wat`): `scale = f32(max|vᵢ| / 127)`, `cᵢ = nearest(f32(vᵢ / scale))`
 * ∈ [−127, 127], residual `e = v − scale·c`. A correctly rounded quotient is within 2⁻²⁴ · 128 of
 * `vᵢ / scale`, so `|eᵢ| ≤ scale · (1/2 + 2⁻¹⁷)` and `‖e‖ ≤ errNorm = scale · (1/2 + 2⁻¹²) · √dim`
 * (rounded up) — a bound, not the measured residual: √3 above it for uniform rounding errors,
 * which costs ~1.5× the rescored candidates on the benchmark (29 instead of 19 of 100k) and saves
 * a pass in f64. `codeNorm = scale·‖c‖` (`Σcᵢ²` exact in i32, rounded up). This needs `scale` to be
 * a normal f32, i.e. `max|vᵢ| ≥ 2⁻¹¹⁹`: every unit vector (`max|vᵢ| ≥ 1/√dim`); the zero vector
 * gets zero codes and constants, which is exact.
 *
 * A query `q` is coded here in i16: `t = max|qᵢ| / Q`, `dᵢ = round(qᵢ / t)` ∈ [−Q, Q], residual
 * `f = q − t·d`, with `Q = min(32767, ⌊(2³¹ − 1) / (127 · dim)⌋)` so that `D = Σ cᵢ dᵢ` cannot overflow
 * an i32 (|D| ≤ 127 · Q · dim). Then exactly
 *
 *   q·v = scale·t·D + scale·(f·c) + q·e,
 *
 * and by Cauchy–Schwarz `|q·v − scale·t·D| ≤ ‖f‖·codeNorm + ‖q‖·errNorm`. The kernel's `bounds`
 * gives every slot `lo ≤ q·v ≤ hi` from that, plus a `slack` of `2⁻²⁰ · (‖q‖ + 1)` that covers the
 * rounding of the f64 arithmetic, of `lo` / `hi` to f32 (|lo|, |hi| ≤ 3‖q‖ for the index's unit
 * vectors, so below 2⁻²⁴ · 3‖q‖), and the exact scan's own f64 sum (`dotAt`: below 10⁻¹² here).
 */

/** The largest int8 code (symmetric range, so −128 is never used). */
export const CODE_MAX = 127;

/** Bytes of codes per vector: `dim` rounded up to a multiple of 16 (one v128), zero-padded. */
export const codeStride = (dim: number): number => Math.ceil(dim / 16) * 16;

/** Floats of per-vector constants the kernel reads (`scale`, `errNorm`, `codeNorm`). */
export const META_FLOATS = 3;

/** `x` rounded up to an f32 that is ≥ x (x ≥ 0): a relative margin of 2⁻²⁰ dominates f32's 2⁻²⁴ rounding and the f64 sums' error. */
const up = (x: number): number => Math.fround(x * (1 + 2 ** -20));

/** What the kernel needs of a coded query besides its codes (see the module doc). */
export interface QueryCode {
  /** `t`: the query's step (a code `d` stands for `t·d`). */
  scale: number;
  /** `‖q‖₂`, rounded up. */
  norm: number;
  /** `‖q − t·d‖₂`, rounded up. */
  errNorm: number;
  /** The absolute margin added to every bound (`2⁻²⁰ · (‖q‖ + 1)`). */
  slack: number;
}

/** The largest i16 code of a query of `dim` floats that keeps `Σ cᵢ dᵢ` within an i32 (`Q` of the module doc). */
export const queryCodeMax = (dim: number): number => Math.min(32767, Math.floor((2 ** 31 - 1) / (CODE_MAX * Math.max(1, dim))));

/**
 * Codes the query `q` (`q.length` floats, finite) into `out[0 … codeStride(q.length))` (i16, zero-padded).
 * @throws RangeError when `q` has a non-finite component (its bounds would be meaningless).
 */
export function quantizeQuery(q: Float32Array, out: Int16Array): QueryCode {
  const dim = q.length;
  let max = 0;
  let normSq = 0;
  for (let i = 0; i < dim; i += 1) {
    const x = q[i]!;
    if (!Number.isFinite(x)) throw new RangeError(`quantizeQuery: component ${i} is ${x}`);
    normSq += x * x;
    if (Math.abs(x) > max) max = Math.abs(x);
  }
  out.fill(0, 0, codeStride(dim));
  const norm = up(Math.sqrt(normSq));
  const slack = 2 ** -20 * (norm + 1);
  if (max === 0) return { scale: 0, norm, errNorm: 0, slack };
  const qmax = queryCodeMax(dim);
  const scale = max / qmax;
  let errSq = 0;
  for (let i = 0; i < dim; i += 1) {
    const x = q[i]!;
    let d = Math.round(x / scale);
    if (d > qmax) d = qmax;
    else if (d < -qmax) d = -qmax;
    out[i] = d;
    const e = x - scale * d;
    errSq += e * e;
  }
  return { scale, norm, errNorm: up(Math.sqrt(errSq)), slack };
}
