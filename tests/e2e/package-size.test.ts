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

  it("ships only ONNX Runtime's CPU (WASM) build, the files the embedder is pointed at", () => {
    expect(readdirSync(join(BUILD_DIR, 'runtime/ort')).sort()).toEqual(['ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm']);
    expect([ORT_RUNTIME_PATHS.mjs, ORT_RUNTIME_PATHS.wasm]).toEqual(['/runtime/ort/ort-wasm-simd-threaded.mjs', '/runtime/ort/ort-wasm-simd-threaded.wasm']);
    // No other copy of an ORT .wasm anywhere (e.g. emitted again under assets/ by a bundled ORT build).
    const wasm = packageFiles(BUILD_DIR).filter((f) => f.path.endsWith('.wasm'));
    expect(wasm.filter((f) => f.path.includes('ort')).map((f) => f.path)).toEqual(['runtime/ort/ort-wasm-simd-threaded.wasm']);
  });
});
