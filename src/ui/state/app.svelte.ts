/**
 * The side panel's state and actions (Svelte 5 runes). One instance, `app`, shared by every
 * component. All data comes from the core through `./api` (requests and `event.*`); this
 * module holds what is on screen and never owns data the core owns.
 *
 * Errors of user actions become notices (`app.notices`): a translated sentence, with the core's
 * (English) message as a detail line under it; nothing the user typed is dropped on failure (the chat text goes back into
 * the input when the core did not store it).
 */
import type { ConversationRecord } from '../../db/schema';
import type { JobStats } from '../../jobs/queue';
import type { StrategyConfig } from '../../memory/short-term/types';
import type { ConversationSummary, EngineStatus, ModelCatalog, Settings, WllamaSource } from '../../messaging/protocol';
import type { PromptTrace } from '../../prompt/types';
import { saveModelFile } from '../../platform/model-files';
import browser from 'webextension-polyfill';
import { setLanguage, t, type TranslationKey } from '../i18n/index.svelte';
import { errorMessage, isStorageFull } from '../lib/connect';
import { engineErrorView, errorCodeOf } from '../lib/engine-errors';
import { hasGgufExtension, inspectGgufFile } from '../lib/gguf';
import { resolveUiLanguage } from '../lib/locale';
import { sendBlocker } from '../lib/keys';
import { readUiPref, writeUiPref } from '../lib/ui-prefs';
import {
  applyDelta,
  beginTurn,
  completeTurn,
  failTurn,
  followTurn,
  fromRecord,
  lastStoredAssistant,
  reconcileFailedTurn,
  type UiMessage,
} from '../lib/transcript';
import { connect, request, subscribe } from './api';

/** The panel's tabs. */
export type Tab = 'chat' | 'models' | 'memory' | 'settings';

/** A message in the notice area. Errors stay until dismissed; infos go away after 6 s. */
export interface Notice {
  id: number;
  kind: 'error' | 'info';
  /** `engine`: about loading a chat model; such notices go away once a model loads. */
  topic?: 'engine';
  /** The translated sentence. */
  text: string;
  /** The core's own message (English), shown as a smaller detail line under `text`. */
  detail?: string;
}

/** Progress of opening a local .gguf file (checked, copied into OPFS, registered, loaded). */
export interface FileImport {
  name: string;
  stage: 'checking' | 'copying' | 'registering' | 'loading';
  /** Bytes copied so far. */
  writtenBytes: number;
  /** File size in bytes. */
  totalBytes: number;
}

/** The chat turn this panel is running. */
interface ActiveTurn {
  requestId: string;
  conversationId: string;
  /** `true` when this panel follows a reply it did not start (`followTurn`). */
  followed?: true;
}

const browserLanguage = (): string | undefined => {
  try {
    return browser.i18n.getUILanguage();
  } catch {
    return globalThis.navigator?.language;
  }
};

