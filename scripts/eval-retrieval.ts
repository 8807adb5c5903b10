/**
 * `npm run eval:retrieval -- --input FILE [--k 10] [--embedder fixture-bert|model2vec|glove|hashed|none]
 *   [--mode facade|all] [--out FILE]`
 *
 * Reads conversations in the format of docs/eval-format.md, ingests them through the real memory
 * store (createMemoryStore; `ingestDataset` in bulk mode: every round is stored as an episodic
 * memory by `storeEpisodes`, the `ltm.episodic` job's work, 25 rounds per embedding call and
 * transaction; no language model runs in Node, so nothing is extracted), asks every question, and
 * prints recall@1/5/10 (and @k) of the evidence turns, the updated-above-stale rate and the
 * retrieval latency p50/p95. Per-question rankings go to `--out` (default
 * `bench-results/eval-<input name>.json`).
 *
 * `--mode facade` (default) asks through `LongTermMemory.retrieve` (hybrid, records accesses);
 * `--mode all` also runs the store's lexical-only, vector-only and hybrid searches.
 * Dexie runs on fake-indexeddb (in memory), so latencies are Node's, not a browser's.
 */
import 'fake-indexeddb/auto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { RecallDB } from '../src/db/schema';
import { createJobQueue } from '../src/jobs/queue';
import { storeEpisodes } from '../src/memory/long-term';
import { composeLongTermMemory } from '../src/memory/long-term/compose';
import {
  evaluateDataset,
  ingestDataset,
  parseEvalDataset,
  type EvalDataset,
  type EvalSummary,
  type QuestionResult,
} from '../src/memory/long-term/retrieval/evaluate';
import { EMBEDDER_NAMES, createNodeEmbedder, type EmbedderName } from '../bench/data/embedders';
import { nodeVoyWasm } from '../bench/data/node-voy';

/** Parsed command line. */
export interface EvalArgs {
  input: string;
  k: number;
  embedder: EmbedderName;
  mode: 'facade' | 'all';
  out: string | null;
}

