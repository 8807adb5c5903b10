/**
 * The whole message protocol between extension contexts, in one typed module.
 *
 * Contexts (see ARCHITECTURE.md):
 * - `background` (service worker): opens the side panel, keeps the offscreen document alive,
 *   hosts the WebLLM engine (through WebLLM's own port protocol, not these messages).
 * - `offscreen` (engine host + memory core): answers every `core.*`, `engine.*`, `chat.*`,
 *   `conversations.*`, `history.*`, `memory.*`, `settings.*`, `jobs.*` request and broadcasts `event.*`.
 * - `sidepanel` (UI): sends requests, listens to events.
 *
 * Transport: `@webext-core/messaging` over `runtime.sendMessage` (JSON-serializable data only;
 * no typed arrays, no Blobs — model files travel through OPFS, see `src/platform/model-files.ts`).
 * Every handler checks its sender with `assertSender`.
 *
 * Only the protocol lives here: message types, request and reply shapes, the sender check and the
 * event broadcast. The domain types they carry are in `src/model/`.
 */
import { defineExtensionMessaging } from '@webext-core/messaging';
import type { Runtime } from 'webextension-polyfill';
import type { ImportReport, InterruptedImport } from '../model/backup';
import type { HistoryImportReport, SavedMemoriesReport } from '../model/history-import';
import type { DownloadedModel, EngineStatus, WllamaSource } from '../model/engine';
import type { ModelCatalog } from '../model/catalog';
import type { EventPayloads, EventType } from '../model/events';
import type { AffectedMemory, MemoryCommand, MemoryKind } from '../model/memory';
import type { MemoryView, ConversationRecord, FeedbackView, LocalModelRecord, MemoryHistoryRecord, MessageRecord, ProfileRecord } from '../model/records';
import type { LearnedMemory, SuggestionRecord } from '../model/records';
import type { FactKind } from '../model/memory';
import type { AboutMeProfile } from '../model/about-me';
import type { JobStats } from '../model/jobs';
import type { Settings } from '../model/settings';
import type { StrategyConfig } from '../model/strategies';
import type { MemoryCitation, PromptTrace } from '../model/trace';
import type { ProfileDeleteReport, ProfilesState } from '../model/profiles';
import { MessagingError } from '../model/errors';
import type { PageAttachment, PageContent, PdfSource, PendingPage } from '../model/page';
import type { VaultStatus } from '../model/vault';

/**
 * The memories a reply's prompt used, in brief, for the sources under the reply (`trace.sources`):
 * each one's id, kind, text, whether its line was cut to fit the budget (`shortened`) and whether it
 * is still stored (`exists`: `false` once deleted or forgotten); `dropped` counts the retrieved
 * memories left out of the prompt to fit the budget; `feedback` the "not relevant here" rows under
 * this reply.
 */
export interface AnswerSources {
  memories: (Pick<MemoryCitation, 'memoryId' | 'kind' | 'text' | 'shortened'> & { exists: boolean })[];
  dropped: number;
  feedback: FeedbackView[];
}

/** Review before saving in one namespace: the switch and the number of pending suggestions. */
export interface ReviewStatus {
  enabled: boolean;
  pending: number;
}

/** A conversation in the list. */
export interface ConversationSummary {
  id: string;
  title: string;
  updatedAt: number;
  messageCount: number;
}

/** A stored message in brief, for showing where a memory came from (`messages.snippets`). */
export interface MessageSnippet {
  id: string;
  conversationId: string;
  role: MessageRecord['role'];
  /** The message, whitespace collapsed, cut at a word boundary to at most `MESSAGE_SNIPPET_CHARS` (`model/records.ts`) code points (+ "…"). */
  snippet: string;
  /** When it was sent (ms epoch). */
  createdAt: number;
}

/** A conversation found by `conversations.search`, with the message that matched (`null` when only the title did). */
export interface ConversationSearchHit extends ConversationSummary {
  /** Id of the newest message holding the most query terms, or `null`. */
  messageId: string | null;
  /** That message around its first matched term (at most ~80 characters plus "…" marks), or `null`. */
  snippet: string | null;
}

