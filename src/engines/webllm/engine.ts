// One file (over ~300 lines): one engine adapter; every method shares the service-worker port
// connection, its load state and the error mapping.
/**
 * `ChatEngine` backed by WebLLM (MLC LLM on WebGPU). The model runs in the extension service
 * worker (`ExtensionServiceWorkerMLCEngineHandler`, see `service-worker.ts`); this object lives
 * in the engine host (offscreen document) and is a proxy: WebLLM's own client
 * (`WebWorkerMLCEngine`, the class `ExtensionServiceWorkerMLCEngine` extends) speaking WebLLM's
 * message protocol over a `chrome.runtime` port named `web_llm_service_worker`. This follows
 * web-llm's design: one engine interface, an in-process implementation (`MLCEngine` in the
 * worker) and a port proxy.
 *
 * What this layer adds on top of WebLLM's client:
 * - the q4f32 variant is chosen automatically when the adapter lacks `shader-f16`;
 * - load progress is mapped to `LoadProgress` (stage, fraction of the whole load, bytes);
 * - a stopped service worker is noticed: the port disconnects, every pending call rejects with
 *   `EngineError('disconnected')` instead of hanging forever (WebLLM's client would), the engine
 *   reports `isLoaded() === false`, and the next `load` reconnects and reloads (from the browser
 *   cache, no second download);
 * - errors become `EngineError`s with stable codes; aborts call `interruptGenerate`.
 */
import { Mutex } from 'async-mutex';
import { WebWorkerMLCEngine, prebuiltAppConfig, type AppConfig, type ChatCompletionChunk, type ChatCompletionRequestStreaming } from '@mlc-ai/web-llm';
import type { GpuInfo } from '../../model/engine';
import { probeGpu } from '../../platform/gpu';
import { EngineError, type ChatEngine, type ChatRequest, type ChatResult, type LoadOptions } from '../types';
import type { TokenCounter } from '../../model/tokens';
import { addChunk, finishCompletion, startCompletion } from '../openai-stream';
import { webllmVariantFor } from './models';
import { createWebLLMProgressMapper, type WebLLMInitReport } from './progress';

/** Port name WebLLM's extension client and handler use (`ExtensionServiceWorkerMLCEngine`). */
export const WEBLLM_PORT_NAME = 'web_llm_service_worker';

/** Folder inside the package where WebLLM model libraries (`*-webgpu.wasm`) may be shipped. */
export const PACKAGED_WEBLLM_LIBS_PATH = '/runtime/webllm/';

/** Message shown when WebGPU is missing; the UI offers the CPU engine next to it. */
export const NO_WEBGPU_MESSAGE =
  'WebGPU is not available in this browser or on this device, so the GPU engine (WebLLM) cannot run. Use the CPU engine (wllama) instead.';

/** Message of the `unsupported` error thrown when the model's WebGPU library is not in this build. */
export function libraryNotPackagedMessage(modelId: string): string {
  return `The GPU model library of ${modelId} is not included in this build (run npm run fetch:webllm-libs before building). Use the CPU engine instead.`;
}

/** The subset of `chrome.runtime.Port` the proxy uses (tests pass a fake pair of ports). */
export interface WebLLMPort {
  readonly name: string;
  postMessage(message: unknown): void;
  disconnect(): void;
  readonly onMessage: { addListener(listener: (message: unknown) => void): void };
  readonly onDisconnect: { addListener(listener: () => void): void };
}

/** A WebLLM chat engine; `load` takes a WebLLM model id (base or variant id). */
export interface WebLLMChatEngine extends ChatEngine {
  /**
   * Loads `modelId` in the service worker (downloads it on first use; later loads read the
   * browser cache). The f32 variant is used when the GPU lacks `shader-f16`, so `modelId`
   * afterwards may differ from the argument.
   * @throws EngineError: `no_webgpu` (no adapter), `unsupported` (unknown model id, missing GPU
   *   feature), also when the model's WebGPU library is not shipped in the package, `download` (network failure), `load` (out of GPU memory, cancelled through
   *   `options.signal`, other failures), `disconnected` (the service worker stopped meanwhile).
   *   The engine is not loaded after a failure.
   */
  load(modelId: string, options?: LoadOptions): Promise<void>;
}