/** Parses `process.argv`-style arguments. @throws Error with the usage line on bad input. */
export function parseArgs(argv: string[]): EvalArgs {
  const usage = 'usage: npm run eval:retrieval -- --input FILE [--k 10] [--embedder fixture-bert|model2vec|glove|hashed|none] [--mode facade|all] [--out FILE]';
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value\n${usage}`);
    return v;
  };
  const input = value('input');
  if (!input) throw new Error(`--input is required\n${usage}`);
  const k = Number(value('k') ?? 10);
  if (!Number.isInteger(k) || k < 1) throw new Error(`--k must be a positive integer\n${usage}`);
  const embedder = (value('embedder') ?? 'fixture-bert') as EmbedderName;
  if (!EMBEDDER_NAMES.includes(embedder)) throw new Error(`--embedder must be one of ${EMBEDDER_NAMES.join(', ')}\n${usage}`);
  const mode = (value('mode') ?? 'facade') as EvalArgs['mode'];
  if (mode !== 'facade' && mode !== 'all') throw new Error(`--mode must be facade or all\n${usage}`);
  return { input, k, embedder, mode, out: value('out') ?? null };
}

/** Result of one evaluation run (what `--out` holds). */
export interface EvalRun {
  input: string;
  embedder: string;
  ingest: Awaited<ReturnType<typeof ingestDataset>>;
  runs: { mode: string; summary: EvalSummary; results: QuestionResult[] }[];
}

/**
 * Ingests `data` into a fresh in-memory database through the pipeline and evaluates it.
 * @param log progress lines (stderr in the CLI).
 */
export async function runEvaluation(
  data: EvalDataset,
  options: { k: number; embedder: EmbedderName; mode: 'facade' | 'all'; input?: string; log?: (line: string) => void },
): Promise<EvalRun> {
  const log = options.log ?? (() => undefined);
  const named = await createNodeEmbedder(options.embedder);
  const db = new RecallDB(`eval-${crypto.randomUUID()}`);
  try {
    // The store's clock follows the replayed conversation during ingestion (see `ingestDataset`).
    let replayNow = Date.now();
    // The queue's clock is frozen at the start: jobs that wait (extraction without a language
    // model defers itself) do not come back during the run.
    const frozen = Date.now();
    const jobs = createJobQueue(db, { now: () => frozen, onError: (error, job) => log(`job ${job.type} failed: ${String(error)}`) });
    const { store, longTerm } = await composeLongTermMemory({ db, jobs, embedder: () => named.embedder, loadVoyWasm: nodeVoyWasm, storeNow: () => replayNow });
    await jobs.start();
    const ingest = await ingestDataset(data, {
      db,
      jobs,
      longTerm,
      onProgress: (done, total) => log(`ingested ${done}/${total} turns`),
      setTime: (ms) => (replayNow = ms),
      storeEpisodes: (batch) => storeEpisodes({ store, db }, batch),
    });
    await jobs.stop();
    await store.whenIndexed();
    log(`ingested ${ingest.rounds} rounds → ${ingest.memories} memories in ${(ingest.ms / 1000).toFixed(1)} s`);
    const ks = [...new Set([1, 5, 10, options.k])].sort((a, b) => a - b);
    const runs: EvalRun['runs'] = [];
    const facade = await evaluateDataset(data, { kind: 'facade', longTerm }, ks);
    runs.push({ mode: 'hybrid (LongTermMemory.retrieve)', ...facade });
    if (options.mode === 'all') {
      for (const mode of ['lexical', 'vector', 'hybrid'] as const)
        runs.push({ mode: `${mode} (store.search)`, ...(await evaluateDataset(data, { kind: 'store', store, mode }, ks)) });
    }
    return { input: options.input ?? '(in memory)', embedder: named.description, ingest, runs };
  } finally {
    await db.delete();
    await named.dispose();
  }
}

const pct = (x: number) => (x * 100).toFixed(1).padStart(5);

/** Human-readable report of a run. */
export function formatReport(run: EvalRun): string {
  const lines = [
    `input: ${run.input}`,
    `embedder: ${run.embedder}`,
    `memories: ${run.ingest.memories} (from ${run.ingest.rounds} rounds, ${run.ingest.failedJobs} failed jobs)`,
    '',
  ];
  for (const { mode, summary } of run.runs) {
    const ks = summary.ks;
    lines.push(`${mode}: ${summary.questions} questions`);
    lines.push(`  ${'category'.padEnd(16)} ${'n'.padStart(4)} ${ks.map((k) => `R@${k}`.padStart(6)).join(' ')}`);
    lines.push(`  ${'all'.padEnd(16)} ${String(summary.questions).padStart(4)} ${ks.map((k) => pct(summary.recall[k]!).padStart(6)).join(' ')}`);
    for (const [category, c] of Object.entries(summary.byCategory)) {
      lines.push(`  ${category.padEnd(16)} ${String(c.questions).padStart(4)} ${ks.map((k) => pct(c.recall[k]!).padStart(6)).join(' ')}`);
    }
    if (summary.updatedAboveStale !== null)
      lines.push(`  updated value ranked above the stale one: ${pct(summary.updatedAboveStale)} % of ${summary.updateQuestions} questions`);
    lines.push(`  latency: p50 ${summary.latency.p50.toFixed(1)} ms, p95 ${summary.latency.p95.toFixed(1)} ms`, '');
  }
  return lines.join('\n');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const data = parseEvalDataset(readFileSync(args.input, 'utf8'));
  const run = await runEvaluation(data, { ...args, input: args.input, log: (line) => process.stderr.write(`${line}\n`) });
  console.log(formatReport(run));
  const out = args.out ?? join('bench-results', `eval-${basename(args.input, extname(args.input))}.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(run, null, 1));
  console.log(`per-question rankings: ${out}`);
}

if (process.argv[1] && import.meta.url.endsWith(basename(process.argv[1]))) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