/** A reply being generated: its request, conversation, future message id and text so far. */
export interface LiveTurn {
  requestId: string;
  conversationId: string;
  /** Id the assistant message will be stored under. */
  messageId: string;
  content: string;
}

/**
 * Whether a message fits the loaded model's prompt (`chat.measure`). Tokens of the model's own
 * tokenizer; characters are UTF-16 code units of the trimmed text.
 */
export interface MessageFit {
  /** Tokens the system instruction and the message need. */
  neededTokens: number;
  /** Tokens the context window leaves for them once the answer is reserved. */
  availableTokens: number;
  /** The message can be sent: it fits the tokens and is at most `maxChars` long. */
  fits: boolean;
  /** Length of the message. */
  chars: number;
  /** Longest message accepted (`MAX_MESSAGE_CHARS`). */
  maxChars: number;
  /** Length of the longest start of the message that fits, cut at a sentence or word end (= `chars` when it fits). */
  fitChars: number;
}

/** Result of one chat turn. */
export interface ChatTurnResult {
  userMessage: MessageRecord;
  assistantMessage: MessageRecord;
  /** Present when the message was an explicit memory command handled without the model. */
  command?: { kind: MemoryCommand; affected: AffectedMemory[] };
}

/** Filter for the memory list. */
export interface MemoryListQuery {
  /** Required: the list never mixes namespaces (profiles). The side panel sends its active profile (`ui/state/profiles.svelte.ts`). */
  namespace: string;
  /** Text search over memory text (lexical). */
  search?: string;
  includeInvalid?: boolean;
  kinds?: MemoryKind[];
  limit?: number;
}

/** Requests (and their replies) and events, by message type. */
export interface ProtocolMap {
  // ── handled by the service worker ───────────────────────────────────────────
  /** Creates the offscreen engine host if needed and waits until it answers. */
  'core.ensure'(): { ready: true };
  /**
   * Reads the active tab of `windowId` (the panel's window) on the user's gesture: blocked and
   * unreadable pages are refused before any script runs (`src/page/read-tab.ts`). `panelTabId`: the
   * panel's own tab when it is opened as a tab (never read; the tab used before it is).
   * @throws PageError `no_tab`, `no_access`, `unreadable`, `blocked`, `empty`.
   */
  'page.read'(data: { windowId?: number; panelTabId?: number }): PageAttachment;
  /** The page or selection a context menu or the shortcut left for the panel (once; then `null`). */
  'page.takePending'(): PendingPage | null;

  // ── handled by the offscreen core ───────────────────────────────────────────
  /**
   * `startedAt`: when the offscreen document started the core (ms epoch). `memory`: how the
   * long-term store opened (`via` blocks / rebuilt / empty) and when it became searchable
   * (`searchableAt`, ms epoch; `openMs`: the store's own open time in ms) — the cold-start hook
   * of the benchmarks.
   */
  /** The core answers (`locked: true` while the vault is locked: then no store is open and `memory` is empty). */
  'core.ping'(): { ready: true; startedAt: number; memory: { via: 'blocks' | 'rebuilt' | 'empty'; openMs: number; searchableAt: number }; locked?: boolean };
  'engine.status'(): EngineStatus;
  'engine.catalog'(): ModelCatalog;
  /** Loads a WebLLM model (WebGPU, in the service worker). Resolves when ready; progress via `event.engine`. */
  'engine.loadWebLLM'(data: { modelId: string }): EngineStatus;
  /** Loads a GGUF in wllama (CPU/WASM). */
  'engine.loadWllama'(data: { source: WllamaSource }): EngineStatus;
  'engine.unload'(): EngineStatus;
  /** Loads the configured embedding model again (e.g. after a failed download). */
  'engine.reloadEmbedder'(): EngineStatus;
  /** Records a GGUF the side panel just wrote to OPFS `models/`. */
  'models.registerLocal'(data: { fileName: string; displayName: string; sizeBytes: number }): LocalModelRecord;
  'models.deleteLocal'(data: { fileName: string }): void;
  /** Every model the engines downloaded or the user opened, with sizes (`src/platform/model-caches.ts`), biggest first. */
  'models.downloaded'(): DownloadedModel[];
  /** Deletes one model of `models.downloaded` by its `id`; `deleted`: files removed. */
  'models.deleteDownloaded'(data: { id: string }): { deleted: number };

