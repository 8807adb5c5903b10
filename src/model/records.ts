/**
 * The records (row types) of the Dexie tables declared in `src/db/schema.ts`. Records are plain
 * objects; times are milliseconds since the epoch. Leaf module: imports nothing from `src/` but
 * other model files.
 */
import type { EngineErrorCode } from './engine';
import type { CodedError } from './errors';
import type { AffectedMemory, FactKind, MemoryCommand, MemoryEvent, MemoryKind } from './memory';
import type { StrategyConfig, StrategyKind } from './strategies';
import type { PromptTrace } from './trace';

/** A conversation (one chat thread). */
export interface ConversationRecord {
  id: string;
  title: string;
  /** Long-term memory namespace (a profile/persona); `'default'` unless the user picks one. */
  namespace: string;
  /** Short-term context strategy and its parameters, per conversation. */
  strategy: StrategyConfig;
  createdAt: number;
  updatedAt: number;
  /**
   * A temporary chat (issue 14): nothing is learned from it (no round, extraction or other
   * long-term job; "remember …" is refused) and it is deleted with its messages and traces when
   * the panel leaves it, closes, or the core restarts. Absent for a normal conversation.
   */
  temporary?: true;
}

/** Roles of a stored message (the system instruction is never stored). */
export const MESSAGE_ROLES = ['user', 'assistant'] as const;

/** Statuses of a stored message. */
export const MESSAGE_STATUSES = ['complete', 'aborted', 'error'] as const;

/** Status of a stored message (see `MESSAGE_STATUSES`). */
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/**
 * Longest snippet of a stored message shown for it (`MessageSnippet.snippet` of `messages.snippets`:
 * a memory's "From …" line), in code points, the "…" included. A value, so it lives here and not in
 * the protocol module (which only the transports import at runtime).
 */
export const MESSAGE_SNIPPET_CHARS = 120;

/** One chat message, kept verbatim (short-term memory). */
export interface MessageRecord {
  id: string;
  conversationId: string;
  /** 0-based position in the conversation; unique per conversation. */
  seq: number;
  role: (typeof MESSAGE_ROLES)[number];
  content: string;
  createdAt: number;
  status: MessageStatus;
  /** Error text when `status === 'error'`. */
  error?: string;
  /** Stable code of `error` when it came from an engine (the UI translates by code). */
  errorCode?: EngineErrorCode;
  /** Domain, code and params of `error` when it was a coded error of any domain (`src/model/errors.ts`; the UI translates by it). */
  errorInfo?: CodedError;
  /** Model that wrote an assistant message. */
  modelId?: string;
  /** Token usage reported by the engine for an assistant message. */
  usage?: { promptTokens: number; completionTokens: number };
  /** The reply stopped at the answer-token limit (`maxTokens`), not at its natural end. */
  truncated?: boolean;
  /**
   * Set on both messages of an explicit memory command turn ("remember …", "忘记…"); on the
   * reply it lists what was stored or removed. Command turns are left out of prompts.
   */
  command?: { kind: MemoryCommand; affected?: AffectedMemory[] };
  /**
   * Display name of who wrote the message when the conversation names its speakers (an imported
   * or generated two-person dialog: "Anna"); absent for the app's own chats (the role says who).
   * Not indexed; long-term memory carries it into `MemoryRecord.speakers`.
   */
  speaker?: string;
}

/**
 * Display names of the two sides of a conversation by role, when it names them (an imported or
 * generated dialog: `{ user: 'Anna', assistant: 'Ben' }`). A missing name means the app's own
 * user or assistant (shown as the role label "User" / "Assistant").
 */
export type SpeakerNames = Partial<Record<(typeof MESSAGE_ROLES)[number], string>>;

/**
 * Persisted state of one short-term strategy for one conversation (e.g. the running summary and
 * the last message seq folded into it). `state` is strategy-specific JSON.
 */
export interface StrategyStateRecord {
  conversationId: string;
  strategy: StrategyKind;
  state: unknown;
  updatedAt: number;
}

/** One entity tracked by the entity-memory strategy (per conversation). */
export interface EntityRecord {
  id: string;
  conversationId: string;
  /** Normalized name used for lookup (NFKC, lower-case, trimmed). */
  key: string;
  /** Display name as the user wrote it. */
  name: string;
  /** Short evolving summary in the conversation's language. */
  summary: string;
  updatedAt: number;
  /** Seq of the last message that mentioned it. */
  lastSeenSeq: number;
}

/**
 * One long-term memory. Validity follows Zep/Graphiti's bi-temporal idea: `validFrom`/`validUntil`
 * say when it was true in the world (a contradicted fact is closed, not erased); `createdAt`/
 * `updatedAt` say when the system learned or changed it.
 */
