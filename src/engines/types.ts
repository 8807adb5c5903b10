/**
 * The two engine interfaces. Everything above this folder talks to a `ChatEngine` and an
 * `Embedder` and never knows which implementation runs (WebLLM on WebGPU, wllama on CPU,
 * transformers.js, or a scripted engine in tests).
 *
 * Shapes follow the OpenAI chat-completions API (role/content messages, usage in tokens); the
 * shapes other layers share (messages, usage, load progress, error codes) are in `src/model/engine.ts`,
 * the token counter in `src/model/tokens.ts`.
 */
import type { ChatEngineKind, ChatMessage, LoadProgress, TokenUsage } from '../model/engine';
import type { TokenCounter } from '../model/tokens';

/**
 * Output constraint for a completion. `json_object` asks for a single JSON object; engines that
 * support grammar-constrained decoding (WebLLM `response_format`, llama.cpp grammars in wllama)
 * enforce `schema` (a JSON Schema object) when given. Callers must still validate the reply.
 */
export type ResponseFormat = { type: 'text' } | { type: 'json_object'; schema?: Record<string, unknown> };

/** A chat-completion request. */
export interface ChatRequest {
  messages: ChatMessage[];
  /** Upper bound on generated tokens (tokens, not characters). */
  maxTokens?: number;
  /** Sampling temperature, 0 = greedy. */
  temperature?: number;
  responseFormat?: ResponseFormat;
  /** Aborting stops generation; `complete` then resolves with `finishReason: 'abort'` and the text so far. */
  signal?: AbortSignal;
}

/** Why a completion ended. */
export type FinishReason = 'stop' | 'length' | 'abort';

/** Result of one completion. `content` is the whole generated text. */
export interface ChatResult {
  content: string;
  finishReason: FinishReason;
  /** `null` when the engine did not report usage (e.g. aborted before the end). */
  usage: TokenUsage | null;
}

/** Options common to `ChatEngine.load` / `Embedder` factories. */
export interface LoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
}

/**
 * A loaded-or-loadable chat model. Implementations: `src/engines/webllm`, `src/engines/wllama`,
 * and a scripted engine used in tests (`tests/helpers/scripted-engine.ts`).
 */
export interface ChatEngine {
  readonly kind: ChatEngineKind;
  /** Model id while loaded, else `null`. */
  readonly modelId: string | null;
  /** Context window of the loaded model in tokens (prompt + answer), `null` while unloaded. */
  contextWindow(): number | null;
  /** Token counter of the loaded model; `null` when the engine cannot tokenize locally. */
  tokenCounter(): TokenCounter | null;
  /** `true` once `load` finished and until `unload`. */
  isLoaded(): boolean;
  /**
   * Streams one chat completion. `onDelta` receives each new piece of text as it is generated.
   * @throws EngineError('not_loaded') when no model is loaded; EngineError('generation') when the
   *   runtime fails. An abort is not an error: it resolves with `finishReason: 'abort'`.
   */
  complete(request: ChatRequest, onDelta?: (delta: string) => void): Promise<ChatResult>;
  /** Frees the model (GPU/WASM memory). Safe to call when nothing is loaded. */
  unload(): Promise<void>;
}

/**
 * Text embedder. Vectors are L2-normalized `Float32Array`s of length `dimension`, so cosine
 * similarity equals the dot product and squared Euclidean distance is `2 - 2·cos`.
 */
export interface Embedder {
  /** Model id, e.g. `Xenova/paraphrase-multilingual-MiniLM-L12-v2`. Stored next to each vector. */
  readonly modelId: string;
  /** Vector length (e.g. 384). */
  readonly dimension: number;
  /**
   * Embeds a batch. Returns one vector per input, same order.
   * @throws EngineError('embedding') when the runtime fails.
   */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Engine failures are coded errors of the `engine` domain (`src/model/errors.ts`: one list of codes). */
export { EngineError, ENGINE_ERROR_CODES, type EngineErrorCode } from '../model/errors';
