/**
 * Long-term retrieval benchmark (`npm run bench -- retrieval`).
 *
 * For 1k and 10k memories: generates the bilingual benchmark (bench/data/generate.ts, seed 2),
 * ingests it ONCE per size through the real pipeline (composeLongTermMemory + persisted job queue
 * + episodic job, drained; no LLM in Node, so every round is an episodic memory; the store's
 * clock follows the replayed conversation), then, for each embedder in turn, asks the questions
 * with lexical-only, vector-only and hybrid retrieval (`store.search` modes, hybrid with the
 * app's plain RRF and with the proxy-embedder weighted RRF) and through the facade. The second
 * embedder's vectors come from the pipeline's own re-embedding after a model change (the
 * `ltm.reembed` job of LTM-B, which runs `store.reembed` and rebuilds the indexes), so the 10k
 * set is ingested once, not once per embedder. Reports recall@1/5/10, the updated-above-stale
 * rate, latency, and at each size how the vector index can be restored when a context starts:
 * rebuilding from the stored embeddings vs deserializing a Voy snapshot (first embedder's vectors).
 *
 * Environment: RETRIEVAL_BENCH_EMBEDDERS = comma-separated list of `fixture-bert`, `model2vec`,
 * `glove`, `hashed` (default all four; `model2vec` and `glove` are skipped, with the reason
 * printed, when ../shared/fixtures is absent); RETRIEVAL_BENCH_SIZES = comma-separated sizes (overrides
 * the parameters: quick run 1000, `--full` 1000,10000 — ingesting 10k rounds takes ~10 min of
 * the bench's time here); RETRIEVAL_BENCH_SEED (2; seed 1 is the tuning seed); RETRIEVAL_BENCH_CALIBRATE=1
 * sweeps the fusion weight α per embedder and prints `chooseLexicalWeight`'s choice, pooled over
 * every seed of RETRIEVAL_BENCH_SEED (a comma list, e.g. 1,3,4: the calibration split; 2 is held out).
 * RETRIEVAL_BENCH_DB_CACHE=DIR reuses an ingested database of the same size, seed, first embedder and
 * write-time sources (`bench/data/db-cache.ts`; the reported ingest time is the original one);
 * RETRIEVAL_BENCH_DUMP=DIR writes every question's top 10 per embedder and retrieval (`dumpResults`).
 * Dexie runs on fake-indexeddb (Node): absolute times are Node's, not Chrome's.
 */
import 'fake-indexeddb/auto';
import type { Embedder } from '../src/engines/types';
import { RecallDB } from '../src/db/schema';
import { createJobQueue } from '../src/jobs/queue';
import { storeEpisodes } from '../src/memory/long-term';
import { composeLongTermMemory } from '../src/memory/long-term/compose';
import { REEMBED_JOB } from '../src/memory/long-term/jobs';
import { createMemoryStore, type SearchOptions } from '../src/memory/long-term/store';
import { evaluateDataset, ingestDataset, type EvalSummary, type QuestionResult, type Retriever } from '../src/memory/long-term/retrieval/evaluate';
import { chooseLexicalWeight, chooseRobustLexicalWeight, fusionWeightsFor, type CalibrationMetrics } from '../src/memory/long-term/retrieval/fusion';
import { tokenize } from '../src/memory/long-term/retrieval/tokenize';
import { l2normalize } from '../src/memory/long-term/retrieval/vector';
import { loadVoy, voyResource } from '../src/memory/long-term/retrieval/voy';
import { createNodeEmbedder, missingFixture, type EmbedderName, type NamedEmbedder } from './data/embedders';
import { generateBenchmark } from './data/generate';
import { cacheFile, loadDatabase, saveDatabase } from './data/db-cache';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeVoyWasm } from './data/node-voy';
import Dexie, { type Table } from 'dexie';
import { defineBench } from './lib/bench';
import { formatMs } from './lib/stats';

/** A Voy snapshot as the rejected restore strategy would store it. */
interface SnapshotRecord {
  key: string;
  embeddingModel: string;
  count: number;
  serialized: string;
}

/** Bench-only database for the snapshot measurement. */
class SnapshotDB extends Dexie {
  snapshots!: Table<SnapshotRecord, string>;
  constructor(name: string) {
    super(name);
    this.version(1).stores({ snapshots: 'key' });
  }
}

