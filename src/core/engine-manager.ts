/**
 * Owns the engines of the core: at most one chat engine loaded at a time (WebLLM on WebGPU in
 * the service worker, or wllama on CPU here), and the embedder. Emits status changes for the UI.
 */
import { Mutex } from 'async-mutex';
import { type ChatEngine, type Embedder, EngineError } from '../engines/types';
import type { EngineErrorCode, LoadProgress, EngineStatus, GpuInfo, WllamaSource } from '../model/engine';
import type { ModelCatalog } from '../model/catalog';
import type { TokenCounter } from '../model/tokens';
import type { createTransformersEmbedder } from '../engines/transformers';
// The engine runtimes are imported when first used (`import()` below), not at start-up, so the
// offscreen document answers its first search before they are fetched and evaluated: WebLLM's
// client (6 MB of JS) when a WebLLM model is loaded or its catalog is read; transformers.js with
// ONNX Runtime's glue (~0.9 MB before minification) when the embedder loads; wllama with the GGUF
// tokenizer (~0.3 MB) when a CPU model loads. Only the model lists (plain data) are static.
import { DEFAULT_WEBLLM_MODEL, shippedWebllmModels, WEBLLM_MODELS, webllmVariantFor } from '../engines/webllm/models';
import type { WebLLMChatEngine } from '../engines/webllm/engine';
import { WLLAMA_MODELS } from '../engines/wllama/models';
import type { WllamaChatEngine } from '../engines/wllama/engine';
import type { RecallDB } from '../db/schema';
import { openModelFile } from '../platform/model-files';
import { createTokenEstimator } from '../tokens/estimator';
import { guardChatEngine } from '../prompt/neutralize';

/** Where the engine runtimes find their files (URLs inside the extension package). */
export interface EngineAssets {
  wllamaWasmUrl: string;
  /** Base URL of embedding models shipped in the package (`/models/`). */
  packagedModelsUrl: string;
  /** Ids of the embedding models the package ships (from `/models/packaged.json`); others are cached or downloaded. */
  packagedEmbeddingModels: readonly string[];
  /**
   * File names of the WebLLM model libraries (`*-webgpu.wasm`) the package ships (from
   * `/runtime/webllm/packaged.json`); only their models are offered. Empty: no GPU model.
   */
  packagedWebllmLibs: readonly string[];
}

/** See module doc. */
export interface EngineManager {
  status(): EngineStatus;
  /** The loaded chat engine, or `null`. */
  chatEngine(): ChatEngine | null;
  /** The loaded embedder, or `null`. */
  embedder(): Embedder | null;
  /** The loaded model's token counter, else the estimator. */
  tokenCounter(): TokenCounter;
  catalog(): Promise<ModelCatalog>;
  /** Loads a WebLLM model (q4f32 variant picked automatically without `shader-f16`). @throws EngineError('no_webgpu') without WebGPU. */
  loadWebLLM(modelId: string): Promise<EngineStatus>;
  /** Loads a GGUF in wllama from the catalog (downloaded once, cached) or from a file in OPFS. */
  loadWllama(source: WllamaSource): Promise<EngineStatus>;
  unloadChat(): Promise<EngineStatus>;
  /** Loads (or switches) the embedder. Failure leaves `embedder()` null and the state `error`. */
  loadEmbedder(modelId: string): Promise<EngineStatus>;
  /** Loads the last requested embedding model again (after a failed download, say). */
  reloadEmbedder(): Promise<EngineStatus>;
  /** Called on every status change. */
  onChange(listener: (status: EngineStatus) => void): () => void;
}

/** Dependencies of the engine manager. The factories default to the real engines; tests pass their own. */
export interface EngineManagerDeps {
  db: RecallDB;
  /**
   * The package's engine files, or a promise of them: the offscreen document reads the packaged
   * manifests while the core starts (they are needed only when an engine loads or the catalog is asked for).
   */
  assets: EngineAssets | PromiseLike<EngineAssets>;
  probe: () => Promise<GpuInfo>;
  /** Default: WebLLM's proxy engine, its module imported on first use (see the imports above). */
  createWebLLM?: () => WebLLMChatEngine | Promise<WebLLMChatEngine>;
  /** Default: wllama's engine, its module imported on first use (see the imports above). */
  createWllama?: () => WllamaChatEngine | Promise<WllamaChatEngine>;
  /** Default: transformers.js's embedder, its module imported on first use (see the imports above). */
  createEmbedder?: typeof createTransformersEmbedder;
  /** Reads a model file from OPFS `models/` (default `openModelFile`). */
  openFile?: (fileName: string) => Promise<Blob>;
}

