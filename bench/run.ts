/**
 * `npm run bench`: runs the benchmarks and writes their results into BENCHMARKS.md (generated
 * sections between `<!-- bench:<id>:begin/end -->` markers; the hand-written text around them
 * stays) and as JSON into `bench-results/<name>.json`. The run section at the top (machine,
 * headline, run time per bench) is rewritten only by a run of every bench.
 *
 *   npm run bench                      quick default run of every bench (≤ 10 min on the 2-core dev machine)
 *   npm run bench -- --full            the larger sizes too (longer)
 *   npm run bench -- coldstart package only the benches whose name starts with one of these
 *   npm run bench -- --no-write        print and write JSON, leave BENCHMARKS.md alone
 *
 * REGISTRY: one line per bench file. Each file default-exports `defineBench({ name, title,
 * method, quick, full, run(params, ctx) })` (interface and rules in `bench/lib/bench.ts`): `run`
 * gets the quick or full parameters and returns `{ tables, headline?, notes?, raw? }`. To add a
 * bench, write `bench/<name>.bench.ts` and add its line here (a `*.bench.ts` file missing from
 * the registry still runs, after the listed ones, with a reminder). A file whose default export is
 * not a `defineBench` (or names another bench) fails the run (`asBench`) before it runs, so no
 * result is measured and then written nowhere; a section whose markers are missing from
 * BENCHMARKS.md is appended at its end (`replaceSection`).
 */
import 'fake-indexeddb/auto'; // before any module loads Dexie: Dexie reads the IndexedDB globals when it is first imported, and the Node benches run on fake-indexeddb
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { asBench, type Bench, type BenchContext, type BenchResult } from './lib/bench';
import { machineInfo } from './lib/machine';
import { renderBenchSection, renderRunSection, replaceSection, type RunEntry } from './lib/report';

type Loader = () => Promise<{ default: unknown }>;

/** Every bench, in run order (name → module). */
const REGISTRY: Record<string, Loader> = {
  package: () => import('./package.bench'),
  coldstart: () => import('./coldstart.bench'),
  import: () => import('./import.bench'),
  strategies: () => import('./strategies.bench'),
  retrieval: () => import('./retrieval.bench'),
  'turn-overhead': () => import('./turn-overhead.bench'),
  'turn-chromium': () => import('./turn-chromium.bench'),
  'vector-layout': () => import('./vector-layout.bench'),
  'lexical-snapshot': () => import('./lexical-snapshot.bench'),
  vault: () => import('./vault.bench'),
};

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
for (const file of readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .sort()) {
  const name = file.slice(0, -'.bench.ts'.length);
  if (REGISTRY[name]) continue;
  console.warn(`bench/${file} is not in bench/run.ts's REGISTRY: running it after the listed benches (add its line).`);
  REGISTRY[name] = () => import(pathToFileURL(join(here, file)).href);
}
const args = process.argv.slice(2);
const full = args.includes('--full');
const write = !args.includes('--no-write');
const only = args.filter((a) => !a.startsWith('-'));
const unknown = only.filter((o) => !Object.keys(REGISTRY).some((name) => name.startsWith(o)));
if (unknown.length > 0) {
  console.error(`Unknown bench: ${unknown.join(', ')}. Benches: ${Object.keys(REGISTRY).join(', ')}`);
  process.exit(2);
}
const selected = Object.keys(REGISTRY).filter((name) => only.length === 0 || only.some((o) => name.startsWith(o)));

let built: Promise<string> | null = null;
const ctx: BenchContext = {
  full,
  root,
  log: (line) => process.stderr.write(`${line}\n`),
  buildDir() {
    built ??= (async () => {
      const outDir = '.output-bench';
      process.stderr.write('building the extension (production) into .output-bench/ …\n');
      execFileSync('npx', ['wxt', 'build'], { cwd: root, env: { ...process.env, RECALL_OUT_DIR: outDir }, stdio: ['ignore', 'ignore', 'inherit'] });
      const dir = join(root, outDir, 'chrome-mv3');
      if (!existsSync(join(dir, 'manifest.json'))) throw new Error(`wxt build wrote no ${dir}/manifest.json`);
      return dir;
    })();
    return built;
  },
};

const machine = machineInfo();
const startedAt = new Date();
const runStarted = performance.now();
const outDir = join(root, 'bench-results');
mkdirSync(outDir, { recursive: true });
const benchmarksPath = join(root, 'BENCHMARKS.md');
let doc = readFileSync(benchmarksPath, 'utf8');
const entries: RunEntry[] = [];
let failed = false;

for (const name of selected) {
  const started = performance.now();
  let title = name;
  try {
    const mod: Bench<unknown> = asBench((await REGISTRY[name]!()).default, name);
    title = mod.title;
    console.log(`\n=== ${name}: ${title}${full ? ' (--full)' : ''} ===`);
    const params = full ? mod.full : mod.quick;
    const result: BenchResult = await mod.run(params, ctx);
    const seconds = (performance.now() - started) / 1000;
    const measured = result.params ?? params;
    const section = renderBenchSection(mod, measured, result, seconds, full, startedAt);
    console.log(`\n${section}`);
    writeFileSync(join(outDir, `${name}.json`), JSON.stringify({ name, title, full, params: measured, seconds, machine, result }, null, 2));
    doc = replaceSection(doc, name, section);
    entries.push({ name, title, seconds, headline: result.headline ?? [] });
  } catch (error) {
    failed = true;
    const seconds = (performance.now() - started) / 1000;
    console.error(`${name} failed:`, error);
    entries.push({ name, title, seconds, headline: [], error: error instanceof Error ? error.message.split('\n')[0]! : String(error) });
  }
  console.log(`--- ${name}: ${entries.at(-1)!.seconds.toFixed(1)} s`);
}

const totalSeconds = (performance.now() - runStarted) / 1000;
// The run section (machine, headline, run times) describes one run of every bench; a run of some
// benches only rewrites their own sections.
if (only.length === 0) doc = replaceSection(doc, 'run', renderRunSection(machine, entries, { full, startedAt, totalSeconds }));
if (write) {
  writeFileSync(benchmarksPath, doc);
  console.log(`\nBENCHMARKS.md updated (${entries.map((e) => e.name).join(', ')}); total ${(totalSeconds / 60).toFixed(1)} min`);
} else console.log(`\n--no-write: BENCHMARKS.md left as it was; total ${(totalSeconds / 60).toFixed(1)} min`);
if (failed) process.exitCode = 1;
