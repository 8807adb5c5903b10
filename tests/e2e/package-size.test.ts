/**
 * The built package (`.output/chrome-mv3`, or `RECALL_OUT_DIR`) ships no code twice and only the
 * ONNX runtime the embedder uses. No browser needed; build first (`npx wxt build`).
 * That the embedder really runs on this runtime is checked in real Chromium by
 * `engines.test.ts` › 'embeds with the model shipped in the package and the packaged ONNX runtime'.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { duplicateLiterals, packageFiles } from '../../bench/lib/package';
import { ORT_RUNTIME_PATHS } from '../../src/engines/transformers';
import { BUILD_DIR } from './harness';

describe('the built package', () => {
  it('ships no module twice: no string literal of 60+ characters is in two JS files', () => {
    // Before the fix WebLLM was bundled into both background.js and the offscreen chunk: 163 such
    // literals, 5.6 MB of them.
    const duplicates = duplicateLiterals(BUILD_DIR);
    expect(duplicates.map((d) => `${d.files.join(' + ')}: ${d.excerpt}`)).toEqual([]);
  });

  it('loads WebLLM from one chunk shared by the service worker and the offscreen document', () => {
    const manifest = JSON.parse(readFileSync(join(BUILD_DIR, 'manifest.json'), 'utf8'));
    expect(manifest.background).toEqual({ type: 'module', service_worker: 'background.js' });
    const files = packageFiles(BUILD_DIR).filter((f) => f.part === 'js');
    // 'tvmjs' (WebLLM's bundled TVM runtime names itself in its messages) is in WebLLM's code only.
    const webllmFiles = files.filter((f) => readFileSync(join(BUILD_DIR, f.path), 'utf8').includes('tvmjs'));
    expect(webllmFiles.map((f) => f.path)).toHaveLength(1);
    const chunk = webllmFiles[0]!.path.replace(/^chunks\//, '');
    expect(readFileSync(join(BUILD_DIR, 'background.js'), 'utf8')).toContain(`./chunks/${chunk}`);
    const offscreen = files.find((f) => /^chunks\/offscreen-.*\.js$/.test(f.path))!;
    expect(readFileSync(join(BUILD_DIR, offscreen.path), 'utf8')).toContain(`./${chunk}`);
  });

  it('the offscreen document does not load WebLLM before the core answers: its chunk is reached by a dynamic import() only', () => {
    const files = packageFiles(BUILD_DIR).filter((f) => f.part === 'js');
    const webllm = files.find((f) => readFileSync(join(BUILD_DIR, f.path), 'utf8').includes('tvmjs'))!.path;
    // The static module graph of offscreen.html: its <script>/modulepreload chunks and their static imports, transitively.
    const html = readFileSync(join(BUILD_DIR, 'offscreen.html'), 'utf8');
    const queue = [...html.matchAll(/(?:src|href)="\/(chunks\/[^"]+\.js)"/g)].map((m) => m[1]!);
    const loaded = new Set<string>();
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (loaded.has(file)) continue;
      loaded.add(file);
      const code = readFileSync(join(BUILD_DIR, file), 'utf8');
      // Static `import … from"./x.js"` and `import"./x.js"`; a dynamic `import(\`./x.js\`)` does not match.
      for (const m of code.matchAll(/(?:from|import)\s*["'`]\.\/([^"'`]+\.js)["'`]/g)) queue.push(join('chunks', m[1]!));
    }
    expect(loaded.size).toBeGreaterThan(1);
    expect([...loaded]).not.toContain(webllm);
    const offscreen = [...loaded].find((f) => /^chunks\/offscreen-.*\.js$/.test(f))!;
    expect(readFileSync(join(BUILD_DIR, offscreen), 'utf8')).toContain(`import(\`./${webllm.replace(/^chunks\//, '')}\`)`);
  });

  it('the offscreen document loads transformers.js/ORT and wllama only when an engine loads: none of their code is in its static module graph', () => {
    const files = packageFiles(BUILD_DIR).filter((f) => f.part === 'js');
    const html = readFileSync(join(BUILD_DIR, 'offscreen.html'), 'utf8');
    const queue = [...html.matchAll(/(?:src|href)="\/(chunks\/[^"]+\.js)"/g)].map((m) => m[1]!);
    const loaded = new Set<string>();
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (loaded.has(file)) continue;
      loaded.add(file);
      const code = readFileSync(join(BUILD_DIR, file), 'utf8');
      for (const m of code.matchAll(/(?:from|import)\s*["'`]\.\/([^"'`]+\.js)["'`]/g)) queue.push(join('chunks', m[1]!));
    }
    // Markers of the libraries' own code: ORT's session class (transformers.js runs through it) and wllama's loader.
    for (const marker of ['InferenceSession', 'loadModelFromUrl']) {
      const holders = files.filter((f) => readFileSync(join(BUILD_DIR, f.path), 'utf8').includes(marker)).map((f) => f.path);
      expect(holders.length, marker).toBeGreaterThan(0); // shipped…
      expect(
        holders.filter((f) => loaded.has(f)),
        marker,
      ).toEqual([]); // …but reached by a dynamic import() only
    }
  });

  it("ships only ONNX Runtime's CPU (WASM) build, the files the embedder is pointed at", () => {
    expect(readdirSync(join(BUILD_DIR, 'runtime/ort')).sort()).toEqual(['ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm']);
    expect([ORT_RUNTIME_PATHS.mjs, ORT_RUNTIME_PATHS.wasm]).toEqual(['/runtime/ort/ort-wasm-simd-threaded.mjs', '/runtime/ort/ort-wasm-simd-threaded.wasm']);
    // No other copy of an ORT .wasm anywhere (e.g. emitted again under assets/ by a bundled ORT build).
    const wasm = packageFiles(BUILD_DIR).filter((f) => f.path.endsWith('.wasm'));
    expect(wasm.filter((f) => f.path.includes('ort')).map((f) => f.path)).toEqual(['runtime/ort/ort-wasm-simd-threaded.wasm']);
  });
});
