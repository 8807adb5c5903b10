/**
 * Import throughput (`npm run bench -- import`, issue 9 item 5):
 * - **Chromium**: the production build in real headless Chromium with a 384-d fixture embedding
 *   model packaged (nothing downloaded, so imported vectors of that model are kept), one profile
 *   per kind. A backup of N messages (20 conversations, written by the backup writer, see
 *   `messagesFileJson`) or of N episodic memories with 384-d vectors (`seedMemories`) is staged in
 *   OPFS `backups/` (not timed) and imported through the core's own `memory.import`, timed in the
 *   panel page around the request; then everything is erased (`memory.eraseAll`) and the core
 *   left to settle before the next run. CPU: the user + system time of the whole Chromium process
 *   tree (browser process with its IndexedDB backend, the offscreen document, …) from
 *   `/proc/<pid>/stat` over the same span (Linux only).
 * - **Node**: `ingestDataset` in bulk mode (what `eval:retrieval` and the retrieval bench use:
 *   `storeEpisodes` over `composeLongTermMemory`, fake-indexeddb) of the generator's conversation
 *   (seed 1) sized to give about N memories; wall and `process.cpuUsage()` (all threads).
 * Every number is the median / p95 of `runs` runs.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { callCore, launchExtension, PACKAGED_EMBEDDING_MODEL, startCountingProxy, waitForJobsIdle } from '../tests/e2e/harness';
import { writeBertFixtureModel } from '../tests/helpers/fixture-models';
import type { ImportReport } from '../src/model/backup';
import { RecallDB } from '../src/db/schema';
import { createJobQueue } from '../src/jobs/queue';
import { storeEpisodes } from '../src/memory/long-term';
import { composeLongTermMemory } from '../src/memory/long-term/compose';
import { ingestDataset } from '../src/memory/long-term/retrieval/evaluate';
import { defineBench, type HeadlineRow } from './lib/bench';
import { formatMs, summarize, type Summary } from './lib/stats';
import { importFileJson, messagesFileJson, seedMemories } from './data/memory-file';
import { generateBenchmark } from './data/generate';
import { createNodeEmbedder, type EmbedderName } from './data/embedders';
import { nodeVoyWasm } from './data/node-voy';

/** Parameters: backup sizes imported in Chromium, memories ingested in Node (and with which embedder), runs per measurement. */
interface ImportParams {
  messages: number[];
  memories: number[];
  node: { memories: number[]; embedder: EmbedderName };
  runs: number;
}

const DIMENSION = 384;
/** Targets of issue 9: Chromium 10k messages ≤ 10 s; Node 10k memories ≤ 60 s. */
const CHROMIUM_TARGET_MS = 10_000;
const NODE_TARGET_MS = 60_000;

interface Measured {
  what: string;
  size: number;
  wall: Summary;
  cpu: Summary;
  records: number;
}

/** CPU time (ms) of every process whose command line names `marker` (the profile dir), and their descendants. */
function processTreeCpuMs(marker: string): number {
  const procs = new Map<number, { ppid: number; ticks: number; mine: boolean }>();
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const fields = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ');
      procs.set(Number(d), {
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
        mine: readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker),
      });
    } catch {
      // the process ended meanwhile
    }
  }
  let ticks = 0;
  for (const [pid, p] of procs) {
    for (let cur: number | undefined = pid, depth = 0; cur && depth < 32; depth += 1) {
      const q = procs.get(cur);
      if (!q) break;
      if (q.mine) {
        ticks += p.ticks;
        break;
      }
      cur = q.ppid;
    }
  }
  return ticks * 10; // USER_HZ = 100 on Linux
}

/** In-page script (source text: tsx would wrap a function with its `__name` helper) staging a file in OPFS `backups/`. */
const STAGE = `async ({ name, json }) => {
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('backups', { create: true });
  const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
  await w.write(json);
  await w.close();
}`;

/** In-page script timing one `memory.import` (page clock, ms). */
const IMPORT = `async ({ fileName }) => {
  const t0 = performance.now();
  const reply = await chrome.runtime.sendMessage({ id: Math.floor(Math.random() * 1e9), type: 'memory.import', data: { fileName }, timestamp: Date.now() });
  if (reply?.err) throw new Error('memory.import: ' + (reply.err.message ?? JSON.stringify(reply.err)));
  return { ms: performance.now() - t0, report: reply.res };
}`;

