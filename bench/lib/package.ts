/**
 * What the built extension package (`.output/chrome-mv3`) is made of: size by part, and code
 * shipped twice. Used by `bench/package.bench.ts` (BENCHMARKS.md) and `tests/e2e/package-size.test.ts`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Which part of the package a file belongs to. */
export type PackagePart = 'js' | 'wasm runtime' | 'model' | 'other';

/** One file of the package. */
export interface PackageFile {
  /** Path inside the package, `/`-separated (e.g. `chunks/webllm-B3Gl.js`). */
  path: string;
  part: PackagePart;
  /** Size on disk, bytes. */
  bytes: number;
}

/** Every file of the package folder `dir`, largest first. @throws Error when `dir` has no manifest.json (not a build). */
export function packageFiles(dir: string): PackageFile[] {
  if (!existsSync(join(dir, 'manifest.json'))) throw new Error(`No build at ${dir} (manifest.json missing): run \`npx wxt build\` first`);
  const out: PackageFile[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const stat = statSync(p);
      if (stat.isDirectory()) walk(p);
      else {
        const path = relative(dir, p).split(sep).join('/');
        out.push({ path, part: partOf(path), bytes: stat.size });
      }
    }
  };
  walk(dir);
  return out.sort((a, b) => b.bytes - a.bytes || a.path.localeCompare(b.path));
}

/** Part of a package path: `runtime/**` is a WASM runtime (with its `.mjs` loader), `models/**` a model, other `.js` files code. */
export function partOf(path: string): PackagePart {
  if (path.startsWith('runtime/')) return 'wasm runtime';
  if (path.startsWith('models/')) return 'model';
  if (/\.m?js$/.test(path)) return 'js';
  return 'other';
}

/** A string literal found in more than one JS file of the package. */
export interface DuplicateLiteral {
  /** Characters of the literal, quotes included. */
  length: number;
  files: string[];
  /** The first 80 characters. */
  excerpt: string;
}

/**
 * String literals of at least `minLength` characters (quotes included) that occur in two or more
 * JS files of the package. A module bundled into two entry files keeps its string literals
 * verbatim in both (identifiers are minified differently, strings are not), so this finds code
 * shipped twice; modules in a shared chunk are counted once. JS files under `runtime/` (WASM
 * loaders) are included.
 */
export function duplicateLiterals(dir: string, minLength = 60): DuplicateLiteral[] {
  const literal = new RegExp(
    `"(?:[^"\\\\\\n]|\\\\.){${minLength - 2},}"|'(?:[^'\\\\\\n]|\\\\.){${minLength - 2},}'|\`(?:[^\`\\\\]|\\\\.){${minLength - 2},}\``,
    'g',
  );
  const where = new Map<string, Set<string>>();
  for (const file of packageFiles(dir).filter((f) => /\.m?js$/.test(f.path))) {
    for (const text of new Set(readFileSync(join(dir, file.path), 'utf8').match(literal) ?? [])) {
      if (!where.has(text)) where.set(text, new Set());
      where.get(text)!.add(file.path);
    }
  }
  return [...where]
    .filter(([, files]) => files.size > 1)
    .map(([text, files]) => ({ length: text.length, files: [...files].sort(), excerpt: text.slice(0, 80) }))
    .sort((a, b) => b.length - a.length);
}