/** Creates the manager. `probe` tells whether WebGPU is usable (see `src/platform/gpu.ts`). */
export function createEngineManager(deps: EngineManagerDeps): EngineManager {
  const makeWebLLM =
    deps.createWebLLM ??
    (async () => {
      const [{ createWebLLMEngine }, { loadWebLLMTokenCounter }] = await Promise.all([
        import('../engines/webllm/engine'),
        import('../engines/webllm/tokenizer'),
      ]);
      return createWebLLMEngine({ tokenCounterFor: (id) => loadWebLLMTokenCounter(id) });
    });
  const assets = Promise.resolve(deps.assets);
  const makeWllama =
    deps.createWllama ??
    (async () => {
      const [{ createWllamaEngine }, { createGgufTokenCounter }] = await Promise.all([import('../engines/wllama/engine'), import('../tokens/gguf')]);
      return createWllamaEngine({ wasmUrl: (await assets).wllamaWasmUrl, tokenCounterFor: (_model, header) => createGgufTokenCounter(header) });
    });
  const makeEmbedder: typeof createTransformersEmbedder =
    deps.createEmbedder ?? (async (options) => (await import('../engines/transformers')).createTransformersEmbedder(options));
  const openFile = deps.openFile ?? openModelFile;
  const estimator = createTokenEstimator();
  const listeners = new Set<(s: EngineStatus) => void>();
  let gpu: GpuInfo = { available: false, shaderF16: false, adapter: null };
  let gpuProbed: Promise<GpuInfo> | null = null;
  let webllm: WebLLMChatEngine | null = null;
  let wllama: WllamaChatEngine | null = null;
  let active: ChatEngine | null = null;
  let embedder: Embedder | null = null;
  /** Loads and unloads run one at a time, in call order. */
  const loads = new Mutex();
  const status: EngineStatus = {
    chat: { kind: null, modelId: null, state: 'idle', progress: null, contextWindow: null, error: null, errorCode: null },
    embedder: { modelId: null, dimension: null, state: 'idle', progress: null, error: null, errorCode: null },
    gpu,
  };

  const snapshot = (): EngineStatus => structuredClone({ ...status, gpu });
  const emit = () => {
    const s = snapshot();
    listeners.forEach((l) => l(s));
  };
  const probeOnce = () => (gpuProbed ??= deps.probe().then((g) => ((gpu = g), emit(), g)));
  const onChatProgress = (progress: LoadProgress) => {
    status.chat.progress = progress;
    emit();
  };
  const errorFields = (error: unknown): { error: string; errorCode: EngineErrorCode } => ({
    error: error instanceof Error ? error.message : String(error),
    errorCode: error instanceof EngineError ? error.code : 'load',
  });
  /** Loads the model that is loaded now again (from the browser cache or OPFS: no download). */
  let reloadCurrent: { kind: 'webllm' | 'wllama'; modelId: string; load: () => Promise<ChatEngine> } | null = null;
  let lastEmbeddingModel: string | null = null;

  /**
   * Replaces the loaded chat model. When the new one fails to load (a failed download, a corrupt
   * file), the model that worked before is loaded again, so a failed switch never leaves the user
   * without a model; the error is still thrown for the caller to show.
   */
  async function switchTo(kind: 'webllm' | 'wllama', modelId: string, load: () => Promise<ChatEngine>): Promise<EngineStatus> {
    const previous = active?.isLoaded() ? reloadCurrent : null;
    if (active && active.kind !== kind) await active.unload();
    active = null;
    Object.assign(status.chat, { kind, modelId, state: 'loading', progress: null, contextWindow: null, error: null, errorCode: null });
    emit();
    try {
      const engine = await load();
      active = engine;
      reloadCurrent = { kind, modelId, load };
      Object.assign(status.chat, { state: 'ready', modelId: engine.modelId ?? modelId, contextWindow: engine.contextWindow(), progress: null });
    } catch (error) {
      Object.assign(status.chat, { state: 'error', ...errorFields(error), progress: null });
      emit();
      if (previous) {
        try {
          if (previous.kind !== kind) await (kind === 'webllm' ? webllm : wllama)?.unload();
          const engine = await previous.load();
          active = engine;
          reloadCurrent = previous;
          Object.assign(status.chat, {
            kind: previous.kind,
            modelId: engine.modelId ?? previous.modelId,
            state: 'ready',
            contextWindow: engine.contextWindow(),
            progress: null,
            error: null,
            errorCode: null,
          });
          emit();
        } catch {
          // The previous model cannot come back either: stay in the error state of the new one.
        }
      }
      throw error;
    }
    emit();
    return snapshot();
  }

  return {
    status: snapshot,
    // Every model call (chat turns and background jobs) goes through the control-token gate.
    chatEngine: () => (active?.isLoaded() ? guardChatEngine(active) : null),
    embedder: () => embedder,
    tokenCounter: () => (active?.isLoaded() ? (active.tokenCounter() ?? estimator) : estimator),

    async catalog() {
      const g = await probeOnce();
      const localFiles = await deps.db.localModels.orderBy('addedAt').reverse().toArray();
      // Without a packaged library no WebLLM model is offered: WebLLM's model list is not needed then.
      const { packagedWebllmLibs } = await assets;
      const modelList = packagedWebllmLibs.length > 0 ? (await import('@mlc-ai/web-llm')).prebuiltAppConfig.model_list : [];
      const webllmModels = shippedWebllmModels(WEBLLM_MODELS, g, modelList, packagedWebllmLibs);
      const defaultWebllm = webllmVariantFor(DEFAULT_WEBLLM_MODEL, g);
      return {
        webllm: webllmModels,
        wllama: WLLAMA_MODELS.map(({ url: _url, ...m }) => m),
        localFiles,
        defaultWebllmModel: webllmModels.some((m) => m.id === defaultWebllm) ? defaultWebllm : (webllmModels[0]?.id ?? ''),
      };
    },

    loadWebLLM(modelId) {
      return loads.runExclusive(async () => {
        const g = await probeOnce();
        if (!g.available) {
          const error = new EngineError('no_webgpu', 'WebGPU is not available on this device. Use the CPU engine (wllama) instead.');
          // The loaded model (if any) stays: nothing was unloaded.
          if (!active?.isLoaded()) {
            Object.assign(status.chat, { kind: 'webllm', modelId, state: 'error', ...errorFields(error) });
            emit();
          }
          throw error;
        }
        const variant = webllmVariantFor(modelId, g);
        return switchTo('webllm', variant, async () => {
          webllm ??= await makeWebLLM();
          await webllm.load(variant, { onProgress: onChatProgress });
          return webllm;
        });
      });
    },

    loadWllama(source) {
      return loads.runExclusive(async () => {
        const modelId = source.type === 'catalog' ? source.id : source.fileName;
        return switchTo('wllama', modelId, async () => {
          wllama ??= await makeWllama();
          if (source.type === 'opfs') {
            const file = await openFile(source.fileName).catch((cause: unknown) => {
              throw new EngineError('load', `The model file "${source.fileName}" is no longer stored. Open it again.`, { cause });
            });
            await wllama.loadFromBlob(source.fileName, file, { onProgress: onChatProgress });
          } else {
            const entry = WLLAMA_MODELS.find((m) => m.id === source.id);
            if (!entry) throw new EngineError('unsupported', `Unknown model ${source.id}`);
            await wllama.loadFromUrl(entry.id, entry.url, { onProgress: onChatProgress });
          }
          return wllama;
        });
      });
    },

    unloadChat() {
      return loads.runExclusive(async () => {
        await active?.unload();
        active = null;
        reloadCurrent = null;
        Object.assign(status.chat, { kind: null, modelId: null, state: 'idle', progress: null, contextWindow: null, error: null, errorCode: null });
        emit();
        return snapshot();
      });
    },

    async loadEmbedder(modelId) {
      lastEmbeddingModel = modelId;
      Object.assign(status.embedder, { modelId, state: 'loading', progress: null, error: null, errorCode: null, dimension: null });
      emit();
      try {
        const { packagedEmbeddingModels, packagedModelsUrl } = await assets;
        const loaded = await makeEmbedder({
          modelId,
          allowRemoteModels: true,
          packagedModelsUrl: packagedEmbeddingModels.includes(modelId) ? packagedModelsUrl : null,
          onProgress: (progress) => {
            status.embedder.progress = progress;
            emit();
          },
        });
        embedder = loaded;
        Object.assign(status.embedder, { state: 'ready', dimension: loaded.dimension, progress: null });
      } catch (error) {
        embedder = null;
        Object.assign(status.embedder, { state: 'error', ...errorFields(error), progress: null });
      }
      emit();
      return snapshot();
    },

    reloadEmbedder() {
      return lastEmbeddingModel ? this.loadEmbedder(lastEmbeddingModel) : Promise.resolve(snapshot());
    },

    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