export interface MemoryRecord {
  id: string;
  namespace: string;
  kind: MemoryKind;
  text: string;
  /** Short topic label from extraction, if any. */
  topic?: string;
  /**
   * L2-normalized embedding; `null` while not yet embedded. Since v3 it is not stored in the row
   * but in the vector blocks of `memoryIndex`; reads through Dexie while a store is open get it
   * back here (the store's reading hook), so code that reads rows sees the same shape.
   */
  embedding: Float32Array | null;
  /** Model id of `embedding`; a different current model means it must be re-embedded. */
  embeddingModel: string | null;
  /** 0..1. */
  importance: number;
  createdAt: number;
  updatedAt: number;
  validFrom: number | null;
  /** `null` while currently valid. */
  validUntil: number | null;
  /** 1 while currently valid (`validUntil` null or in the future at the last check) and not superseded (`supersededBy` unset), else 0. */
  current: 0 | 1;
  lastAccessedAt: number | null;
  accessCount: number;
  sourceConversationId: string | null;
  sourceMessageIds: string[];
  pinned: boolean;
  /** Hash of the normalized text, to catch exact duplicates without the LLM. */
  hash: string;
  /**
   * Id of the memory that replaced this one: when closed by a contradiction (with `validUntil`), or, for an
   * episodic round, restated later with another value (`consolidation/supersede.ts`: still valid, not current).
   */
  supersededBy?: string;
  /**
   * Who said the text, when the source conversation names its speakers (`SpeakerNames`; an episodic
   * round has both sides, another memory the user's). Never part of `text`: it is put beside the
   * text where the memory is indexed, embedded and shown in the prompt (`labelSpeakers`). Not indexed.
   */
  speakers?: SpeakerNames;
  /** The web page the text was saved from ("Remember this" on a selection): its URL and title at that time. Not indexed. */
  sourceUrl?: string;
  sourceTitle?: string;
  /**
   * Set (to 1) by the table's own hooks when a row is written WITH an inline `embedding` field,
   * i.e. not by the long-term store (an import, an undo): the persisted index may not describe it
   * yet, and the store's next open repairs it. Sparse index: rows without it cost nothing. Reads
   * through Dexie never show it.
   */
  pending?: 1;
}

/** A memory as shown outside the store: everything but the embedding vector. */
export type MemoryView = Omit<MemoryRecord, 'embedding'> & {
  /**
   * Set by retrieval (`LongTermMemory.retrieve`) on an episodic round when a fact extracted from it
   * was closed by a contradiction (`supersededBy`): when (ms epoch). The prompt marks the round as past.
   */
  pastSince?: number;
};

/** One change to a memory (Mem0-style history table). */
export interface MemoryHistoryRecord {
  id?: number;
  memoryId: string;
  event: MemoryEvent;
  oldText: string | null;
  newText: string | null;
  at: number;
  /** What caused it: `conversation:<id>`, `user`, `maintenance`, `import`, … */
  source: string;
  /**
   * The memory's namespace (profile), on `DELETE` entries only (written since v9): they outlive
   * their memory, and deleting a profile finds them by it. Absent on older entries.
   */
  namespace?: string;
}

/**
 * Status of a background job. `parked`: no handler is registered for its type (a job left by an
 * older or newer version); it is not picked again until a handler for that type registers.
 */
export type JobStatus = 'queued' | 'running' | 'done' | 'failed' | 'parked';

/** A persisted background job (see `src/jobs/queue.ts`). */
export interface JobRecord {
  id: string;
  type: string;
  payload: unknown;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  /** Not run before this time (ms epoch): backoff after failures. */
  runAfter: number;
  createdAt: number;
  updatedAt: number;
  /** Jobs with the same key are coalesced while one is queued. */
  dedupeKey?: string;
  /** 0..1 while running, if the handler reports it. */
  progress?: number;
  lastError?: string;
  /** Domain, code and params of `lastError` when it was a coded error (the UI translates by it). */
  lastErrorInfo?: CodedError;
  /**
   * `rejected` on a `done` job whose last attempt ended in an expected rejection
   * (`JOB_REJECTION_CODES`: the model's reply was unusable): it ran, nothing is broken, nothing
   * to retry. Absent on a job that did its work.
   */
  outcome?: 'rejected';
}

/** The exact prompt sent for one assistant message, for the context view. */
export interface PromptTraceRecord {
  /** Id of the assistant message the prompt produced. */
  messageId: string;
  conversationId: string;
  createdAt: number;
  trace: PromptTrace;
}

