/**
 * The one Dexie (IndexedDB) schema of the extension: every table is declared here once, with
 * its version and migrations. The records (row types) are declared in `src/model/records.ts`.
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
 * - v4: fewer bytes per memory (issue 9). The vector blocks are stored as f16 (`halves`, see
 *       `retrieval/blocks/f16.ts`) instead of f32 and decoded to f32 when the store opens; the
 *       upgrade converts every v3 vector block in place. `memories` drops the indexes whose
 *       queries read (nearly) every row anyway — `namespace` (queried nowhere), `kind` and
 *       `current` (maintenance only, which now filters one read of the table). A memory's creation
 *       entry in `memoryHistory` (`ADD`, or an `IMPORT` that created it) no longer copies its
 *       text: it is derived from the rows and later entries when read (`./history.ts`); the upgrade
 *       drops the stored copies it can derive exactly.
 * - v7: `feedback` (issue 14): "not relevant here" on a memory under a reply — memory id, the
 *       query (text, content terms, embedding) it was marked under, message and conversation —
 *       which ranking uses to demote that memory for similar queries
 *       (`memory/long-term/retrieval/feedback.ts`). New table only; no data migration. User data.
 * - v8: `suggestions` (issue 14, review before saving): extracted items waiting for the user's
 *       accept / edit / reject, and the hashes of rejected texts (never suggested again), keyed
 *       `id`, indexed `[namespace+hash]` and `[namespace+status]`. New table only; no data migration.
 *       (Dexie does not need version numbers to be contiguous.)
 * - v9: `profiles` (issue 14): one row per profile (`ProfileRecord`: id = the namespace, name,
 *       createdAt). New table only; no migration: the default profile needs no row (the core lists
 *       it whether stored or not), and the namespaces already used by conversations are listed as
 *       profiles too. `TABLE_PROFILE_LINK` says how every table's rows belong to a profile, so
 *       deleting one (`src/core/profiles.ts`) leaves nothing of it behind.
 *
 * Encryption at rest (issue 16, the vault lock): every table goes through one DBCore middleware
 * (`src/vault/middleware.ts`, installed here) that keeps the primary key and the indexed fields
 * declared below clear and seals every other field of a row into one blob while the lock is on.
 * No schema version: sealed rows keep their keys and indexed fields, so no index changes. A future
 * upgrade that rewrites rows must run unlocked (a sealed row read while locked throws `locked`).
 */
import Dexie, { type EntityTable, type Table } from 'dexie';
import type {
  ConversationRecord,
  EntityRecord,
  JobRecord,
  LocalModelRecord,
  MemoryHistoryRecord,
  ProfileRecord,
  MemoryRecord,
  MessageRecord,
  PromptTraceRecord,
  FeedbackRecord,
  SettingRecord,
  StrategyStateRecord,
  SuggestionRecord,
  TombstoneRecord,
} from '../model/records';
import type { StrategyKind } from '../model/strategies';
import { dropDerivableCreationTexts } from './history';
import {
  encodeVectorBlock,
  isVectorRecord,
  layoutFromRows,
  VECTOR_KEY_PREFIX,
  type LayoutRow,
  type MemoryIndexRecord,
} from '../memory/long-term/retrieval/blocks';
import { VaultKeyring, vaultMiddleware } from '../vault/middleware';
import { WriteCounters, writeCountersMiddleware } from './write-counters';

/** Name of the IndexedDB database. */
export const DB_NAME = 'recall';

/** The database: one instance per context (offscreen document, tests). */
export class RecallDB extends Dexie {
  /** Conversations (each with its namespace and memory strategy). */
  conversations!: EntityTable<ConversationRecord, 'id'>;
  /** Messages of the conversations, ordered by `seq` within one. */
  messages!: EntityTable<MessageRecord, 'id'>;
  /** Short-term memory state per conversation and strategy (summaries, buffers). */
  strategyState!: Table<StrategyStateRecord, [string, StrategyKind]>;
  /** Entity notes of the entity strategy, per conversation. */
  entities!: EntityTable<EntityRecord, 'id'>;
  /** Long-term memory rows (their vectors live in `memoryIndex` since v3). */
  memories!: EntityTable<MemoryRecord, 'id'>;
  /** Every change of a memory (ADD, UPDATE, DELETE, …), kept after the memory is gone. */
  memoryHistory!: EntityTable<MemoryHistoryRecord, 'id'>;
  /** The persisted background job queue (`src/jobs/`). */
  jobs!: EntityTable<JobRecord, 'id'>;
  /** The exact prompt sent for each assistant message (the context view), by that message's id. */
  promptTraces!: EntityTable<PromptTraceRecord, 'messageId'>;
  /** Settings, preferences and job bookkeeping rows, by key (`readSettings` parses them). */
  settings!: EntityTable<SettingRecord, 'key'>;
  /** GGUF model files the user opened or downloaded (the bytes live in OPFS under `models/`). */
  localModels!: EntityTable<LocalModelRecord, 'fileName'>;
  /** Deleted or forgotten memory texts (namespace + hash, no text), so re-runs and imports skip them (v2). */
  tombstones!: Table<TombstoneRecord, [string, string]>;
  /** The persisted long-term index (v3; see `retrieval/blocks.ts`). */
  memoryIndex!: Table<MemoryIndexRecord, string>;
  /** "Not relevant here" feedback (v7; see `FeedbackRecord`). */
  feedback!: EntityTable<FeedbackRecord, 'id'>;
  /** Extracted items waiting for review, and rejected texts' hashes (v8; see `memory/long-term/review`). */
  suggestions!: EntityTable<SuggestionRecord, 'id'>;
  /** Profiles (v9; `ProfileRecord`). */
  profiles!: EntityTable<ProfileRecord, 'id'>;