type ModeResult = Omit<EvalSummary, 'ks'> & { overlapRecall1: number; overlapRecall5: number; noOverlapRecall5: number };

interface EmbedderResult {
  name: EmbedderName;
  modelId: string;
  description: string;
  /** How its vectors were made: at ingestion, or by the `ltm.reembed` job afterwards (seconds). */
  vectors: { via: 'ingestion' } | { via: 'ltm.reembed'; seconds: number };
  modes: Record<string, ModeResult>;
}

interface SizeResult {
  rounds: number;
  memories: number;
  ingestSeconds: number;
  embedders: EmbedderResult[];
  /** Questions sharing at least one index term (`tokenize`) with their evidence turn, and those sharing none. */
  overlapQuestions: number;
  noOverlapQuestions: number;
  restore: {
    embedder: EmbedderName;
    /** createMemoryStore over the filled database: read + lexical index + vector map, searchable (exact scan). */
    openMs: number;
    /** Until Voy holds every vector (background build after open). */
    voyBuildMs: number;
    snapshotBytes: number;
    serializeMs: number;
    deserializeMs: number;
    snapshotWriteMs: number;
    snapshotReadMs: number;
  };
}

const ms = (start: number) => performance.now() - start;

/** The embedders of this run; `model2vec` is dropped with a printed reason when ../shared is absent. */
function embedderNames(): EmbedderName[] {
  const names = (process.env.RETRIEVAL_BENCH_EMBEDDERS ?? 'fixture-bert,model2vec,glove,hashed')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as EmbedderName[];
  return names.filter((name) => {
    const missing = missingFixture(name);
    if (missing) {
      console.log(missing);
      return false;
    }
    if (name === 'none') {
      console.log('embedder "none" skipped: the benchmark compares vector and hybrid retrieval');
      return false;
    }
    return true;
  });
}

/** How the vector index can be restored when a context starts, over `db` (vectors of `embedder`). */
async function measureRestore(db: RecallDB, embedder: Embedder | null): Promise<Omit<SizeResult['restore'], 'embedder'>> {
  // createMemoryStore over the filled database: read + lexical index + vector map (searchable by exact scan).
  let started = performance.now();
  const reopened = await createMemoryStore({ db, embedder: () => embedder, loadVoyWasm: nodeVoyWasm });
  const openMs = ms(started);
  started = performance.now();
  await reopened.whenIndexed();
  const voyBuildMs = ms(started);
  const Voy = await loadVoy(nodeVoyWasm);
  const records = await db.memories.toArray();
  // The store's own Voy resources (`voyResource`: the vector plus a deterministic 1e-6 jitter):
  // raw vectors make Voy's k-d tree (kiddo) panic with "Too many items with the same position on
  // one axis" when many share a coordinate — the hashed embedder's sparse vectors, GloVe's
  // fallback vectors — which crashed this step when either embedder came first.
  const voy = new Voy({ embeddings: records.filter((r) => r.embedding).flatMap((r) => voyResource(r.id, l2normalize(r.embedding!)).embeddings) });
  started = performance.now();
  const serialized = voy.serialize();
  const serializeMs = ms(started);
  voy.free();
  // The rejected alternative, measured: a serialized Voy snapshot kept in IndexedDB (a table of its
  // own here — the product schema has none, see src/memory/long-term/store/).
  const snapshots = new SnapshotDB(`${db.name}-snapshots`);
  started = performance.now();
  await snapshots.snapshots.put({ key: 'bench', embeddingModel: embedder?.modelId ?? 'none', count: records.length, serialized });
  const snapshotWriteMs = ms(started);
  started = performance.now();
  const back = (await snapshots.snapshots.get('bench'))!.serialized;
  const snapshotReadMs = ms(started);
  started = performance.now();
  const restored = Voy.deserialize(back);
  const deserializeMs = ms(started);
  restored.free();
  await snapshots.delete();
  return { openMs, voyBuildMs, snapshotBytes: serialized.length, serializeMs, deserializeMs, snapshotWriteMs, snapshotReadMs };
}

