/**
 * Build-time guard: the extension package must contain no URL of a code CDN (store reviews reject
 * remote code, and the extension must work offline). Libraries bundle such URLs as *defaults* that
 * this extension never uses (it always passes its packaged files), so the defaults are rewritten
 * at build time to the packaged files (`REWRITES`), and any other code-CDN URL left in an emitted
 * chunk fails the build, naming the chunk and the surrounding text.
 *
 * The same host list is used by the package test (`tests/e2e/package.test.ts`), which scans every
 * file of the built package, including the copied public assets this plugin does not see.
 */
import type { Plugin } from 'vite';

/**
 * Hosts that serve JavaScript/WebAssembly packages (code CDNs). A URL on one of them in the package
 * is remote code. Lower-case host names; a match on the host or any sub-domain counts.
 */
export const CODE_CDN_HOSTS: readonly string[] = [
  'cdn.jsdelivr.net',
  'fastly.jsdelivr.net',
  'gcore.jsdelivr.net',
  'unpkg.com',
  'cdnjs.cloudflare.com',
  'esm.sh',
  'cdn.skypack.dev',
  'jspm.dev',
  'ga.jspm.io',
  'esm.run',
  'cdn.esm.sh',
  'deno.land',
  'jsdelivr.com',
  'ajax.googleapis.com',
  'code.jquery.com',
  'cdn.statically.io',
  'rawcdn.githack.com',
  'raw.githack.com',
  'cdn.pika.dev',
];

/** One code-CDN URL found in a text: the URL and up to 80 characters either side. */
export interface CodeCdnHit {
  /** The matched URL (scheme optional, e.g. `//unpkg.com/x` or `https://cdn.jsdelivr.net/npm/…`). */
  url: string;
  /** Character offset of the match in the text. */
  index: number;
  /** The text around the match (80 characters either side, newlines kept). */
  context: string;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `(https?:)?//` + an optional sub-domain + one of the hosts, then the rest of the URL. */
const CDN_URL = new RegExp(`(?:https?:)?//(?:[a-z0-9-]+\\.)*(?:${CODE_CDN_HOSTS.map(escapeRe).join('|')})(?![a-z0-9-])[^\\s"'\`<>)]*`, 'gi');

/**
 * Every code-CDN URL in `text` (see `CODE_CDN_HOSTS`), in order of appearance.
 * @param text any text (a JS chunk, HTML, JSON; binary files decoded as latin1 work too).
 */
export function findCodeCdnUrls(text: string): CodeCdnHit[] {
  const hits: CodeCdnHit[] = [];
  for (const m of text.matchAll(CDN_URL)) {
    const index = m.index ?? 0;
    hits.push({ url: m[0], index, context: text.slice(Math.max(0, index - 80), index + m[0].length + 80) });
  }
  return hits;
}

/**
 * Library defaults that point at a CDN, rewritten to what this package ships (or to a path that
 * does not exist, for optional features the extension turns off). Each `pattern` must match the
 * library's string literal in the bundled (possibly minified) chunk.
 */
export const REWRITES: readonly { library: string; pattern: RegExp; replacement: string; why: string }[] = [
  {
    library: '@huggingface/transformers',
    // `https://cdn.jsdelivr.net/npm/onnxruntime-web@${ONNX_ENV.versions.web}/dist/` (env setup)
    pattern: /https:\/\/cdn\.jsdelivr\.net\/npm\/onnxruntime-web@\$\{[^}`]+\}\/dist\//g,
    replacement: '/runtime/ort/',
    why: 'default ONNX wasmPaths prefix: the same file names ship under /runtime/ort/ (wxt.config.ts RUNTIME_ASSETS)',
  },
  {
    library: '@wllama/wllama',
    // `WasmCompatFromCDN` / `WasmFromCDN`: compat-mode worker and wasm (compat mode is off: setCompat(null))
    pattern: /https:\/\/cdn\.jsdelivr\.net\/npm\/@wllama\/(wllama(?:-compat)?)@[\d.]+\/(?:esm\/)?wasm\/(wllama\.(?:js|wasm))/g,
    replacement: '/runtime/not-packaged/$1/$2',
    why: 'wllama compat mode is turned off (src/engines/wllama/engine.ts); the CDN default is never used',
  },
];

/**
 * The Vite plugin: applies `REWRITES` to every emitted chunk, then fails the build when any
 * code-CDN URL remains (error names the chunk and the text around each URL).
 */
export function noRemoteCode(): Plugin {
  return {
    name: 'recall:no-remote-code',
    enforce: 'post',
    renderChunk(code) {
      let out = code;
      for (const r of REWRITES) out = out.replace(r.pattern, r.replacement);
      return out === code ? null : { code: out, map: null };
    },
    generateBundle(_options, bundle) {
      const problems: string[] = [];
      for (const [fileName, item] of Object.entries(bundle)) {
        const text = item.type === 'chunk' ? item.code : typeof item.source === 'string' ? item.source : Buffer.from(item.source).toString('latin1');
        for (const hit of findCodeCdnUrls(text)) problems.push(`${fileName}: ${hit.url}\n    …${hit.context.replace(/\s+/g, ' ')}…`);
      }
      if (problems.length > 0) {
        this.error(
          `Code-CDN URLs in the build (remote code is not allowed; add a rewrite in scripts/build/no-remote-code.ts or configure the library):\n${problems.join('\n')}`,
        );
      }
    },
  };
}
