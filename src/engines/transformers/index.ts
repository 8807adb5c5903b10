/**
 * `Embedder` backed by transformers.js (`@huggingface/transformers` 4.3, ONNX Runtime): the
 * `feature-extraction` pipeline with mean pooling and L2 normalization, i.e. the
 * sentence-transformers recipe of the default model `paraphrase-multilingual-MiniLM-L12-v2`
 * (Reimers & Gurevych 2019/2020; 384 dimensions, 50+ languages including Chinese and English).
 *
 * Where model files come from, in transformers.js's own order: the browser cache
 * (`caches.open('transformers-cache')`, filled by earlier downloads, so a model downloaded once
 * works offline), then model files shipped inside the extension package
 * (`packagedModelsUrl/<modelId>/…`, the offline install option) or a local folder (Node), then
 * the Hugging Face hub when `allowRemoteModels`.
 *
 * ONNX Runtime's own WASM never comes from a CDN: in a browser the runtime files shipped in the
 * package (`/runtime/ort/…`, copied by wxt.config.ts) are used, or creation fails. In Node
 * (tests, benchmarks) transformers.js uses onnxruntime-node instead.
 */
import { env, pipeline, type FeatureExtractionPipeline, type ProgressInfo } from '@huggingface/transformers';
import { EngineError, type Embedder } from '../types';
import type { LoadProgress } from '../../model/engine';

/** Default embedding model: multilingual (zh/en and 50+ more), 384-d, quantized ONNX from Xenova. */
export const DEFAULT_EMBEDDING_MODEL = 'Xenova/paraphrase-multilingual-MiniLM-L12-v2';

/**
 * Package paths of ONNX Runtime Web's CPU-only WASM build (see RUNTIME_ASSETS in wxt.config.ts,
 * which also maps transformers.js's `onnxruntime-web/webgpu` import to the matching WASM-only API).
 */
export const ORT_RUNTIME_PATHS = {
  mjs: '/runtime/ort/ort-wasm-simd-threaded.mjs',
  wasm: '/runtime/ort/ort-wasm-simd-threaded.wasm',
} as const;

/** Texts embedded per ONNX run (bounds memory: batch × tokens × hidden floats). */
const DEFAULT_BATCH_SIZE = 16;

/** Options of `createTransformersEmbedder`. */
export interface TransformersEmbedderOptions {
  /** Model id, e.g. `Xenova/paraphrase-multilingual-MiniLM-L12-v2` (also the folder name under the local/packaged base). */
  modelId: string;
  /** Whether files may be downloaded from the Hugging Face hub (then cached by the browser). */
  allowRemoteModels: boolean;
  /** Base URL of models shipped in the extension package (e.g. `runtime.getURL('/models/')`); used first when the model is there. */
  packagedModelsUrl?: string | null;
  /** Node/tests: a folder holding `<modelId>/config.json`, `tokenizer.json`, `onnx/model_quantized.onnx`… */
  localModelPath?: string;
  onProgress?: (progress: LoadProgress) => void;
  /** Aborting rejects the creation with `EngineError('load')`; a half-created pipeline is disposed. */
  signal?: AbortSignal;
  /** ONNX weights variant: `q8` (default; `onnx/model_quantized.onnx`) or `fp32` (`onnx/model.onnx`). */
  dtype?: 'q8' | 'fp32';
  /** Texts per ONNX run (default 16). */
  batchSize?: number;
  /** Browser only: URLs of ORT's `.mjs` and `.wasm` (default: the packaged files via `chrome.runtime.getURL`). */
  wasmPaths?: { mjs: string; wasm: string };
}

/** An embedder that can also free its ONNX session. */
export interface TransformersEmbedder extends Embedder {
  /** Releases the ONNX Runtime session; `embed` fails afterwards. */
  dispose(): Promise<void>;
}

const isNode = typeof process !== 'undefined' && Boolean(process.versions?.node);

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Packaged ORT runtime URLs, or `null` outside an extension. */
function packagedWasmPaths(): { mjs: string; wasm: string } | null {
  const runtime = (globalThis as { chrome?: { runtime?: { getURL?: (p: string) => string } } }).chrome?.runtime;
  if (!runtime?.getURL) return null;
  return { mjs: runtime.getURL(ORT_RUNTIME_PATHS.mjs), wasm: runtime.getURL(ORT_RUNTIME_PATHS.wasm) };
}

