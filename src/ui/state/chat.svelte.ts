/**
 * Chat store: the chat input's text and the turns this panel sends. A turn shows the user's
 * message at once, streams the reply from `event.chatDelta` (only the deltas of its own request;
 * a reply another panel started in the open conversation is followed instead), and on any failure
 * (the request rejected, or a stored `error` reply) shows the error in the reply and puts the text
 * back into the input when the input is empty. A message sent while this panel's reply streams
 * waits (`queued` on its bubble) and is sent when that reply ends. Regenerate, edit and resend,
 * and Retry replace the later turns (`chat.regenerate` / `chat.edit` / `chat.retry`).
 * Before a message is sent it is measured against the model's room (`chat.measure`): one that
 * cannot fit is not sent; the composer warns and offers to shorten it (`shorten`).
 * Over 200 lines: one turn runner shared by send, queue, regenerate, edit and retry.
 * The transcript itself lives in the conversations store.
 */
import type { EngineState } from '../../model/engine';
import type { PageAttachment } from '../../model/page';
import type { ChatTurnResult, MessageFit } from '../../messaging/protocol';
import { isStorageFull } from '../lib/connect';
import { errorText } from '../lib/errors';
import { isMemoryCommand, sendBlocker } from '../lib/keys';
import {
  applyDelta,
  beginTurn,
  completeTurn,
  failTurn,
  followTurn,
  queueTurn,
  fromRecord,
  reconcileFailedTurn,
  truncateBefore,
  unqueueTurn,
  type UiMessage,
} from '../lib/transcript';
import type { StoreApi } from './api';
import type { ConversationsStore } from './conversations.svelte';
import type { NoticesStore } from './notices.svelte';

/** What the chat store needs. `chatState` tells the chat model's state now (`undefined` before the first status). */
export interface ChatStoreDeps extends StoreApi {
  notices: NoticesStore;
  conversations: ConversationsStore;
  chatState: () => EngineState | undefined;
  /** The page attached in the composer (`PageStore.take`: handed over once, then cleared), sent with the next message. */
  takePage?: () => PageAttachment | null;
}

/** How long (ms) the input must rest before its text is measured (`chat.measure`). */
export const MEASURE_DELAY_MS = 250;

/** A message waiting for this panel's running reply to end. */
interface QueuedTurn {
  requestId: string;
  conversationId: string;
  text: string;
  page?: PageAttachment;
}

/** How a turn reaches the core: a plain send, or one that replaces turns from `replaceFrom` (a message id shown now). */
interface TurnCall {
  call: (requestId: string) => Promise<ChatTurnResult>;
  replaceFrom?: string;
}

