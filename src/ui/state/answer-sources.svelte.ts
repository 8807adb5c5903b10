/**
 * Answer sources store (issue 14 item 1): for each reply on screen, the memories its prompt used
 * (`trace.sources`: read in batches — every reply asks for its own, one request per microtask —
 * and cached), and the actions of a source chip: *not relevant here* (`memory.feedback`, with its
 * undo `memory.feedbackUndo`), *forget* (`memory.delete`, the Memory tab's delete: history kept,
 * tombstone written) and *open* / *edit* (the Memory tab shows that memory first, highlighted:
 * `focused`, read with `memory.get`). Failures become notices.
 */
import type { FeedbackView, MemoryView } from '../../model/records';
import type { AnswerSources } from '../../messaging/protocol';
import { t, type TranslationKey } from '../i18n/index.svelte';
import type { StoreApi } from './api';
import { BatchedReads } from './batched-reads';
import type { NoticesStore } from './notices.svelte';
import type { ViewStore } from './view.svelte';

/** Most reply ids sent in one `trace.sources` request (the core's limit). */
const IDS_PER_REQUEST = 500;

/** What the answer sources store needs. */
export interface AnswerSourcesStoreDeps extends StoreApi {
  notices: NoticesStore;
  view: ViewStore;
}

/** See module doc. Created by `createAnswerSourcesStore`. */
export class AnswerSourcesStore {
  /** Sources by reply id; `null`: the reply has no trace (a command reply, a failure). Absent: not read yet. */
  byMessage = $state<Record<string, AnswerSources | null>>({});
  /** The memory the Memory tab shows first (opened from a chip), and whether its editor opens. */
  focused = $state<{ memory: MemoryView; edit: boolean } | null>(null);
  /** `messageId:memoryId` of the chip whose action runs (its buttons wait). */
  busy = $state<string | null>(null);
  readonly #deps: AnswerSourcesStoreDeps;
  readonly #reads: BatchedReads<AnswerSources>;

  constructor(deps: AnswerSourcesStoreDeps) {
    this.#deps = deps;
    this.#reads = new BatchedReads({
      perRequest: IDS_PER_REQUEST,
      isRead: (id) => id in this.byMessage,
      read: async (messageIds) => new Map(Object.entries(await deps.request('trace.sources', { messageIds }, { retry: true }))),
      store: (results) => {
        this.byMessage = { ...this.byMessage, ...results };
      },
    });
  }

  /**
   * Reads the sources of replies `messageIds` not read yet. Calls in the same microtask share one
   * request (`BatchedReads`). A failed read leaves them unread (no notice: the chips are secondary;
   * the next call tries again). @returns once read (or failed).
   */
  load(messageIds: readonly string[]): Promise<void> {
    return this.#reads.load(messageIds);
  }

  /** The "not relevant here" row of memory `memoryId` under reply `messageId`, if any. */
  notRelevantRow(messageId: string, memoryId: string): FeedbackView | undefined {
    return this.byMessage[messageId]?.feedback.find((f) => f.memoryId === memoryId);
  }

  /** Runs `action` as the chip's one running action (`busy`); a failure becomes notice `failKey`. */
  async #run(messageId: string, memoryId: string, failKey: TranslationKey, action: () => Promise<void>): Promise<void> {
    const key = `${messageId}:${memoryId}`;
    if (this.busy === key) return;
    this.busy = key;
    try {
      await action();
    } catch (error) {
      this.#deps.notices.fail(failKey, error);
    } finally {
      if (this.busy === key) this.busy = null;
    }
  }

  /** Replaces the sources of reply `messageId` with `change(sources)` (when they were read). */
  #update(messageId: string, change: (s: AnswerSources) => AnswerSources): void {
    const current = this.byMessage[messageId];
    if (current) this.byMessage = { ...this.byMessage, [messageId]: change(current) };
  }

  /** Marks memory `memoryId` not relevant under reply `messageId`: similar questions rank it last from now on. */
  notRelevant(messageId: string, memoryId: string): Promise<void> {
    return this.#run(messageId, memoryId, 'sources.feedbackFailed', async () => {
      const row = await this.#deps.request('memory.feedback', { messageId, memoryId });
      this.#update(messageId, (s) => ({ ...s, feedback: [...s.feedback.filter((f) => f.id !== row.id), row] }));
    });
  }

  /** Undoes "not relevant here" of memory `memoryId` under reply `messageId`. */
  undoNotRelevant(messageId: string, memoryId: string): Promise<void> {
    const row = this.notRelevantRow(messageId, memoryId);
    if (!row) return Promise.resolve();
    return this.#run(messageId, memoryId, 'sources.feedbackFailed', async () => {
      await this.#deps.request('memory.feedbackUndo', { id: row.id });
      this.#update(messageId, (s) => ({ ...s, feedback: s.feedback.filter((f) => f.id !== row.id) }));
    });
  }

  /** Forgets memory `memoryId` (the Memory tab's delete); every reply's chip for it shows it as forgotten. */
  forget(messageId: string, memoryId: string): Promise<void> {
    return this.#run(messageId, memoryId, 'errors.deleteFailed', async () => {
      await this.#deps.request('memory.delete', { id: memoryId });
      const next = { ...this.byMessage };
      for (const [id, s] of Object.entries(next)) {
        if (s?.memories.some((m) => m.memoryId === memoryId)) {
          next[id] = {
            ...s,
            memories: s.memories.map((m) => (m.memoryId === memoryId ? { ...m, exists: false } : m)),
            feedback: s.feedback.filter((f) => f.memoryId !== memoryId),
          };
        }
      }
      this.byMessage = next;
      if (this.focused?.memory.id === memoryId) this.focused = null;
    });
  }

  /** Opens the Memory tab on memory `memoryId` (shown first, highlighted; its editor open with `edit`). One that is gone becomes a notice. */
  open(messageId: string, memoryId: string, edit = false): Promise<void> {
    return this.#run(messageId, memoryId, 'errors.loadFailed', async () => {
      const memory = await this.#deps.request('memory.get', { id: memoryId });
      if (!memory) {
        this.#update(messageId, (s) => ({ ...s, memories: s.memories.map((m) => (m.memoryId === memoryId ? { ...m, exists: false } : m)) }));
        this.#deps.notices.notify('error', t('sources.gone'));
        return;
      }
      this.focused = { memory, edit };
      this.#deps.view.contextMessageId = null;
      this.#deps.view.drawerOpen = false;
      this.#deps.view.tab = 'memory';
    });
  }

  /** Reads the focused memory again (after the Memory tab's list changed: an edit, a delete); gone → no longer focused. */
  async refreshFocused(): Promise<void> {
    const id = this.focused?.memory.id;
    if (!id) return;
    try {
      const memory = await this.#deps.request('memory.get', { id }, { retry: true });
      if (this.focused?.memory.id === id) this.focused = memory ? { memory, edit: false } : null;
    } catch {
      // Kept as it was; the next change reads it again.
    }
  }

  /** Stops showing the focused memory first. */
  closeFocus(): void {
    this.focused = null;
  }
}

/** Creates the answer sources store (nothing read). */
export function createAnswerSourcesStore(deps: AnswerSourcesStoreDeps): AnswerSourcesStore {
  return new AnswerSourcesStore(deps);
}