/** `true` when `<base><modelId>/config.json` can be fetched (a model shipped in the package). */
async function hasPackagedModel(base: string, modelId: string): Promise<boolean> {
  try {
    const response = await fetch(new URL(`${modelId}/config.json`, base.endsWith('/') ? base : `${base}/`));
    return response.ok;
  } catch {
    return false;
  }
}

/** Maps a model-load failure to an EngineError (transformers.js 4.3 messages). */
function mapLoadError(error: unknown, modelId: string, allowRemote: boolean): EngineError {
  if (error instanceof EngineError) return error;
  const text = errorText(error);
  if (/allowRemoteModels=false|local_files_only/.test(text) || (!allowRemote && /not found|Could not locate/i.test(text))) {
    return new EngineError('load', `The embedding model "${modelId}" is not available offline (not packaged, not cached) and downloads are turned off.`, {
      cause: error,
    });
  }
  if (/Could not locate file|occurred while trying to load file|access to file|Failed to fetch|fetch failed|NetworkError|network|ECONN|ENOTFOUND/i.test(text)) {
    return new EngineError('download', `Downloading the embedding model "${modelId}" failed (are you offline?): ${text}`, { cause: error });
  }
  return new EngineError('load', `The embedding model "${modelId}" could not be loaded (are its files complete?): ${text}`, { cause: error });
}

/**
 * Loads a sentence-embedding model and returns an `Embedder`. Runs one probe embedding, which
 * proves the model works and gives its dimension.
 * @throws EngineError('load') for missing/corrupt model files, a cancelled load, or an unusable
 *   runtime; EngineError('download') when fetching from the hub fails; EngineError('unsupported')
 *   in a browser page without the packaged ONNX runtime.
 *
 * Note: transformers.js settings (`env`) are global; one embedder is expected at a time.
 */
