/**
 * The one Dexie (IndexedDB) schema of the extension: every table is declared here once, with
 * its version and migrations. Records are plain objects; times are milliseconds since the epoch.
 *
 * Versions (bump with `db.version(n)`; never edit a published version, add a new one):
 * - v1: conversations, messages, strategyState, entities, memories, memoryHistory, jobs,
 *       promptTraces, settings, localModels.
 * - v2: `tombstones` (what the user deleted or forgot, as a text hash: re-runs and imports must not
 *       bring it back). New table only; no data migration (no tombstones exist for older deletes).
 * Every table is classified in `TABLE_DATA` (user data or device data), which "Erase everything"
 * follows, so a table added later is erased unless it is declared device data.
 * - v3: `memoryIndex`, the persisted long-term index (vector and meta blocks, header, lexical
 *       snapshot: `src/memory/long-term/retrieval/blocks.ts`), so the core opens without a
 *       rebuild. The upgrade moves every memory's `embedding` out of its row into the vector
 *       blocks (rows keep `embeddingModel`), and `memories` drops the indexes nothing queries
 *       (`updatedAt`, `sourceConversationId`, `[namespace+current]`): fewer bytes per memory.
 *       Rows written with an inline `embedding` (by anything but the store) are marked `pending`
 *       by the table's hooks (sparse index), so the store finds them on open.
 */
import Dexie, { type EntityTable, type Table } from 'dexie';
import type { EngineErrorCode } from '../engines/types';
import type { PromptTrace } from '../prompt/types';
import type { StrategyConfig, StrategyKind } from '../model/strategies';
import { layoutFromRows, type LayoutRow, type MemoryIndexRecord } from '../memory/long-term/retrieval/blocks';
import type { CodedError } from '../model/errors';

/** Name of the IndexedDB database. */
export const DB_NAME = 'recall';

/** A conversation (one chat thread). */
/**
 * The namespace of a conversation created without one (the only one the side panel offers today).
 * Use it only where a conversation or a memory is created; every query takes the namespace of the
 * conversation (or of the request) explicitly, so no profile reads another's memories.
 */
export const DEFAULT_NAMESPACE = 'default';

export interface ConversationRecord {
  id: string;
  title: string;
  /** Long-term memory namespace (a profile/persona); `'default'` unless the user picks one. */
  namespace: string;
  /** Short-term context strategy and its parameters, per conversation. */
  strategy: StrategyConfig;
  createdAt: number;
  updatedAt: number;
}

/** Status of a stored message. */
export type MessageStatus = 'complete' | 'aborted' | 'error';

/** One chat message, kept verbatim (short-term memory). */
export interface MessageRecord {
  id: string;
  conversationId: string;
  /** 0-based position in the conversation; unique per conversation. */
  seq: number;
  role: 'user' | 'assistant';
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
  command?: { kind: 'remember' | 'forget'; affected?: { id: string; kind: MemoryKind; text: string }[] };
}

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

/** Kind of a long-term memory item. `episodic` = a stored exchange; `summary` = a conversation summary. */
export type MemoryKind = 'profile' | 'preference' | 'event' | 'fact' | 'instruction' | 'episodic' | 'summary';

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
  /** 1 while currently valid (`validUntil` null or in the future at the last check), else 0 — indexed. */
  current: 0 | 1;
  lastAccessedAt: number | null;
  accessCount: number;
  sourceConversationId: string | null;
  sourceMessageIds: string[];
  pinned: boolean;
  /** Hash of the normalized text, to catch exact duplicates without the LLM. */
  hash: string;
  /** Id of the memory that replaced this one, when closed by a contradiction. */
  supersededBy?: string;
  /**
   * Set (to 1) by the table's own hooks when a row is written WITH an inline `embedding` field,
   * i.e. not by the long-term store (an import, an undo): the persisted index may not describe it
   * yet, and the store's next open repairs it. Sparse index: rows without it cost nothing. Reads
   * through Dexie never show it.
   */
  pending?: 1;
}

/** Event recorded in the memory history. */
export type MemoryEvent = 'ADD' | 'UPDATE' | 'DELETE' | 'INVALIDATE' | 'MERGE' | 'EXPIRE' | 'FORGET' | 'PIN' | 'UNPIN' | 'IMPORT';

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

