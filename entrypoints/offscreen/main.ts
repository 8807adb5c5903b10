import browser from 'webextension-polyfill';
import * as voyBg from 'voy-search/voy_search_bg.js';
import { Wllama } from '@wllama/wllama';
import { env, pipeline } from '@huggingface/transformers';

(async () => {
  const out: Record<string, unknown> = {};
  try {
    const bytes = await (await fetch(browser.runtime.getURL('/runtime/voy/voy_search_bg.wasm' as any))).arrayBuffer();
    const { instance } = await WebAssembly.instantiate(bytes, { './voy_search_bg.js': voyBg as any });
    (voyBg as any).__wbg_set_wasm(instance.exports);
    const voy = new voyBg.Voy({ embeddings: [{ id: 'a', title: 'a', url: 'a', embeddings: [1, 0, 0] }, { id: 'b', title: 'b', url: 'b', embeddings: [0, 1, 0] }] });
    out.voy = voy.search(new Float32Array([0, 1, 0]), 1).neighbors.map((n: any) => n.id);
  } catch (e) { out.voyErr = String(e); }
  try {
    const w = new Wllama({ default: browser.runtime.getURL('/runtime/wllama/wllama.wasm' as any) });
    out.wllama = typeof w.loadModel;
  } catch (e) { out.wllamaErr = String(e); }
  try {
    (env.backends.onnx as any).wasm.wasmPaths = {
      mjs: browser.runtime.getURL('/runtime/ort/ort-wasm-simd-threaded.asyncify.mjs' as any),
      wasm: browser.runtime.getURL('/runtime/ort/ort-wasm-simd-threaded.asyncify.wasm' as any),
    };
    out.pipeline = typeof pipeline;
  } catch (e) { out.tfErr = String(e); }
  (globalThis as any).__smoke = out;
  console.log('SMOKE', JSON.stringify(out));
})();
browser.runtime.onMessage.addListener(async (m: any) => { if (m?.type === 'smoke') { while (!(globalThis as any).__smoke) await new Promise(r => setTimeout(r, 100)); return (globalThis as any).__smoke; } });
