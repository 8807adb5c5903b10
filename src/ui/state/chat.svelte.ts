/**
 * Chat store: the chat input's text and the turns this panel sends. A turn shows the user's
 * message at once, streams the reply from `event.chatDelta` (only the deltas of its own request;
 * a reply another panel started in the open conversation is followed instead), and on failure
 * shows the error in the reply and puts the text back into the input unless the core stored it.
 * The transcript itself lives in the conversations store.
 */
import type { EngineState } from '../../model/engine';
import { isStorageFull } from '../lib/connect';
import { errorText } from '../lib/errors';
import { sendBlocker } from '../lib/keys';
import { applyDelta, beginTurn, completeTurn, failTurn, followTurn, reconcileFailedTurn } from '../lib/transcript';
import type { StoreApi } from './api';
import type { ConversationsStore } from './conversations.svelte';
import type { NoticesStore } from './notices.svelte';

/** What the chat store needs. `chatState` tells the chat model's state now (`undefined` before the first status). */
export interface ChatStoreDeps extends StoreApi {
  notices: NoticesStore;
  conversations: ConversationsStore;
  chatState: () => EngineState | undefined;
}

/** See module doc. Created by `createChatStore`. */
export class ChatStore {
  /** Text of the chat input (kept here so a failed send can put it back). */
  draft = $state('');
  readonly #deps: ChatStoreDeps;

  constructor(deps: ChatStoreDeps) {
    this.#deps = deps;
  }

  /**
   * `true` when Send works now: there is text (once trimmed), no turn runs in this panel, and the
   * chat model is ready — or the text is a memory command, answered without it (`sendBlocker`).
   */
  get canSend(): boolean {
    const text = this.draft.trim();
    return text.length > 0 && !this.#deps.conversations.active && sendBlocker(text, this.#deps.chatState()) === null;
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
   * Sends the text in the input as one chat turn, streaming the reply. Creates the conversation
   * first when the chat is new. On failure the reply shows the error, and the text goes back
   * into the input unless the core stored it. Without a ready chat model only memory commands
   * are sent (`sendBlocker`); other text stays in the input.
   */
  async send(): Promise<void> {
    const { request, notices, conversations: c } = this.#deps;
    if (!this.canSend) return;
    const text = this.draft.trim();
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
    c.active = { requestId, conversationId };
    c.highlighted = [];
    c.messages = beginTurn(c.messages, { requestId, text, now: Date.now() });
    try {
      const result = await request('chat.send', { conversationId, text, requestId });
      if (c.current?.id === conversationId) {
        // A memory command's result shows as a card under its reply (stored with the message).
        c.messages = completeTurn(c.messages, requestId, result);
        await c.refreshTrace();
      }
    } catch (error) {
      if (c.current?.id === conversationId) {
        c.messages = failTurn(c.messages, requestId, errorText(error));
        if (isStorageFull(error)) notices.fail('errors.sendFailed', error);
        const stored = await request('messages.list', { conversationId }, { retry: true }).catch(() => null);
        const { list, userStored } = stored ? reconcileFailedTurn(c.messages, stored, requestId) : { list: c.messages.slice(), userStored: false };
        c.messages = list;
        if (!userStored && !this.draft) this.draft = text;
      } else if (!this.draft) {
        this.draft = text;
      }
    } finally {
      c.active = null;
      await c.refresh();
      if (c.current?.id === conversationId) {
        const fresh = await request('conversations.get', { id: conversationId }, { retry: true }).catch(() => null);
        if (fresh) c.current = fresh;
      }
    }
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

/** Creates the chat store. */
export function createChatStore(deps: ChatStoreDeps): ChatStore {
  return new ChatStore(deps);
}
