/**
 * Import throughput (`npm run bench -- import`, issue 9 items 4–5):
 * - **Chromium**: the production build in real headless Chromium with a 384-d fixture embedding
 *   model packaged (nothing downloaded, so imported vectors of that model are kept), ONE browser
 *   launch for every case. A backup of N messages (20 conversations, written by the backup writer,
 *   see `messagesFileJson`) or of N episodic memories with 384-d vectors (`seedMemories`) is handed
 *   to the panel page once per case, staged from there in OPFS `backups/` before each run (not
 *   timed) and imported through the core's own `memory.import`, timed in the panel page around the
 *   request; then everything is erased (`memory.eraseAll`) and the core left to settle before the
 *   next run. CPU: the user + system time of the whole Chromium process tree (browser process with
 *   its IndexedDB backend, the offscreen document, …) from `/proc/<pid>/stat` over the same span
 *   (Linux only). After each memories import (core settled): the warm **Memory-tab search**, the
 *   panel's own `memory.list` with a search, different queries every run.
 *   `IMPORT_PROFILE_DIR=<dir>` adds one unrecorded memories import under a CPU profile of the
 *   offscreen document (`<dir>/import-<N>.cpuprofile`).
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
import { profileOffscreen } from './lib/offscreen';
import { MEMORY_LIST_PAGE_SIZE } from '../src/model/memory';

/** Parameters: backup sizes imported in Chromium, memories ingested in Node (and with which embedder), runs per measurement. */
interface ImportParams {
  messages: number[];
  memories: number[];
  node: { memories: number[]; embedder: EmbedderName };
  runs: number;
  /** Memory-tab searches timed after each memories import (different queries every time). */
  searchesPerRun: number;
}

const DIMENSION = 384;
/** Targets of issue 9: Chromium 10k messages ≤ 10 s; Node 10k memories ≤ 60 s. */
const CHROMIUM_TARGET_MS = 10_000;
const NODE_TARGET_MS = 60_000;
/** Target of issue 9: the Memory-tab search at 10k memories. */
const MEMORY_TAB_TARGET_MS = 50;

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

/**
 * In-page script (source text: tsx would wrap a function with its `__name` helper): keeps `json`
 * in the page's memory under `key` (one transfer per case, not per run).
 */
const HOLD = `async ({ key, json }) => {
  (globalThis.__benchFiles ??= {})[key] = json;
}`;

/** In-page script staging the held file `key` as `name` in OPFS `backups/`; false when the page no longer holds it. */
const STAGE = `async ({ key, name }) => {
  const json = globalThis.__benchFiles?.[key];
  if (json === undefined) return false;
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('backups', { create: true });
  const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
  await w.write(json);
  await w.close();
  return true;
}`;

/** In-page script timing one `memory.import` (page clock, ms). */
const IMPORT = `async ({ fileName }) => {
  const t0 = performance.now();
  const reply = await chrome.runtime.sendMessage({ id: Math.floor(Math.random() * 1e9), type: 'memory.import', data: { fileName }, timestamp: Date.now() });
  if (reply?.err) throw new Error('memory.import: ' + (reply.err.message ?? JSON.stringify(reply.err)));
  return { ms: performance.now() - t0, report: reply.res };
}`;

/**
 * In-page script timing Memory-tab searches: the panel's own request (`memory.list` with a search,
 * valid memories of every kind, one more than the page size: `ui/state/memory.svelte.ts`), one
 * query after another (page clock, ms).
 */
const SEARCH = `async ({ queries, limit }) => {
  const out = [];
  for (const search of queries) {
    const t0 = performance.now();
    const reply = await chrome.runtime.sendMessage({ id: Math.floor(Math.random() * 1e9), type: 'memory.list', data: { namespace: 'default', search, includeInvalid: false, limit }, timestamp: Date.now() });
    const ms = performance.now() - t0;
    if (reply?.err) throw new Error('memory.list: ' + (reply.err.message ?? JSON.stringify(reply.err)));
    out.push({ ms, hits: reply.res.length, withEmbedding: reply.res.filter((m) => 'embedding' in m).length });
  }
  return out;
}`;

