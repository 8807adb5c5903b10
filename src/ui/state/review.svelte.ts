/**
 * Review before saving, in the panel (issue 14 item 2): the switch of the active namespace, the
 * number of pending suggestions (the Memory tab's badge), the Suggested list (accept, edit, reject)
 * and the Recently learned list (undo). One store for the app (the badge is on the tab bar); it
 * re-reads the status whenever the job counts change (`event.jobs`: an extraction finished), and
 * the lists when `load()` is called (the Memory tab mounts its components).
 */
import { DEFAULT_NAMESPACE, type FactKind } from '../../model/memory';
import type { LearnedMemory, SuggestionRecord } from '../../model/records';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/** What the review store needs. */
export interface ReviewStoreDeps extends StoreApi {
  notices: NoticesStore;
  /** The active namespace (profile); default `DEFAULT_NAMESPACE`. */
  namespace?: () => string;
}

/** See module doc. Created by `createReviewStore`. */
export class ReviewStore {
  /** Review on for the active namespace. */
  enabled = $state(false);
  /** Pending suggestions of the active namespace (the badge). */
  pending = $state(0);
  suggestions = $state<SuggestionRecord[]>([]);
  recent = $state<LearnedMemory[]>([]);
  /** Id of the suggestion or memory being handled (its buttons are disabled). */
  busy = $state<string | null>(null);
  readonly #deps: ReviewStoreDeps;

  constructor(deps: ReviewStoreDeps) {
    this.#deps = deps;
  }

  get #namespace(): string {
    return this.#deps.namespace?.() ?? DEFAULT_NAMESPACE;
  }

  /** Follows `event.jobs` (an extraction may have suggested or saved something). @returns the unsubscribe. */
  listen(): () => void {
    return this.#deps.subscribe('event.jobs', () => void this.refresh());
  }

  /** Re-reads the switch and the pending count; a failed read keeps the last ones. */
  async refresh(): Promise<void> {
    try {
      const status = await this.#deps.request('review.status', { namespace: this.#namespace });
      this.enabled = status.enabled;
      if (status.pending !== this.pending || status.pending !== this.suggestions.length) await this.load();
      this.pending = status.pending;
    } catch {
      // The core is restarting: the next event reads again.
    }
  }

  /** Reads both lists (Suggested, Recently learned) of the active namespace. Failures become an error notice. */
  async load(): Promise<void> {
    const namespace = this.#namespace;
    try {
      const [suggestions, recent] = await Promise.all([
        this.#deps.request('review.suggestions', { namespace }),
        this.#deps.request('review.recent', { namespace }),
      ]);
      this.suggestions = suggestions;
      this.recent = recent;
      this.pending = suggestions.length;
    } catch (error) {
      this.#deps.notices.fail('review.loadFailed', error);
    }
  }

  /** Turns review on or off for the active namespace. */
  async setEnabled(enabled: boolean): Promise<void> {
    try {
      const status = await this.#deps.request('review.set', { namespace: this.#namespace, enabled });
      this.enabled = status.enabled;
      this.pending = status.pending;
    } catch (error) {
      this.#deps.notices.fail('review.saveFailed', error);
    }
  }

  /** Accepts a suggestion, with the user's edited text and kind when given; then reloads the lists. */
  async accept(id: string, edit: { text?: string; kind?: FactKind } = {}): Promise<void> {
    await this.#act(id, () => this.#deps.request('review.accept', { id, ...edit }));
  }

  /** Rejects a suggestion (never suggested again); then reloads the lists. */
  async reject(id: string): Promise<void> {
    await this.#act(id, () => this.#deps.request('review.reject', { id }));
  }

  /** Undoes a learned memory (deleted, no tombstone); then reloads the lists. */
  async undo(memoryId: string): Promise<void> {
    await this.#act(memoryId, () => this.#deps.request('review.undo', { id: memoryId }));
  }

  async #act(id: string, run: () => Promise<unknown>): Promise<void> {
    this.busy = id;
    try {
      await run();
    } catch (error) {
      this.#deps.notices.fail('review.saveFailed', error);
    } finally {
      this.busy = null;
    }
    await this.load();
  }
}

/** Creates the review store. */
export function createReviewStore(deps: ReviewStoreDeps): ReviewStore {
  return new ReviewStore(deps);
}