  /**
   * The conversations of profile `namespace`, newest first. `namespace` (here and in
   * `conversations.search` / `conversations.create`): the side panel sends its active profile;
   * omitted, the core's persisted active profile (`profiles.list`). An unknown one is refused
   * (`profile_not_found`).
   */
  'conversations.list'(data?: { namespace?: string }): ConversationSummary[];
  /** Conversations of profile `namespace` whose title or messages contain every word of `query` (`src/core/conversation-search.ts`). */
  'conversations.search'(data: { query: string; namespace?: string }): ConversationSearchHit[];
  /**
   * A new conversation in profile `namespace` (its memories are the only ones its turns read and write).
   * `temporary: true`: a temporary chat (not learned from, deleted once no panel shows it; `src/core/temporary-chats.ts`).
   */
  'conversations.create'(data: { title?: string; strategy?: StrategyConfig; namespace?: string; temporary?: boolean }): ConversationRecord;
  'conversations.get'(data: { id: string }): ConversationRecord | null;
  'conversations.update'(data: { id: string; title?: string; strategy?: StrategyConfig }): ConversationRecord;
  'conversations.delete'(data: { id: string }): void;
  'messages.list'(data: { conversationId: string }): MessageRecord[];
  /** The messages of `ids` that still exist, in brief (a memory's source); missing ids are left out. At most 500 ids. */
  'messages.snippets'(data: { ids: string[] }): MessageSnippet[];

  /** Runs one turn; text streams via `event.chatDelta`. Resolves when the reply is stored. */
  /** `page`: the page (or selection) the user attached, used for this prompt only and never stored (`src/core/page-context.ts`). */
  'chat.send'(data: { conversationId: string; text: string; requestId: string; page?: PageAttachment }): ChatTurnResult;
  /** Runs the last turn again, replacing it (see `ChatService.regenerate`); streams like `chat.send`. */
  'chat.regenerate'(data: { conversationId: string; requestId: string }): ChatTurnResult;
  /** Replaces user message `messageId` with `text` and the turns after it, then runs the turn (`ChatService.edit`). */
  'chat.edit'(data: { conversationId: string; messageId: string; text: string; requestId: string }): ChatTurnResult;
  /** Sends the user message of the failed reply `messageId` again, replacing that turn (`ChatService.retry`). */
  'chat.retry'(data: { conversationId: string; messageId: string; requestId: string }): ChatTurnResult;
  /** Whether `text` fits the loaded model's prompt, and how much of it does; `null` while no chat model is loaded. */
  'chat.measure'(data: { text: string }): MessageFit | null;
  'chat.stop'(data: { requestId: string }): void;
  'chat.live'(data: { conversationId: string }): LiveTurn | null;
  /** The prompt trace of an assistant message (context view). */
  'trace.get'(data: { messageId: string }): PromptTrace | null;
  /** The memories each reply's prompt used, in brief (sources under a reply); replies without a trace are left out. At most 500 ids. */
  'trace.sources'(data: { messageIds: string[] }): Record<string, AnswerSources>;

