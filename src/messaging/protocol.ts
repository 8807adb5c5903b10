/**
 * The whole message protocol between extension contexts, in one typed module.
 *
 * Contexts (see ARCHITECTURE.md):
 * - `background` (service worker): opens the side panel, keeps the offscreen document alive,
 *   hosts the WebLLM engine (through WebLLM's own port protocol, not these messages).
 * - `offscreen` (engine host + memory core): answers every `core.*`, `engine.*`, `chat.*`,
 *   `conversations.*`, `memory.*`, `settings.*`, `jobs.*` request and broadcasts `event.*`.
 * - `sidepanel` (UI): sends requests, listens to events.
 *
 * Transport: `@webext-core/messaging` over `runtime.sendMessage` (JSON-serializable data only;
 * no typed arrays, no Blobs — model files travel through OPFS, see `src/platform/model-files.ts`).
 * Every handler checks its sender with `assertSender`.
 */
import { defineExtensionMessaging } from '@webext-core/messaging';
import type { Runtime } from 'webextension-polyfill';
import type { ConversationRecord, LocalModelRecord, MemoryHistoryRecord, MemoryKind, MessageRecord } from '../db/schema';
import type { LoadProgress, ChatEngineKind, EngineErrorCode } from '../engines/types';
import type { JobStats } from '../model/jobs';
import type { MemoryView } from '../memory/long-term/types';
import type { StrategyConfig } from '../model/strategies';
import type { PromptTrace } from '../prompt/types';

/** State of one engine slot (chat model or embedder). */
export type EngineState = 'idle' | 'loading' | 'ready' | 'error';

/** What the UI shows about the chat engine. */
export interface ChatEngineStatus {
  kind: ChatEngineKind | null;
  modelId: string | null;
  state: EngineState;
  progress: LoadProgress | null;
  /** Context window of the loaded model (tokens). */
  contextWindow: number | null;
  error: string | null;
  /** Stable code of `error` (the UI translates by code and shows `error` as detail). */
  errorCode: EngineErrorCode | null;
}

/** What the UI shows about the embedder. */
export interface EmbedderStatus {
  modelId: string | null;
  dimension: number | null;
  state: EngineState;
  progress: LoadProgress | null;
  error: string | null;
  /** Stable code of `error`. While the embedder is not ready, memory search is keyword-only. */
  errorCode: EngineErrorCode | null;
}

/** WebGPU availability, probed in the engine host. */
export interface GpuInfo {
  available: boolean;
  /** Whether the adapter has `shader-f16` (else q4f32 model variants are used). */
  shaderF16: boolean;
  /** Adapter description, when available. */
  adapter: string | null;
}

/** Both engines and the GPU. */
export interface EngineStatus {
  chat: ChatEngineStatus;
  embedder: EmbedderStatus;
  gpu: GpuInfo;
}

/** A model the user can pick. Sizes in bytes (approximate download size). */
export interface ModelOption {
  id: string;
  label: string;
  sizeBytes: number;
  /** Context window in tokens. */
  contextWindow: number;
  /** Languages it is good at, e.g. `['zh', 'en']`. */
  languages: string[];
  recommended?: boolean;
}

/** The model pickers' contents. */
export interface ModelCatalog {
  /** WebLLM models whose WebGPU library ships in this package (variant ids for this GPU); `[]` when none ships. */
  webllm: ModelOption[];
  wllama: ModelOption[];
  /** GGUF files the user opened or downloaded before (stored in OPFS). */
  localFiles: LocalModelRecord[];
  /** WebLLM model id to use by default for this GPU (q4f32 when `shader-f16` is missing); `''` when no GPU model ships. */
  defaultWebllmModel: string;
}

/** Where wllama loads a GGUF from. */
export type WllamaSource = { type: 'catalog'; id: string } | { type: 'opfs'; fileName: string };

/** A conversation in the list. */
export interface ConversationSummary {
  id: string;
  title: string;
  updatedAt: number;
  messageCount: number;
}

