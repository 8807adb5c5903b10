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