/** See module doc. */
export class AppState {
  /**
   * `connecting` until `core.ensure` answered and the first data arrived, then `ready`;
   * `failed` when the core answered but the first data could not be read (retry with `loadAll`).
   */
  connection = $state<{ state: 'connecting' | 'ready' | 'failed'; attempts: number; lastError: string | null }>({ state: 'connecting', attempts: 0, lastError: null });
  tab = $state<Tab>('chat');
  engine = $state<EngineStatus | null>(null);
  catalog = $state<ModelCatalog | null>(null);
  settings = $state<Settings | null>(null);
  conversations = $state<ConversationSummary[]>([]);
  /** The open conversation, or `null` for a new chat not yet created (created on first send). */
  current = $state<ConversationRecord | null>(null);
  messages = $state<readonly UiMessage[]>([]);
  active = $state<ActiveTurn | null>(null);
  /** Prompt trace of the last stored assistant message of the open conversation. */
  lastTrace = $state<{ messageId: string; trace: PromptTrace } | null>(null);
  jobs = $state<JobStats | null>(null);
  notices = $state<Notice[]>([]);
  /** Text of the chat input (kept here so a failed send can put it back). */
  draft = $state('');
  /** Assistant message whose context view is open. */
  contextMessageId = $state<string | null>(null);
  drawerOpen = $state(false);
  /** Message ids to highlight after jumping to a memory's source. */
  highlighted = $state<string[]>([]);
  fileImport = $state<FileImport | null>(null);
  /** A load request is in flight (buttons disabled). */
  engineBusy = $state(false);
  /** An `engine.reloadEmbedder` request is in flight. */
  embedderBusy = $state(false);
  #embedderBannerDismissed = $state<string | null>(readUiPref('recall.ui.v1.embedderBannerDismissed'));
  /**
   * The embedder error the user dismissed from the chat banner (its message), so the banner stays
   * away until a different failure happens, also when the panel is opened again (kept in the
   * panel's `localStorage`). The Model tab always shows the error.
   */
  get embedderBannerDismissed(): string | null {
    return this.#embedderBannerDismissed;
  }
  set embedderBannerDismissed(message: string | null) {
    this.#embedderBannerDismissed = message;
    writeUiPref('recall.ui.v1.embedderBannerDismissed', message);
  }
  /** Strategy picked for a new chat before it exists. */
  pendingStrategy = $state<StrategyConfig | null>(null);

  #noticeSeq = 0;
  #started = false;
  #creating = false;
  /** The conversation-list read in flight, and whether another is due after it (`refreshConversations`). */
  #listing: Promise<void> | null = null;
  #listStale = false;
  #importAbort: AbortController | null = null;

  /** Connects to the core, subscribes to its events and loads the first screen. Idempotent. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    await setLanguage(resolveUiLanguage('auto', browserLanguage()));
    subscribe('event.engine', (status) => {
      this.engine = status;
    });
    subscribe('event.jobs', (stats) => {
      this.jobs = stats;
    });
    subscribe('event.chatDelta', (event) => {
      if (this.active?.requestId === event.requestId && !this.active.followed) {
        this.messages = applyDelta(this.messages, event);
        return;
      }
      // A reply another panel started (or one running since before this panel opened) in the open conversation.
      if (event.conversationId !== this.current?.id || (this.active && this.active.requestId !== event.requestId)) return;
      this.active ??= { requestId: event.requestId, conversationId: event.conversationId, followed: true };
      this.messages = followTurn(this.messages, { requestId: event.requestId, delta: event.delta, now: Date.now() });
    });
    subscribe('event.settings', (settings) => {
      // Saved here or in another window: show the new values and language everywhere.
      this.settings = settings;
      void setLanguage(resolveUiLanguage(settings.locale, browserLanguage()));
    });
    subscribe('event.conversations', (event) => {
      void this.refreshConversations();
      // Stored messages changed in the open conversation (another panel's turn, a followed reply
      // that finished, an import): show them, unless this panel's own turn is still running.
      const open = event.conversationId === null || event.conversationId === this.current?.id;
      if (open && (!this.active || this.active.followed)) void this.reloadCurrent();
    });
    await connect((progress) => {
      // Later reconnects (a request retrying after the core restarted) keep the UI as it is.
      if (this.connection.state === 'connecting') this.connection = { state: 'connecting', ...progress };
    });
    await this.loadAll();
  }

  /** (Re)reads everything from the core. */
  async loadAll(): Promise<void> {
    try {
      const [engine, catalog, settings, conversations, jobs] = await Promise.all([
        request('engine.status', undefined, { retry: true }),
        request('engine.catalog', undefined, { retry: true }),
        request('settings.get', undefined, { retry: true }),
        request('conversations.list', undefined, { retry: true }),
        request('jobs.stats', undefined, { retry: true }),
      ]);
      this.engine = engine;
      this.catalog = catalog;
      this.settings = settings;
      this.conversations = conversations;
      this.jobs = jobs;
      await setLanguage(resolveUiLanguage(settings.locale, browserLanguage()));
      this.connection = { state: 'ready', attempts: 0, lastError: null };
      const latest = conversations[0];
      if (latest && !this.current) await this.selectConversation(latest.id);
    } catch (error) {
      this.connection = { ...this.connection, state: this.connection.state === 'ready' ? 'ready' : 'failed', lastError: errorMessage(error) };
      this.fail('errors.loadFailed', error);
    }
  }

