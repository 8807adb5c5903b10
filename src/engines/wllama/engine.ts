/**
 * `ChatEngine` backed by wllama 3.13 (llama.cpp compiled to WebAssembly, CPU): the engine for
 * devices without WebGPU. Runs in the engine host (offscreen document) because wllama starts its
 * own Web Worker, which a service worker cannot do.
 *
 * - Models: a GGUF from the catalog (`loadFromUrl`: downloaded once into wllama's OPFS cache,
 *   read from there afterwards, offline included) or a GGUF `Blob`/`File` (`loadFromBlob`:
 *   e.g. a file the user opened, kept in OPFS `models/`; needs no network at all).
 * - The GGUF header is read first, once per load (`gguf.ts`; the same parsed header goes to
 *   `tokenCounterFor`): a file that is not a GGUF fails fast with a clear
 *   `EngineError('load')` before any worker starts; the trained context window caps `n_ctx`; a
 *   model without `tokenizer.chat_template` gets a ChatML template so chat completion works.
 * - No code from a CDN: wllama's "compat" mode (which fetches a worker and WASM from jsDelivr on
 *   browsers without JSPI/Memory64) is switched off; only the packaged `wllama.wasm` is used.
 * - One thread unless the page is `crossOriginIsolated` (threads need SharedArrayBuffer); CPU
 *   only (`n_gpu_layers: 0`), so it never competes with WebLLM for the GPU.
 */
import { Mutex } from 'async-mutex';
import { addChunk, finishCompletion, startCompletion } from '../openai-stream';
import { LoggerWithoutDebug, Wllama, WllamaAbortError, WllamaError, type WllamaLogger } from '@wllama/wllama';
import { EngineError, type ChatEngine, type ChatRequest, type ChatResult, type LoadOptions } from '../types';
import type { LoadProgress } from '../../model/engine';
import type { TokenCounter } from '../../model/tokens';
import type { GgufHeader } from '../../gguf/header';
import { ggufInfo, readModelHeader } from './gguf';
import { DEFAULT_WLLAMA_CONTEXT } from './models';

/**
 * ChatML chat template (Jinja), the format of OpenAI's ChatML and Qwen's models, in the form the
 * Hugging Face chat-templating docs give. Used for GGUFs that carry no `tokenizer.chat_template`
 * (llama.cpp also detects it by its `<|im_start|>` marker when Jinja is off).
 */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** Load options of the CPU engine. */
export interface WllamaLoadOptions extends LoadOptions {
  /** Context window to allocate (tokens, default 4096), capped at the model's trained window. */
  contextSize?: number;
}

/** A wllama chat engine. */
export interface WllamaChatEngine extends ChatEngine {
  /**
   * Loads a GGUF from a Blob (a `File` from disk or OPFS). Works with no network.
   * @param modelId the id to report (e.g. the file name).
   * @throws EngineError('load') for a non-GGUF/corrupt file, a cancelled load or a runtime
   *   failure; EngineError('unsupported') when the browser lacks WebAssembly Memory64. The
   *   previous model is unloaded first; after a failure nothing is loaded.
   */
  loadFromBlob(modelId: string, blob: Blob, options?: WllamaLoadOptions): Promise<void>;
  /**
   * Loads a GGUF from a URL, downloading it once into wllama's OPFS cache (later loads, offline
   * included, read the cache).
   * @throws EngineError('download') when the download fails; otherwise as `loadFromBlob`.
   */
  loadFromUrl(modelId: string, url: string, options?: WllamaLoadOptions): Promise<void>;
}

/** The part of wllama's `Wllama` class this engine uses (tests pass a fake; see engine tests). */
export interface WllamaLike {
  loadModel(blobs: Blob[], params: Record<string, unknown>): Promise<void>;
  createChatCompletion(options: Record<string, unknown> & { stream: true }): Promise<AsyncIterable<WllamaChunk>>;
  getLoadedContextInfo(): { n_ctx: number };
  exit(): Promise<void>;
  modelManager: {
    getModels(): Promise<{ url: string }[]>;
    getModelOrDownload(
      source: { url: string },
      options: { progressCallback?: (p: { loaded: number; total: number }) => void; signal?: AbortSignal },
    ): Promise<{ open(): Promise<Blob[]> }>;
  };
}

