import { defineBackground } from 'wxt/utils/define-background';
import { startBackground } from '../src/background';
import { registerWebLLMServiceWorker } from '../src/engines/webllm';

export default defineBackground(() => {
  // Both register listeners synchronously, so events that wake the worker reach them.
  registerWebLLMServiceWorker();
  startBackground();
});
