/**
 * The side panel's composition root: creates the per-feature stores with the real messaging
 * (`./api`) and wires them together; one instance, `app`, shared by every component. Components
 * render a store's state and call its methods; they send no requests themselves.
 *
 * Stores (each `createXStore({ request, subscribe, notices, … })`, unit-tested with a fake api):
 * `notices` (notice area), `view` (tab, drawer, context view), `settings`, `jobs`, `engine`
 * (models, embedder, local .gguf), `conversations` (list, open conversation, transcript),
 * `chat` (input and turns). Per component on screen, fresh each time it opens: `createMemoryStore()`
 * (the memory manager's list and actions), `createSettingsForm()` (the settings form),
 * `createConversationDrawer()` (rename and delete in the drawer), `createContextView()` (one
 * message's prompt trace) and `createEnginePicker()` (the Models tab's engine and model choice).
 * This module keeps only the connection to the core and the first load.
 *
 * Errors of user actions become notices (`app.notices`): a translated sentence, with the core's
 * (English) message as a detail line under it; nothing the user typed is dropped on failure.
 */
import { connect, observeFailures, request, subscribe, type StoreApi } from './api';
import { errorMessage } from '../lib/connect';
import { createChatStore } from './chat.svelte';
import { createContextViewStore, type ContextViewStore } from './context-view.svelte';
import { createConversationDrawerStore, type ConversationDrawerStore } from './conversation-drawer.svelte';
import { createEnginePickerStore, type EnginePickerStore } from './engine-picker.svelte';
import { createConversationsStore } from './conversations.svelte';
import { createEngineStore } from './engine.svelte';
import { createJobsStore } from './jobs.svelte';
import { createMemoryStore, type MemoryStore } from './memory.svelte';
import { createReviewStore } from './review.svelte';
import { createAboutMeStore } from './about-me.svelte';
import { createDownloadedModelsStore, type DownloadedModelsStore } from './downloaded-models.svelte';
import { createMessageSourcesStore } from './message-sources.svelte';
import { createAnswerSourcesStore } from './answer-sources.svelte';
import { openPanelPort, type PanelPort } from '../lib/panel-port';
import { createNoticesStore } from './notices.svelte';
import { createProfilesStore } from './profiles.svelte';
import { createPageStore } from './page.svelte';
import { applyUiLocale, createSettingsStore } from './settings.svelte';
import { createSettingsFormStore, type SettingsFormStore } from './settings-form.svelte';
import { createViewStore } from './view.svelte';
import { createVaultStore } from './vault.svelte';

export type { Notice } from './notices.svelte';
export type { Tab } from './view.svelte';
export type { FileImport } from './engine.svelte';

/** Connection to the core, for the "starting…" screen. */
export interface ConnectionState {
  /** `connecting` until `core.ensure` answered and the first data arrived; `failed` when that read failed (retry with `loadAll`). */
  state: 'connecting' | 'ready' | 'failed';
  /** Failed attempts so far. */
  attempts: number;
  lastError: string | null;
}

/** The side panel's window and, when it is opened as a tab (tests, development), its tab (`page.read`). */
async function panelLocation(): Promise<{ windowId?: number; panelTabId?: number }> {
  if (typeof chrome === 'undefined' || !chrome.windows || !chrome.tabs) return {};
  const [win, tab] = await Promise.all([chrome.windows.getCurrent(), chrome.tabs.getCurrent()]);
  return { ...(win.id !== undefined ? { windowId: win.id } : {}), ...(tab?.id !== undefined ? { panelTabId: tab.id } : {}) };
}

