/**
 * The offscreen document evaluates at start-up only what the first answered retrieval needs
 * (issue 9, the cold start's module-evaluation phase): the backup reader (`@streamparser/json`),
 * its age encryption (`age-encryption`, `@noble/*`) and the importers (`fflate`) are in chunks
 * loaded by a dynamic `import()` at first use (`src/core/lazy-modules.ts`). Runs over the built
 * files (`.output/chrome-mv3`): the chunks `offscreen.html` loads and their static imports, walked
 * from the `<script>` tag, hold none of these libraries, while the chunks the entry reaches by
 * `import()` do. That the lazy chunks load and work when used is shown in real Chromium by
 * `backup-restore.test.ts` (an encrypted export and import) and `history-import.test.ts` (a ChatGPT
 * export, saved memories), which run through them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_DIR } from './harness';

/** A string each library throws in its own code (kept by minification): where that library's code is. */
const LAZY_LIBRARIES = {
  'age-encryption': 'no identity matched',
  '@streamparser/json': 'Tokenizer ended in the middle of a token',
  fflate: 'invalid zip data',
} as const;

/** `./x.js` imports of a chunk: static (`from"./x.js"`, `import"./x.js"`) and dynamic (`import("./x.js")`). */
function importsOf(code: string): { staticImports: string[]; dynamicImports: string[] } {
  const staticImports = [...code.matchAll(/(?:from|import)\s*["'`]\.\/([^"'`]+\.js)["'`]/g)].map((m) => m[1]!);
  const dynamicImports = [...code.matchAll(/import\(\s*["'`]\.\/([^"'`]+\.js)["'`]\s*\)/g)].map((m) => m[1]!);
  return { staticImports, dynamicImports };
}

/** The chunk file names reached from `entries` by static imports only (what the document evaluates before its code runs). */
function staticClosure(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    queue.push(...importsOf(readFileSync(join(BUILD_DIR, 'chunks', name), 'utf8')).staticImports);
  }
  return seen;
}

describe('the offscreen entry of the built package', () => {
  const htmlPath = join(BUILD_DIR, 'offscreen.html');

  it('exists (run `npx wxt build` first)', () => {
    expect(existsSync(htmlPath)).toBe(true);
  });

  it('loads the backup reader, age encryption and the importers only by import(), never at start-up', () => {
    const html = readFileSync(htmlPath, 'utf8');
    const entries = [...html.matchAll(/src="\/chunks\/([^"]+\.js)"/g)].map((m) => m[1]!);
    expect(entries.length).toBe(1);
    const atStart = staticClosure(entries);
    const startCode = [...atStart].map((name) => readFileSync(join(BUILD_DIR, 'chunks', name), 'utf8')).join('\n');
    // Every chunk the start-up code can import() later, with what those import statically in turn.
    const lazyNames = [...atStart].flatMap((name) => importsOf(readFileSync(join(BUILD_DIR, 'chunks', name), 'utf8')).dynamicImports);
    const lazy = [...staticClosure(lazyNames)].filter((name) => !atStart.has(name));
    const lazyCode = lazy.map((name) => readFileSync(join(BUILD_DIR, 'chunks', name), 'utf8')).join('\n');
    for (const [library, marker] of Object.entries(LAZY_LIBRARIES)) {
      expect(startCode.includes(marker), `${library} is evaluated at start-up`).toBe(false);
      expect(lazyCode.includes(marker), `${library} is not in a lazily loaded chunk (is the marker still right?)`).toBe(true);
    }
  });
});