/** An OpenAI-shaped stream chunk from wllama (`ChatCompletionChunk`, the fields used here). */
export interface WllamaChunk {
  choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  timings?: { prompt_n?: number; predicted_n?: number };
}

/** Options of `createWllamaEngine`. */
export interface WllamaEngineOptions {
  /** URL of the packaged `wllama.wasm` (e.g. `runtime.getURL('/runtime/wllama/wllama.wasm')`). */
  wasmUrl: string;
  /**
   * Builds a token counter from the GGUF (e.g. its embedded tokenizer); `null`/failure = none.
   * Gets the model and its header, already parsed for the load (the header is read once).
   */
  tokenCounterFor?: (model: Blob, header: GgufHeader) => Promise<TokenCounter | null>;
  /** Creates the wllama instance (default: real wllama with compat mode off). */
  createWllama?: (wasmUrl: string) => WllamaLike;
  /**
   * A generation that produces no chunk for this long is treated as a dead worker (ms, default
   * 300,000: long enough for prompt processing of a full context on a slow CPU).
   */
  stallTimeoutMs?: number;
}

/** Logger for wllama: no debug noise; native "errors" become warnings (real failures reach us as exceptions). */
const quietLogger: WllamaLogger = {
  ...LoggerWithoutDebug,
  log: () => undefined,
  error: (...args: unknown[]) => console.warn('[wllama]', ...args),
};

/** `true` when this browser's WebAssembly supports 64-bit memories (needed by wllama's non-compat build). */
export function supportsMemory64(): boolean {
  try {
    new WebAssembly.Memory({ address: 'i64', initial: BigInt(1) } as unknown as WebAssembly.MemoryDescriptor);
    return true;
  } catch {
    return false;
  }
}

