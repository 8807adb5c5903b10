/**
 * One factory for the `MemoryRecord` literals of the tests: typed against the real record, so a new
 * required field of `MemoryRecord` fails to compile here and only here. Defaults: a current `fact`
 * of the `default` namespace, text "a memory", importance 0.5, created and updated 2026-11-01
 * 12:00 UTC, valid from creation time `null` (unbounded), never accessed, no source, not pinned, no
 * embedding, and `hash` = `memoryHash(text)` of the final text unless `hash` is overridden.
 */
import type { MemoryRecord } from '../../src/model/records';
import type { IndexedMemory } from '../../src/memory/long-term/retrieval/blocks';
import { memoryHash } from '../../src/memory/long-term/text';

/** `createdAt` / `updatedAt` of a record that does not set them (ms epoch, 2026-11-01 12:00 UTC). */
export const MEMORY_RECORD_TIME = Date.UTC(2026, 10, 1, 12);

/**
 * A whole `MemoryRecord`: the defaults above, then `overrides` (every field may be overridden; an
 * `updatedAt` not given follows `createdAt`).
 */
export function memoryRecord(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  const text = overrides.text ?? 'a memory';
  const createdAt = overrides.createdAt ?? MEMORY_RECORD_TIME;
  return {
    id: 'm0',
    namespace: 'default',
    kind: 'fact',
    text,
    embedding: null,
    embeddingModel: null,
    importance: 0.5,
    createdAt,
    updatedAt: createdAt,
    validFrom: null,
    validUntil: null,
    current: 1,
    lastAccessedAt: null,
    accessCount: 0,
    sourceConversationId: null,
    sourceMessageIds: [],
    pinned: false,
    hash: memoryHash(text),
    ...overrides,
  };
}

/**
 * A whole `IndexedMemory` (what `BlockIndex` keeps of a row): a valid, current `fact` of the
 * `default` namespace about no slot or subject, importance 0.5, created and updated at
 * `MEMORY_RECORD_TIME`, unpinned, normalized text `''`, then `overrides` (typed against the real
 * shape: a new column fails to compile here only).
 */
export function indexedMemory(overrides: Partial<IndexedMemory> & Pick<IndexedMemory, 'id'>): IndexedMemory {
  return {
    namespace: 'default',
    createdAt: MEMORY_RECORD_TIME,
    updatedAt: MEMORY_RECORD_TIME,
    validFrom: null,
    validUntil: null,
    importance: 0.5,
    pinned: false,
    current: 1,
    kind: 'fact',
    slot: null,
    subject: null,
    normalized: '',
    ...overrides,
  };
}
