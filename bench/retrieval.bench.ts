/**
 * Long-term retrieval benchmark (`npm run bench -- retrieval`).
 *
 * For 1k and 10k memories: generates the bilingual benchmark (bench/data/generate.ts, seed 2),
 * ingests it through the real pipeline (createLongTermMemory + persisted job queue + episodic
 * job, drained; no LLM in Node, so every round is an episodic memory), then asks the questions
 * with lexical-only, vector-only and hybrid retrieval (`store.search` modes) and through the
 * facade. Reports recall@1/5/10, the updated-above-stale rate, latency, and at each size how the
 * vector index can be restored when a context starts: rebuilding from the stored embeddings vs
 * deserializing a Voy snapshot (size, serialize/deserialize time, snapshot write/read in Dexie).
 *
 * Environment: RETRIEVAL_BENCH_EMBEDDER = fixture-bert (default) | model2vec | hashed;
 * RETRIEVAL_BENCH_SIZES = comma-separated sizes (default 1000,10000); RETRIEVAL_BENCH_SEED (2).
 * Dexie runs on fake-indexeddb (Node): absolute times are Node's, not Chrome's.
 */
import 'fake-indexeddb/auto';
import { RecallDB } from '../src/db/schema';
import { createJobQueue } from '../src/jobs/queue';
import { createLongTermMemory, registerEpisodicJobs } from '../src/memory/long-term';
import { registerExtractionJobs } from '../src/memory/long-term/jobs';
import { createMemoryStore } from '../src/memory/long-term/store';
import { evaluateDataset, ingestDataset, type EvalSummary } from '../src/memory/long-term/retrieval/evaluate';
import { tokenize } from '../src/memory/long-term/retrieval/tokenize';
import { l2normalize } from '../src/memory/long-term/retrieval/vector';
import { loadVoy } from '../src/memory/long-term/retrieval/voy';
import { createNodeEmbedder, type EmbedderName } from './data/embedders';
import { generateBenchmark } from './data/generate';
import { nodeVoyWasm } from './data/node-voy';

interface SizeResult {
  rounds: number;
  memories: number;
  ingestSeconds: number;
  modes: Record<string, Omit<EvalSummary, 'ks'> & { overlapRecall5: number; noOverlapRecall5: number }>;
  /** Questions sharing at least one index term (`tokenize`) with their evidence turn, and those sharing none. */
  overlapQuestions: number;
  noOverlapQuestions: number;
  restore: {
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

async function runSize(rounds: number, seed: number, embedderName: EmbedderName): Promise<SizeResult> {
  const data = generateBenchmark({ rounds, seed });
  const named = await createNodeEmbedder(embedderName);
  const db = new RecallDB(`bench-retrieval-${rounds}-${crypto.randomUUID()}`);
  try {
    const store = await createMemoryStore({ db, embedder: () => named.embedder, loadVoyWasm: nodeVoyWasm });
    const frozen = Date.now();
    const jobs = createJobQueue(db, { now: () => frozen });
    registerEpisodicJobs(jobs, { store, db });
    registerExtractionJobs(jobs, { db, store, engine: () => null });
    const longTerm = createLongTermMemory({ store, jobs, db });
    await jobs.start();
    const ingest = await ingestDataset(data, {
      db,
      jobs,
      longTerm,
      onProgress: (done, total) => process.stderr.write(`\r  ${rounds}: ingested ${done}/${total} turns`),
    });
    process.stderr.write('\n');
    await jobs.stop();
    await store.whenIndexed();

    // Which questions a purely lexical method could answer at all: they share an index term with the evidence.
    const turnText = new Map(data.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => [t.id, t.text] as const))));
    const overlap = new Set(
      data.questions.filter((q) => {
        const terms = new Set(tokenize(q.question));
        return q.evidence.some((id) => tokenize(turnText.get(id) ?? '').some((t) => terms.has(t)));
      }).map((q) => q.id),
    );
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    const modes: SizeResult['modes'] = {};
    const retrievers = [
      ['lexical', { kind: 'store', store, mode: 'lexical' }],
      ['vector', { kind: 'store', store, mode: 'vector' }],
      ['hybrid', { kind: 'store', store, mode: 'hybrid' }],
      ['hybrid via LongTermMemory.retrieve', { kind: 'facade', longTerm }],
    ] as const;
    for (const [name, retriever] of retrievers) {
      const { summary, results } = await evaluateDataset(data, retriever, [1, 5, 10]);
      const { ks: _ks, ...rest } = summary;
      modes[name] = {
        ...rest,
        overlapRecall5: mean(results.filter((r) => overlap.has(r.id)).map((r) => r.recall[5]!)),
        noOverlapRecall5: mean(results.filter((r) => !overlap.has(r.id)).map((r) => r.recall[5]!)),
      };
    }

