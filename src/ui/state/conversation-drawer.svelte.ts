/**
 * Conversation drawer store: which entry of the drawer is being renamed (and the title typed) or
 * asks before deleting, over the conversations store that does the work. At most one entry is in
 * either state; starting one leaves the other. Focus and keys stay in the component. One per
 * drawer on screen (`AppState.createConversationDrawer`).
 */
import type { ConversationsStore } from './conversations.svelte';

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
  readonly #deps: ConversationDrawerStoreDeps;

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
  confirmDelete(id: string): Promise<void> {
    this.confirmingId = null;
    return this.#deps.conversations.remove(id);
  }

  /** Closes the rename field and the delete question (the drawer closed). */
  reset(): void {
    this.editingId = null;
    this.confirmingId = null;
  }
}

/** Creates a drawer store (nothing renamed, nothing asked). */
export function createConversationDrawerStore(deps: ConversationDrawerStoreDeps): ConversationDrawerStore {
  return new ConversationDrawerStore(deps);
}
