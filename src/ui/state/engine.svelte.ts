/**
 * Engine store: the chat model and embedder status (`event.engine`, load progress included), the
 * model catalog, loading/unloading, reloading the embedder, and opening a local .gguf (checked,
 * copied into OPFS with progress, registered, loaded). Failures become notices translated by
 * their `EngineErrorCode`.
 */
import type { EngineStatus, WllamaSource } from '../../model/engine';
import type { ModelCatalog } from '../../model/catalog';
import { saveModelFile } from '../../platform/model-files';
import { t } from '../i18n/index.svelte';
import { errorMessage } from '../lib/connect';
import { engineErrorView, errorCodeOf } from '../lib/engine-errors';
import { hasGgufExtension, inspectGgufFile } from '../lib/gguf';
import { readUiPref, writeUiPref } from '../lib/ui-prefs';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/** Progress of opening a local .gguf file (checked, copied into OPFS, registered, loaded). */
export interface FileImport {
  name: string;
  stage: 'checking' | 'copying' | 'registering' | 'loading';
  /** Bytes copied so far. */
  writtenBytes: number;
  /** File size in bytes. */
  totalBytes: number;
}

/** What the engine store needs. `saveModelFile` (OPFS) defaults to the real one. */
export interface EngineStoreDeps extends StoreApi {
  notices: NoticesStore;
  saveModelFile?: typeof saveModelFile;
}

/** See module doc. Created by `createEngineStore`. */
export class EngineStore {
  /** `null` until first read. */
  status = $state<EngineStatus | null>(null);
  catalog = $state<ModelCatalog | null>(null);
  /** A chat-model load/unload request is in flight (buttons disabled). */
  busy = $state(false);
  /** An `engine.reloadEmbedder` request is in flight. */
  embedderBusy = $state(false);
  fileImport = $state<FileImport | null>(null);
  #embedderBannerDismissed = $state<string | null>(readUiPref('recall.ui.v1.embedderBannerDismissed'));
  #importAbort: AbortController | null = null;
  readonly #deps: EngineStoreDeps;

  constructor(deps: EngineStoreDeps) {
    this.#deps = deps;
  }

  /**
   * The embedder error the user dismissed from the chat banner (its message), so the banner stays
   * away until a different failure happens, also when the panel is opened again (kept in the
   * panel's `localStorage`). The Model tab always shows the error.
   */
  get embedderBannerDismissed(): string | null {
    return this.#embedderBannerDismissed;
  }
  set embedderBannerDismissed(message: string | null) {
    this.#embedderBannerDismissed = message;
    writeUiPref('recall.ui.v1.embedderBannerDismissed', message);
  }

