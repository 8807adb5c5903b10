/**
 * Memory item store: one memory of the manager's list — its text editor, the delete question, the
 * history panel and whether an action runs — over the manager's memory store, which does the
 * work. After a change that worked, an open history is read again. One per listed memory
 * (`createMemoryItemStore`, made by the item component).
 */
import type { MemoryHistoryRecord } from '../../model/records';
import { MAX_MEMORY_TEXT_CHARS } from '../../model/memory';
import { errorText } from '../lib/errors';
import type { ChangeResult, MemoryStore } from './memory.svelte';

/** What a memory item store needs: the manager's memory store and the memory's id. */
export interface MemoryItemStoreDeps {
  store: MemoryStore;
  memoryId: string;
}

/** See module doc. Created by `createMemoryItemStore`. */
export class MemoryItemStore {
  /** The text editor is open. */
  editing = $state(false);
  /** The text typed in the editor. */
  editText = $state('');
  /** The delete question is open. */
  confirming = $state(false);
  /** An edit, pin or delete runs (its buttons are disabled). */
  saving = $state(false);
  /** The history panel is open. */
  historyOpen = $state(false);
  /** The history read last (newest first); `null` before it arrived. */
  history = $state<MemoryHistoryRecord[] | null>(null);
  /** The core's message when the history read failed, else `null`. */
  historyError = $state<string | null>(null);
  readonly #deps: MemoryItemStoreDeps;

  constructor(deps: MemoryItemStoreDeps) {
    this.#deps = deps;
  }

  /** `true` when the typed text is longer than a memory may be (`MAX_MEMORY_TEXT_CHARS` characters, as typed). */
  get editTooLong(): boolean {
    return this.editText.length > MAX_MEMORY_TEXT_CHARS;
  }

  /** `true` when the typed text can be saved (not empty once trimmed, not too long, nothing running). */
  get canSave(): boolean {
    return !this.saving && this.editText.trim().length > 0 && !this.editTooLong;
  }

  /** Opens the editor on the memory's current `text`. */
  startEdit(text: string): void {
    this.editText = text;
    this.editing = true;
  }

  /** Leaves the editor without saving. */
  stopEdit(): void {
    this.editing = false;
  }

  /**
   * Saves the typed text (`MemoryStore.edit`: trimmed; an empty text saves nothing); the editor closes once saved, stays open on failure.
   * @param toStored maps the text as edited to its stored form (the editor shows a round's speaker labels translated: `storedMemoryText`); identity by default.
   */
  async save(toStored: (text: string) => string = (text) => text): Promise<void> {
    if (!this.editText.trim()) return;
    const text = toStored(this.editText);
    if ((await this.#run(() => this.#deps.store.edit(this.#deps.memoryId, text))) !== false) this.editing = false;
  }

  /** Pins or unpins the memory. */
  setPinned(pinned: boolean): Promise<ChangeResult> {
    return this.#run(() => this.#deps.store.setPinned(this.#deps.memoryId, pinned));
  }

  /** Deletes the memory (the delete question's yes; the manager then offers the rounds stating it). */
  remove(): Promise<ChangeResult> {
    return this.#run(() => this.#deps.store.remove(this.#deps.memoryId));
  }

  /** Opens the history panel and reads the history, or closes it. */
  async toggleHistory(): Promise<void> {
    this.historyOpen = !this.historyOpen;
    if (this.historyOpen) await this.loadHistory();
  }

  /** Reads the memory's history; a failure shows in `historyError`. Never throws. */
  async loadHistory(): Promise<void> {
    this.historyError = null;
    try {
      this.history = await this.#deps.store.history(this.#deps.memoryId);
    } catch (error) {
      this.historyError = errorText(error);
    }
  }

  /** Runs one store action with `saving` set; re-reads the open history after a change that worked. */
  async #run(action: () => Promise<ChangeResult>): Promise<ChangeResult> {
    this.saving = true;
    try {
      const listed = await action();
      if (listed !== false && this.historyOpen) await this.loadHistory();
      return listed;
    } finally {
      this.saving = false;
    }
  }
}

/** Creates the store of one listed memory (editor, question and history closed). */
export function createMemoryItemStore(deps: MemoryItemStoreDeps): MemoryItemStore {
  return new MemoryItemStore(deps);
}