  // ── notices ────────────────────────────────────────────────────────────────

  /**
   * Shows a notice.
   * @param text translated sentence.
   * @param detail untranslated detail (the core's message), shown smaller under `text`.
   */
  notify(kind: Notice['kind'], text: string, detail?: string, topic?: Notice['topic']): void {
    const notice: Notice = { id: (this.#noticeSeq += 1), kind, text };
    if (detail) notice.detail = detail;
    if (topic) notice.topic = topic;
    this.notices = [...this.notices, notice];
    if (kind === 'info') setTimeout(() => this.dismiss(notice.id), 6_000);
  }

  /** Shows an error notice: the translated context line, with the core's message as its detail line. */
  fail(context: TranslationKey, error: unknown): void {
    // A full disk is said in the user's language, whatever the action was.
    this.notify('error', t(context), isStorageFull(error) ? t('errors.storageFull') : errorMessage(error));
  }

  /** Removes a notice. */
  dismiss(id: number): void {
    this.notices = this.notices.filter((n) => n.id !== id);
  }

  // ── conversations ──────────────────────────────────────────────────────────

  /**
   * Re-reads the conversation list (newest first). Failures become a notice. Calls that come
   * while a read is in flight (a turn stores two messages, each announced, and `send` refreshes
   * too) share one more read after it: a burst costs at most two requests, and every caller
   * resolves after a read that started after its call.
   */
  refreshConversations(): Promise<void> {
    this.#listStale = true;
    this.#listing ??= (async () => {
      try {
        while (this.#listStale) {
          this.#listStale = false;
          try {
            this.conversations = await request('conversations.list', undefined, { retry: true });
          } catch (error) {
            this.fail('errors.loadFailed', error);
          }
        }
      } finally {
        this.#listing = null;
      }
    })();
    return this.#listing;
  }

