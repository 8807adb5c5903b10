/**
 * wllama engine (CPU, llama.cpp in WebAssembly): the catalog of small GGUF models, the engine,
 * and the GGUF header reader it uses.
 */
export { WLLAMA_MODELS, DEFAULT_WLLAMA_CONTEXT } from './models';
export {
  createWllamaEngine,
  CHATML_TEMPLATE,
  supportsMemory64,
  type WllamaChatEngine,
  type WllamaChunk,
  type WllamaEngineOptions,
  type WllamaLike,
  type WllamaLoadOptions,
} from './engine';
export { inspectGguf, type GgufInfo } from './gguf';