/** A reply being generated: its request, conversation, future message id and text so far. */
export interface LiveTurn {
  requestId: string;
  conversationId: string;
  /** Id the assistant message will be stored under. */
  messageId: string;
  content: string;
}

/** Result of one chat turn. */
export interface ChatTurnResult {
  userMessage: MessageRecord;
  assistantMessage: MessageRecord;
  /** Present when the message was an explicit memory command handled without the model. */
  command?: { kind: 'remember' | 'forget'; affected: { id: string; kind: MemoryKind; text: string }[] };
}

/** User settings (persisted in Dexie `settings`). */
export interface Settings {
  /** Engine to load on start. */
  preferredEngine: 'webllm' | 'wllama';
  webllmModelId: string | null;
  wllamaSource: WllamaSource | null;
  /** Embedding model id (transformers.js). */
  embeddingModelId: string;
  /** Strategy for new conversations. */
  defaultStrategy: StrategyConfig;
  /** Tokens reserved for each answer. */
  maxAnswerTokens: number;
  /** Memories injected per turn (top-k). */
  memoryTopK: number;
  /** Drop episodic memories older than this many days unless pinned (`null` = keep forever). */
  episodicRetentionDays: number | null;
  /** UI language. */
  locale: 'auto' | 'en' | 'zh_CN';
}

/** See `DEFAULT_NAMESPACE` in `src/db/schema.ts` (declared there so the core can use it without loading the messaging runtime). */
export { DEFAULT_NAMESPACE } from '../db/schema';

/** Filter for the memory list. */
export interface MemoryListQuery {
  /** Required: the list never mixes namespaces (profiles). The side panel sends `DEFAULT_NAMESPACE`. */
  namespace: string;
  /** Text search over memory text (lexical). */
  search?: string;
  includeInvalid?: boolean;
  kinds?: MemoryKind[];
  limit?: number;
}

/** Report of a memory import. */
export interface ImportReport {
  added: number;
  updated: number;
  skipped: number;
  /** Messages about rejected records (never silently dropped). */
  errors: string[];
  /** Vectors of the file left out (wrong dimension, NaN/Infinity, zero norm); their memories are re-embedded. */
  vectorsDropped?: number;
  /** Memories left out because the user deleted or forgot them on this device (tombstones); also counted in `skipped`. */
  forgotten?: number;
}

/**
 * Progress of an export or import (`event.transfer`): `done` of `total` — records for `export`,
 * bytes of the file for `check` (validation pass) and `write` (writing pass).
 */
export interface TransferProgress {
  phase: 'export' | 'check' | 'write';
  done: number;
  total: number;
}

/** An import that did not finish (context killed, browser closed) and was undone when the core started. */
export interface InterruptedImport {
  /** Name of the staging file that was being imported. */
  fileName: string;
  /** ms epoch when it started and when it was undone. */
  startedAt: number;
  undoneAt: number;
}

/** Requests (and their replies) and events, by message type. */
export interface ProtocolMap {
  // ── handled by the service worker ───────────────────────────────────────────
  /** Creates the offscreen engine host if needed and waits until it answers. */
  'core.ensure'(): { ready: true };

  // ── handled by the offscreen core ───────────────────────────────────────────
  /**
   * `startedAt`: when the offscreen document started the core (ms epoch). `memory`: how the
   * long-term store opened (`via` blocks / rebuilt / empty) and when it became searchable
   * (`searchableAt`, ms epoch; `openMs`: the store's own open time in ms) — the cold-start hook
   * of the benchmarks.
   */
  'core.ping'(): { ready: true; startedAt: number; memory: { via: 'blocks' | 'rebuilt' | 'empty'; openMs: number; searchableAt: number } };
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

  'conversations.list'(): ConversationSummary[];
  'conversations.create'(data: { title?: string; strategy?: StrategyConfig }): ConversationRecord;
  'conversations.get'(data: { id: string }): ConversationRecord | null;
  'conversations.update'(data: { id: string; title?: string; strategy?: StrategyConfig }): ConversationRecord;
  'conversations.delete'(data: { id: string }): void;
  'messages.list'(data: { conversationId: string }): MessageRecord[];

