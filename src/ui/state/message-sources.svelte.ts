/**
 * Message sources store: stored messages in brief (`MessageSnippet`, read with
 * `messages.snippets`), for the "From …" line of a memory in the Memory tab and in the context
 * view: the message a memory came from and when it was said, not the conversation's title.
 * Reads are batched (every memory of a list asks for its own; one request per microtask) and
 * cached; `event.conversations` drops what it holds for a conversation that changed.
 */
import type { MessageSnippet } from '../../messaging/protocol';
import type { StoreApi } from './api';
import { BatchedReads } from './batched-reads';

/** Most ids sent in one `messages.snippets` request (the core's limit). */
const IDS_PER_REQUEST = 500;

/** See module doc. Created by `createMessageSourcesStore`. */
export class MessageSourcesStore {
  /** Messages in brief by id; `null`: the message no longer exists. Absent: not read yet. */
  byId = $state<Record<string, MessageSnippet | null>>({});
  readonly #deps: StoreApi;
  readonly #reads: BatchedReads<MessageSnippet>;

  constructor(deps: StoreApi) {
    this.#deps = deps;
    this.#reads = new BatchedReads({
      perRequest: IDS_PER_REQUEST,
      isRead: (id) => id in this.byId,
      read: async (ids) => new Map((await deps.request('messages.snippets', { ids }, { retry: true })).map((m) => [m.id, m])),
      store: (results) => {
        this.byId = { ...this.byId, ...results };
      },
    });
  }

  /** Follows `event.conversations`: what was read for a changed conversation (all, for `null`) and every "no longer exists" is read again when asked. @returns the unsubscribe. */
  listen(): () => void {
    return this.#deps.subscribe('event.conversations', ({ conversationId }) => this.forget(conversationId));
  }

  /**
   * Reads the messages of `ids` not read yet into `byId`. Calls in the same microtask share one
   * read (`BatchedReads`, `IDS_PER_REQUEST` ids a request). A failed read leaves them unread and is
   * no notice (the line is secondary; the next call tries again). @returns once they are read (or the read failed).
   */
  load(ids: readonly string[]): Promise<void> {
    return this.#reads.load(ids);
  }

  /**
   * The message a memory with source `messageIds` came from: the first user message among them
   * (what the user said), else the first that exists. `null` when there are none or none exists
   * any more; `undefined` while some are not read yet (`load`).
   */
  sourceOf(messageIds: readonly string[]): MessageSnippet | null | undefined {
    if (messageIds.length === 0) return null;
    if (messageIds.some((id) => !(id in this.byId))) return undefined;
    const existing = messageIds.map((id) => this.byId[id]).filter((m): m is MessageSnippet => !!m);
    return existing.find((m) => m.role === 'user') ?? existing[0] ?? null;
  }

  /** Drops what was read for conversation `conversationId` (everything for `null`) and every "no longer exists". */
  forget(conversationId: string | null): void {
    const kept = Object.entries(this.byId).filter(([, m]) => m !== null && conversationId !== null && m.conversationId !== conversationId);
    if (kept.length !== Object.keys(this.byId).length) this.byId = Object.fromEntries(kept);
  }
}

/** Creates the message sources store (nothing read). */
export function createMessageSourcesStore(deps: StoreApi): MessageSourcesStore {
  return new MessageSourcesStore(deps);
}