/** See module doc. */
export class AppState {
  connection = $state<ConnectionState>({ state: 'connecting', attempts: 0, lastError: null });
  readonly notices = createNoticesStore();
  readonly view = createViewStore();
  readonly settings;
  /** The profiles and the active one: the namespace of every request that lists, searches or creates. */
  readonly profiles;
  readonly jobs;
  readonly engine;
  readonly conversations;
  readonly chat;
  /** Messages in brief for memories' "From …" lines. */
  readonly sources;
  /** Review before saving and Recently learned (issue 14; the Memory tab's badge). */
  readonly review;
  /** "What Recall knows about me" (issue 14). */
  readonly aboutMe;
  /** The page attached to the next message (`PageAttach`). */
  readonly page;
  /** The memories under each reply and their chips' actions (issue 14). */
  readonly answerSources;
  /** The vault lock (issue 16): while `vault.locked` the panel shows only the unlock screen. */
  readonly vault;
  #started = false;
  readonly #api: StoreApi;
  readonly #panelPort: () => PanelPort;

  /**
   * @param api the messaging (the real one by default).
   * @param panelPort opens the panel's port to the core (temporary chats; `../lib/panel-port.ts`; it reconnects through `connect()`), once connected.
   */
  constructor(api: StoreApi = { request, subscribe }, panelPort: () => PanelPort = () => openPanelPort({ ensureCore: () => connect() })) {
    // The vault first: every other store's requests go through `observeFailures`, so a `locked`
    // refusal of any of them switches the panel to the unlock screen (one place, not per call).
    this.vault = createVaultStore({ ...api, onUnlocked: () => this.afterUnlock() });
    api = { ...api, request: observeFailures(api.request, (error) => this.vault.requestFailed(error)) };
    this.#api = api;
    this.#panelPort = panelPort;
    const base = { ...api, notices: this.notices };
    this.settings = createSettingsStore(base);
    this.jobs = createJobsStore(base);
    this.engine = createEngineStore(base);
    this.profiles = createProfilesStore({ ...base, onSwitched: () => this.afterProfileSwitch() });
    const namespace = () => this.profiles.namespace;
    this.conversations = createConversationsStore({ ...base, view: this.view, namespace });
    this.page = createPageStore({ ...base, whereAmI: panelLocation });
    this.chat = createChatStore({
      ...base,
      conversations: this.conversations,
      chatState: () => this.engine.status?.chat.state,
      takePage: () => this.page.take(),
    });
    this.sources = createMessageSourcesStore(api);
    this.review = createReviewStore(base);
    this.aboutMe = createAboutMeStore(base);
    this.answerSources = createAnswerSourcesStore({ ...base, view: this.view });
  }

  /**
   * A memory store for one memory manager on screen (its filters, list and import report start
   * fresh each time the manager opens, as they always did); it follows `event.transfer` once the
   * caller calls its `listen()`.
   */
  createMemoryStore(): MemoryStore {
    return createMemoryStore({
      ...this.#api,
      notices: this.notices,
      namespace: () => this.profiles.namespace,
      refreshConversations: () => this.conversations.refresh(),
      beforeEraseAll: () => this.conversations.expectAllGone(),
      afterEraseAll: () => this.afterEraseAll(),
    });
  }

  /** A settings form for one Settings panel on screen (starts from the stored settings each time it opens). */
  createSettingsForm(): SettingsFormStore {
    return createSettingsFormStore({ settings: this.settings });
  }