export async function createTransformersEmbedder(options: TransformersEmbedderOptions): Promise<TransformersEmbedder> {
  const { modelId, allowRemoteModels, signal, onProgress } = options;
  const cancelled = () => new EngineError('load', 'Loading the embedding model was cancelled.', { cause: signal?.reason });
  if (signal?.aborted) throw cancelled();

  // ── runtime files: the package's, never a CDN ──
  if (!isNode) {
    const wasmPaths = options.wasmPaths ?? packagedWasmPaths();
    if (!wasmPaths) throw new EngineError('unsupported', 'The ONNX runtime files are not available in this context (not an extension page).');
    const wasm = env.backends.onnx.wasm as { wasmPaths?: unknown; numThreads?: number; proxy?: boolean } | undefined;
    if (wasm) {
      wasm.wasmPaths = { ...wasmPaths };
      wasm.proxy = false;
      // Threads need cross-origin isolation (SharedArrayBuffer); without it ORT would warn and use 1.
      if (!(globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated) wasm.numThreads = 1;
    }
    // The runtime is already in the package; do not copy 14 MB of it into Cache Storage.
    env.useWasmCache = false;
  }

  // ── model files: cache, then package/local folder, then (optionally) the hub ──
  let localBase: string | null = null;
  if (options.packagedModelsUrl && (await hasPackagedModel(options.packagedModelsUrl, modelId))) localBase = options.packagedModelsUrl;
  else if (options.localModelPath) localBase = options.localModelPath;
  env.allowRemoteModels = allowRemoteModels;
  // transformers.js refuses to run with both sources off, even when the browser cache holds the
  // model; "local" stays on when downloads are off so cached models keep working offline.
  env.allowLocalModels = localBase !== null || !allowRemoteModels;
  if (localBase !== null) env.localModelPath = localBase.endsWith('/') ? localBase : `${localBase}/`;
  if (signal?.aborted) throw cancelled();

  const stage: LoadProgress['stage'] = localBase !== null ? 'cache' : 'download';
  const progressCallback = (info: ProgressInfo) => {
    if (!onProgress) return;
    if (info.status === 'progress_total') {
      const total = info.total > 0 ? info.total : undefined;
      onProgress({
        stage,
        fraction: total ? Math.min(1, info.loaded / total) : null,
        loadedBytes: info.loaded,
        ...(total ? { totalBytes: total } : {}),
        text: `${modelId}: ${Math.round(info.loaded / 1048576)} / ${Math.round(info.total / 1048576)} MB`,
      });
    } else if (info.status === 'initiate') {
      onProgress({ stage, fraction: null, text: `${modelId}: ${info.file}` });
    } else if (info.status === 'ready') {
      onProgress({ stage: 'init', fraction: null, text: `${modelId}: starting the ONNX runtime` });
    }
  };

  let extractor: FeatureExtractionPipeline;
  const creating = pipeline('feature-extraction', modelId, {
    dtype: options.dtype ?? 'q8',
    ...(isNode ? {} : { device: 'wasm' as const }),
    progress_callback: progressCallback,
  });
  try {
    extractor = await raceAbort(creating, signal);
  } catch (error) {
    if (signal?.aborted) {
      void creating.then((p) => p.dispose()).catch(() => undefined);
      throw cancelled();
    }
    throw mapLoadError(error, modelId, allowRemoteModels);
  }

  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH_SIZE);
  let dimension = 0;
  let disposed = false;

  /** Embeds one batch; validates that each vector is finite and unit length. */
  async function run(batch: string[], offset: number): Promise<Float32Array[]> {
    const output = await extractor(batch, { pooling: 'mean', normalize: true });
    const dims = output.dims as number[];
    const data = output.data as Float32Array;
    const width = dims[dims.length - 1] ?? 0;
    if (dims.length !== 2 || dims[0] !== batch.length || width <= 0) {
      throw new EngineError('embedding', `The model returned a tensor of shape [${dims.join(', ')}], expected [${batch.length}, d].`);
    }
    const vectors: Float32Array[] = [];
    for (let i = 0; i < batch.length; i++) {
      const v = data.slice(i * width, (i + 1) * width);
      let norm = 0;
      for (const x of v) norm += x * x;
      if (!Number.isFinite(norm) || Math.abs(Math.sqrt(norm) - 1) > 1e-3) {
        throw new EngineError('embedding', `The model produced an invalid vector for input #${offset + i} (norm ${Math.sqrt(norm)}).`);
      }
      vectors.push(v);
    }
    return vectors;
  }

  try {
    const [probe] = await run(['dimension probe'], 0);
    dimension = probe!.length;
  } catch (error) {
    await extractor.dispose().catch(() => undefined);
    if (error instanceof EngineError)
      throw new EngineError('load', `The embedding model "${modelId}" does not produce usable vectors: ${error.message}`, { cause: error });
    throw mapLoadError(error, modelId, allowRemoteModels);
  }
  if (signal?.aborted) {
    await extractor.dispose().catch(() => undefined);
    throw cancelled();
  }
  onProgress?.({ stage: 'ready', fraction: 1, text: `${modelId} is ready (${dimension} dimensions).` });

  return {
    modelId,
    dimension,
    async embed(texts, embedSignal) {
      if (disposed) throw new EngineError('embedding', 'The embedder was disposed.');
      texts.forEach((t, i) => {
        if (typeof t !== 'string') throw new EngineError('embedding', `Input #${i} is not a string.`);
      });
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        if (embedSignal?.aborted) throw new EngineError('embedding', 'Embedding was cancelled.', { cause: embedSignal.reason });
        try {
          out.push(...(await run(texts.slice(start, start + batchSize), start)));
        } catch (error) {
          if (error instanceof EngineError) throw error;
          throw new EngineError('embedding', `Embedding failed: ${errorText(error)}`, { cause: error });
        }
        if (out.at(-1)?.length !== dimension) throw new EngineError('embedding', `The model changed its dimension (${out.at(-1)?.length} ≠ ${dimension}).`);
      }
      return out;
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await extractor.dispose();
    },
  };
}

/** Resolves/rejects like `promise`, or rejects as soon as `signal` aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new Error('aborted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
