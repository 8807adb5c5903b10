/** The whole layout built from memory rows (repair, migration), and what the index keeps of a row. */

import { memorySlot, statementSlot } from '../../slots';
import { normalizeMemoryText } from '../../text';
import { memorySubject } from '../subject';
import { BlockIndex } from './block-index';
import type { IndexedMemory, IndexHeaderRecord, MemoryIndexRecord } from './records';

/**
 * The `subject:slot` label of a text, `null` when it is about no slot: a query classified whole
 * (`memorySlot` of `slots.ts`), a stored memory by its statements only (`statementSlot`: its questions state nothing).
 */
export function memorySlotLabel(text: string, as: 'query' | 'statement' = 'query'): string | null {
  const key = as === 'statement' ? statementSlot(text) : memorySlot(text);
  return key ? `${key.subject}:${key.slot}` : null;
}

/**
 * What the index keeps about a memory row (`IndexedMemory` with the slot label, the subject and the
 * normalized text computed from the text, once per write: searches read them from the meta columns).
 */
export function indexedOf(r: LayoutRow): IndexedMemory {
  const normalized = normalizeMemoryText(r.text);
  return {
    id: r.id,
    namespace: r.namespace,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    validFrom: r.validFrom,
    validUntil: r.validUntil,
    importance: r.importance,
    pinned: r.pinned,
    current: r.current,
    kind: r.kind,
    slot: memorySlotLabel(r.text, 'statement'),
    subject: memorySubject(normalized),
    normalized,
  };
}

/** The fields of a memory row that the layout reads (`MemoryRecord` satisfies it). */
export interface LayoutRow extends Omit<IndexedMemory, 'slot' | 'subject' | 'normalized'> {
  text: string;
  embedding?: Float32Array | null;
  embeddingModel: string | null;
}

/**
 * The whole persisted layout for `rows` (repair and the v1 → v3 migration): blocks, and a header
 * at generation `gen` describing `rows.length` rows. Each row's vector is `vectorOf(row)`
 * (default: its `embedding` field). Rows keep their order within a namespace. `unindexed` holds
 * the ids whose vector could not be placed (another dimension than the other vectors of the same
 * model and namespace: not comparable); their rows should lose `embeddingModel` so re-embedding
 * gives them a vector.
 */
export function layoutFromRows(
  rows: Iterable<LayoutRow>,
  gen: number,
  vectorOf: (row: LayoutRow) => Float32Array | null = (r) => r.embedding ?? null,
): { index: BlockIndex; records: MemoryIndexRecord[]; header: IndexHeaderRecord; unindexed: Set<string> } {
  const index = new BlockIndex();
  const batch = index.batch();
  const unindexed = new Set<string>();
  let count = 0;
  for (const r of rows) {
    const vector = vectorOf(r);
    if (!batch.put(indexedOf(r), vector, r.embeddingModel) && vector) unindexed.add(r.id);
    count += 1;
  }
  const records: MemoryIndexRecord[] = batch.records();
  batch.commit();
  const header: IndexHeaderRecord = { key: 'header', gen, count, dirty: [] };
  return { index, records: [...records, header], header, unindexed };
}