    // ── index restore: rebuild from stored embeddings vs a Voy snapshot ──
    let started = performance.now();
    const reopened = await createMemoryStore({ db, embedder: () => named.embedder, loadVoyWasm: nodeVoyWasm });
    const openMs = ms(started);
    started = performance.now();
    await reopened.whenIndexed();
    const voyBuildMs = ms(started);
    const Voy = await loadVoy(nodeVoyWasm);
    const records = await db.memories.toArray();
    const voy = new Voy({ embeddings: records.filter((r) => r.embedding).map((r) => ({ id: r.id, title: '', url: '', embeddings: Array.from(l2normalize(r.embedding!)) })) });
    started = performance.now();
    const serialized = voy.serialize();
    const serializeMs = ms(started);
    voy.free();
    started = performance.now();
    await db.vectorSnapshots.put({ key: 'bench', embeddingModel: named.embedder?.modelId ?? 'none', dimension: named.embedder?.dimension ?? 0, count: records.length, watermark: 0, serialized, updatedAt: Date.now() });
    const snapshotWriteMs = ms(started);
    started = performance.now();
    const back = (await db.vectorSnapshots.get('bench'))!.serialized;
    const snapshotReadMs = ms(started);
    started = performance.now();
    const restored = Voy.deserialize(back);
    const deserializeMs = ms(started);
    restored.free();
    await db.vectorSnapshots.delete('bench');

    return {
      rounds,
      overlapQuestions: overlap.size,
      noOverlapQuestions: data.questions.length - overlap.size,
      memories: ingest.memories,
      ingestSeconds: ingest.ms / 1000,
      modes,
      restore: { openMs, voyBuildMs, snapshotBytes: serialized.length, serializeMs, deserializeMs, snapshotWriteMs, snapshotReadMs },
    };
  } finally {
    await db.delete();
    await named.dispose();
  }
}

const pct = (x: number | null) => (x === null ? '  n/a' : (x * 100).toFixed(1).padStart(5));

export default {
  name: 'long-term retrieval (recall@k, update ranking, latency, index restore)',
  async run() {
    const embedderName = (process.env.RETRIEVAL_BENCH_EMBEDDER ?? 'fixture-bert') as EmbedderName;
    const sizes = (process.env.RETRIEVAL_BENCH_SIZES ?? '1000,10000').split(',').map(Number);
    const seed = Number(process.env.RETRIEVAL_BENCH_SEED ?? 2);
    const description = (await (async () => {
      const named = await createNodeEmbedder(embedderName);
      await named.dispose();
      return named.description;
    })());
    console.log(`embedder: ${description}\nseed: ${seed}`);
    const results: SizeResult[] = [];
    for (const rounds of sizes) {
      const r = await runSize(rounds, seed, embedderName);
      results.push(r);
      console.log(`\n${r.memories} memories (${r.rounds} rounds), ingested in ${r.ingestSeconds.toFixed(0)} s`);
      console.log(`  ${'mode'.padEnd(34)} R@1   R@5  R@10  upd>stale  p50 ms  p95 ms  | R@5 by category; R@5 with/without a shared term (${r.overlapQuestions}/${r.noOverlapQuestions} questions)`);
      for (const [mode, s] of Object.entries(r.modes)) {
        const cats = Object.entries(s.byCategory).map(([c, v]) => `${c} ${pct(v.recall[5]!).trim()}`).join(', ');
        console.log(`  ${mode.padEnd(34)}${pct(s.recall[1]!)} ${pct(s.recall[5]!)} ${pct(s.recall[10]!)}  ${pct(s.updatedAboveStale)}     ${s.latency.p50.toFixed(1).padStart(6)}  ${s.latency.p95.toFixed(1).padStart(6)}  | ${cats}; ${pct(s.overlapRecall5).trim()} / ${pct(s.noOverlapRecall5).trim()}`);
      }
      const x = r.restore;
      console.log(
        `  restore: open ${x.openMs.toFixed(0)} ms + Voy build ${x.voyBuildMs.toFixed(0)} ms (background) | snapshot ${(x.snapshotBytes / 1e6).toFixed(1)} MB: serialize ${x.serializeMs.toFixed(0)} ms, write ${x.snapshotWriteMs.toFixed(0)} ms, read ${x.snapshotReadMs.toFixed(0)} ms, deserialize ${x.deserializeMs.toFixed(0)} ms`,
      );
    }
    return { embedder: description, seed, results };
  },
};