  'memory.list'(data: MemoryListQuery): MemoryView[];
  'memory.history'(data: { memoryId?: string; limit?: number }): MemoryHistoryRecord[];
  /** `source`: the page the text was saved from ("Remember this"), kept as the memory's `sourceUrl` / `sourceTitle`. */
  /** `namespace` omitted (the service worker's "Remember this", which knows no profile): the core's active profile. */
  'memory.add'(data: { namespace?: string; kind: MemoryKind; text: string; pinned?: boolean; source?: { url: string; title: string } }): MemoryView;
  'memory.update'(data: { id: string; text?: string; kind?: MemoryKind; pinned?: boolean; importance?: number }): MemoryView;
  /** Returns the rounds that state the deleted fact (see `MemoryAdmin.delete`). */
  'memory.delete'(data: { id: string }): { rounds: MemoryView[] };
  /**
   * Writes the JSON export of all memories, conversations and history (format: `src/memory/export.ts`)
   * into OPFS `backups/<fileName>` (`src/platform/model-files.ts`, `BACKUPS_DIR`); progress via
   * `event.transfer`. The panel downloads the file as `downloadName` and then deletes it.
   * `sizeBytes` in bytes. With a non-empty `passphrase` the file is an age file
   * (`src/backup/encryption.ts`, scrypt recipient; `downloadName` ends in `.json.age`).
   * `includeEmbeddings: false` leaves the vectors out (default: included); `namespace` exports that
   * profile only (default: every profile).
   */
  'memory.export'(data?: { passphrase?: string; includeEmbeddings?: boolean; namespace?: string }): {
    fileName: string;
    downloadName: string;
    sizeBytes: number;
  };
  /**
   * Imports the export file the panel copied into OPFS `backups/<fileName>` (the file never travels
   * in a message); progress via `event.transfer`. The staging file is deleted afterwards, whatever
   * the outcome. Rejects with the reason in plain words when the file is refused (nothing written).
   * An age file needs `passphrase` (else `passphrase_required`; a wrong one: `wrong_passphrase`).
   */
  'memory.import'(data: { fileName: string; passphrase?: string }): ImportReport;
  /**
   * Imports history from another assistant (ChatGPT / Claude export `.json` or `.zip`, Chatbot UI,
   * a batch list, text / Markdown notes) that the panel copied into OPFS `backups/<fileName>`;
   * `displayName` is the picked file's name, `modifiedAt` its last-modified time (ms epoch). The
   * staging file is deleted afterwards. Replies with the format found and the counts; rejects
   * with a `HistoryImportError` naming the file and the place (nothing written).
   */
  'history.import'(data: { fileName: string; displayName: string; namespace: string; modifiedAt?: number }): HistoryImportReport;
  /** Stores a pasted list of saved memories (one per line or bullet) as pinned memories; duplicates are skipped. */
  'memory.importSaved'(data: { namespace: string; text: string }): SavedMemoriesReport;
  /**
   * Vault lock on: a one-time key (`key`: base64 of 32 raw bytes, AES-256-GCM) for sealing the one
   * import staging file `fileName` as the panel copies it into OPFS `backups/`
   * (`src/platform/staging-seal.ts`); the core forgets it after that file's import or on lock.
   * `key: null` with the lock off (stage the file plain).
   */
  'memory.stagingKey'(data: { fileName: string }): { key: string | null };
  /** The import undone at the last start-up (context killed or browser closed mid-import), once; then `null`. */
  'memory.importNotice'(): InterruptedImport | null;
  /** Erases all data: every memory, conversation, message, trace, job and setting (`Core.eraseAll`); model files stay. */
  'memory.eraseAll'(): void;
  /**
   * Erases the long-term memory of profile `namespace` (memories with history, index entries, tombstones, feedback,
   * suggestions, queued memory jobs, its "about me" profile); conversations, settings and the other profiles stay.
   */
  'memory.eraseMemories'(data: { namespace: string }): void;
  /**
   * "Not relevant here": memory `memoryId` did not belong under reply `messageId`; similar questions
   * rank it last from now on (`src/core/answer-feedback.ts`). Idempotent per pair.
   */
  /** One memory by id (the Memory tab opened on a reply's source), `null` when it is gone. */
  'memory.get'(data: { id: string }): MemoryView | null;
  'memory.feedback'(data: { messageId: string; memoryId: string }): FeedbackView;
  /** Undoes a "not relevant here" (feedback row `id`); `false` when it was already gone. */
  'memory.feedbackUndo'(data: { id: string }): boolean;
  /** The "not relevant here" rows under reply `messageId`. */
  'memory.feedbackList'(data: { messageId: string }): FeedbackView[];