/** Waits until the packaged embedder is ready and the job queue idle. */
async function settle(page: Page): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    const status = await callCore<{ embedder: { state: string; error: string | null } }>(page, 'engine.status');
    if (status.embedder.state === 'error') throw new Error(`the packaged embedder failed: ${status.embedder.error}`);
    if (status.embedder.state === 'ready') break;
    await page.waitForTimeout(100);
  }
  await waitForJobsIdle(page, 300_000);
}

/** One kind of backup imported `runs` times in the shared browser. */
interface ImportCase {
  what: string;
  size: number;
  /** The backup file's JSON. */
  json: () => Promise<string>;
  /** What the report must count as added. */
  records: number;
  /** Memory-tab search queries after each import (none: not measured for this case). */
  searches: string[][];
}

/** Memory-tab search timings (warm: after the import and the core settled). */
interface SearchMeasured {
  size: number;
  wall: Summary;
  queries: number;
  /** Fewest memories one query listed (each query must list some). */
  minHits: number;
  /** Memories listed with an `embedding` field (must be 0: vectors never leave the core). */
  withEmbedding: number;
}

/**
 * `runs` imports of every case in ONE browser on one profile (launched once; the store erased with
 * `memory.eraseAll` and the core settled after every run), and for the cases with `searches` the
 * Memory-tab searches after each import. With `profileDir`, one more unrecorded import of the first
 * case with searches runs first under a CPU profile of the offscreen document
 * (`<profileDir>/import-<size>.cpuprofile`).
 */
async function chromiumImports(
  extensionDir: string,
  cases: ImportCase[],
  runs: number,
  log: (l: string) => void,
  profileDir: string | null,
): Promise<{ imports: Measured[]; searches: SearchMeasured[] }> {
  const profile = mkdtempSync(join(tmpdir(), 'recall-bench-import-'));
  const proxy = await startCountingProxy();
  const browser = await launchExtension({ extensionDir, userDataDir: profile, proxyPort: proxy.port });
  const imports: Measured[] = [];
  const searches: SearchMeasured[] = [];
  try {
    const page = await browser.openPanel();
    await callCore(page, 'core.ensure');
    await settle(page);
    let fileNo = 0;
    for (const c of cases) {
      const key = `${c.what} ${c.size}`;
      const json = await c.json();
      await page.evaluate(`(${HOLD})(${JSON.stringify({ key, json })})`);
      const importOnce = async () => {
        const fileName = `bench-import-${(fileNo += 1)}.json`;
        // The page still holds the file unless it was reloaded meanwhile: then it is sent again.
        if (!(await page.evaluate(`(${STAGE})(${JSON.stringify({ key, name: fileName })})`))) {
          await page.evaluate(`(${HOLD})(${JSON.stringify({ key, json })})`);
          await page.evaluate(`(${STAGE})(${JSON.stringify({ key, name: fileName })})`);
        }
        const cpu0 = processTreeCpuMs(profile);
        const { ms, report } = (await page.evaluate(`(${IMPORT})(${JSON.stringify({ fileName })})`)) as { ms: number; report: ImportReport };
        const cpu = processTreeCpuMs(profile) - cpu0;
        if (report.added !== c.records) throw new Error(`${c.what}: the import added ${report.added} records, not ${c.records}`);
        return { ms, cpu };
      };
      const reset = async () => {
        await callCore(page, 'memory.eraseAll');
        await settle(page);
      };
      if (profileDir && c.searches.length > 0) {
        mkdirSync(profileDir, { recursive: true });
        const file = join(profileDir, `import-${c.size}.cpuprofile`);
        const { ms } = await profileOffscreen(browser, file, importOnce);
        log(`  ${c.what} ${c.size}: profiled import (not recorded) ${ms.toFixed(0)} ms → ${file}`);
        await reset();
      }
      const wall: number[] = [];
      const cpu: number[] = [];
      const tab: number[] = [];
      let minHits = Infinity;
      let withEmbedding = 0;
      for (let run = 0; run < runs; run += 1) {
        const t = await importOnce();
        wall.push(t.ms);
        cpu.push(t.cpu);
        let line = `  ${c.what} ${c.size}: run ${run + 1}/${runs}: ${t.ms.toFixed(0)} ms, CPU ${t.cpu} ms`;
        const queries = c.searches[run] ?? [];
        if (queries.length > 0) {
          await settle(page);
          const found = (await page.evaluate(`(${SEARCH})(${JSON.stringify({ queries, limit: MEMORY_LIST_PAGE_SIZE + 1 })})`)) as {
            ms: number;
            hits: number;
            withEmbedding: number;
          }[];
          tab.push(...found.map((f) => f.ms));
          minHits = Math.min(minHits, ...found.map((f) => f.hits));
          withEmbedding += found.reduce((n, f) => n + f.withEmbedding, 0);
          line += `; Memory-tab search ${found.map((f) => f.ms.toFixed(0)).join(', ')} ms`;
        }
        log(line);
        await reset();
      }
      imports.push({ what: c.what, size: c.size, wall: summarize(wall), cpu: summarize(cpu), records: c.records });
      if (tab.length > 0) {
        if (minHits === 0) throw new Error(`${c.what}: a Memory-tab search listed no memory`);
        searches.push({ size: c.size, wall: summarize(tab), queries: tab.length, minHits, withEmbedding });
      }
    }
  } finally {
    await browser.close().catch(() => undefined);
    await proxy.close();
    rmSync(profile, { recursive: true, force: true });
  }
  return { imports, searches };
}

