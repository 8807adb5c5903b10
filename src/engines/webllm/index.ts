/**
 * WebLLM engine (GPU): model picker, variant selection, the proxy `ChatEngine` that runs in the
 * engine host, and the service-worker registration that hosts the real engine.
 */
export {
  WEBLLM_MODELS,
  DEFAULT_WEBLLM_MODEL,
  PACKAGED_WEBLLM_MANIFEST_PATH,
  shippedWebllmModels,
  webllmLibraryFileName,
  webllmVariantFor,
  type PackagedWebllmLibs,
} from './models';
export {
  createWebLLMEngine,
  libraryNotPackagedMessage,
  mapWebLLMLoadError,
  NO_WEBGPU_MESSAGE,
  PACKAGED_WEBLLM_LIBS_PATH,
  WEBLLM_PORT_NAME,
  type WebLLMChatEngine,
  type WebLLMEngineOptions,
  type WebLLMPort,
} from './engine';
export { createWebLLMProgressMapper, type WebLLMInitReport } from './progress';
export { registerWebLLMServiceWorker, type IncomingWebLLMPort, type MLCEngineLike, type OnConnectLike, type RegisterWebLLMOptions } from './service-worker';