  /**
   * Opens a conversation: its record, messages and last prompt trace.
   * @param highlight message ids to highlight and scroll to (a memory's source).
   */
  async selectConversation(id: string, highlight: string[] = []): Promise<void> {
    try {
      const [conversation, records] = await Promise.all([
        request('conversations.get', { id }, { retry: true }),
        request('messages.list', { conversationId: id }, { retry: true }),
      ]);
      if (!conversation) {
        this.notify('error', t('errors.conversationGone'));
        if (this.current?.id === id) {
          // Deleted meanwhile (e.g. from another window): show a new chat instead of a dead one.
          this.current = null;
          this.messages = [];
          this.lastTrace = null;
          this.highlighted = [];
          if (this.active?.followed) this.active = null;
        }
        await this.refreshConversations();
        return;
      }
      this.current = conversation;
      this.messages = records.map(fromRecord);
      this.highlighted = highlight;
      this.drawerOpen = false;
      this.pendingStrategy = null;
      await this.#followLiveTurn(id);
      await this.refreshTrace();
    } catch (error) {
      this.fail('errors.loadFailed', error);
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
    const live = await request('chat.live', { conversationId: id }).catch(() => null);
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
    if (this.current) await this.selectConversation(this.current.id, this.highlighted);
  }

  /** Starts a new conversation (created right away, with the default strategy); stays on the open one while it is still empty. */
  async newConversation(): Promise<void> {
    if (this.#creating) return; // a double click makes one conversation
    // The open conversation is still empty: it already is a new one (no pile of empty chats).
    if (this.current && this.messages.length === 0 && !this.active) {
      this.drawerOpen = false;
      this.tab = 'chat';
      return;
    }
    this.#creating = true;
    try {
      const created = await request('conversations.create', this.pendingStrategy ? { strategy: $state.snapshot(this.pendingStrategy) } : {});
      this.current = created;
      this.messages = [];
      this.lastTrace = null;
      this.highlighted = [];
      this.pendingStrategy = null;
      this.contextMessageId = null;
      this.drawerOpen = false;
      this.tab = 'chat';
      await this.refreshConversations();
    } catch (error) {
      this.fail('errors.createFailed', error);
    } finally {
      this.#creating = false;
    }
  }

  /** Renames a conversation (`title` is trimmed by the core). Failures become a notice. */
  async renameConversation(id: string, title: string): Promise<void> {
    try {
      const updated = await request('conversations.update', { id, title });
      if (this.current?.id === id) this.current = updated;
      await this.refreshConversations();
    } catch (error) {
      this.fail('errors.renameFailed', error);
    }
  }

  /** Deletes a conversation and its messages; closes it when open. Failures become a notice. */
  async deleteConversation(id: string): Promise<void> {
    try {
      await request('conversations.delete', { id });
      if (this.current?.id === id) {
        this.current = null;
        this.messages = [];
        this.lastTrace = null;
        this.contextMessageId = null;
      }
      await this.refreshConversations();
    } catch (error) {
      this.fail('errors.deleteFailed', error);
    }
  }

  /** Changes the open conversation's context strategy (or the one a new chat will get). */
  async setStrategy(strategy: StrategyConfig): Promise<void> {
    if (!this.current) {
      this.pendingStrategy = strategy;
      return;
    }
    try {
      this.current = await request('conversations.update', { id: this.current.id, strategy: $state.snapshot(strategy) });
    } catch (error) {
      this.fail('errors.strategyFailed', error);
    }
  }

  /** Jumps to the conversation a memory came from, highlighting its source messages. */
  async jumpToSource(conversationId: string, messageIds: string[]): Promise<void> {
    this.contextMessageId = null;
    this.tab = 'chat';
    await this.selectConversation(conversationId, messageIds);
  }

  // ── chat ───────────────────────────────────────────────────────────────────

  /** `true` while this panel streams a reply in the open conversation. */
  get streaming(): boolean {
    return this.active !== null && this.active.conversationId === this.current?.id;
  }

  /**
   * Sends the text in the input as one chat turn, streaming the reply. Creates the conversation
   * first when the chat is new. On failure the reply shows the error, and the text goes back
   * into the input unless the core stored it. Without a ready chat model only memory commands
   * are sent (`sendBlocker`); other text stays in the input.
   */
  async send(): Promise<void> {
    const text = this.draft.trim();
    if (!text || this.active || sendBlocker(text, this.engine?.chat.state) !== null) return;
    this.draft = '';
    let conversation = this.current;
    if (!conversation) {
      try {
        conversation = await request('conversations.create', this.pendingStrategy ? { strategy: $state.snapshot(this.pendingStrategy) } : {});
        this.current = conversation;
        this.pendingStrategy = null;
      } catch (error) {
        this.draft = text;
        this.fail('errors.createFailed', error);
        return;
      }
    }
    const requestId = crypto.randomUUID();
    const conversationId = conversation.id;
    this.active = { requestId, conversationId };
    this.highlighted = [];
    this.messages = beginTurn(this.messages, { requestId, text, now: Date.now() });
    try {
      const result = await request('chat.send', { conversationId, text, requestId });
      if (this.current?.id === conversationId) {
        // A memory command's result shows as a card under its reply (stored with the message).
        this.messages = completeTurn(this.messages, requestId, result);
        await this.refreshTrace();
      }
    } catch (error) {
      if (this.current?.id === conversationId) {
        this.messages = failTurn(this.messages, requestId, isStorageFull(error) ? t('errors.storageFull') : errorMessage(error));
        if (isStorageFull(error)) this.fail('errors.sendFailed', error);
        const stored = await request('messages.list', { conversationId }, { retry: true }).catch(() => null);
        const { list, userStored } = stored ? reconcileFailedTurn(this.messages, stored, requestId) : { list: this.messages.slice(), userStored: false };
        this.messages = list;
        if (!userStored && !this.draft) this.draft = text;
      } else if (!this.draft) {
        this.draft = text;
      }
    } finally {
      this.active = null;
      await this.refreshConversations();
      if (this.current?.id === conversationId) {
        const fresh = await request('conversations.get', { id: conversationId }, { retry: true }).catch(() => null);
        if (fresh) this.current = fresh;
      }
    }
  }

  /** Stops the reply being generated (the partial reply is kept, status `aborted`). */
  async stop(): Promise<void> {
    const active = this.active;
    if (!active) return;
    try {
      await request('chat.stop', { requestId: active.requestId });
    } catch (error) {
      this.fail('errors.stopFailed', error);
    }
  }

  /** Loads the prompt trace of the last stored assistant message (for the budget bar). */
  async refreshTrace(): Promise<void> {
    const last = lastStoredAssistant(this.messages);
    if (!last) {
      this.lastTrace = null;
      return;
    }
    try {
      const trace = await request('trace.get', { messageId: last.id }, { retry: true });
      this.lastTrace = trace ? { messageId: last.id, trace } : null;
    } catch {
      this.lastTrace = null;
    }
  }

  // ── engines ────────────────────────────────────────────────────────────────

  /** Re-reads the model catalog (e.g. after a local file was added or removed). */
  async refreshCatalog(): Promise<void> {
    try {
      this.catalog = await request('engine.catalog', undefined, { retry: true });
    } catch (error) {
      this.fail('errors.loadFailed', error);
    }
  }

  /**
   * Runs one chat-engine request, keeping `engineBusy` and the status in sync. A failure becomes
   * an error notice translated by its `EngineErrorCode` (from the rejected error, else from the
   * status the core reports afterwards), with the core's message as the detail line.
   */
  async #engineCall(run: () => Promise<EngineStatus>): Promise<boolean> {
    this.engineBusy = true;
    try {
      this.engine = await run();
      // Earlier failures to load a model are settled now.
      this.notices = this.notices.filter((n) => n.topic !== 'engine');
      return true;
    } catch (error) {
      this.engine = await request('engine.status', undefined, { retry: true }).catch(() => this.engine);
      const code = errorCodeOf(error) ?? this.engine?.chat.errorCode ?? null;
      const view = engineErrorView('chat', code, errorMessage(error));
      this.notify('error', t(view.key), view.detail ?? undefined, 'engine');
      return false;
    } finally {
      this.engineBusy = false;
    }
  }

  /**
   * Loads the configured embedding model again (`engine.reloadEmbedder`), e.g. after a failed
   * download. The core answers with the new status (a renewed failure shows in it, with its
   * code); a request that fails outright becomes an error notice.
   * @returns `true` when the embedder is ready afterwards.
   */
  async reloadEmbedder(): Promise<boolean> {
    if (this.embedderBusy) return false;
    this.embedderBusy = true;
    this.embedderBannerDismissed = null;
    try {
      this.engine = await request('engine.reloadEmbedder');
      return this.engine.embedder.state === 'ready';
    } catch (error) {
      this.fail('errors.embedderFailed', error);
      this.engine = await request('engine.status', undefined, { retry: true }).catch(() => this.engine);
      return false;
    } finally {
      this.embedderBusy = false;
    }
  }

  /** Loads a WebLLM model (WebGPU). @returns `true` when it loaded; failures become a notice and the status shows the error. */
  loadWebLLM(modelId: string): Promise<boolean> {
    return this.#engineCall(() => request('engine.loadWebLLM', { modelId }));
  }

  /** Loads a GGUF in wllama (CPU) from the catalog or from OPFS. */
  loadWllama(source: WllamaSource): Promise<boolean> {
    return this.#engineCall(() => request('engine.loadWllama', { source }));
  }

  /** Unloads the chat model (frees GPU/WASM memory). */
  unloadEngine(): Promise<boolean> {
    return this.#engineCall(() => request('engine.unload'));
  }

  /**
   * Opens a local .gguf: checks its header, copies it into OPFS (progress in `fileImport`),
   * registers it with the core and loads it in wllama. A file that is not GGUF is rejected
   * before anything is copied; a copy llama.cpp cannot load is removed again.
   */
  async openLocalGguf(file: File): Promise<void> {
    if (this.fileImport) return;
    this.fileImport = { name: file.name, stage: 'checking', writtenBytes: 0, totalBytes: file.size };
    try {
      const check = await inspectGgufFile(file);
      if (!check.ok) {
        this.notify('error', t(`engine.gguf.${check.reason}`, { name: file.name, version: check.version ?? '?' }), undefined, 'engine');
        return;
      }
      if (!hasGgufExtension(file.name)) this.notify('info', t('engine.gguf.extension', { name: file.name }));
      this.fileImport = { ...this.fileImport, stage: 'copying' };
      this.#importAbort = new AbortController();
      let saved: { fileName: string; sizeBytes: number };
      try {
        saved = await saveModelFile(
          file,
          (writtenBytes) => {
            if (this.fileImport) this.fileImport = { ...this.fileImport, writtenBytes };
          },
          { signal: this.#importAbort.signal },
        );
      } catch (error) {
        if (this.#importAbort.signal.aborted) this.notify('info', t('engine.import.cancelled', { name: file.name }));
        else this.fail('errors.copyFailed', error);
        return;
      } finally {
        this.#importAbort = null;
      }
      this.fileImport = { ...this.fileImport, stage: 'registering', writtenBytes: saved.sizeBytes };
      try {
        await request('models.registerLocal', { fileName: saved.fileName, displayName: file.name, sizeBytes: saved.sizeBytes });
      } catch (error) {
        this.fail('errors.registerFailed', error);
        return;
      }
      await this.refreshCatalog();
      this.fileImport = { ...this.fileImport, stage: 'loading' };
      if (!(await this.loadWllama({ type: 'opfs', fileName: saved.fileName }))) {
        // Not kept when llama.cpp cannot use it (a truncated or corrupt file): the copy would only
        // sit in the list; the original is still on the user's disk.
        await request('models.deleteLocal', { fileName: saved.fileName }).catch(() => undefined);
        await this.refreshCatalog();
      }
    } catch (error) {
      this.fail('errors.copyFailed', error);
    } finally {
      this.fileImport = null;
    }
  }

  /** Cancels copying a .gguf into OPFS (the partial copy is removed by `saveModelFile`). */
  cancelFileImport(): void {
    this.#importAbort?.abort();
  }

  /** Removes a stored GGUF (file and record). */
  async deleteLocalModel(fileName: string): Promise<void> {
    try {
      await request('models.deleteLocal', { fileName });
      await this.refreshCatalog();
    } catch (error) {
      this.fail('errors.deleteFailed', error);
    }
  }

  // ── settings ───────────────────────────────────────────────────────────────

  /** Saves a settings patch and applies the UI language. @returns `true` when saved. */
  async saveSettings(patch: Partial<Settings>): Promise<boolean> {
    try {
      this.settings = await request('settings.set', patch);
      await setLanguage(resolveUiLanguage(this.settings.locale, browserLanguage()));
      return true;
    } catch (error) {
      this.fail('errors.settingsFailed', error);
      return false;
    }
  }

  // ── jobs ───────────────────────────────────────────────────────────────────

  /** Re-queues failed background jobs and tells how many. */
  async retryFailedJobs(): Promise<void> {
    try {
      const count = await request('jobs.retryFailed');
      this.notify('info', t('jobs.retried', { count }));
      this.jobs = await request('jobs.stats', undefined, { retry: true });
    } catch (error) {
      this.fail('errors.jobsFailed', error);
    }
  }

  /** Forgets the open conversation after "erase everything" (the core erased it). */
  async afterEraseAll(): Promise<void> {
    this.current = null;
    this.messages = [];
    this.lastTrace = null;
    this.contextMessageId = null;
    await this.refreshConversations();
    this.jobs = await request('jobs.stats', undefined, { retry: true }).catch(() => this.jobs);
  }
}

/** The panel's state. */
export const app = new AppState();
