/**
 * Conversation drawer store: the search field and its results, which entry of the drawer is being
 * renamed (and the title typed) or asks before deleting, over the conversations store that does
 * the work. At most one entry is in either state; starting one leaves the other. Focus and keys
 * stay in the component. One per drawer on screen (`AppState.createConversationDrawer`).
 */
import type { ConversationSearchHit } from '../../messaging/protocol';
import type { ConversationsStore } from './conversations.svelte';

/** Pause after the last keystroke before the drawer searches (ms): one search per typed word, not per letter. */
export const SEARCH_DEBOUNCE_MS = 200;

/** What the drawer store needs. */
export interface ConversationDrawerStoreDeps {
  conversations: ConversationsStore;
}

/** See module doc. Created by `createConversationDrawerStore`. */
export class ConversationDrawerStore {
  /** Id of the conversation being renamed, or `null`. */
  editingId = $state<string | null>(null);
  /** The title typed in the rename field. */
  editTitle = $state('');
  /** Id of the conversation whose delete asks for confirmation, or `null`. */
  confirmingId = $state<string | null>(null);
  /** The search field's text. */
  query = $state('');
  /** What the search found for `query`, or `null` while the field is blank (the drawer lists every conversation). */
  results = $state<ConversationSearchHit[] | null>(null);
  readonly #deps: ConversationDrawerStoreDeps;
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Bumped by every query change: a reply for an older query is dropped. */
  #searchSeq = 0;

  constructor(deps: ConversationDrawerStoreDeps) {
    this.#deps = deps;
  }

  /** `true` when the typed title can be saved (not empty once trimmed). */
  get canSaveRename(): boolean {
    return this.editTitle.trim().length > 0;
  }

  /** Opens the rename field of conversation `id` with its current title (closes a pending delete question). */
  startRename(id: string, title: string): void {
    this.confirmingId = null;
    this.editingId = id;
    this.editTitle = title;
  }

  /** Leaves the rename field without saving. */
  cancelRename(): void {
    this.editingId = null;
  }

  /**
   * Saves the typed title (trimmed) and closes the field; an empty title saves nothing and keeps
   * the field open. Failures become a notice (`ConversationsStore.rename`).
   */
  async saveRename(): Promise<void> {
    const id = this.editingId;
    const title = this.editTitle.trim();
    if (!id || !title) return;
    this.editingId = null;
    await this.#deps.conversations.rename(id, title);
    if (this.results) this.results = this.results.map((hit) => (hit.id === id ? { ...hit, title } : hit));
  }

  /** Asks before deleting conversation `id` (closes an open rename field). */
  askDelete(id: string): void {
    this.editingId = null;
    this.confirmingId = id;
  }

  /** Closes the delete question. @returns the id it was about (focus goes back to its entry), or `null`. */
  cancelDelete(): string | null {
    const id = this.confirmingId;
    this.confirmingId = null;
    return id;
  }

  /** Answers the delete question with yes: deletes conversation `id`. Failures become a notice (`ConversationsStore.remove`). */
  async confirmDelete(id: string): Promise<void> {
    this.confirmingId = null;
    await this.#deps.conversations.remove(id);
    if (this.results && !this.#deps.conversations.list.some((c) => c.id === id)) this.results = this.results.filter((hit) => hit.id !== id);
  }

  /**
   * Sets the search text. A blank text shows every conversation at once; otherwise the search runs
   * `SEARCH_DEBOUNCE_MS` after the last call (`searchNow` runs it at once, e.g. on Enter).
   */
  setQuery(query: string): void {
    this.query = query;
    this.#cancelTimer();
    this.#searchSeq += 1;
    if (!query.trim()) {
      this.results = null;
      return;
    }
    this.#timer = setTimeout(() => void this.searchNow(), SEARCH_DEBOUNCE_MS);
  }

  /** Searches for `query` now; a reply that arrives after the text changed again is dropped. Failures become a notice (`ConversationsStore.search`). */
  async searchNow(): Promise<void> {
    this.#cancelTimer();
    const query = this.query;
    if (!query.trim()) {
      this.results = null;
      return;
    }
    const seq = this.#searchSeq;
    const found = await this.#deps.conversations.search(query);
    if (seq === this.#searchSeq && query === this.query) this.results = found;
  }

  #cancelTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** Closes the rename field and the delete question and clears the search (the drawer closed). */
  reset(): void {
    this.editingId = null;
    this.confirmingId = null;
    this.setQuery('');
  }
}

/** Creates a drawer store (nothing renamed, nothing asked). */
export function createConversationDrawerStore(deps: ConversationDrawerStoreDeps): ConversationDrawerStore {
  return new ConversationDrawerStore(deps);
}
