/**
 * Engine vocabulary shared by every layer: chat messages, token usage, load progress, engine
 * states and the models the user can pick. The engine interfaces themselves (`ChatEngine`,
 * `Embedder`) live in `src/engines/types.ts`; this file holds only the shapes other layers
 * (records, prompt trace, protocol, UI) need. Leaf module: imports nothing.
 */

/** Role of one chat message (OpenAI-shaped). */
export type ChatRole = 'system' | 'user' | 'assistant';

/** One chat message as sent to a model. `content` is plain text. */
export interface ChatMessage {
  role: ChatRole;
  content: string;
}

/** Token usage of one completion, as reported by the engine (tokens). */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/** Stage of a model load, for progress bars. */
export type LoadStage = 'download' | 'cache' | 'compile' | 'init' | 'ready';

/**
 * Progress of a model load. `fraction` is 0..1 over the whole load when known, else `null`.
 * Byte counts are bytes (not MB); `text` is a human-readable line from the engine.
 */
export interface LoadProgress {
  stage: LoadStage;
  fraction: number | null;
  loadedBytes?: number;
  totalBytes?: number;
  text: string;
}

/** Which implementation backs a `ChatEngine`. */
export type ChatEngineKind = 'webllm' | 'wllama' | 'scripted';

/** Error codes of engine failures: the one list is `ENGINE_ERROR_CODES` in `./errors`. */
import type { EngineErrorCode } from './errors';
export type { EngineErrorCode };

/** State of one engine slot (chat model or embedder). */
export type EngineState = 'idle' | 'loading' | 'ready' | 'error';

/** What the UI shows about the chat engine. */
export interface ChatEngineStatus {
  kind: ChatEngineKind | null;
  modelId: string | null;
  state: EngineState;
  progress: LoadProgress | null;
  /** Context window of the loaded model (tokens). */
  contextWindow: number | null;
  error: string | null;
  /** Stable code of `error` (the UI translates by code and shows `error` as detail). */
  errorCode: EngineErrorCode | null;
}

/** What the UI shows about the embedder. */
export interface EmbedderStatus {
  modelId: string | null;
  dimension: number | null;
  state: EngineState;
  progress: LoadProgress | null;
  error: string | null;
  /** Stable code of `error`. While the embedder is not ready, memory search is keyword-only. */
  errorCode: EngineErrorCode | null;
}

/** WebGPU availability, probed in the engine host. */
export interface GpuInfo {
  available: boolean;
  /** Whether the adapter has `shader-f16` (else q4f32 model variants are used). */
  shaderF16: boolean;
  /** Adapter description, when available. */
  adapter: string | null;
}

/** Both engines and the GPU. */
export interface EngineStatus {
  chat: ChatEngineStatus;
  embedder: EmbedderStatus;
  gpu: GpuInfo;
}

/** A model the user can pick. Sizes in bytes (approximate download size). */
export interface ModelOption {
  id: string;
  label: string;
  sizeBytes: number;
  /** Context window in tokens. */
  contextWindow: number;
  /** Languages it is good at, e.g. `['zh', 'en']`. */
  languages: string[];
  recommended?: boolean;
}

/** Where wllama loads a GGUF from. */
export type WllamaSource = { type: 'catalog'; id: string } | { type: 'opfs'; fileName: string };

/**
 * A model whose files an engine downloaded (or the user opened), as "Erase → downloaded models"
 * lists it (`src/platform/model-caches.ts`): `id` names it for deletion (`<engine>:<model or file>`),
 * `name` is the Hugging Face `<owner>/<repo>` or the file name, `sizeBytes` its files' bytes.
 */
export interface DownloadedModel {
  id: string;
  engine: 'webllm' | 'transformers' | 'wllama' | 'local';
  name: string;
  sizeBytes: number;
  files: number;
}