/**
 * `runs × perRun` distinct Memory-tab queries over `memories`: two words (4+ letters) of the user
 * side of memories spread over the set, as typed into the search box.
 */
function tabQueries(memories: readonly { text: string }[], runs: number, perRun: number): string[][] {
  const out: string[][] = [];
  const seen = new Set<string>();
  let i = 0;
  for (let run = 0; run < runs; run += 1) {
    const queries: string[] = [];
    while (queries.length < perRun && i < memories.length * 4) {
      const text = memories[(i * 7919) % memories.length]!.text;
      i += 1;
      const words =
        (text.split('\n')[0] ?? '')
          .replace(/^User: /, '')
          .toLowerCase()
          .match(/\p{L}{4,}/gu) ?? [];
      const query = words.slice(0, 2).join(' ');
      if (words.length < 2 || seen.has(query)) continue;
      seen.add(query);
      queries.push(query);
    }
    out.push(queries);
  }
  return out;
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
    "**Chromium**: the production build in real headless Chromium (Debian) with a 384-d fixture embedding model packaged (nothing downloaded), one browser launched once for every case. A backup of N messages in 20 conversations (written by the backup writer, `exportAll`) or of N episodic memories with seeded random 384-d unit vectors of the packaged model (`bench/data/memory-file.ts`) is handed to the panel page once per case and staged from there into OPFS `backups/` before each run (not timed), then imported through the core's own `memory.import`: time in the panel page around the request; CPU = user + system time of the whole Chromium process tree (IndexedDB backend included) from `/proc` over the same span. After each memories import the core is left to settle and the **Memory-tab search** is timed: the panel's own request (`memory.list` with a search, valid memories, `MEMORY_LIST_PAGE_SIZE` + 1), `searchesPerRun` different two-word queries per run (words of the imported memories), one after another, in the page. The store is erased (`memory.eraseAll`) and the core left to settle after every run. **Node**: `ingestDataset` in bulk mode (what `eval:retrieval` and the retrieval bench use: `storeEpisodes` through `composeLongTermMemory`, fake-indexeddb) of the generator's conversation (seed 1) sized for about N memories, a fresh database per run; wall and `process.cpuUsage()` (all threads). Median / p95 of the runs (of the queries for the search); wall times depend on the machine's load, CPU times much less.",
  // The quick run ingests 2k memories in Node (5 × ~5 s; 10k takes 5 × ~30 s, too much of the quick run's 10 min); `--full` measures the 10k target.
  quick: { messages: [10_000], memories: [10_000], node: { memories: [2_000], embedder: 'hashed' }, runs: 5, searchesPerRun: 4 },
  full: { messages: [10_000, 100_000], memories: [10_000, 100_000], node: { memories: [10_000], embedder: 'fixture-bert' }, runs: 5, searchesPerRun: 4 },
  async run(params, ctx) {
    const dir = mkdtempSync(join(tmpdir(), 'recall-bench-import-ext-'));
    cpSync(await ctx.buildDir(), dir, { recursive: true });
    mkdirSync(join(dir, 'models'), { recursive: true });
    await writeBertFixtureModel(join(dir, 'models', PACKAGED_EMBEDDING_MODEL), PACKAGED_EMBEDDING_MODEL, { dimension: DIMENSION });
    writeFileSync(join(dir, 'models', 'packaged.json'), JSON.stringify({ embeddingModelId: PACKAGED_EMBEDDING_MODEL }));
    const conversations = 20;
    const cases: ImportCase[] = [
      ...params.messages.map((n) => ({
        what: 'Chromium import, messages',
        size: n,
        json: () => messagesFileJson(n, conversations),
        records: n + conversations,
        searches: [],
      })),
      ...params.memories.map((n) => {
        const memories = seedMemories(n, { dimension: DIMENSION, embeddingModel: PACKAGED_EMBEDDING_MODEL });
        return {
          what: 'Chromium import, memories (384-d)',
          size: n,
          json: async () => importFileJson(memories),
          // `added` counts the memories (their IMPORT history records are not counted).
          records: n,
          searches: tabQueries(memories, params.runs, params.searchesPerRun),
        };
      }),
    ];
    let chromium: Awaited<ReturnType<typeof chromiumImports>>;
    try {
      // `IMPORT_PROFILE_DIR=<dir>`: also write a CPU profile of the offscreen document during one (unrecorded) memories import.
      chromium = await chromiumImports(dir, cases, params.runs, ctx.log, process.env.IMPORT_PROFILE_DIR ?? null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const results: Measured[] = [...chromium.imports];
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
    for (const s of chromium.searches.filter((x) => x.size === 10_000))
      headline.push({
        what: `Memory-tab search, ${s.size} memories, Chromium, warm (p95 of ${s.queries} queries)`,
        measured: `${formatMs(s.wall.p95)} ms (median ${formatMs(s.wall.median)} ms)`,
        reference: `target ${MEMORY_TAB_TARGET_MS} ms`,
        ratio: s.wall.p95 / MEMORY_TAB_TARGET_MS,
      });
    return {
      tables: [
        {
          title: `Import and ingestion, median / p95 of ${params.runs} runs:`,
          columns: ['what', 'size', 'records written', 'wall ms', 'CPU ms', 'records per s (median wall)'],
          rows: results.map((r) => [r.what, r.size, r.records, ms(r.wall), ms(r.cpu), Math.round(r.records / (r.wall.median / 1000))]),
        },
        {
          title: `Memory-tab search in Chromium after the memories import (warm), ms, median / p95 of ${params.runs} runs × ${params.searchesPerRun} queries:`,
          columns: ['memories', 'queries', 'wall ms', 'fewest memories listed', 'memories sent with an embedding'],
          rows: chromium.searches.map((s) => [s.size, s.queries, ms(s.wall), s.minHits, s.withEmbedding]),
        },
      ],
      headline,
      raw: { results, searches: chromium.searches },
    };
  },
});