async function runSize(rounds: number, seed: number, names: EmbedderName[]): Promise<SizeResult> {
  const data = generateBenchmark({ rounds, seed });
  const loaded: NamedEmbedder[] = [];
  const db = new RecallDB(`bench-retrieval-${rounds}-${crypto.randomUUID()}`);
  try {
    for (const name of names) loaded.push(await createNodeEmbedder(name));
    let current: Embedder | null = loaded[0]!.embedder;
    // RETRIEVAL_BENCH_DB_CACHE: reuse an earlier ingestion of the same data and write-time code (bench/data/db-cache.ts).
    const cacheDir = process.env.RETRIEVAL_BENCH_DB_CACHE;
    const cachePath = cacheDir ? cacheFile(cacheDir, { rounds, seed, embedder: names[0]! }) : null;
    const cached = cachePath ? await loadDatabase(db, cachePath) : null;
    // The store's clock follows the replayed conversation during ingestion (see `ingestDataset`).
    let replayNow = Date.now();
    const frozen = Date.now();
    const jobs = createJobQueue(db, { now: () => frozen });
    const { store, longTerm } = await composeLongTermMemory({ db, jobs, embedder: () => current, loadVoyWasm: nodeVoyWasm, storeNow: () => replayNow });
    await jobs.start();
    const ingest = cached
      ? { memories: cached.memories, ms: cached.ingestMs }
      : await ingestDataset(data, {
          db,
          jobs,
          longTerm,
          setTime: (t) => (replayNow = t),
          onProgress: (done, total) => process.stderr.write(`\r  ${rounds}: ingested ${done}/${total} turns`),
          storeEpisodes: (batch) => storeEpisodes({ store, db }, batch), // bulk mode: the episodic job's work, 25 rounds at a time
        });
    process.stderr.write(cached ? `  ${rounds}: restored ${cached.memories} memories from ${cachePath}\n` : '\n');
    await jobs.stop();
    await store.whenIndexed();
    if (cachePath && !cached) await saveDatabase(db, cachePath, { ingestMs: ingest.ms, memories: ingest.memories });

    // Which questions a purely lexical method could answer at all: they share an index term with the evidence.
    const turnText = new Map(data.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => [t.id, t.text] as const))));
    const overlap = new Set(
      data.questions
        .filter((q) => {
          const terms = new Set(tokenize(q.question));
          return q.evidence.some((id) => tokenize(turnText.get(id) ?? '').some((t) => terms.has(t)));
        })
        .map((q) => q.id),
    );
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

    const embedders: EmbedderResult[] = [];
    let restore: SizeResult['restore'] | null = null;
    for (const [index, named] of loaded.entries()) {
      let vectors: EmbedderResult['vectors'] = { via: 'ingestion' };
      if (index > 0) {
        // An embedding-model change, as the app handles it: the persisted re-embedding job.
        const started = performance.now();
        current = named.embedder;
        await jobs.start();
        await jobs.enqueue(REEMBED_JOB, { modelId: named.embedder!.modelId });
        await jobs.drain();
        await jobs.stop();
        await store.whenIndexed();
        const stats = store.indexStats();
        if (stats.vector.modelId !== named.embedder!.modelId || stats.vector.size !== stats.memories) {
          throw new Error(`Re-embedding with ${named.embedder!.modelId} left ${stats.vector.size}/${stats.memories} vectors of ${stats.vector.modelId}`);
        }
        vectors = { via: 'ltm.reembed', seconds: ms(started) / 1000 };
      }
      const store_ = (mode: SearchOptions['mode'], options?: SearchOptions): Retriever => ({
        kind: 'store',
        store,
        mode: mode!,
        ...(options ? { options } : {}),
      });
      const retrievers: [string, Retriever][] = [
        ['lexical', store_('lexical')],
        ['vector', store_('vector')],
        [APP_HYBRID, store_('hybrid')],
        [FACADE, { kind: 'facade', longTerm }],
      ];
      const modes: Record<string, ModeResult> = {};
      for (const [name, retriever] of retrievers) {
        const { summary, results } = await evaluateDataset(data, retriever, [1, 5, 10]);
        if (process.env.RETRIEVAL_BENCH_DUMP)
          dumpResults(process.env.RETRIEVAL_BENCH_DUMP, `${rounds}-seed${seed}-${names[index]}-${name}`, data, results, turnText);
        const { ks: _ks, ...rest } = summary;
        modes[name] = {
          ...rest,
          overlapRecall1: mean(results.filter((r) => overlap.has(r.id)).map((r) => r.recall[1]!)),
          overlapRecall5: mean(results.filter((r) => overlap.has(r.id)).map((r) => r.recall[5]!)),
          noOverlapRecall5: mean(results.filter((r) => !overlap.has(r.id)).map((r) => r.recall[5]!)),
        };
      }
      if (process.env.RETRIEVAL_BENCH_CALIBRATE === '1') {
        // Calibration of the convex fusion weight for this model (run it on the tuning seed, 1):
        // α from 0 to 1 in steps of 0.1, chosen by `chooseLexicalWeight` (see fusion.ts).
        const metricsOf = (m: Pick<EvalSummary, 'recall' | 'mrr'>): CalibrationMetrics => ({
          recall: { 1: m.recall[1]!, 5: m.recall[5]!, 10: m.recall[10]! },
          mrr: m.mrr,
        });
        const sweep: (CalibrationMetrics & { alpha: number })[] = [];
        for (let a = 0; a <= 10; a += 1) {
          const { summary } = await evaluateDataset(data, store_('hybrid', { fusion: { lexical: a / 10, vector: 1 - a / 10 } }), [1, 5, 10]);
          sweep.push({ alpha: a / 10, ...metricsOf(summary) });
        }
        const row = (m: CalibrationMetrics) =>
          `R@1 ${(m.recall[1] * 100).toFixed(1)} R@5 ${(m.recall[5] * 100).toFixed(1)} R@10 ${(m.recall[10] * 100).toFixed(1)} MRR ${m.mrr.toFixed(3)}`;
        const [lexical, vector] = [metricsOf(modes.lexical!), metricsOf(modes.vector!)];
        calibrations.push({ modelId: named.embedder!.modelId, seed, rounds, lexical, vector, sweep });
        console.log(
          `\ncalibration ${named.embedder!.modelId} (seed ${seed}, ${rounds} rounds): chosen α = ${chooseLexicalWeight(sweep, lexical, vector)}\n  lexical ${row(lexical)}\n  vector  ${row(vector)}\n  ${sweep.map((p) => `α=${p.alpha.toFixed(1)} ${row(p)}`).join('\n  ')}`,
        );
      }
      embedders.push({ name: names[index]!, modelId: named.embedder!.modelId, description: named.description, vectors, modes });
      // Restore is measured with the first embedder's vectors (the BERT fixture: 384-d, MiniLM's size).
      if (index === 0) restore = { embedder: names[0]!, ...(await measureRestore(db, named.embedder)) };
    }

    return {
      rounds,
      overlapQuestions: overlap.size,
      noOverlapQuestions: data.questions.length - overlap.size,
      memories: ingest.memories,
      ingestSeconds: ingest.ms / 1000,
      embedders,
      restore: restore!,
    };
  } finally {
    await db.delete();
    for (const named of loaded) await named.dispose();
  }
}

