/**
 * Conversations store: the list (newest first), the open conversation with its transcript, the
 * turn running in it (this panel's own, or one it follows), its last prompt trace, and the
 * actions on conversations (open, new, rename, delete, strategy, jump to a memory's source).
 * `event.conversations` keeps list and transcript in step with other panels and the core.
 * The chat store (`chat.svelte.ts`) runs turns on this store's transcript.
 */
import type { ConversationRecord } from '../../model/records';
import type { StrategyConfig } from '../../model/strategies';
import type { ConversationSearchHit, ConversationSummary } from '../../messaging/protocol';
import type { PromptTrace } from '../../model/trace';
import { t } from '../i18n/index.svelte';
import { followTurn, fromRecord, lastStoredAssistant, type UiMessage } from '../lib/transcript';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';
import type { ViewStore } from './view.svelte';

/** The chat turn this panel is running or following. */
export interface ActiveTurn {
  requestId: string;
  conversationId: string;
  /** `true` when this panel follows a reply it did not start (`followTurn`). */
  followed?: true;
}

/** What the conversations store needs. */
export interface ConversationsStoreDeps extends StoreApi {
  notices: NoticesStore;
  view: ViewStore;
}

/** See module doc. Created by `createConversationsStore`. */
export class ConversationsStore {
  list = $state<ConversationSummary[]>([]);
  /** The open conversation, or `null` for a new chat not yet created (created on first send). */
  current = $state<ConversationRecord | null>(null);
  messages = $state<readonly UiMessage[]>([]);
  active = $state<ActiveTurn | null>(null);
  /** Prompt trace of the last stored assistant message of the open conversation. */
  lastTrace = $state<{ messageId: string; trace: PromptTrace } | null>(null);
  /** Message ids to highlight after jumping to a memory's source. */
  highlighted = $state<string[]>([]);
  /** Strategy picked for a new chat before it exists. */
  pendingStrategy = $state<StrategyConfig | null>(null);

  readonly #deps: ConversationsStoreDeps;
  #creating = false;
  /** The list read in flight, and whether another is due after it (`refresh`). */
  #listing: Promise<void> | null = null;
  #listStale = false;
  /**
   * Conversations this panel deleted (or is deleting): their disappearance is expected, not an
   * error. Kept after the reply, since the core announces the delete before it answers and the
   * re-read that announcement starts can come back after it.
   */
  readonly #deleted = new Set<string>();

  constructor(deps: ConversationsStoreDeps) {
    this.#deps = deps;
  }

  /**
   * The context strategy the chat shows: the open conversation's, else the one picked for the new
   * chat, else `fallback` (the default strategy of new conversations, from the settings).
   */
  strategyShown(fallback: StrategyConfig): StrategyConfig {
    return this.current?.strategy ?? this.pendingStrategy ?? fallback;
  }

  /** `true` while this panel streams a reply in the open conversation. */
  get streaming(): boolean {
    return this.active !== null && this.active.conversationId === this.current?.id;
  }

