import { defineBackground } from 'wxt/utils/define-background';
import { startBackground } from '../src/background';
import { registerWebLLMServiceWorker } from '../src/engines/webllm';

export default defineBackground({
  // An ES-module worker is built with the extension pages, so WebLLM (imported here and by the
  // offscreen document's proxy) ships once, in a chunk both load, instead of twice (~6 MB each).
  // The shared chunks must not use top-level `await`: a module service worker with one never
  // becomes usable.
  type: 'module',
  main() {
    // Both register listeners synchronously, so events that wake the worker reach them.
    registerWebLLMServiceWorker();
    startBackground();
  },
});