/** Default factory: real wllama, compat mode (CDN code) off. */
function defaultCreateWllama(wasmUrl: string): WllamaLike {
  if (!supportsMemory64()) {
    throw new EngineError('unsupported', 'The CPU engine needs WebAssembly Memory64 (Chrome 133 or newer). Update the browser to use it.');
  }
  const wllama = new Wllama({ default: wasmUrl }, { allowOffline: true, logger: quietLogger });
  wllama.setCompat(null);
  return wllama as unknown as WllamaLike;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `true` for errors after which the wllama worker cannot be used again: anything but a request
 * the model refused (`inference_error`, e.g. a prompt longer than the context; `kv_cache_full`)
 * or an abort. A crashed worker surfaces as `WllamaRuntimeError` or a plain `Error`.
 */
function isFatal(error: unknown): boolean {
  if (error instanceof WllamaAbortError) return false;
  if (error instanceof WllamaError) return error.type !== 'inference_error' && error.type !== 'kv_cache_full';
  return true;
}

/**
 * Creates the CPU engine. Nothing starts until a load.
 * @param options see `WllamaEngineOptions`.
 */
export function createWllamaEngine(options: WllamaEngineOptions): WllamaChatEngine {
  const create = options.createWllama ?? defaultCreateWllama;
  const stallTimeoutMs = options.stallTimeoutMs ?? 300_000;

  let instance: WllamaLike | null = null;
  let loadedModelId: string | null = null;
  let nCtx: number | null = null;
  let counter: TokenCounter | null = null;
  /** Aborts the running generation when the model is unloaded or replaced. */
  let generationAbort: AbortController | null = null;
  const mutexes = { lifecycle: new Mutex(), generation: new Mutex() };
  const serial = <T>(which: 'lifecycle' | 'generation', fn: () => Promise<T>): Promise<T> => mutexes[which].runExclusive(fn);

  /** Drops the loaded model; `exit()` frees the WASM memory and stops the worker (best effort). */
  async function release(): Promise<void> {
    const old = instance;
    instance = null;
    loadedModelId = null;
    nCtx = null;
    counter = null;
    generationAbort?.abort();
    generationAbort = null;
    if (old) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([old.exit().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, 5_000)))]);
      clearTimeout(timer);
    }
  }

  /** Shared tail of both loads: worker start, model load, token counter. `header` is the first blob's, parsed once. */
  async function loadInto(w: WllamaLike, modelId: string, blobs: Blob[], header: GgufHeader, opts: WllamaLoadOptions, label: string): Promise<void> {
    const info = ggufInfo(header);
    const { onProgress, signal } = opts;
    const cancelled = () => new EngineError('load', 'Loading the model was cancelled.', { cause: signal?.reason });
    const first = blobs[0]!;
    if (signal?.aborted) {
      void w.exit().catch(() => undefined);
      throw cancelled();
    }
    const wanted = Math.max(256, Math.floor(opts.contextSize ?? DEFAULT_WLLAMA_CONTEXT));
    const params: Record<string, unknown> = {
      n_ctx: info.contextLength ? Math.min(wanted, info.contextLength) : wanted,
      n_gpu_layers: 0,
      n_parallel: 1,
    };
    if (!(globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated) params.n_threads = 1;
    if (!info.chatTemplate) params.chat_template = CHATML_TEMPLATE;
    onProgress?.({ stage: 'init', fraction: null, text: `Loading ${modelId} into memory` });
    let rejectAborted!: (e: EngineError) => void;
    const aborted = new Promise<never>((_, reject) => {
      rejectAborted = reject;
    });
    aborted.catch(() => undefined);
    const onAbort = () => rejectAborted(cancelled());
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([w.loadModel(blobs, params), aborted]);
    } catch (error) {
      void w.exit().catch(() => undefined);
      if (error instanceof EngineError) throw error;
      throw new EngineError('load', `llama.cpp could not load ${label}: ${errorText(error)}`, { cause: error });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    instance = w;
    loadedModelId = modelId;
    try {
      nCtx = w.getLoadedContextInfo().n_ctx;
    } catch {
      nCtx = params.n_ctx as number;
    }
    const loadedCtx = nCtx ?? 0;
    if (!(loadedCtx > 0)) {
      // llama.cpp "loaded" it but has no context to run in: the file is unusable.
      await release();
      throw new EngineError('load', `llama.cpp could not set up ${label} (a context of ${loadedCtx} tokens): the file is probably truncated or corrupt.`);
    }
    counter = options.tokenCounterFor ? await options.tokenCounterFor(first, header).catch(() => null) : null;
    onProgress?.({ stage: 'ready', fraction: 1, text: `${modelId} is ready (${nCtx} tokens of context).` });
  }

  async function loadFromBlob(modelId: string, blob: Blob, opts: WllamaLoadOptions = {}): Promise<void> {
    await release();
    if (opts.signal?.aborted) throw new EngineError('load', 'Loading the model was cancelled.', { cause: opts.signal.reason });
    const label = `"${modelId}"`;
    if (blob.size === 0) throw new EngineError('load', `${label} is empty.`);
    const header = await readModelHeader(blob, label); // fails fast, before a worker starts
    const w = create(options.wasmUrl);
    await loadInto(w, modelId, [blob], header, opts, label);
  }

  async function loadFromUrl(modelId: string, url: string, opts: WllamaLoadOptions = {}): Promise<void> {
    await release();
    const { onProgress, signal } = opts;
    if (signal?.aborted) throw new EngineError('load', 'Loading the model was cancelled.', { cause: signal.reason });
    const w = create(options.wasmUrl);
    const cached = await w.modelManager
      .getModels()
      .then((models) => models.some((m) => m.url === url))
      .catch(() => false);
    const stage: LoadProgress['stage'] = cached ? 'cache' : 'download';
    let blobs: Blob[];
    try {
      const model = await w.modelManager.getModelOrDownload(
        { url },
        {
          progressCallback: ({ loaded, total }) =>
            onProgress?.({
              stage,
              fraction: total > 0 ? Math.min(1, loaded / total) : null,
              loadedBytes: loaded,
              ...(total > 0 ? { totalBytes: total } : {}),
              text: `${modelId}: ${Math.round(loaded / 1048576)} / ${Math.round(total / 1048576)} MB`,
            }),
          ...(signal ? { signal } : {}),
        },
      );
      blobs = await model.open();
    } catch (error) {
      void w.exit().catch(() => undefined);
      if (signal?.aborted) throw new EngineError('load', 'Loading the model was cancelled.', { cause: signal.reason });
      throw new EngineError('download', `Downloading ${modelId} failed (are you offline?): ${errorText(error)}`, { cause: error });
    }
    const label = `"${modelId}"`;
    let header: GgufHeader;
    try {
      if (!blobs[0]) throw new EngineError('load', `${label} contains no model data.`);
      header = await readModelHeader(blobs[0], label);
    } catch (error) {
      void w.exit().catch(() => undefined);
      throw error;
    }
    await loadInto(w, modelId, blobs, header, opts, label);
  }

  async function complete(request: ChatRequest, onDelta?: (delta: string) => void): Promise<ChatResult> {
    const w = instance;
    if (!w || loadedModelId === null) throw new EngineError('not_loaded', 'No CPU model is loaded.');
    const { signal } = request;
    if (signal?.aborted) return { content: '', finishReason: 'abort', usage: null };
    const internal = new AbortController();
    generationAbort = internal;
    const onAbort = () => internal.abort();
    signal?.addEventListener('abort', onAbort, { once: true });

    const body: Record<string, unknown> & { stream: true } = {
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      stream_options: { include_usage: true },
      abortSignal: internal.signal,
    };
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.responseFormat?.type === 'json_object') {
      // llama.cpp turns a JSON schema (or plain JSON mode) into a grammar.
      body.response_format = request.responseFormat.schema
        ? { type: 'json_schema', json_schema: { name: 'response', schema: request.responseFormat.schema, strict: true } }
        : { type: 'json_object' };
    }

    const streamed = startCompletion();
    let stallTimer: ReturnType<typeof setTimeout> | undefined;
    const stalled = () =>
      new Promise<never>((_, reject) => {
        stallTimer = setTimeout(() => reject(new Error(`no output for ${stallTimeoutMs} ms`)), stallTimeoutMs);
      });
    try {
      const stream = await Promise.race([w.createChatCompletion(body), stalled()]);
      clearTimeout(stallTimer);
      const iterator = stream[Symbol.asyncIterator]();
      for (;;) {
        const next = await Promise.race([iterator.next(), stalled()]);
        clearTimeout(stallTimer);
        if (next.done) break;
        const chunk = next.value;
        addChunk(streamed, chunk, onDelta);
        // llama-server reports prompt/predicted counts in `timings` when `usage` is absent.
        if (!chunk.usage && chunk.timings?.prompt_n !== undefined && chunk.timings.predicted_n !== undefined) {
          streamed.usage = { promptTokens: chunk.timings.prompt_n, completionTokens: chunk.timings.predicted_n };
        }
      }
    } catch (error) {
      clearTimeout(stallTimer);
      if (signal?.aborted) return { ...finishCompletion(streamed, true), usage: null };
      if (internal.signal.aborted) throw new EngineError('generation', 'The model was unloaded while answering.', { cause: error });
      if (isFatal(error)) {
        if (instance === w) await release();
        throw new EngineError('generation', `The CPU engine stopped unexpectedly (${errorText(error)}). Load the model again.`, { cause: error });
      }
      throw new EngineError('generation', `The CPU model failed while answering: ${errorText(error)}`, { cause: error });
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (generationAbort === internal) generationAbort = null;
    }
    return finishCompletion(streamed, signal?.aborted ?? false);
  }

  return {
    kind: 'wllama',
    get modelId() {
      return instance ? loadedModelId : null;
    },
    contextWindow: () => (instance ? nCtx : null),
    tokenCounter: () => (instance ? counter : null),
    isLoaded: () => instance !== null && loadedModelId !== null,
    loadFromBlob: (modelId, blob, opts) => serial('lifecycle', () => loadFromBlob(modelId, blob, opts)),
    loadFromUrl: (modelId, url, opts) => serial('lifecycle', () => loadFromUrl(modelId, url, opts)),
    complete: (request, onDelta) => {
      if (!instance || loadedModelId === null) return Promise.reject(new EngineError('not_loaded', 'No CPU model is loaded.'));
      return serial('generation', () => complete(request, onDelta));
    },
    unload: () => serial('lifecycle', release),
  };
}