  /**
   * Follows `event.conversations`: re-reads the list, and the open conversation's messages when
   * they changed (another panel's turn, a followed reply that finished, an import), unless this
   * panel's own turn is still running. @returns the unsubscribe.
   */
  listen(): () => void {
    return this.#deps.subscribe('event.conversations', (event) => {
      void this.refresh();
      const open = event.conversationId === null || event.conversationId === this.current?.id;
      if (open && (!this.active || this.active.followed)) void this.reloadCurrent();
    });
  }

  /**
   * Re-reads the conversation list (newest first). Failures become a notice. Calls that come
   * while a read is in flight (a turn stores two messages, each announced, and `send` refreshes
   * too) share one more read after it: a burst costs at most two requests, and every caller
   * resolves after a read that started after its call.
   */
  refresh(): Promise<void> {
    this.#listStale = true;
    this.#listing ??= (async () => {
      try {
        while (this.#listStale) {
          this.#listStale = false;
          try {
            this.list = await this.#deps.request('conversations.list', undefined, { retry: true });
          } catch (error) {
            this.#deps.notices.fail('errors.loadFailed', error);
          }
        }
      } finally {
        this.#listing = null;
      }
    })();
    return this.#listing;
  }

  /**
   * The conversations whose title or messages contain every word of `query` (the core's
   * `conversations.search`: title matches first, then newest). A failure becomes a notice and
   * returns `[]`.
   */
  async search(query: string): Promise<ConversationSearchHit[]> {
    try {
      return await this.#deps.request('conversations.search', { query }, { retry: true });
    } catch (error) {
      this.#deps.notices.fail('errors.searchFailed', error);
      return [];
    }
  }

  /** Closes the open conversation: a new chat (nothing deleted). */
  closeOpen(): void {
    this.current = null;
    this.messages = [];
    this.lastTrace = null;
    this.highlighted = [];
    this.#deps.view.contextMessageId = null;
  }

  /**
   * Opens a conversation: its record, messages and last prompt trace. One that is gone becomes a
   * new chat, with an error notice unless this panel deleted it. Failures become a notice.
   * @param highlight message ids to highlight and scroll to (a memory's source).
   */
  async select(id: string, highlight: string[] = []): Promise<void> {
    const { request, notices, view } = this.#deps;
    try {
      const [conversation, records] = await Promise.all([
        request('conversations.get', { id }, { retry: true }),
        request('messages.list', { conversationId: id }, { retry: true }),
      ]);
      if (!conversation) {
        if (!this.#deleted.has(id)) notices.notify('error', t('errors.conversationGone'));
        if (this.current?.id === id) {
          // Deleted meanwhile (e.g. from another window): show a new chat instead of a dead one.
          this.current = null;
          this.messages = [];
          this.lastTrace = null;
          this.highlighted = [];
          if (this.active?.followed) this.active = null;
        }
        await this.refresh();
        return;
      }
      this.current = conversation;
      this.messages = records.map(fromRecord);
      this.highlighted = highlight;
      view.drawerOpen = false;
      this.pendingStrategy = null;
      await this.#followLiveTurn(id);
      await this.refreshTrace();
    } catch (error) {
      notices.fail('errors.loadFailed', error);
    }
  }

  /**
   * Shows the reply streaming now in conversation `id` when this panel did not start it (opened
   * mid-reply, or another panel's turn), and follows it until it is stored; stops following a
   * reply that has been stored meanwhile or belongs to another conversation.
   */
  async #followLiveTurn(id: string): Promise<void> {
    if (this.active?.followed) this.active = null;
    if (this.active) return; // this panel's own turn
    const live = await this.#deps.request('chat.live', { conversationId: id }).catch(() => null);
    if (!live || this.current?.id !== id) return;
    // Pieces of this reply that arrived meanwhile already started following it: the snapshot
    // fills in the beginning. Any other turn (this panel's own) is left alone.
    const meanwhile = this.active as ActiveTurn | null; // may have changed during the request
    if (meanwhile && meanwhile.requestId !== live.requestId) return;
    if (this.messages.some((m) => m.id === live.messageId)) return; // stored between the two reads
    this.active = { requestId: live.requestId, conversationId: id, followed: true };
    this.messages = followTurn(this.messages, { requestId: live.requestId, content: live.content, now: Date.now() });
  }

  /** Re-reads the open conversation (title, strategy, messages). */
  async reloadCurrent(): Promise<void> {
    if (this.current) await this.select(this.current.id, this.highlighted);
  }

  /**
   * Creates a conversation with the strategy picked for the new chat (or the default).
   * @throws the core's error (the caller says what failed).
   */
  async createPending(): Promise<ConversationRecord> {
    const created = await this.#deps.request('conversations.create', this.pendingStrategy ? { strategy: $state.snapshot(this.pendingStrategy) } : {});
    this.current = created;
    this.pendingStrategy = null;
    return created;
  }

  /** Starts a new conversation (created right away); stays on the open one while it is still empty (unless it is a temporary chat). Failures become a notice. */
  async startNew(): Promise<void> {
    if (this.#creating) return; // a double click makes one conversation
    const { notices, view } = this.#deps;
    // The open conversation is still empty: it already is a new one (no pile of empty chats).
    if (this.current && this.messages.length === 0 && !this.active && !this.temporary) {
      view.showChat();
      return;
    }
    this.#creating = true;
    try {
      await this.createPending();
      this.messages = [];
      this.lastTrace = null;
      this.highlighted = [];
      view.contextMessageId = null;
      view.showChat();
      await this.refresh();
    } catch (error) {
      notices.fail('errors.createFailed', error);
    } finally {
      this.#creating = false;
    }
  }

  /** `true` while the open conversation is a temporary chat (not learned from; deleted once no panel shows it). */
  get temporary(): boolean {
    return this.current?.temporary === true;
  }

  /**
   * Starts a temporary chat (created right away; the core deletes it once this panel shows another
   * conversation or closes). Stays on the open one when it already is an empty temporary chat. Failures become a notice.
   */
  async startTemporary(): Promise<void> {
    if (this.#creating || this.active) return;
    const { notices, request, view } = this.#deps;
    if (this.temporary && this.messages.length === 0) return view.showChat();
    this.#creating = true;
    try {
      const strategy = this.pendingStrategy ? { strategy: $state.snapshot(this.pendingStrategy) } : {};
      this.current = await request('conversations.create', { ...strategy, temporary: true });
      this.pendingStrategy = null;
      this.messages = [];
      this.lastTrace = null;
      this.highlighted = [];
      view.contextMessageId = null;
      view.showChat();
    } catch (error) {
      notices.fail('errors.createFailed', error);
    } finally {
      this.#creating = false;
    }
  }

  /** Renames a conversation (`title` is trimmed by the core). Failures become a notice. */
  async rename(id: string, title: string): Promise<void> {
    try {
      const updated = await this.#deps.request('conversations.update', { id, title });
      if (this.current?.id === id) this.current = updated;
      await this.refresh();
    } catch (error) {
      this.#deps.notices.fail('errors.renameFailed', error);
    }
  }

  /**
   * Marks every conversation this panel knows (the list and the open one) as about to disappear
   * by the user's own action ("Erase everything"), so their disappearance — which the core
   * announces before it answers — is not reported as an error. @returns the undo, for an erase
   * that failed.
   */
  expectAllGone(): () => void {
    const ids = [...this.list.map((c) => c.id), ...(this.current ? [this.current.id] : [])].filter((id) => !this.#deleted.has(id));
    for (const id of ids) this.#deleted.add(id);
    return () => ids.forEach((id) => this.#deleted.delete(id));
  }

  /** Deletes a conversation and its messages; the open one becomes a new chat (no error notice). Failures become a notice. */
  async remove(id: string): Promise<void> {
    this.#deleted.add(id);
    try {
      await this.#deps.request('conversations.delete', { id });
      if (this.current?.id === id) this.closeOpen();
      await this.refresh();
    } catch (error) {
      this.#deleted.delete(id);
      this.#deps.notices.fail('errors.deleteFailed', error);
    }
  }

  /** Changes the open conversation's context strategy (or the one a new chat will get). Failures become a notice. */
  async setStrategy(strategy: StrategyConfig): Promise<void> {
    if (!this.current) {
      this.pendingStrategy = strategy;
      return;
    }
    try {
      this.current = await this.#deps.request('conversations.update', { id: this.current.id, strategy: $state.snapshot(strategy) });
    } catch (error) {
      this.#deps.notices.fail('errors.strategyFailed', error);
    }
  }

  /** Jumps to the conversation a memory came from, highlighting its source messages. */
  async jumpToSource(conversationId: string, messageIds: string[]): Promise<void> {
    this.#deps.view.contextMessageId = null;
    this.#deps.view.tab = 'chat';
    await this.select(conversationId, messageIds);
  }

  /**
   * Reads the prompt trace of an assistant message (context view; the last one is also in `lastTrace`).
   * @returns `null` when none was stored. @throws the core's error.
   */
  trace(messageId: string): Promise<PromptTrace | null> {
    return this.#deps.request('trace.get', { messageId }, { retry: true });
  }

  /** Loads the prompt trace of the last stored assistant message (for the budget bar); `null` when there is none or the read failed. */
  async refreshTrace(): Promise<void> {
    const last = lastStoredAssistant(this.messages);
    if (!last) {
      this.lastTrace = null;
      return;
    }
    try {
      const trace = await this.#deps.request('trace.get', { messageId: last.id }, { retry: true });
      this.lastTrace = trace ? { messageId: last.id, trace } : null;
    } catch {
      this.lastTrace = null;
    }
  }
}

/** Creates the conversations store (empty list, new chat). */
export function createConversationsStore(deps: ConversationsStoreDeps): ConversationsStore {
  return new ConversationsStore(deps);
}
