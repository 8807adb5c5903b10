import { defineConfig } from 'wxt';
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { noRemoteCode } from './scripts/build/no-remote-code';

/**
 * WASM runtimes that must ship inside the package (no CDN at run time).
 * Each entry is copied from node_modules into the build output under `relativeDest`;
 * the code finds them with `browser.runtime.getURL('/' + relativeDest)`
 * (see `src/platform/assets.ts`, which is the single list of these paths at run time).
 */
const RUNTIME_ASSETS: { src: string; dest: string }[] = [
  // ORT's CPU-only (WASM execution provider) runtime, 14 MB: the embedder runs with `device: 'wasm'`;
  // the .asyncify/.jsep builds (27–28 MB) add the WebGPU/WebNN providers, which it never uses.
  { src: 'onnxruntime-web/dist/ort-wasm-simd-threaded.mjs', dest: 'runtime/ort/ort-wasm-simd-threaded.mjs' },
  { src: 'onnxruntime-web/dist/ort-wasm-simd-threaded.wasm', dest: 'runtime/ort/ort-wasm-simd-threaded.wasm' },
  { src: '@wllama/wllama/esm/wasm/wllama.wasm', dest: 'runtime/wllama/wllama.wasm' },
  { src: 'voy-search/voy_search_bg.wasm', dest: 'runtime/voy/voy_search_bg.wasm' },
  // pdf.js's worker (1.2 MB), started only when a PDF open in the browser's viewer is read (src/core/pdf.ts).
  { src: 'pdfjs-dist/build/pdf.worker.min.mjs', dest: 'runtime/pdfjs/pdf.worker.min.mjs' },
];

// See https://wxt.dev/api/config.html
export default defineConfig({
  // Parallel builds (e.g. a test build beside a dev build) can use their own output folder.
  outDir: process.env.RECALL_OUT_DIR ?? '.output',
  modules: ['@wxt-dev/module-svelte'],
  // `npm run dev` opens a browser with the extension loaded, except on a machine without a
  // display (CI, SSH): then it only builds and watches, and you load .output/chrome-mv3-dev.
  webExt: { disabled: process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY },
  // Explicit imports everywhere: easier to read and to test.
  imports: false,
  manifest: {
    name: '__MSG_extName__',
    description: '__MSG_extDescription__',
    default_locale: 'en',
    // 133: WebAssembly Memory64, which the CPU engine (wllama) needs; WebGPU in extension service workers needs 124.
    minimum_chrome_version: '133',
    action: { default_title: '__MSG_actionTitle__' },
    permissions: [
      // the toolbar button opens the side panel
      'sidePanel',
      // the engine host document (wllama and onnxruntime need Web Workers and WASM threads)
      'offscreen',
      // memory and cached models must not be evicted under storage pressure
      'unlimitedStorage',
      // "Ask about this page": access to the one tab the user invokes Recall on (toolbar button,
      // context menu, shortcut), for that tab only, and the reader script injected into it.
      // No host permission: no page is ever readable without the user's gesture.
      'activeTab',
      'scripting',
      // "Ask Recall about the selection" and "Remember this"
      'contextMenus',
    ],
    // Changeable at chrome://extensions/shortcuts.
    commands: {
      'open-side-panel': { suggested_key: { default: 'Alt+Shift+R' }, description: '__MSG_commandOpenPanel__' },
      'ask-about-page': { suggested_key: { default: 'Alt+Shift+P' }, description: '__MSG_commandAskPage__' },
    },
    // Only the hosts that model weights and tokenizers (data, not code) are downloaded from. WebLLM's
    // model libraries (WebAssembly) are never downloaded at run time: the package ships them.
    host_permissions: ['https://huggingface.co/*', 'https://*.huggingface.co/*', 'https://*.hf.co/*'],
    content_security_policy: {
      extension_pages: "script-src 'self' 'wasm-unsafe-eval'; object-src 'self';",
    },
  },
  vite: () => ({
    // Rewrites libraries' CDN defaults to packaged files and fails the build on any code-CDN URL left.
    plugins: [noRemoteCode()],
    build: {
      // RECALL_NO_MINIFY=1: readable function names in CPU profiles (TURN_CHROMIUM_CPU_PROFILE of the turn bench).
      ...(process.env.RECALL_NO_MINIFY ? { minify: false } : {}),
      rolldownOptions: {
        output: {
          codeSplitting: {
            // transformers.js's web build inlines its own copy of @huggingface/tokenizers, which the GGUF
            // token counter imports too: one lazy chunk holds both (both load only with an engine, never
            // at start-up), so that copy is not shipped twice.
            groups: [{ name: 'transformers', test: /node_modules[\\/]@huggingface[\\/](transformers|tokenizers)[\\/]/ }],
          },
        },
      },
    },
    resolve: {
      alias: [
        // transformers.js imports ORT's *bundled* WebGPU build, which inlines the WASM loader and
        // emits the 27 MB .wasm a second time (assets/, via `new URL(..., import.meta.url)`). The
        // non-bundled WASM-only build of the same version (same API, CPU execution provider only)
        // loads the runtime files shipped once under /runtime/ort/ (RUNTIME_ASSETS above; see
        // src/engines/transformers for `wasmPaths`).
        { find: /^onnxruntime-web\/webgpu$/, replacement: resolve(__dirname, 'node_modules/onnxruntime-web/dist/ort.wasm.min.mjs') },
      ],
    },
  }),
  hooks: {
    'build:publicAssets': (wxt, files) => {
      for (const asset of RUNTIME_ASSETS) {
        files.push({ absoluteSrc: resolve(wxt.config.root, 'node_modules', asset.src), relativeDest: asset.dest });
      }
      // WebLLM model libraries are WebAssembly, which an extension may not fetch at run time: the
      // package offers only the models whose library it ships (public/runtime/webllm/, filled by
      // `npm run fetch:webllm-libs`). This manifest tells the core which ones
      // (src/engines/webllm/models.ts PACKAGED_WEBLLM_MANIFEST_PATH); every build and zip says so.
      const libsDir = resolve(wxt.config.publicDir, 'runtime/webllm');
      const libraries = existsSync(libsDir)
        ? readdirSync(libsDir)
            .filter((f) => f.endsWith('.wasm'))
            .sort()
        : [];
      files.push({ contents: `${JSON.stringify({ libraries })}\n`, relativeDest: 'runtime/webllm/packaged.json' });
      if (libraries.length > 0) {
        wxt.logger.info(`WebLLM model libraries in the package (${libraries.length}): ${libraries.join(', ')}`);
      } else {
        wxt.logger.warn(
          'No WebLLM model libraries in the package: GPU models are not offered (only the CPU engine). Run `npm run fetch:webllm-libs` before building to include them.',
        );
      }
    },
  },
});