/** The database: one instance per context (offscreen document, tests). */
export class RecallDB extends Dexie {
  conversations!: EntityTable<ConversationRecord, 'id'>;
  messages!: EntityTable<MessageRecord, 'id'>;
  strategyState!: Table<StrategyStateRecord, [string, StrategyKind]>;
  entities!: EntityTable<EntityRecord, 'id'>;
  memories!: EntityTable<MemoryRecord, 'id'>;
  memoryHistory!: EntityTable<MemoryHistoryRecord, 'id'>;
  jobs!: EntityTable<JobRecord, 'id'>;
  promptTraces!: EntityTable<PromptTraceRecord, 'messageId'>;
  settings!: EntityTable<SettingRecord, 'key'>;
  localModels!: EntityTable<LocalModelRecord, 'fileName'>;
  tombstones!: Table<TombstoneRecord, [string, string]>;
  /** The persisted long-term index (v3; see `retrieval/blocks.ts`). */
  memoryIndex!: Table<MemoryIndexRecord, string>;

  /** @param name database name; tests pass a unique name per test. */
  constructor(name: string = DB_NAME) {
    super(name);
    this.version(1).stores({
      conversations: 'id, updatedAt, namespace',
      messages: 'id, conversationId, [conversationId+seq], createdAt',
      strategyState: '[conversationId+strategy], conversationId',
      entities: 'id, conversationId, [conversationId+key]',
      memories: 'id, namespace, kind, hash, current, updatedAt, sourceConversationId, *sourceMessageIds, [namespace+current]',
      memoryHistory: '++id, memoryId, at',
      jobs: 'id, status, type, runAfter, dedupeKey, [status+runAfter]',
      promptTraces: 'messageId, conversationId, createdAt',
      settings: 'key',
      localModels: 'fileName, addedAt',
    });
    this.version(2).stores({
      tombstones: '[namespace+hash], deletedAt',
    });
    this.version(3)
      .stores({
        memories: 'id, namespace, kind, hash, current, *sourceMessageIds, pending',
        memoryIndex: 'key',
      })
      .upgrade(async (tx) => {
        const rows = (await tx.table('memories').toArray()) as (LayoutRow & Record<string, unknown>)[];
        const { records, unindexed } = layoutFromRows(rows, 1);
        await tx.table('memoryIndex').bulkPut(records);
        await tx.table('memories').bulkPut(
          rows.filter((r) => 'embedding' in r).map(({ embedding: _embedding, ...row }) => (unindexed.has(row.id) ? { ...row, embeddingModel: null } : row)),
        );
      });
    // Rows written with an inline vector bypassed the store's index: mark them (see `pending`).
    const inline = (obj: object) => Object.prototype.hasOwnProperty.call(obj, 'embedding');
    this.memories.hook('creating', (_key, obj) => {
      if (inline(obj)) (obj as MemoryRecord).pending = 1;
    });
    this.memories.hook('updating', (mods) => {
      if ((mods as Record<string, unknown>).embedding !== undefined) return { pending: 1 };
      return undefined;
    });
    this.memories.hook('reading', (obj: MemoryRecord | undefined) => {
      if (obj && obj.pending !== undefined) delete obj.pending;
      return obj as MemoryRecord;
    });
  }
}

/**
 * What each table holds, for "Erase everything" (`eraseUserData` in `./erase.ts`):
 * - `user`: derived from what the user said or did — erased whole;
 * - `settings`: erased row by row by key (`settingHoldsUserData`: preferences stay, `stats.*`,
 *   `state.*` and unknown keys go);
 * - `device`: about this device, not the user's words (GGUF model files they opened) — kept.
 * A table missing here is treated as `user` (erased), so a new table is never left behind.
 */
export const TABLE_DATA: Readonly<Record<string, 'user' | 'settings' | 'device'>> = {
  conversations: 'user',
  messages: 'user',
  strategyState: 'user',
  entities: 'user',
  memories: 'user',
  memoryHistory: 'user',
  jobs: 'user',
  promptTraces: 'user',
  tombstones: 'user',
  // The lexical snapshot holds the memories' terms: user data, erased with them.
  memoryIndex: 'user',
  settings: 'settings',
  localModels: 'device',
};