  /** Runs one turn; text streams via `event.chatDelta`. Resolves when the reply is stored. */
  'chat.send'(data: { conversationId: string; text: string; requestId: string }): ChatTurnResult;
  'chat.stop'(data: { requestId: string }): void;
  'chat.live'(data: { conversationId: string }): LiveTurn | null;
  /** The prompt trace of an assistant message (context view). */
  'trace.get'(data: { messageId: string }): PromptTrace | null;

  'memory.list'(data: MemoryListQuery): MemoryView[];
  'memory.history'(data: { memoryId?: string; limit?: number }): MemoryHistoryRecord[];
  'memory.add'(data: { namespace: string; kind: MemoryKind; text: string; pinned?: boolean }): MemoryView;
  'memory.update'(data: { id: string; text?: string; kind?: MemoryKind; pinned?: boolean; importance?: number }): MemoryView;
  /** Returns the rounds that state the deleted fact (see `MemoryAdmin.delete`). */
  'memory.delete'(data: { id: string }): { rounds: MemoryView[] };
  /**
   * Writes the JSON export of all memories, conversations and history (format: `src/memory/export.ts`)
   * into OPFS `backups/<fileName>` (`src/platform/model-files.ts`, `BACKUPS_DIR`); progress via
   * `event.transfer`. The panel downloads the file as `downloadName` and then deletes it.
   * `sizeBytes` in bytes.
   */
  'memory.export'(): { fileName: string; downloadName: string; sizeBytes: number };
  /**
   * Imports the export file the panel copied into OPFS `backups/<fileName>` (the file never travels
   * in a message); progress via `event.transfer`. The staging file is deleted afterwards, whatever
   * the outcome. Rejects with the reason in plain words when the file is refused (nothing written).
   */
  'memory.import'(data: { fileName: string }): ImportReport;
  /** The import undone at the last start-up (context killed or browser closed mid-import), once; then `null`. */
  'memory.importNotice'(): InterruptedImport | null;
  /** Erases every memory, conversation, message, trace and job. */
  'memory.eraseAll'(): void;

  'settings.get'(): Settings;
  'settings.set'(data: Partial<Settings>): Settings;
  'jobs.stats'(): JobStats;
  'jobs.retryFailed'(): number;

  // ── events broadcast by the core (fire and forget; nobody may be listening) ──
  'event.chatDelta'(data: { requestId: string; conversationId: string; messageId: string; delta: string }): void;
  'event.engine'(data: EngineStatus): void;
  'event.jobs'(data: JobStats): void;
  'event.conversations'(data: { conversationId: string | null }): void;
  'event.settings'(data: Settings): void;
  /** Progress of the export or import running now. */
  'event.transfer'(data: TransferProgress): void;
}

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
 * @throws Error('Rejected message from …')
 */
export function assertSender(sender: Runtime.MessageSender, allowed: ExtensionContextName[], extensionId: string): void {
  const url = sender.url ? new URL(sender.url) : null;
  const fromThisExtension = sender.id === extensionId && url?.protocol === 'chrome-extension:' && url.host === extensionId;
  const fromAllowedPage = url !== null && allowed.some((name) => url.pathname === CONTEXT_PATHS[name]);
  if (!fromThisExtension || !fromAllowedPage || sender.tab?.url?.startsWith('http')) {
    throw new Error(`Rejected message from ${sender.url ?? sender.id ?? 'unknown sender'}`);
  }
}

/**
 * Broadcasts an event to whichever pages listen. Missing listeners (side panel closed) are not
 * an error; events are lost then, and the UI re-reads state when it opens.
 */
export function emitEvent<K extends keyof ProtocolMap & `event.${string}`>(type: K, data: Parameters<ProtocolMap[K]>[0]): void {
  (sendMessage as any)(type, data).catch(() => undefined);
}
