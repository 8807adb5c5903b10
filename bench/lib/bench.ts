/**
 * The uniform interface of a benchmark file (`bench/<name>.bench.ts`), as `bench/run.ts` runs it
 * and writes it into BENCHMARKS.md. A bench file default-exports `defineBench({...})`:
 *
 * ```ts
 * export default defineBench({
 *   name: 'coldstart',                       // = file name without .bench.ts; CLI filter; BENCHMARKS.md marker
 *   title: 'Cold start in Chromium',         // heading of its generated section
 *   method: 'What is measured, how, on what data (one paragraph of Markdown).',
 *   quick: { sizes: [1_000, 10_000], runs: 5 },   // the default run (all benches together ≤ 10 min)
 *   full: { sizes: [1_000, 10_000, 100_000], runs: 5 }, // `npm run bench -- --full`
 *   async run(params, ctx) {
 *     return { tables: [{ title: '…', columns: ['size', 'median ms', 'p95 ms'], rows: [[1000, 12.3, 15.1]] }], headline: [...] };
 *   },
 * });
 * ```
 * Keep ≥ 5 runs for every median/p95 (`repeat` and `summarize` in `./stats.ts`); make the quick
 * run faster by measuring fewer or smaller sizes, not fewer runs.
 */

/** A table of results; cells are written as given (format numbers with `./stats.ts` helpers). */
export interface BenchTable {
  /** One line above the table (Markdown). */
  title: string;
  columns: string[];
  rows: (string | number)[][];
}

/**
 * One line of the headline table at the top of BENCHMARKS.md: a measured value next to what it is
 * compared with, both from the same run (so the ratio is not skewed by another day's machine load).
 */
export interface HeadlineRow {
  /** What is compared, e.g. `cold start, 10k memories, offscreen restart → first answered search`. */
  what: string;
  /** The measured value, formatted with its unit (e.g. `412 ms`). */
  measured: string;
  /** What it is compared with, formatted with its unit (e.g. `empty store 96 ms` or `target 300 ms`). */
  reference: string;
  /** measured ÷ reference as a number (e.g. 4.3), or null when no ratio makes sense. */
  ratio: number | null;
}

/** What a bench's `run` returns. */
export interface BenchResult {
  /** Rendered in order into the bench's generated section. */
  tables: BenchTable[];
  /** Rows for the headline table (optional). */
  headline?: HeadlineRow[];
  /** Extra lines under the tables (Markdown), e.g. what was skipped and why. */
  notes?: string[];
  /** Anything else worth keeping; written with the result to `bench-results/<name>.json`. */
  raw?: unknown;
  /**
   * The parameters actually measured, when an environment override (e.g. `COLDSTART_SIZES`) changed
   * the quick or full ones: printed in the section and the JSON instead of them.
   */
  params?: unknown;
}

/** What the runner gives each bench. */
export interface BenchContext {
  /** `true` for `--full`. */
  full: boolean;
  /** Repository root (absolute). */
  root: string;
  /** Progress output (stderr), not part of the report. */
  log(line: string): void;
  /**
   * The built extension of the current working tree (`.output-bench/chrome-mv3`), built once per
   * `npm run bench` on first call (production build). @throws Error when the build fails.
   */
  buildDir(): Promise<string>;
}

/** A benchmark file's default export. `P` = its parameters (plain JSON, printed in the report). */
export interface Bench<P = unknown> {
  name: string;
  title: string;
  method: string;
  quick: P;
  full: P;
  run(params: P, ctx: BenchContext): Promise<BenchResult>;
}

/** Identity helper that types a bench's parameters. */
export function defineBench<P>(bench: Bench<P>): Bench<P> {
  return bench;
}

/**
 * The bench a registry entry `name` default-exports, checked: `bench/run.ts` writes a result into
 * BENCHMARKS.md only through this shape (a section named after the bench), so any other export
 * would be measured and then written nowhere.
 * @throws Error when `value` is not a `defineBench({...})` object (`name`, `title`, `method`,
 *   `quick`, `full`, `run`), or its `name` is not `name` (its section would be another bench's).
 */
export function asBench(value: unknown, name: string): Bench<unknown> {
  const b = value as Partial<Bench<unknown>> | null | undefined;
  const missing = (['name', 'title', 'method', 'quick', 'full', 'run'] as const).filter((key) =>
    key === 'run' ? typeof b?.run !== 'function' : key === 'quick' || key === 'full' ? b?.[key] === undefined : typeof b?.[key] !== 'string',
  );
  if (missing.length > 0)
    throw new Error(
      `bench/${name}.bench.ts: its default export is not a defineBench({ name, title, method, quick, full, run }) (missing ${missing.join(', ')}), so its results would be written nowhere`,
    );
  if (b!.name !== name) throw new Error(`bench/${name}.bench.ts: defineBench name "${b!.name}" must be the file's name "${name}" (its BENCHMARKS.md section)`);
  return b as Bench<unknown>;
}
