/**
 * Package size by part (`npm run bench -- package`): the production build of the working tree
 * (`.output-bench/chrome-mv3`), every file with its part — JS by chunk, WASM runtimes (with their
 * `.mjs` loaders), models, other (HTML, CSS, icons, locales, manifest) — and the code shipped
 * twice (string literals of 60+ characters found in two JS files; see `bench/lib/package.ts`).
 */
import { defineBench } from './lib/bench';
import { duplicateLiterals, packageFiles, type PackagePart } from './lib/package';
import { formatBytes } from './lib/stats';

/** Sizes of the package before issue 9's package work (commit c0979be, measured the same way). */
const BEFORE = { totalBytes: 51_129_129, duplicateBytes: 5_649_037 };

export default defineBench({
  name: 'package',
  title: 'Package size by part',
  method:
    'Sizes on disk of the files of the production build (`wxt build`, what the store package zips), by part. "Shipped twice" sums the string literals (60+ characters) found in more than one JS file: a module bundled into two entry files keeps its strings verbatim in both.',
  quick: {},
  full: {},
  async run(_params, ctx) {
    const dir = await ctx.buildDir();
    const files = packageFiles(dir);
    const total = files.reduce((a, f) => a + f.bytes, 0);
    const parts: PackagePart[] = ['js', 'wasm runtime', 'model', 'other'];
    const byPart = parts.map((part) => {
      const inPart = files.filter((f) => f.part === part);
      return { part, files: inPart.length, bytes: inPart.reduce((a, f) => a + f.bytes, 0) };
    });
    const duplicates = duplicateLiterals(dir);
    const duplicateBytes = duplicates.reduce((a, d) => a + d.length * (d.files.length - 1), 0);
    const big = files.filter((f) => f.part === 'js' || f.part === 'wasm runtime' || f.part === 'model');
    return {
      tables: [
        {
          title: `Total **${formatBytes(total)}** in ${files.length} files; code shipped twice: ${formatBytes(duplicateBytes)} (${duplicates.length} literals).`,
          columns: ['part', 'files', 'size', 'share'],
          rows: byPart.map((p) => [p.part, p.files, formatBytes(p.bytes), `${((p.bytes / total) * 100).toFixed(1)} %`]),
        },
        {
          title: 'JS by chunk, WASM runtimes and models (file by file):',
          columns: ['file', 'part', 'size'],
          rows: big.map((f) => [`\`${f.path}\``, f.part, formatBytes(f.bytes)]),
        },
      ],
      headline: [
        {
          what: 'package size (production build)',
          measured: formatBytes(total),
          reference: `build of c0979be (before issue 9) ${formatBytes(BEFORE.totalBytes)}`,
          ratio: total / BEFORE.totalBytes,
        },
        {
          what: 'code shipped twice in the package',
          measured: formatBytes(duplicateBytes),
          reference: `build of c0979be ${formatBytes(BEFORE.duplicateBytes)}`,
          ratio: duplicateBytes / BEFORE.duplicateBytes,
        },
      ],
      raw: { totalBytes: total, byPart, files, duplicates: duplicates.slice(0, 50) },
    };
  },
});