/** Options of `createWebLLMEngine`; all optional, defaults fit the extension. */
export interface WebLLMEngineOptions {
  /** Opens the port to the service worker (default `chrome.runtime.connect({ name: WEBLLM_PORT_NAME })`). */
  connect?: () => WebLLMPort;
  /** WebGPU probe (default `probeGpu` of `src/platform/gpu.ts`). */
  probeGpu?: () => Promise<GpuInfo>;
  /** Token counter of a model, when one can be built locally (e.g. its HF tokenizer); default none. */
  tokenCounterFor?: (modelId: string) => Promise<TokenCounter | null>;
  /** Interval of keep-alive messages that keep the service worker running (ms, default 10,000 like WebLLM). */
  keepAliveMs?: number;
  /** Model list (default WebLLM's `prebuiltAppConfig`). */
  appConfig?: AppConfig;
  /**
   * Given a model record's `model_lib` URL, returns the URL of the same library shipped in the
   * package, or `null` when the package does not ship it (then `load` throws
   * `EngineError('unsupported')`: a library fetched at run time would be remote code). Default: looks for the file name under
   * `/runtime/webllm/` in the extension (so release builds can ship every WASM file).
   */
  resolvePackagedLib?: (modelLibUrl: string) => Promise<string | null>;
  /** Upper bound on waiting for the service worker to acknowledge `unload` (ms, default 10,000). */
  unloadTimeoutMs?: number;
}

/** Default port opener (extension pages only). */
function defaultConnect(): WebLLMPort {
  return chrome.runtime.connect({ name: WEBLLM_PORT_NAME }) as unknown as WebLLMPort;
}

/** Default packaged-library lookup: `HEAD chrome-extension://<id>/runtime/webllm/<file>`. */
async function defaultResolvePackagedLib(modelLibUrl: string): Promise<string | null> {
  const runtime = (globalThis as { chrome?: { runtime?: { getURL?: (p: string) => string } } }).chrome?.runtime;
  if (!runtime?.getURL) return null;
  const fileName = modelLibUrl.split('/').pop();
  if (!fileName) return null;
  const url = runtime.getURL(`${PACKAGED_WEBLLM_LIBS_PATH}${fileName}`);
  try {
    const response = await fetch(url, { method: 'HEAD' });
    return response.ok ? url : null;
  } catch {
    return null;
  }
}

/** Text of an error from WebLLM's client (the worker sends errors as strings). */
function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

/** Maps a load failure to an `EngineError` code (matches WebLLM 0.2.86's error class names/messages). */
export function mapWebLLMLoadError(error: unknown, modelId: string): EngineError {
  if (error instanceof EngineError) return error;
  const text = errorText(error);
  const cause = { cause: error };
  if (/WebGPUNotAvailableError|WebGPUNotFoundError|Cannot find WebGPU|WebGPU is not supported/i.test(text)) {
    return new EngineError('no_webgpu', NO_WEBGPU_MESSAGE, cause);
  }
  if (/ShaderF16SupportError|FeatureSupportError|shader-f16/i.test(text)) {
    return new EngineError('unsupported', `This GPU lacks a feature ${modelId} needs: ${text}`, cause);
  }
  if (/ModelNotFoundError|Cannot find model record/i.test(text)) {
    return new EngineError('unsupported', `WebLLM does not know the model "${modelId}".`, cause);
  }
  if (/DeviceLostError|device was lost|out of memory|\bOOM\b/i.test(text)) {
    return new EngineError('load', `The GPU ran out of memory while loading ${modelId}. Try a smaller model.`, cause);
  }
  if (/Failed to fetch|NetworkError|Cannot fetch|network|ERR_|status code|HTTP \d{3}|\b40[34]\b|\b50\d\b/i.test(text)) {
    return new EngineError('download', `Downloading ${modelId} failed (are you offline?): ${text}`, cause);
  }
  return new EngineError('load', `WebLLM could not load ${modelId}: ${text}`, cause);
}

/** One live port to the service worker with WebLLM's client on top. */
interface Connection {
  port: WebLLMPort;
  client: WebWorkerMLCEngine;
  alive: boolean;
  /** Rejects with `EngineError('disconnected')` when the port closes. */
  disconnected: Promise<never>;
  close(reason: string): void;
}

/**
 * Creates the proxy engine. It connects lazily on the first `load`.
 * @param options see `WebLLMEngineOptions`.
 */
