/**
 * Engine picker store: what the Models tab has chosen — the engine side (WebGPU = WebLLM, CPU =
 * wllama), the WebLLM model and the catalog GGUF in the two pickers, and the local file whose
 * delete asks for confirmation — over the engine store, which loads. One per Models panel on
 * screen (`AppState.createEnginePicker`).
 *
 * - It opens on the engine of the loaded model, else on the saved preference; without WebGPU, or
 *   when this build ships no GPU model, it moves to the CPU side by itself until the user picks a
 *   side (`pick`), unless a WebLLM model is loaded.
 * - Each picker starts on the saved model when this build still offers it, else on the
 *   catalog's default (WebLLM) or its recommended entry (GGUF).
 */
import type { WllamaSource } from '../../model/engine';
import { toPercent } from '../lib/format';
import type { EngineStore } from './engine.svelte';
import type { SettingsStore } from './settings.svelte';

/** The engine sides of the Models tab. */
export type EngineMode = 'webgpu' | 'cpu';

/** What the engine picker store needs. */
export interface EnginePickerStoreDeps {
  engine: EngineStore;
  settings: SettingsStore;
}

/** See module doc. Created by `createEnginePickerStore`. */
export class EnginePickerStore {
  mode = $state<EngineMode>('webgpu');
  /** WebLLM model id chosen in its picker (`''` until the catalog arrived). */
  webllmChoice = $state('');
  /** Catalog GGUF id chosen in its picker (`''` until the catalog arrived). */
  wllamaChoice = $state('');
  /** Local GGUF file whose delete asks for confirmation, or `null`. */
  confirmDelete = $state<string | null>(null);
  readonly #deps: EnginePickerStoreDeps;
  /** The user picked a side: their choice wins over the automatic one (`sync`). */
  #picked = false;

  constructor(deps: EnginePickerStoreDeps) {
    this.#deps = deps;
    const kind = deps.engine.status?.chat.kind;
    this.mode = kind === 'wllama' || (kind !== 'webllm' && deps.settings.value?.preferredEngine === 'wllama') ? 'cpu' : 'webgpu';
  }

  /** `true` while a load, unload or .gguf copy runs (pickers and load buttons disabled). */
  get busy(): boolean {
    const { engine } = this.#deps;
    return engine.busy || engine.status?.chat.state === 'loading' || engine.fileImport !== null;
  }

  /** How much of the .gguf being copied is written, in whole percent (0–100), or `null` (none, or size unknown). */
  get importPercent(): number | null {
    const file = this.#deps.engine.fileImport;
    return file && file.totalBytes > 0 ? toPercent(file.writtenBytes / file.totalBytes) : null;
  }

  /** `true` when model `id` of engine `kind` is the loaded, ready chat model. */
  isLoaded(kind: 'webllm' | 'wllama', id: string): boolean {
    const chat = this.#deps.engine.status?.chat;
    return chat?.state === 'ready' && chat.kind === kind && chat.modelId === id;
  }

  /** The user picks an engine side (kept over the automatic move to the CPU side). */
  pick(mode: EngineMode): void {
    this.#picked = true;
    this.mode = mode;
  }

  /** Goes to the CPU side from the GPU side's "use the CPU" button (not counted as a pick). */
  useCpu(): void {
    this.mode = 'cpu';
  }

  /**
   * Applies what the status, catalog and settings read so far say (call it whenever they change):
   * the automatic move to the CPU side, and each picker's first choice once the catalog is there.
   */
  sync(): void {
    const { engine, settings } = this.#deps;
    const gpu = engine.status?.gpu;
    const catalog = engine.catalog;
    const noGpuModel = (gpu && !gpu.available) || catalog?.webllm.length === 0;
    if (!this.#picked && noGpuModel && engine.status?.chat.kind !== 'webllm') this.mode = 'cpu';
    if (!this.webllmChoice && catalog) {
      // A saved model this build no longer ships is not offered.
      const saved = settings.value?.webllmModelId;
      this.webllmChoice = saved && catalog.webllm.some((m) => m.id === saved) ? saved : catalog.defaultWebllmModel;
    }
    if (!this.wllamaChoice && catalog?.wllama.length) {
      const source = settings.value?.wllamaSource;
      const saved = source?.type === 'catalog' ? source.id : null;
      this.wllamaChoice = saved ?? (catalog.wllama.find((m) => m.recommended) ?? catalog.wllama[0]!).id;
    }
  }

  /** Loads the chosen WebLLM model. @returns `true` when it loaded (failures: see `EngineStore.loadWebLLM`). */
  loadWebllm(): Promise<boolean> {
    return this.#deps.engine.loadWebLLM(this.webllmChoice);
  }

  /** Loads the chosen catalog GGUF, or a stored local file (`fileName`). @returns `true` when it loaded. */
  loadWllama(fileName?: string): Promise<boolean> {
    const source: WllamaSource = fileName ? { type: 'opfs', fileName } : { type: 'catalog', id: this.wllamaChoice };
    return this.#deps.engine.loadWllama(source);
  }

  /** Answers the delete question of local file `fileName` with yes. Failures become a notice. */
  deleteLocal(fileName: string): Promise<void> {
    this.confirmDelete = null;
    return this.#deps.engine.deleteLocalModel(fileName);
  }
}

/** Creates an engine picker store (the side chosen as the module doc says; pickers empty until `sync`). */
export function createEnginePickerStore(deps: EnginePickerStoreDeps): EnginePickerStore {
  return new EnginePickerStore(deps);
}