  /** Follows `event.engine` (status and load progress). @returns the unsubscribe. */
  listen(): () => void {
    return this.#deps.subscribe('event.engine', (status) => {
      this.status = status;
    });
  }

  /** Re-reads the model catalog (e.g. after a local file was added or removed). Failures become a notice. */
  async refreshCatalog(): Promise<void> {
    try {
      this.catalog = await this.#deps.request('engine.catalog', undefined, { retry: true });
    } catch (error) {
      this.#deps.notices.fail('errors.loadFailed', error);
    }
  }

  async #readStatus(): Promise<void> {
    this.status = await this.#deps.request('engine.status', undefined, { retry: true }).catch(() => this.status);
  }

  /**
   * Runs one chat-engine request, keeping `busy` and the status in sync. A failure becomes
   * an error notice translated by its `EngineErrorCode` (from the rejected error, else from the
   * status the core reports afterwards), with the core's message as the detail line.
   */
  async #engineCall(run: () => Promise<EngineStatus>): Promise<boolean> {
    this.busy = true;
    try {
      this.status = await run();
      // Earlier failures to load a model are settled now.
      this.#deps.notices.clearTopic('engine');
      return true;
    } catch (error) {
      await this.#readStatus();
      const code = errorCodeOf(error) ?? this.status?.chat.errorCode ?? null;
      const view = engineErrorView('chat', code, errorMessage(error));
      this.#deps.notices.notify('error', t(view.key), view.detail ?? undefined, 'engine');
      return false;
    } finally {
      this.busy = false;
    }
  }

  /**
   * Loads the configured embedding model again (`engine.reloadEmbedder`), e.g. after a failed
   * download. A renewed failure shows in the status (with its code); a request that fails
   * outright becomes an error notice.
   * @returns `true` when the embedder is ready afterwards.
   */
  async reloadEmbedder(): Promise<boolean> {
    if (this.embedderBusy) return false;
    this.embedderBusy = true;
    this.embedderBannerDismissed = null;
    try {
      this.status = await this.#deps.request('engine.reloadEmbedder');
      return this.status.embedder.state === 'ready';
    } catch (error) {
      this.#deps.notices.fail('errors.embedderFailed', error);
      await this.#readStatus();
      return false;
    } finally {
      this.embedderBusy = false;
    }
  }

  /** Loads a WebLLM model (WebGPU). @returns `true` when it loaded; failures become a notice and the status shows the error. */
  loadWebLLM(modelId: string): Promise<boolean> {
    return this.#engineCall(() => this.#deps.request('engine.loadWebLLM', { modelId }));
  }

  /** Loads a GGUF in wllama (CPU) from the catalog or from OPFS. @returns `true` when it loaded. */
  loadWllama(source: WllamaSource): Promise<boolean> {
    return this.#engineCall(() => this.#deps.request('engine.loadWllama', { source }));
  }

  /** Unloads the chat model (frees GPU/WASM memory). @returns `true` when done. */
  unload(): Promise<boolean> {
    return this.#engineCall(() => this.#deps.request('engine.unload'));
  }

  /**
   * Opens a local .gguf: checks its header, copies it into OPFS (progress in `fileImport`),
   * registers it with the core and loads it in wllama. A file that is not GGUF is rejected
   * before anything is copied; a copy llama.cpp cannot load is removed again.
   */
  async openLocalGguf(file: File): Promise<void> {
    if (this.fileImport) return;
    const { request, notices } = this.#deps;
    const save = this.#deps.saveModelFile ?? saveModelFile;
    this.fileImport = { name: file.name, stage: 'checking', writtenBytes: 0, totalBytes: file.size };
    try {
      const check = await inspectGgufFile(file);
      if (!check.ok) {
        notices.notify('error', t(`engine.gguf.${check.reason}`, { name: file.name, version: check.version ?? '?' }), undefined, 'engine');
        return;
      }
      if (!hasGgufExtension(file.name)) notices.notify('info', t('engine.gguf.extension', { name: file.name }));
      this.fileImport = { ...this.fileImport, stage: 'copying' };
      const abort = (this.#importAbort = new AbortController());
      let saved: { fileName: string; sizeBytes: number };
      try {
        saved = await save(
          file,
          (writtenBytes) => {
            if (this.fileImport) this.fileImport = { ...this.fileImport, writtenBytes };
          },
          { signal: abort.signal },
        );
      } catch (error) {
        if (abort.signal.aborted) notices.notify('info', t('engine.import.cancelled', { name: file.name }));
        else notices.fail('errors.copyFailed', error);
        return;
      } finally {
        this.#importAbort = null;
      }
      this.fileImport = { ...this.fileImport, stage: 'registering', writtenBytes: saved.sizeBytes };
      try {
        await request('models.registerLocal', { fileName: saved.fileName, displayName: file.name, sizeBytes: saved.sizeBytes });
      } catch (error) {
        notices.fail('errors.registerFailed', error);
        return;
      }
      await this.refreshCatalog();
      this.fileImport = { ...this.fileImport, stage: 'loading' };
      if (!(await this.loadWllama({ type: 'opfs', fileName: saved.fileName }))) {
        // Not kept when llama.cpp cannot use it (a truncated or corrupt file): the copy would only
        // sit in the list; the original is still on the user's disk.
        await request('models.deleteLocal', { fileName: saved.fileName }).catch(() => undefined);
        await this.refreshCatalog();
      }
    } catch (error) {
      notices.fail('errors.copyFailed', error);
    } finally {
      this.fileImport = null;
    }
  }

  /** Cancels copying a .gguf into OPFS (the partial copy is removed by `saveModelFile`). */
  cancelFileImport(): void {
    this.#importAbort?.abort();
  }

  /** Removes a stored GGUF (file and record). Failures become a notice. */
  async deleteLocalModel(fileName: string): Promise<void> {
    try {
      await this.#deps.request('models.deleteLocal', { fileName });
      await this.refreshCatalog();
    } catch (error) {
      this.#deps.notices.fail('errors.deleteFailed', error);
    }
  }
}

/** Creates the engine store. */
export function createEngineStore(deps: EngineStoreDeps): EngineStore {
  return new EngineStore(deps);
}