  /** The keys the vault middleware seals and opens rows with (`src/vault/middleware.ts`; set by the core's vault). */
  readonly keyring: VaultKeyring;
  /** Write counters per table, for readers that cache (`./write-counters.ts`). */
  readonly writes = new WriteCounters();

  /**
   * @param name database name; tests pass a unique name per test.
   * @param options `keyring`: the vault keyring to seal with (default: a new one, lock off).
   */
  constructor(name: string = DB_NAME, options: { keyring?: VaultKeyring } = {}) {
    super(name);
    this.keyring = options.keyring ?? new VaultKeyring();
    this.use(vaultMiddleware(this.keyring));
    this.use(writeCountersMiddleware(this.writes));
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
        await tx
          .table('memories')
          .bulkPut(
            rows.filter((r) => 'embedding' in r).map(({ embedding: _embedding, ...row }) => (unindexed.has(row.id) ? { ...row, embeddingModel: null } : row)),
          );
      });
    this.version(4)
      .stores({ memories: 'id, hash, *sourceMessageIds, pending' })
      .upgrade(async (tx) => {
        // One vector block at a time (a cursor): a 100k store holds ~150 MB of f32 vectors.
        await tx
          .table('memoryIndex')
          .where('key')
          .aboveOrEqual(VECTOR_KEY_PREFIX)
          .modify((r: MemoryIndexRecord, ref: { value: MemoryIndexRecord }) => {
            if (isVectorRecord(r) && !('halves' in r)) ref.value = encodeVectorBlock(r);
          });
        await dropDerivableCreationTexts(tx);
      });
    this.version(7).stores({
      feedback: 'id, memoryId, messageId',
    });
    this.version(8).stores({ suggestions: 'id, [namespace+hash], [namespace+status]' });
    this.version(9).stores({ profiles: 'id' });
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
 * What each table holds, for "Erase all data" (`eraseUserData` in `./erase.ts`):
 * - `user`: derived from what the user said or did — erased whole;
 * - `settings`: the user's settings and the jobs' bookkeeping (`stats.*`, `state.*`) — erased whole too;
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
  // The query texts the user marked memories "not relevant" under.
  feedback: 'user',
  // What extraction suggested and what the user rejected (hashes): their words and choices.
  suggestions: 'user',
  // Profile names are the user's words.
  profiles: 'user',
  settings: 'settings',
  localModels: 'device',
};

/**
 * How the rows of each table belong to a profile, for deleting one (`deleteProfile` in
 * `src/core/profiles.ts`):
 * - `{ field }`: the row's `field` names the profile's namespace (`namespace`), one of its
 *   conversations (`conversationId`), memories (`memoryId`) or messages (`messageId`);
 * - `store`: the long-term store's own tables (memory rows and the persisted index), removed
 *   through the store so its indexes stay consistent;
 * - `history`: `memoryHistory` (by `memoryId`; an entry that outlived its memory by the namespace
 *   its `DELETE` entry names, else by its source conversation);
 * - `jobs`: a job whose payload names the namespace or one of its conversations;
 * - `settings`: the open-turn rows of its messages, its review switch and "about me" profile
 *   (`review.<ns>`, `aboutMe.<ns>`), and the active-profile row when it names it;
 * - `profile`: the profile row itself (removed last);
 * - `none`: rows about the device, not a profile.
 * A table missing here fails `core-profiles.test.ts`: a table added later must say how its rows
 * belong to a profile (or that they do not), or deleting a profile could leave them behind.
 */
export type ProfileLink = { field: 'namespace' | 'conversationId' | 'memoryId' | 'messageId' } | 'store' | 'history' | 'jobs' | 'settings' | 'profile' | 'none';

/** See `ProfileLink`: one entry per table. */
export const TABLE_PROFILE_LINK: Readonly<Record<string, ProfileLink>> = {
  conversations: { field: 'namespace' },
  messages: { field: 'conversationId' },
  strategyState: { field: 'conversationId' },
  entities: { field: 'conversationId' },
  promptTraces: { field: 'conversationId' },
  tombstones: { field: 'namespace' },
  memories: 'store',
  memoryIndex: 'store',
  memoryHistory: 'history',
  // Its rows also go with their memory (the store's remove); any left name the namespace.
  feedback: { field: 'namespace' },
  // Pending suggestions and rejected hashes of the profile.
  suggestions: { field: 'namespace' },
  jobs: 'jobs',
  settings: 'settings',
  profiles: 'profile',
  localModels: 'none',
};