/**
 * RETRIEVAL_BENCH_DUMP=DIR: writes one JSON file per size, seed, embedder and retrieval (`<tag>.json`)
 * with every question, its evidence and stale turns' texts, the evidence rank and the top 10
 * (text, score, lexical/vector ranks), for reading the failures one by one.
 */
function dumpResults(dir: string, tag: string, data: ReturnType<typeof generateBenchmark>, results: QuestionResult[], turnText: Map<string, string>): void {
  mkdirSync(dir, { recursive: true });
  const byId = new Map(data.questions.map((q) => [q.id, q]));
  const rows = results.map((r) => ({
    id: r.id,
    category: r.category,
    question: r.question,
    evidenceRank: r.evidenceRank,
    staleRank: r.staleRank,
    updatedAboveStale: r.updatedAboveStale,
    evidence: r.evidence.map((id) => ({ id, text: turnText.get(id) })),
    stale: r.stale.map((id) => ({ id, text: turnText.get(id) })),
    date: byId.get(r.id)?.date,
    top: r.ranking.map((x) => ({ score: Number(x.score.toFixed(4)), ranks: x.ranks, sources: x.sourceMessageIds, text: x.text })),
  }));
  writeFileSync(join(dir, `${tag.replace(/[^\w.-]+/g, '_')}.json`), JSON.stringify(rows, null, 1));
}

/** One calibration sweep (`RETRIEVAL_BENCH_CALIBRATE=1`): one model on one seed and size. */
interface CalibrationRun {
  modelId: string;
  seed: number;
  rounds: number;
  lexical: CalibrationMetrics;
  vector: CalibrationMetrics;
  sweep: (CalibrationMetrics & { alpha: number })[];
}

