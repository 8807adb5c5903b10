/**
 * Dexie store declarations of published schema versions, frozen as they shipped (copied from
 * `src/db/schema.ts` at the time, never imported from it): upgrade tests build an older database
 * with these, so a later edit of the live schema cannot silently change what "a v1 database" means.
 */

/** Version 1's stores (embeddings inside the `memories` rows). */
export const V1_STORES = {
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
} as const;

/**
 * Version 4's stores, the newest before v9 added `profiles`: v1's with `tombstones` (v2),
 * `memoryIndex` (v3) and the fewer `memories` indexes of v4.
 */
export const V4_STORES = {
  ...V1_STORES,
  memories: 'id, hash, *sourceMessageIds, pending',
  tombstones: '[namespace+hash], deletedAt',
  memoryIndex: 'key',
} as const;