/** See module doc. Created by `createChatStore`. */
export class ChatStore {
  /** Text of the chat input (kept here so a failed send can put it back). */
  draft = $state('');
  /** The last measurement of the input's (trimmed) text, or `null` (not measured, or no model to measure against). */
  fit = $state<{ text: string; fit: MessageFit } | null>(null);
  readonly #deps: ChatStoreDeps;
  readonly #queue: QueuedTurn[] = [];
  #measureTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(deps: ChatStoreDeps) {
    this.#deps = deps;
  }

  /**
   * `true` when Send can be tried now: there is text (once trimmed), no reply this panel follows
   * runs (this panel's own reply does not block: the message waits), and the chat model is ready
   * — or the text is a memory command, answered without it (`sendBlocker`). `send` then measures
   * the text first and sends nothing when it does not fit (`tooLong`).
   */
  get canSend(): boolean {
    const text = this.draft.trim();
    const active = this.#deps.conversations.active;
    return text.length > 0 && !active?.followed && sendBlocker(text, this.#deps.chatState()) === null;
  }

  /** The measurement of the input's text when it cannot be sent because it does not fit, else `null`. */
  get tooLong(): MessageFit | null {
    const fit = this.fit;
    return fit && fit.text === this.draft.trim() && !fit.fit.fits ? fit.fit : null;
  }

  /** `true` while a turn of this panel runs or waits to be sent (regenerate, edit and retry wait until none does). */
  get busy(): boolean {
    return this.#deps.conversations.active !== null || this.#queue.length > 0;
  }

  /**
   * Measures the input's text `MEASURE_DELAY_MS` after the last call (the composer calls it on
   * every change of the text, the model and the answer length), so the warning shows before
   * Enter. Memory commands and texts with no ready model are not measured.
   */
  measureSoon(): void {
    if (this.#measureTimer !== null) clearTimeout(this.#measureTimer);
    this.#measureTimer = setTimeout(() => {
      this.#measureTimer = null;
      void this.#measure(this.draft.trim());
    }, MEASURE_DELAY_MS);
  }

  /**
   * Measures `text` now (`chat.measure`, always asked again: the model or the answer length may
   * have changed since) and records it; `null` when it is not measured or the request failed.
   */
  async #measure(text: string): Promise<MessageFit | null> {
    if (!text || isMemoryCommand(text) || this.#deps.chatState() !== 'ready') return null;
    const fit = await this.#deps.request('chat.measure', { text }).catch(() => null);
    if (fit) this.fit = { text, fit };
    else if (this.fit?.text === text) this.fit = null; // unknown now: the core checks again when it is sent
    return fit;
  }

  /** Shortens the input to its longest start that fits the model (cut at a sentence or word end, measured by the core). */
  shorten(): void {
    const fit = this.tooLong;
    if (!fit) return;
    const kept = this.draft.trim().slice(0, fit.fitChars).trimEnd();
    this.draft = kept;
    this.fit = { text: kept, fit: { ...fit, fits: true, chars: kept.length, fitChars: kept.length } };
  }

  /** Follows `event.chatDelta`: this panel's own reply, or one running in the open conversation. @returns the unsubscribe. */
  listen(): () => void {
    const c = this.#deps.conversations;
    return this.#deps.subscribe('event.chatDelta', (event) => {
      if (c.active?.requestId === event.requestId && !c.active.followed) {
        c.messages = applyDelta(c.messages, event);
        return;
      }
      // A reply another panel started (or one running since before this panel opened) in the open conversation.
      if (event.conversationId !== c.current?.id || (c.active && c.active.requestId !== event.requestId)) return;
      c.active ??= { requestId: event.requestId, conversationId: event.conversationId, followed: true };
      c.messages = followTurn(c.messages, { requestId: event.requestId, delta: event.delta, now: Date.now() });
    });
  }

  /**
   * Sends the text in the input as one chat turn, streaming the reply, or queues it (its bubble
   * says it waits) while this panel's reply streams. Creates the conversation first when the chat
   * is new. A text measured too long for the model is not sent (`tooLong`; the text stays). On
   * failure the reply shows the error and the text goes back into the input. Without a ready chat
   * model only memory commands are sent (`sendBlocker`); other text stays in the input.
   */
  async send(): Promise<void> {
    const { notices, conversations: c } = this.#deps;
    if (!this.canSend) return;
    const text = this.draft.trim();
    const fit = await this.#measure(text);
    if (fit && !fit.fits) return; // the composer shows the warning; the text stays
    if (this.draft.trim() !== text) return; // edited while it was measured: the next Enter sends the new text
    this.draft = '';
    let conversation = c.current;
    if (!conversation) {
      try {
        conversation = await c.createPending();
      } catch (error) {
        this.draft = text;
        notices.fail('errors.createFailed', error);
        return;
      }
    }
    const requestId = crypto.randomUUID();
    const conversationId = conversation.id;
    const page = this.#deps.takePage?.() ?? null;
    if (c.active) {
      this.#queue.push({ requestId, conversationId, text, ...(page ? { page } : {}) });
      c.messages = queueTurn(c.messages, { requestId, text, now: Date.now() });
      return;
    }
    await this.#run(conversationId, text, requestId, {
      call: (id) => this.#deps.request('chat.send', { conversationId, text, requestId: id, ...(page ? { page } : {}) }),
    });
  }

  /** Removes a waiting message (`queued`) before it is sent; its text goes back into an empty input. */
  cancelQueued(requestId: string): void {
    const index = this.#queue.findIndex((q) => q.requestId === requestId);
    if (index < 0) return;
    const [turn] = this.#queue.splice(index, 1);
    const c = this.#deps.conversations;
    c.messages = unqueueTurn(c.messages, requestId);
    if (!this.draft.trim()) this.draft = turn!.text;
  }

  /** Runs the last turn of the open conversation again (the old reply is replaced). No-op while a turn runs. */
  async regenerate(): Promise<void> {
    const c = this.#deps.conversations;
    const conversationId = c.current?.id;
    const last = [...c.messages].reverse().find((m) => m.role === 'user' && !m.pending);
    if (!conversationId || !last || this.busy) return;
    await this.#run(conversationId, last.content, crypto.randomUUID(), {
      call: (requestId) => this.#deps.request('chat.regenerate', { conversationId, requestId }),
      replaceFrom: last.id,
    });
  }

  /** Replaces the stored user message `messageId` with `text` (trimmed) and the turns after it, then sends it. No-op while a turn runs or for blank text. */
  async edit(messageId: string, text: string): Promise<void> {
    const c = this.#deps.conversations;
    const conversationId = c.current?.id;
    const content = text.trim();
    if (!conversationId || !content || this.busy) return;
    await this.#run(conversationId, content, crypto.randomUUID(), {
      call: (requestId) => this.#deps.request('chat.edit', { conversationId, messageId, text: content, requestId }),
      replaceFrom: messageId,
    });
  }

  /**
   * Sends the text of a failed turn again (`messageId`: its failed reply). A stored failure is
   * replaced (`chat.retry`); a reply that failed before being stored is regenerated when its user
   * message was stored, else its text is sent anew.
   */
  async retry(messageId: string): Promise<void> {
    const c = this.#deps.conversations;
    const conversationId = c.current?.id;
    const index = c.messages.findIndex((m) => m.id === messageId);
    const user = c.messages
      .slice(0, Math.max(0, index))
      .reverse()
      .find((m) => m.role === 'user');
    if (!conversationId || index < 0 || !user || this.busy) return;
    const failed = c.messages[index]!;
    if (!failed.pending) {
      await this.#run(conversationId, user.content, crypto.randomUUID(), {
        call: (requestId) => this.#deps.request('chat.retry', { conversationId, messageId, requestId }),
        replaceFrom: user.id,
      });
    } else if (!user.pending) {
      await this.regenerate();
    } else {
      c.messages = c.messages.filter((m) => m !== user && m !== failed);
      if (this.draft.trim() === user.content) this.draft = '';
      await this.#run(conversationId, user.content, crypto.randomUUID(), {
        call: (requestId) => this.#deps.request('chat.send', { conversationId, text: user.content, requestId }),
      });
    }
  }

  /**
   * Runs one turn: shows it at once (after removing the turns it replaces), streams, then shows
   * the stored records; on failure shows the error, reconciles with what the core stored and puts
   * the text back into an empty input. Then sends the next waiting message.
   */
  async #run(conversationId: string, text: string, requestId: string, turn: TurnCall): Promise<void> {
    const { request, notices, conversations: c } = this.#deps;
    const shown = () => c.current?.id === conversationId;
    c.active = { requestId, conversationId };
    c.highlighted = [];
    if (shown()) {
      if (turn.replaceFrom) c.messages = truncateBefore(c.messages, turn.replaceFrom);
      c.messages = beginTurn(c.messages, { requestId, text, now: Date.now() });
    }
    try {
      const result = await turn.call(requestId);
      if (shown()) {
        // A memory command's result shows as a card under its reply (stored with the message).
        c.messages = completeTurn(c.messages, requestId, result);
        await c.refreshTrace();
      }
      if (result.assistantMessage.status === 'error' && !this.draft.trim()) this.draft = text;
    } catch (error) {
      if (shown()) {
        const waiting = c.messages.filter((m) => m.queued);
        c.messages = failTurn(c.messages, requestId, errorText(error));
        if (isStorageFull(error) || turn.replaceFrom) notices.fail('errors.sendFailed', error);
        const stored = await request('messages.list', { conversationId }, { retry: true }).catch(() => null);
        const { list, userStored } = stored ? reconcileFailedTurn(c.messages, stored, requestId) : { list: c.messages.slice(), userStored: false };
        // A replacement the core refused changed nothing: show what is stored.
        c.messages = withWaiting(turn.replaceFrom && !userStored && stored ? stored.map(fromRecord) : list, waiting);
      }
      if (!this.draft.trim()) this.draft = text;
    } finally {
      c.active = null;
      await c.refresh();
      if (shown()) {
        const fresh = await request('conversations.get', { id: conversationId }, { retry: true }).catch(() => null);
        if (fresh) c.current = fresh;
      }
    }
    await this.#next();
  }

  /** Sends the next waiting message, if any. */
  async #next(): Promise<void> {
    const next = this.#queue.shift();
    if (!next) return;
    const { conversationId, text, page } = next;
    await this.#run(conversationId, text, next.requestId, {
      call: (id) => this.#deps.request('chat.send', { conversationId, text, requestId: id, ...(page ? { page } : {}) }),
    });
  }

  /** Stops the reply being generated (the partial reply is kept, status `aborted`). Failures become a notice. */
  async stop(): Promise<void> {
    const active = this.#deps.conversations.active;
    if (!active) return;
    try {
      await this.#deps.request('chat.stop', { requestId: active.requestId });
    } catch (error) {
      this.#deps.notices.fail('errors.stopFailed', error);
    }
  }
}

/** `list` with the waiting messages `waiting` appended (those it lacks), in their order. */
function withWaiting(list: readonly UiMessage[], waiting: readonly UiMessage[]): UiMessage[] {
  const ids = new Set(list.map((m) => m.id));
  return [...list, ...waiting.filter((m) => !ids.has(m.id))];
}

/** Creates the chat store. */
export function createChatStore(deps: ChatStoreDeps): ChatStore {
  return new ChatStore(deps);
}