  // Review before saving (issue 14 item 2; `src/memory/long-term/review`), per namespace.
  /** Whether extracted items of `namespace` wait for review, and how many wait (the Memory tab's badge). */
  'review.status'(data: { namespace: string }): ReviewStatus;
  /** Turns review of `namespace` on or off; pending suggestions stay either way. */
  'review.set'(data: { namespace: string; enabled: boolean }): ReviewStatus;
  /** The pending suggestions of `namespace`, oldest first. */
  'review.suggestions'(data: { namespace: string }): SuggestionRecord[];
  /** Stores a suggestion (with the user's edits) as a memory; `null` when it duplicated nothing left to show. */
  'review.accept'(data: { id: string; text?: string; kind?: FactKind }): MemoryView | null;
  /** Rejects a suggestion: that text is never suggested again in its namespace. */
  'review.reject'(data: { id: string }): void;
  /** What extraction saved lately in `namespace` (at most `limit`, default 10), newest first. */
  'review.recent'(data: { namespace: string; limit?: number }): LearnedMemory[];
  /** Undoes a learned memory: deleted with its history, no tombstone. */
  'review.undo'(data: { id: string }): void;

  // "What Recall knows about me" (issue 14 item 6; `src/memory/long-term/profile-summary`), per namespace.
  /** The stored profile of `namespace` (empty before the first rebuild). */
  'aboutMe.get'(data: { namespace: string }): AboutMeProfile;
  /** Stores the user's edit (`pinned` on each line they wrote or changed); removed generated lines are not rebuilt. */
  'aboutMe.save'(data: { namespace: string; lines: { text: string; pinned: boolean }[] }): AboutMeProfile;
  /** Queues a rebuild (`ltm.profile`); the new profile arrives with the job's end (`event.jobs`). */
  'aboutMe.rebuild'(data: { namespace: string }): void;

  // Profiles (`src/core/profiles.ts`): separate memories; the default one always exists.
  /** Every profile and the active one. */
  'profiles.list'(): ProfilesState;
  /** Adds a profile (name trimmed, unique, ≤ `MAX_PROFILE_NAME_CHARS`); it does not become active. */
  'profiles.create'(data: { name: string }): ProfileRecord;
  'profiles.rename'(data: { id: string; name: string }): ProfileRecord;
  /** Makes `id` the active profile (persisted) and answers the new state. */
  'profiles.switch'(data: { id: string }): ProfilesState;
  /** Deletes profile `id` with its conversations, memories and everything else of it (not the default one). */
  'profiles.delete'(data: { id: string }): ProfileDeleteReport;

  'settings.get'(): Settings;
  'settings.set'(data: Partial<Settings>): Settings;
  'jobs.stats'(): JobStats;
  'jobs.retryFailed'(): number;

  /**
   * Extracts the text of a PDF open in the browser's viewer (the service worker's `page.read`
   * sends the bytes the reader fetched in the tab; pdf.js, lazy-loaded in the offscreen document).
   * `data`: the file, base64. Returns per page a "Page N" heading and its paragraphs (`blocks` empty
   * for a scan without a text layer).
   * @throws Error when the bytes are not a readable PDF.
   */
  'pdf.read'(data: PdfSource): PageContent;

