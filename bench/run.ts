/**
 * `npm run bench`: runs every `bench/*.bench.ts` module (or those named on the command line,
 * e.g. `npm run bench -- strategies`) and writes each one's JSON result to `bench-results/`.
 * A bench module default-exports `{ name, run(): Promise<unknown> }` and prints a readable table
 * itself. Numbers that go into BENCHMARKS.md come from these runs, with the method stated there.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface BenchModule {
  name: string;
  run(): Promise<unknown>;
}

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();
const outDir = join(here, '..', 'bench-results');
mkdirSync(outDir, { recursive: true });
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)).default as BenchModule;
  console.log(`\n=== ${mod.name} (${file}) ===`);
  const started = performance.now();
  const result = await mod.run();
  const seconds = (performance.now() - started) / 1000;
  writeFileSync(join(outDir, `${file.replace('.bench.ts', '')}.json`), JSON.stringify({ name: mod.name, seconds, result }, null, 2));
  console.log(`--- ${mod.name}: ${seconds.toFixed(1)} s`);
}
