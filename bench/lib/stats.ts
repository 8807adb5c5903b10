/**
 * Summary statistics of repeated measurements, as BENCHMARKS.md reports them.
 */

/** Median, 95th percentile and range of a set of samples (same unit as the samples, e.g. ms). */
export interface Summary {
  /** Number of samples. */
  n: number;
  median: number;
  /**
   * 95th percentile by the nearest-rank method: the ⌈0.95·n⌉-th smallest sample. With fewer than
   * 20 samples this is the largest one (5 runs: the 5th), which the report says.
   */
  p95: number;
  min: number;
  max: number;
}

/**
 * Summarizes `samples` (any order). The median of an even count is the mean of the two middle values.
 * @throws Error when `samples` is empty or holds a non-finite number.
 */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('summarize: no samples');
  if (samples.some((x) => !Number.isFinite(x))) throw new Error(`summarize: non-finite sample in ${JSON.stringify(samples)}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const p95 = sorted[Math.max(0, Math.ceil(0.95 * n) - 1)]!;
  return { n, median, p95, min: sorted[0]!, max: sorted[n - 1]! };
}

/**
 * Runs `fn` `runs` times in sequence (after `warmup` unrecorded runs) and summarizes the values
 * it returns (e.g. milliseconds it measured itself).
 * @throws Error when `runs` < 1, or what `fn` throws.
 */
export async function repeat(runs: number, fn: (run: number) => Promise<number>, warmup = 0): Promise<{ samples: number[]; summary: Summary }> {
  if (runs < 1) throw new Error(`repeat: runs must be ≥ 1, got ${runs}`);
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await fn(i));
  return { samples, summary: summarize(samples) };
}

/** Formats milliseconds for a table: `12.3` below 100 ms, `1,234` above. */
export function formatMs(ms: number): string {
  return ms < 100 ? ms.toFixed(1) : Math.round(ms).toLocaleString('en');
}

/** Formats bytes as `12.3 MB` / `456 kB` / `789 B` (SI units, 1 MB = 10⁶ bytes). */
export function formatBytes(bytes: number): string {
  if (Math.abs(bytes) >= 1e6) return `${(bytes / 1e6).toFixed(2)} MB`;
  if (Math.abs(bytes) >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${Math.round(bytes)} B`;
}