export function createWebLLMEngine(options: WebLLMEngineOptions = {}): WebLLMChatEngine {
  const connect = options.connect ?? defaultConnect;
  const probe = options.probeGpu ?? (() => probeGpu());
  const appConfig = options.appConfig ?? prebuiltAppConfig;
  const resolveLib = options.resolvePackagedLib ?? defaultResolvePackagedLib;
  const keepAliveMs = options.keepAliveMs ?? 10_000;
  const unloadTimeoutMs = options.unloadTimeoutMs ?? 10_000;

  let conn: Connection | null = null;
  let loadedModelId: string | null = null;
  let contextWindow: number | null = null;
  let counter: TokenCounter | null = null;
  /** Loads and unloads run one at a time; so do generations (one model, one sequence). */
  const mutexes = { lifecycle: new Mutex(), generation: new Mutex() };
  const serial = <T>(which: 'lifecycle' | 'generation', fn: () => Promise<T>): Promise<T> => mutexes[which].runExclusive(fn);

  function openConnection(): Connection {
    const port = connect();
    let rejectDisconnected!: (error: EngineError) => void;
    const disconnected = new Promise<never>((_, reject) => {
      rejectDisconnected = reject;
    });
    disconnected.catch(() => undefined);
    // WebLLM's client only needs `postMessage` and an `onmessage` slot (its `ChatWorker`).
    const worker: { postMessage(message: unknown): void; onmessage: ((message: unknown) => void) | null } = {
      postMessage: (message) => port.postMessage(message),
      onmessage: null,
    };
    port.onMessage.addListener((message) => {
      try {
        worker.onmessage?.(message);
      } catch (error) {
        // A reply to a request the client no longer tracks; nothing waits for it.
        console.warn('[webllm] ignored message from the service worker:', errorText(error));
      }
    });
    const client = new WebWorkerMLCEngine(worker as unknown as ConstructorParameters<typeof WebWorkerMLCEngine>[0]);
    const keepAlive = setInterval(() => {
      try {
        port.postMessage({ kind: 'keepAlive', type: 'keepAlive', uuid: '', content: null });
      } catch {
        // the disconnect listener cleans up
      }
    }, keepAliveMs);
    const connection: Connection = {
      port,
      client,
      alive: true,
      disconnected,
      close(reason) {
        if (!connection.alive) return;
        connection.alive = false;
        clearInterval(keepAlive);
        rejectDisconnected(new EngineError('disconnected', reason));
        if (conn === connection) {
          conn = null;
          loadedModelId = null;
          contextWindow = null;
          counter = null;
        }
      },
    };
    port.onDisconnect.addListener(() => connection.close('The GPU engine stopped (its service worker was shut down). Load the model again to continue.'));
    return connection;
  }

  /** Races `promise` against the port closing, so nothing waits on a dead service worker. */
  const guard = <T>(c: Connection, promise: Promise<T>): Promise<T> => Promise.race([promise, c.disconnected]);

  async function load(modelId: string, loadOptions: LoadOptions = {}): Promise<void> {
    const { onProgress, signal } = loadOptions;
    const cancelled = () => new EngineError('load', 'Loading the model was cancelled.', { cause: signal?.reason });
    if (signal?.aborted) throw cancelled();
    const gpu = await probe();
    if (!gpu.available) throw new EngineError('no_webgpu', NO_WEBGPU_MESSAGE);
    const variant = webllmVariantFor(modelId, gpu);
    const record = appConfig.model_list.find((m) => m.model_id === variant);
    if (!record) throw new EngineError('unsupported', `WebLLM does not know the model "${variant}".`);

    if (conn?.alive && loadedModelId === variant) {
      onProgress?.({ stage: 'ready', fraction: 1, text: `${variant} is already loaded.` });
      return;
    }
    const c = conn?.alive ? conn : (conn = openConnection());
    loadedModelId = null;
    contextWindow = null;
    counter = null;

    // A model library is WebAssembly: an extension may only run the ones it ships. The worker is
    // given one record, whose library is the packaged file, so no remote library URL reaches it.
    const packagedLib = await resolveLib(record.model_lib).catch(() => null);
    if (!packagedLib) throw new EngineError('unsupported', libraryNotPackagedMessage(variant));
    const config: AppConfig = { ...appConfig, model_list: [{ ...record, model_lib: packagedLib }] };
    // Sent on every load: the worker's engine may still hold another load's library URLs.
    c.client.setAppConfig(config);

    const mapProgress = createWebLLMProgressMapper();
    c.client.setInitProgressCallback((report: WebLLMInitReport) => onProgress?.(mapProgress(report)));
    // MLCEngine.unload() aborts an in-flight reload (its reload AbortController) in the worker;
    // the caller is released at once rather than when the worker gets round to it.
    let rejectAborted!: (error: EngineError) => void;
    const aborted = new Promise<never>((_, reject) => {
      rejectAborted = reject;
    });
    aborted.catch(() => undefined);
    const onAbort = () => {
      rejectAborted(cancelled());
      void guard(c, c.client.unload()).catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([guard(c, c.client.reload(variant)), aborted]);
    } catch (error) {
      if (signal?.aborted) throw cancelled();
      throw mapWebLLMLoadError(error, variant);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      c.client.setInitProgressCallback(undefined);
    }
    if (signal?.aborted) {
      await guard(c, c.client.unload()).catch(() => undefined);
      throw cancelled();
    }
    if (!c.alive) throw new EngineError('disconnected', 'The GPU engine stopped while loading. Load the model again.');
    loadedModelId = variant;
    contextWindow = record.overrides?.context_window_size ?? 4096;
    counter = options.tokenCounterFor ? await options.tokenCounterFor(variant).catch(() => null) : null;
    onProgress?.({ stage: 'ready', fraction: 1, text: `${variant} is ready.` });
  }

  async function complete(request: ChatRequest, onDelta?: (delta: string) => void): Promise<ChatResult> {
    const c = conn;
    if (!c?.alive || loadedModelId === null) throw new EngineError('not_loaded', 'No GPU model is loaded.');
    const { signal } = request;
    if (signal?.aborted) return { content: '', finishReason: 'abort', usage: null };
    const body: ChatCompletionRequestStreaming = {
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })) as ChatCompletionRequestStreaming['messages'],
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.responseFormat?.type === 'json_object') {
      // WebLLM wants the JSON Schema as a string (`ResponseFormat.schema`); it compiles it to a grammar.
      body.response_format = request.responseFormat.schema
        ? { type: 'json_object', schema: JSON.stringify(request.responseFormat.schema) }
        : { type: 'json_object' };
    }
    const onAbort = () => {
      try {
        c.client.interruptGenerate();
      } catch {
        // port already gone: the stream rejects with 'disconnected'
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const streamed = startCompletion();
    try {
      const stream = await guard(c, c.client.chatCompletion(body));
      const iterator = stream[Symbol.asyncIterator]();
      for (;;) {
        const next: IteratorResult<ChatCompletionChunk> = await guard(c, iterator.next());
        if (next.done) break;
        addChunk(streamed, next.value, onDelta);
      }
    } catch (error) {
      if (error instanceof EngineError) throw error;
      if (signal?.aborted) return finishCompletion(streamed, true);
      const text = errorText(error);
      throw new EngineError('generation', `The GPU model failed while answering: ${text}`, { cause: error });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    return finishCompletion(streamed, signal?.aborted ?? false);
  }

  async function unload(): Promise<void> {
    const c = conn;
    conn = null;
    loadedModelId = null;
    contextWindow = null;
    counter = null;
    if (!c?.alive) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, unloadTimeoutMs);
      });
      await Promise.race([guard(c, c.client.unload()), timeout]);
    } catch {
      // a dead or failing worker frees its GPU memory when it stops
    } finally {
      clearTimeout(timer);
    }
    c.close('The GPU model was unloaded.');
    try {
      c.port.disconnect();
    } catch {
      // already closed
    }
  }

  return {
    kind: 'webllm',
    get modelId() {
      return conn?.alive ? loadedModelId : null;
    },
    contextWindow: () => (conn?.alive && loadedModelId ? contextWindow : null),
    tokenCounter: () => (conn?.alive && loadedModelId ? counter : null),
    isLoaded: () => Boolean(conn?.alive && loadedModelId),
    load: (modelId, loadOptions) => serial('lifecycle', () => load(modelId, loadOptions)),
    complete: (request, onDelta) => {
      if (!conn?.alive || loadedModelId === null) return Promise.reject(new EngineError('not_loaded', 'No GPU model is loaded.'));
      return serial('generation', () => complete(request, onDelta));
    },
    unload: () => serial('lifecycle', unload),
  };
}
