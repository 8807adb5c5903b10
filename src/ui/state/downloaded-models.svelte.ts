/**
 * The downloaded models of "Erase → downloaded models": the list with sizes (`models.downloaded`),
 * the one row whose deletion is being confirmed (`asked`), and the delete itself
 * (`models.deleteDownloaded`), after which the list is read again. Failures become notices.
 */
import type { DownloadedModel } from '../../model/engine';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/** What the store needs: the api and the notices. */
export interface DownloadedModelsDeps extends StoreApi {
  notices: NoticesStore;
}

/** See module doc. Created by `createDownloadedModelsStore`. */
export class DownloadedModelsStore {
  /** The models, biggest first; `null` before the first read or when it failed. */
  models = $state<DownloadedModel[] | null>(null);
  /** The `id` of the model whose "delete?" question is open, or `null`. */
  asked = $state<string | null>(null);
  /** The `id` being deleted now, or `null`. */
  deleting = $state<string | null>(null);
  readonly #deps: DownloadedModelsDeps;

  constructor(deps: DownloadedModelsDeps) {
    this.#deps = deps;
  }

  /** Reads the list. A failure becomes a notice and leaves `models` as it was. */
  async load(): Promise<void> {
    try {
      this.models = await this.#deps.request('models.downloaded', undefined, { retry: true });
    } catch (error) {
      this.#deps.notices.fail('errors.loadFailed', error);
    }
  }

  /** Deletes the model `id` (its question must be open), then reads the list again. @returns whether it was deleted. */
  async remove(id: string): Promise<boolean> {
    if (this.asked !== id) return false;
    this.deleting = id;
    try {
      await this.#deps.request('models.deleteDownloaded', { id });
      this.asked = null;
      return true;
    } catch (error) {
      this.#deps.notices.fail('errors.modelDeleteFailed', error);
      return false;
    } finally {
      this.deleting = null;
      await this.load();
    }
  }
}

/** Creates the store (nothing read until `load`). */
export function createDownloadedModelsStore(deps: DownloadedModelsDeps): DownloadedModelsStore {
  return new DownloadedModelsStore(deps);
}