/** The calibration sweeps of this run, in order. */
const calibrations: CalibrationRun[] = [];

/** Mean of metrics over runs (every seed has the same number of questions, so this is the pooled mean over all questions). */
function meanMetrics(ms: readonly CalibrationMetrics[]): CalibrationMetrics {
  const mean = (f: (m: CalibrationMetrics) => number) => ms.reduce((sum, m) => sum + f(m), 0) / ms.length;
  return { recall: { 1: mean((m) => m.recall[1]), 5: mean((m) => m.recall[5]), 10: mean((m) => m.recall[10]) }, mrr: mean((m) => m.mrr) };
}

/** Per model and size: α chosen by `chooseLexicalWeight` over the questions of every calibration seed pooled. */
function pooledCalibration(): string[] {
  const groups = new Map<string, CalibrationRun[]>();
  for (const c of calibrations) groups.set(`${c.modelId}\u0000${c.rounds}`, [...(groups.get(`${c.modelId}\u0000${c.rounds}`) ?? []), c]);
  return [...groups.values()].map((runs) => {
    const sweep = runs[0]!.sweep.map((p, i) => ({ alpha: p.alpha, ...meanMetrics(runs.map((r) => r.sweep[i]!)) }));
    const alpha = chooseLexicalWeight(sweep, meanMetrics(runs.map((r) => r.lexical)), meanMetrics(runs.map((r) => r.vector)));
    return `${runs[0]!.modelId}, ${runs[0]!.rounds} rounds, seeds ${runs.map((r) => r.seed).join('+')}: α = ${alpha}`;
  });
}

/** Per model: α chosen by `chooseRobustLexicalWeight` over every calibration split (each seed at each size). */
function robustCalibration(): string[] {
  const byModel = new Map<string, CalibrationRun[]>();
  for (const c of calibrations) byModel.set(c.modelId, [...(byModel.get(c.modelId) ?? []), c]);
  return [...byModel].map(([modelId, runs]) => {
    const alpha = chooseRobustLexicalWeight(runs);
    return `${modelId}, splits ${runs.map((r) => `${r.rounds}/seed ${r.seed}`).join(', ')}: α = ${alpha}`;
  });
}

/** The row of what the chat gets: the facade's retrieval (hybrid, then neighbour expansion: a unit counts its adjacent rounds' turns). */
const FACADE = 'hybrid via LongTermMemory.retrieve';

/** The row of the app's own hybrid retrieval (the store's default fusion). */
const APP_HYBRID = 'hybrid (convex, calibrated)';

const pct = (x: number | null) => (x === null ? '  n/a' : (x * 100).toFixed(1).padStart(5));