/** Waits until the packaged embedder is ready and the job queue idle. */
async function settle(page: Page): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    const status = await callCore<{ embedder: { state: string; error: string | null } }>(page, 'engine.status');
    if (status.embedder.state === 'error') throw new Error(`the packaged embedder failed: ${status.embedder.error}`);
    if (status.embedder.state === 'ready') break;
    await page.waitForTimeout(250);
  }
  await waitForJobsIdle(page, 300_000);
}

/** `runs` imports of `json` (records = what the report must count as added) into a fresh profile, erased between runs. */
async function chromiumImports(
  extensionDir: string,
  what: string,
  size: number,
  json: string,
  records: number,
  runs: number,
  log: (l: string) => void,
): Promise<Measured> {
  const profile = mkdtempSync(join(tmpdir(), 'recall-bench-import-'));
  const proxy = await startCountingProxy();
  const browser = await launchExtension({ extensionDir, userDataDir: profile, proxyPort: proxy.port });
  const wall: number[] = [];
  const cpu: number[] = [];
  try {
    const page = await browser.openPanel();
    await callCore(page, 'core.ensure');
    await settle(page);
    for (let run = 0; run < runs; run += 1) {
      const fileName = `bench-import-${run}.json`;
      await page.evaluate(`(${STAGE})(${JSON.stringify({ name: fileName, json })})`);
      const cpu0 = processTreeCpuMs(profile);
      const { ms, report } = (await page.evaluate(`(${IMPORT})(${JSON.stringify({ fileName })})`)) as { ms: number; report: ImportReport };
      cpu.push(processTreeCpuMs(profile) - cpu0);
      wall.push(ms);
      if (report.added !== records) throw new Error(`${what}: the import added ${report.added} records, not ${records}`);
      log(`  ${what} ${size}: run ${run + 1}/${runs}: ${ms.toFixed(0)} ms, CPU ${cpu.at(-1)} ms`);
      await callCore(page, 'memory.eraseAll');
      await settle(page);
    }
  } finally {
    await browser.close().catch(() => undefined);
    await proxy.close();
    rmSync(profile, { recursive: true, force: true });
  }
  return { what, size, wall: summarize(wall), cpu: summarize(cpu), records };
}

/** `runs` bulk ingestions (a fresh database each) of the generated conversation sized for about `memories` memories. */
async function nodeIngests(memories: number, embedderName: EmbedderName, runs: number, log: (l: string) => void): Promise<Measured> {
  // About 97 % of the generator's rounds are distinct texts (measured: 10,000 rounds → 9,730 memories).
  const data = generateBenchmark({ rounds: Math.round(memories / 0.973), seed: 1 });
  const named = await createNodeEmbedder(embedderName);
  const wall: number[] = [];
  const cpu: number[] = [];
  let stored = 0;
  try {
    for (let run = 0; run < runs; run += 1) {
      const db = new RecallDB(`bench-import-node-${crypto.randomUUID()}`);
      try {
        let replayNow = Date.now();
        const frozen = Date.now();
        const jobs = createJobQueue(db, { now: () => frozen });
        const { store, longTerm } = await composeLongTermMemory({
          db,
          jobs,
          embedder: () => named.embedder,
          loadVoyWasm: nodeVoyWasm,
          storeNow: () => replayNow,
        });
        await jobs.start();
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const ingest = await ingestDataset(data, {
          db,
          jobs,
          longTerm,
          setTime: (t) => (replayNow = t),
          storeEpisodes: (b) => storeEpisodes({ store, db }, b),
        });
        await store.whenIndexed();
        wall.push(performance.now() - t0);
        const used = process.cpuUsage(cpu0);
        cpu.push((used.user + used.system) / 1000);
        stored = ingest.memories;
        await jobs.stop();
        await store.flushSnapshot();
        log(`  node ingest ${stored} memories (${embedderName}): run ${run + 1}/${runs}: ${wall.at(-1)!.toFixed(0)} ms, CPU ${cpu.at(-1)!.toFixed(0)} ms`);
      } finally {
        await db.delete();
      }
    }
  } finally {
    await named.dispose();
  }
  return { what: `Node ingest (${embedderName} embedder)`, size: stored, wall: summarize(wall), cpu: summarize(cpu), records: stored };
}