  // ── the vault lock (issue 16; `src/core/vault.ts`; sender: the side panel only; answered while locked) ──
  /** Where the lock stands. */
  'vault.status'(): VaultStatus;
  /**
   * Turns the lock on: derives a key from `passphrase`, wraps a new random data key with it,
   * encrypts every stored row in place (progress as `event.vault`); the vault stays unlocked.
   * @throws VaultError('weak_passphrase' | 'already_enabled' | 'busy' | 'unsupported')
   */
  'vault.enable'(data: { passphrase: string }): VaultStatus;
  /** Unlocks: opens the store with the data key. @throws VaultError('wrong_passphrase' | 'not_enabled'); nothing changes then. */
  'vault.unlock'(data: { passphrase: string }): VaultStatus;
  /** Locks now: stops a streaming reply (what streamed so far is written, sealed, `aborted`), stops the jobs, wipes the key and the in-memory indexes. */
  'vault.lock'(): VaultStatus;
  /** Re-wraps the data key under `next` (data untouched; works locked or unlocked). @throws VaultError('wrong_passphrase' | 'weak_passphrase' | 'not_enabled' | 'busy') */
  'vault.changePassphrase'(data: { current: string; next: string }): VaultStatus;
  /** Decrypts every row in place and turns the lock off. @throws VaultError('wrong_passphrase' | 'not_enabled' | 'busy') */
  'vault.disable'(data: { passphrase: string }): VaultStatus;
  /** Idle minutes before auto-lock (1 … `MAX_VAULT_AUTO_LOCK_MINUTES`), `null` = only when the browser closes. @throws MessagingError('bad_request'), VaultError('not_enabled') */
  'vault.setAutoLock'(data: { minutes: number | null }): VaultStatus;

  // ── events broadcast by the core (fire and forget; nobody may be listening; payloads: `EventPayloads`) ──
  'event.chatDelta'(data: EventPayloads['event.chatDelta']): void;
  'event.engine'(data: EventPayloads['event.engine']): void;
  'event.jobs'(data: EventPayloads['event.jobs']): void;
  'event.conversations'(data: EventPayloads['event.conversations']): void;
  'event.settings'(data: EventPayloads['event.settings']): void;
  /** Progress of the export or import running now. */
  'event.transfer'(data: EventPayloads['event.transfer']): void;
  /** The service worker left a page or selection for the panel (`page.takePending`). */
  'event.page'(data: EventPayloads['event.page']): void;
  /** The profiles or the active one changed (`src/core/profiles.ts`). */
  'event.profiles'(data: EventPayloads['event.profiles']): void;
  /** The vault lock changed (`src/core/vault.ts`). */
  'event.vault'(data: EventPayloads['event.vault']): void;
}

/** Compile-time check: the protocol's `event.*` messages are exactly `EVENT_TYPES`. */
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _eventsMatch: SameKeys<Extract<keyof ProtocolMap, `event.${string}`>, EventType> = true;
void _eventsMatch;

/** Typed `sendMessage` / `onMessage` for the protocol above. */
export const { sendMessage, onMessage, removeAllListeners } = defineExtensionMessaging<ProtocolMap>();

/** Extension pages that may talk to the core, by path. */
export type ExtensionContextName = 'background' | 'sidepanel' | 'offscreen';

const CONTEXT_PATHS: Record<ExtensionContextName, string> = {
  background: '/background.js',
  sidepanel: '/sidepanel.html',
  offscreen: '/offscreen.html',
};

/**
 * Throws unless `sender` is this extension and one of the `allowed` contexts (checked by URL
 * path). Content scripts and other extensions are never allowed.
 * @throws MessagingError('rejected_sender'), message 'Rejected message from …'
 */
export function assertSender(sender: Runtime.MessageSender, allowed: ExtensionContextName[], extensionId: string): void {
  const url = sender.url ? new URL(sender.url) : null;
  const fromThisExtension = sender.id === extensionId && url?.protocol === 'chrome-extension:' && url.host === extensionId;
  const fromAllowedPage = url !== null && allowed.some((name) => url.pathname === CONTEXT_PATHS[name]);
  if (!fromThisExtension || !fromAllowedPage || sender.tab?.url?.startsWith('http')) {
    throw new MessagingError('rejected_sender', `Rejected message from ${sender.url ?? sender.id ?? 'unknown sender'}`);
  }
}

/**
 * Broadcasts an event to whichever pages listen. Missing listeners (side panel closed) are not
 * an error; events are lost then, and the UI re-reads state when it opens.
 */
export function emitEvent<K extends EventType>(type: K, data: EventPayloads[K]): void {
  (sendMessage as any)(type, data).catch(() => undefined);
}