  /** The downloaded models of one "Erase → downloaded models" list on screen (`load()` reads them). */
  createDownloadedModels(): DownloadedModelsStore {
    return createDownloadedModelsStore({ ...this.#api, notices: this.notices });
  }

  /** The rename field and delete question of one conversation drawer on screen. */
  createConversationDrawer(): ConversationDrawerStore {
    return createConversationDrawerStore({ conversations: this.conversations });
  }

  /** The prompt trace of one context view on screen (`open(messageId)` loads it). */
  createContextView(): ContextViewStore {
    return createContextViewStore({ conversations: this.conversations });
  }

  /** The engine and model choice of one Models panel on screen (opens on the engine that can run). */
  createEnginePicker(): EnginePickerStore {
    return createEnginePickerStore({ engine: this.engine, settings: this.settings });
  }

  /** Connects to the core, subscribes to its events and loads the first screen. Idempotent. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    await applyUiLocale('auto');
    this.engine.listen();
    this.jobs.listen();
    this.chat.listen();
    this.settings.listen();
    this.conversations.listen();
    this.profiles.listen();
    this.sources.listen();
    this.review.listen();
    this.aboutMe.listen();
    this.page.listen();
    this.vault.listen();
    await connect((progress) => {
      // Later reconnects (a request retrying after the core restarted) keep the UI as it is.
      if (this.connection.state === 'connecting') this.connection = { state: 'connecting', ...progress };
    });
    // The core learns which conversation this panel shows (and when it closes): temporary chats.
    const port = this.#panelPort();
    $effect.root(() => {
      $effect(() => port.show(this.conversations.current?.id ?? null));
    });
    await this.openFirstScreen();
    await this.page.takePending();
  }

  /**
   * The first screen once connected: reads where the vault lock stands, then everything
   * (`loadAll`) — unless it is locked: then only the unlock screen shows, and the first load runs
   * once it is unlocked (`afterUnlock`).
   */
  async openFirstScreen(): Promise<void> {
    const vault = await this.vault.refresh();
    if (!vault?.locked) await this.loadAll();
  }

  /** (Re)reads everything from the core and opens the latest conversation. Failures become a notice. */
  async loadAll(): Promise<void> {
    const { request } = this.#api;
    try {
      // The active profile first: the conversation list is that profile's.
      this.profiles.show(await request('profiles.list', undefined, { retry: true }));
      const [engine, catalog, settings, conversations, jobs] = await Promise.all([
        request('engine.status', undefined, { retry: true }),
        request('engine.catalog', undefined, { retry: true }),
        request('settings.get', undefined, { retry: true }),
        request('conversations.list', { namespace: this.profiles.namespace }, { retry: true }),
        request('jobs.stats', undefined, { retry: true }),
      ]);
      this.engine.status = engine;
      this.engine.catalog = catalog;
      this.conversations.list = conversations;
      this.jobs.stats = jobs;
      await this.settings.show(settings);
      this.connection = { state: 'ready', attempts: 0, lastError: null };
      void this.review.refresh(); // the Memory tab's badge
      const latest = conversations[0];
      if (latest && !this.conversations.current) await this.conversations.select(latest.id);
    } catch (error) {
      this.connection = { ...this.connection, state: this.connection.state === 'ready' ? 'ready' : 'failed', lastError: errorMessage(error) };
      this.notices.fail('errors.loadFailed', error);
    }
  }

  /**
   * After the vault unlocked (in this panel or another): re-reads everything, and the open
   * conversation again, so a reply that streamed or was stored while locked shows. The Memory tab
   * reads its list again by itself (it was not on screen while locked).
   */
  async afterUnlock(): Promise<void> {
    const open = this.conversations.current;
    await this.loadAll();
    if (open) await this.conversations.reloadCurrent();
  }

  /** Forgets the open conversation after "erase everything" (the core erased it) and re-reads the lists. */
  async afterEraseAll(): Promise<void> {
    // The panel's own small preferences (`src/ui/lib/ui-prefs.ts`) go with the rest of the user's data.
    globalThis.localStorage?.clear();
    this.conversations.closeOpen();
    await this.profiles.load(); // the profiles went too: the default one is active again
    await this.conversations.refresh();
    await this.jobs.refresh();
    await this.review.refresh();
  }

  /**
   * After the active profile changed: leaves the open conversation and opens the new profile's
   * latest one (or a new chat). The drawer, where the picker is, stays as it was (open: it shows
   * the new profile's conversations), though opening a conversation closes it otherwise.
   */
  async afterProfileSwitch(): Promise<void> {
    const drawerOpen = this.view.drawerOpen;
    this.conversations.closeOpen();
    this.conversations.pendingStrategy = null;
    await this.conversations.refresh();
    const latest = this.conversations.list[0];
    if (latest) await this.conversations.select(latest.id);
    this.view.drawerOpen = drawerOpen;
  }
}

/** The panel's state. */
export const app = new AppState();