/**
 * A memory the user deleted or forgot, by the hash of its normalized text (`memoryHash`, FNV-1a
 * 64-bit of NFKC lower-cased text): no text is stored. Extraction/consolidation ADD and import skip
 * a tombstoned hash in its namespace; an explicit "remember …" by the user lifts it. Primary key
 * `[namespace+hash]` (one row per text and namespace; a later delete refreshes `deletedAt`).
 */
export interface TombstoneRecord {
  namespace: string;
  hash: string;
  /** When it was deleted or forgotten (ms epoch). */
  deletedAt: number;
  /** `DELETE` (memory manager) or `FORGET` ("forget …" command). */
  reason: 'DELETE' | 'FORGET';
}

/** A key/value setting (the offscreen document has no `chrome.storage`, so settings live here). */
export interface SettingRecord {
  key: string;
  value: unknown;
}

/** A GGUF model file the user opened or downloaded; the bytes live in OPFS under `models/`. */
export interface LocalModelRecord {
  /** File name in OPFS `models/`. */
  fileName: string;
  displayName: string;
  sizeBytes: number;
  source: 'file' | 'download';
  url?: string;
  addedAt: number;
}

/**
 * "Not relevant here" feedback on a memory (schema v7, issue 14): the user said that memory
 * `memoryId` did not belong under the reply to `query`. Retrieval demotes that memory for
 * similar queries (`retrieval/feedback.ts`: cosine of the query embeddings of the same model, else
 * overlap of `terms`). Deleted with its memory (delete, forget, erase) or by an undo.
 */
export interface FeedbackRecord {
  /** Random UUID. */
  id: string;
  memoryId: string;
  /** The memory's namespace (feedback acts within it). */
  namespace: string;
  /** The user message the reply answered (the retrieval query), verbatim, at most 8,000 characters. */
  query: string;
  /** Content terms of `query` (`contentTerms` of `src/text/terms.ts`: normalized, no stop words). */
  terms: string[];
  /** L2-normalized embedding of `query` by `embeddingModel`, or `null` when no embedder was ready. */
  embedding: Float32Array | null;
  embeddingModel: string | null;
  /** The assistant message whose sources chip the user clicked, and its conversation. */
  messageId: string;
  conversationId: string;
  /** ms epoch. */
  createdAt: number;
}

/** A feedback row as the panel sees it (no query text, no vector): which memory it marked under which reply, and when (ms epoch). */
export type FeedbackView = Pick<FeedbackRecord, 'id' | 'memoryId' | 'messageId' | 'createdAt'>;

/**
 * An extracted memory item waiting for the user's review ("review before saving", issue 14), or a
 * text the user rejected (schema v8, table `suggestions`). Rejected rows keep only the hash (the
 * text is emptied): a rejected text is never suggested again in its namespace. Accepted rows are
 * deleted once the memory is stored. Times in ms epoch.
 */
export interface SuggestionRecord {
  id: string;
  namespace: string;
  /** `memoryHash` of the text (normalized: NFKC, lower case, trailing punctuation dropped). */
  hash: string;
  status: 'pending' | 'rejected';
  kind: FactKind;
  /** The item's text (relative dates already absolute); `''` once rejected. */
  text: string;
  topic?: string;
  /** 0..1, as extraction prepared it. */
  importance: number;
  validFrom: number | null;
  validUntil: number | null;
  sourceConversationId: string | null;
  sourceMessageIds: string[];
  /** Time of the user message it came from: the memory is created at it when accepted. */
  messageTime: number;
  /** When it was suggested (or rejected). */
  createdAt: number;
}

/** A memory saved by extraction, for the "Recently learned" list (`learnedAt`: its `ADD` in the history, ms epoch). */
export interface LearnedMemory {
  memory: MemoryView;
  learnedAt: number;
}

/**
 * A profile (issue 14): a named, separate memory — its conversations, memories, tombstones and jobs
 * all carry its `id` as their `namespace`. The default profile (`DEFAULT_NAMESPACE`) always exists
 * and cannot be deleted; its `name` is `''` until the user renames it (the panel shows its
 * translated default name then). Names are unique (compared by `profileNameKey`, `src/model/profiles.ts`).
 */
export interface ProfileRecord {
  /** The namespace string (`DEFAULT_NAMESPACE`, or `profile-<uuid>` for one the user created). */
  id: string;
  /** Display name, trimmed, at most `MAX_PROFILE_NAME_CHARS` characters; `''` only for the default profile. */
  name: string;
  /** ms epoch; 0 for the default profile when it was never stored. */
  createdAt: number;
}