export default defineBench<{ sizes: number[] }>({
  name: 'retrieval',
  title: 'Long-term retrieval (recall@k, update ranking, latency, index restore)',
  method:
    'The bilingual benchmark of `bench/data/generate.ts` (seed 2, 113 questions: facts, updates, dated events, appointments, and dialog plants — answers in the next turn, paraphrases, relative times; two named speakers) ingested once per size through the real pipeline (job queue, episodic job, fake-indexeddb in Node), then asked with lexical-only, vector-only and hybrid retrieval, per embedder (the second one\'s vectors made by the `ltm.reembed` job). p50/p95 over the 113 questions. MRR = mean of 1/rank of the first evidence memory (0 beyond rank 10). Full method, embedders and analysis: "Long-term retrieval" below.',
  quick: { sizes: [1000] },
  full: { sizes: [1000, 10000] },
  async run(params) {
    const names = embedderNames();
    if (names.length === 0) throw new Error('No embedder to benchmark (RETRIEVAL_BENCH_EMBEDDERS)');
    const sizes = process.env.RETRIEVAL_BENCH_SIZES ? process.env.RETRIEVAL_BENCH_SIZES.split(',').map(Number) : params.sizes;
    // RETRIEVAL_BENCH_SEED may list several seeds when calibrating (pooled; the report shows the first).
    const [seed, ...calibrationSeeds] = (process.env.RETRIEVAL_BENCH_SEED ?? '2').split(',').map(Number) as [number, ...number[]];
    console.log(`embedders: ${names.join(', ')} (the first one's vectors are made at ingestion, the others' by the ltm.reembed job)\nseed: ${seed}`);
    const results: SizeResult[] = [];
    for (const rounds of sizes) {
      const r = await runSize(rounds, seed, names);
      results.push(r);
      console.log(`\n${r.memories} memories (${r.rounds} rounds), ingested once in ${r.ingestSeconds.toFixed(0)} s`);
      if (process.env.RETRIEVAL_BENCH_CALIBRATE === '1') for (const more of calibrationSeeds) await runSize(rounds, more, names);
    }
    if (calibrations.length > 0) {
      console.log(`\ncalibrated α (pooled over the calibration seeds):\n  ${pooledCalibration().join('\n  ')}`);
      console.log(`\ncalibrated α (chooseRobustLexicalWeight, every split):\n  ${robustCalibration().join('\n  ')}`);
    }
    const short = (e: EmbedderResult) => {
      const w = fusionWeightsFor(e.modelId);
      return `${e.name.replace('fixture-', '')} (α ${w.lexical})`;
    };
    return {
      tables: [
        {
          title: `Seed ${seed}; R@k and upd>stale in %, latency per question (query embedding included):`,
          columns: [
            'memories',
            'embedder',
            'retrieval',
            'R@1',
            'R@5',
            'R@10',
            'MRR',
            'upd>stale',
            'p50 ms',
            'p95 ms',
            'shared term: R@1 / R@5',
            'no shared term: R@5',
          ],
          rows: results.flatMap((r) =>
            r.embedders.flatMap((e) =>
              Object.entries(e.modes).map(([mode, m]) => [
                r.memories,
                short(e),
                mode,
                pct(m.recall[1]!).trim(),
                pct(m.recall[5]!).trim(),
                pct(m.recall[10]!).trim(),
                m.mrr.toFixed(3),
                pct(m.updatedAboveStale).trim(),
                formatMs(m.latency.p50),
                formatMs(m.latency.p95),
                `${pct(m.overlapRecall1).trim()} / ${pct(m.overlapRecall5).trim()}`,
                pct(m.noOverlapRecall5).trim(),
              ]),
            ),
          ),
        },
        {
          title: "By category (lexical, vector, the store's hybrid, and the facade's hybrid + neighbour expansion): R@1 / R@5 / R@10 in %, MRR (cut at 10):",
          columns: ['memories', 'embedder', 'category', 'questions', 'lexical', 'vector', 'hybrid', 'hybrid + neighbours (retrieve)'],
          rows: results.flatMap((r) =>
            r.embedders.flatMap((e) =>
              Object.entries(e.modes.lexical!.byCategory).map(([category, c]) => [
                r.memories,
                short(e),
                category,
                c.questions,
                ...['lexical', 'vector', APP_HYBRID, FACADE].map((mode) => {
                  const x = e.modes[mode]!.byCategory[category]!;
                  return `${pct(x.recall[1]!).trim()} / ${pct(x.recall[5]!).trim()} / ${pct(x.recall[10]!).trim()}, ${x.mrr.toFixed(2)}`;
                }),
              ]),
            ),
          ),
        },
        {
          title: "Ingestion, re-embedding and index restore (first embedder's vectors):",
          columns: ['memories', 'ingest s', 're-embed s', 'open store ms', 'Voy build ms', 'Voy snapshot', 'serialize ms', 'deserialize ms'],
          rows: results.map((r) => {
            const re = r.embedders.find((e) => e.vectors.via === 'ltm.reembed')?.vectors;
            const x = r.restore;
            return [
              r.memories,
              r.ingestSeconds.toFixed(0),
              re && re.via === 'ltm.reembed' ? re.seconds.toFixed(1) : '–',
              formatMs(x.openMs),
              formatMs(x.voyBuildMs),
              `${(x.snapshotBytes / 1e6).toFixed(1)} MB`,
              formatMs(x.serializeMs),
              formatMs(x.deserializeMs),
            ];
          }),
        },
      ],
      notes: [
        ...(process.env.RETRIEVAL_BENCH_SIZES ? [`Sizes ${sizes.join(', ')} from RETRIEVAL_BENCH_SIZES (instead of the parameters above).`] : []),
        ...(sizes.includes(10000)
          ? []
          : ['10k rounds: `npm run bench -- retrieval --full` (ingesting them takes about 10 minutes here: 573 s of a 693 s run on 2026-12-01).']),
      ],
      raw: { embedders: names, seed, results },
    };
  },
});