const ms = (s: Summary) => `${formatMs(s.median)} / ${formatMs(s.p95)}`;

export default defineBench<ImportParams>({
  name: 'import',
  title: 'Import throughput (Chromium backups, Node ingestion)',
  method:
    "**Chromium**: the production build in real headless Chromium (Debian) with a 384-d fixture embedding model packaged (nothing downloaded). A backup of N messages in 20 conversations (written by the backup writer, `exportAll`) or of N episodic memories with seeded random 384-d unit vectors of the packaged model (`bench/data/memory-file.ts`) is staged in OPFS `backups/` (not timed) and imported through the core's own `memory.import`: time in the panel page around the request; CPU = user + system time of the whole Chromium process tree (IndexedDB backend included) from `/proc` over the same span. The store is erased and the core left to settle between runs. **Node**: `ingestDataset` in bulk mode (what `eval:retrieval` and the retrieval bench use: `storeEpisodes` through `composeLongTermMemory`, fake-indexeddb) of the generator's conversation (seed 1) sized for about N memories, a fresh database per run; wall and `process.cpuUsage()` (all threads). Median / p95 of the runs; wall times depend on the machine's load, CPU times much less.",
  quick: { messages: [10_000], memories: [10_000], node: { memories: [10_000], embedder: 'hashed' }, runs: 5 },
  full: { messages: [10_000, 100_000], memories: [10_000, 100_000], node: { memories: [10_000], embedder: 'fixture-bert' }, runs: 5 },
  async run(params, ctx) {
    const dir = mkdtempSync(join(tmpdir(), 'recall-bench-import-ext-'));
    cpSync(await ctx.buildDir(), dir, { recursive: true });
    mkdirSync(join(dir, 'models'), { recursive: true });
    await writeBertFixtureModel(join(dir, 'models', PACKAGED_EMBEDDING_MODEL), PACKAGED_EMBEDDING_MODEL, { dimension: DIMENSION });
    writeFileSync(join(dir, 'models', 'packaged.json'), JSON.stringify({ embeddingModelId: PACKAGED_EMBEDDING_MODEL }));
    const results: Measured[] = [];
    try {
      for (const n of params.messages) {
        const conversations = 20;
        results.push(
          await chromiumImports(dir, 'Chromium import, messages', n, await messagesFileJson(n, conversations), n + conversations, params.runs, ctx.log),
        );
      }
      for (const n of params.memories) {
        const json = importFileJson(seedMemories(n, { dimension: DIMENSION, embeddingModel: PACKAGED_EMBEDDING_MODEL }));
        // `added` counts the memories (their IMPORT history records are not counted).
        results.push(await chromiumImports(dir, 'Chromium import, memories (384-d)', n, json, n, params.runs, ctx.log));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    for (const n of params.node.memories) results.push(await nodeIngests(n, params.node.embedder, params.runs, ctx.log));
    const headline: HeadlineRow[] = results
      .filter((r) => r.size >= 9_000 && r.size <= 11_000)
      .map((r) => {
        const target = r.what.startsWith('Node') ? NODE_TARGET_MS : CHROMIUM_TARGET_MS;
        return {
          what: `${r.what}, ${r.size} (median)`,
          measured: `${formatMs(r.wall.median)} ms (CPU ${formatMs(r.cpu.median)} ms)`,
          reference: `target ${formatMs(target)} ms`,
          ratio: r.wall.median / target,
        };
      });
    return {
      tables: [
        {
          title: `Import and ingestion, median / p95 of ${params.runs} runs:`,
          columns: ['what', 'size', 'records written', 'wall ms', 'CPU ms', 'records per s (median wall)'],
          rows: results.map((r) => [r.what, r.size, r.records, ms(r.wall), ms(r.cpu), Math.round(r.records / (r.wall.median / 1000))]),
        },
      ],
      headline,
      raw: results,
    };
  },
});
