/**
 * What pass 2 of an import does with one record: the merge decision for a memory, the record a
 * file memory becomes, and the batched look-ups and writes of conversations and messages.
 */
import type { Table } from 'dexie';
import type { RecallDB } from '../db/schema';
import type { MemoryRecord, MessageRecord } from '../model/records';
import { isTombstoned } from '../memory/long-term/store';
import { memoryHash } from '../memory/long-term/text';
import { l2normalize } from '../memory/long-term/retrieval/vector';
import { type ImportPlan, decodeVector } from './check';
import type { ExportFile } from './format';

/** What happens to one memory of the file (see `decideMemory`). */
export type MemoryDecision =
  { action: 'add' } | { action: 'update'; existing: MemoryRecord } | { action: 'skip'; reason: 'up_to_date' | 'duplicate' | 'forgotten' };

/**
 * The one place that decides what an import does with a memory of the file (run inside the
 * import's write transaction, which must include `db.memories`): `update` when a stored memory
 * with its id is older (`updatedAt`), `skip` ('up_to_date') when the stored one is as new or
 * newer, `skip` ('duplicate') when a current memory of the same namespace has the same text
 * (hash recomputed from the text, never the file's), `skip` ('forgotten') when the user deleted
 * or forgot that text in that namespace (a tombstone, see `isTombstoned`: a re-import of an old
 * export must not bring it back), else `add`. The transaction must also include `db.tombstones`.
 * @param incoming the memory as it will be stored (hash, `current` and vector already recomputed).
 */
export async function decideMemory(db: RecallDB, incoming: MemoryRecord): Promise<MemoryDecision> {
  const existing = await db.memories.get(incoming.id);
  if (existing) return incoming.updatedAt > existing.updatedAt ? { action: 'update', existing } : { action: 'skip', reason: 'up_to_date' };
  if (await isTombstoned(db, incoming.namespace, incoming.hash)) return { action: 'skip', reason: 'forgotten' };
  if (incoming.current === 1) {
    const duplicate = await db.memories
      .where('hash')
      .equals(incoming.hash)
      .and((x) => x.namespace === incoming.namespace && x.current === 1)
      .first();
    if (duplicate) return { action: 'skip', reason: 'duplicate' };
  }
  return { action: 'add' };
}

/** The record a file memory becomes: recomputed hash, `current` and a checked, normalized vector. */
export function toMemoryRecord(
  m: ExportFile['memories'][number],
  index: number,
  plan: ImportPlan,
  now: number,
): { record: MemoryRecord; vectorDropped: boolean } {
  let embedding = decodeVector(m, `memories.${index}`);
  const vectorDropped = m.embedding !== null && (embedding === null || embedding.length !== plan.dimensions.get(m.embeddingModel!));
  if (vectorDropped) embedding = null;
  const { topic, supersededBy, ...rest } = m;
  return {
    record: {
      ...rest,
      ...(topic !== undefined ? { topic } : {}),
      ...(supersededBy !== undefined ? { supersededBy } : {}),
      hash: memoryHash(m.text),
      embedding: embedding ? l2normalize(embedding) : null,
      embeddingModel: embedding ? m.embeddingModel : null,
      current: m.validUntil !== null && m.validUntil <= now ? 0 : 1,
    },
    vectorDropped,
  };
}

/**
 * `table.bulkAdd(rows)` (nothing when `rows` is empty) that throws the first failure itself
 * (e.g. a `QuotaExceededError` or a `ConstraintError`) instead of Dexie's `BulkError` wrapping it,
 * as a per-record `add` would; the caller's transaction then aborts whole.
 */
export async function bulkAddOrThrow<T>(table: Table<T>, rows: T[]): Promise<void> {
  if (rows.length === 0) return;
  try {
    await table.bulkAdd(rows);
  } catch (error) {
    const failure = (error as { name?: string; failures?: unknown[] }).name === 'BulkError' ? (error as { failures?: unknown[] }).failures?.[0] : undefined;
    throw failure ?? error;
  }
}

/**
 * The stored messages at the positions of `messages` (`conversationId` + `seq`), as a map from
 * `` `${conversationId}\u0000${seq}` `` to the stored message's id. Per conversation, one read of
 * the [conversationId+seq] range from the lowest to the highest wanted `seq` (one request; the
 * messages of a batch are mostly consecutive) when that range is at most 4 times the number of
 * wanted positions, else one `anyOf` of the exact positions (a cursor step per position).
 * Stored messages in the range at positions not wanted are left out.
 */
export async function storedPositions(db: RecallDB, messages: Pick<MessageRecord, 'conversationId' | 'seq'>[]): Promise<Map<string, string>> {
  const seqsByConversation = new Map<string, number[]>();
  for (const m of messages) {
    const seqs = seqsByConversation.get(m.conversationId);
    if (seqs) seqs.push(m.seq);
    else seqsByConversation.set(m.conversationId, [m.seq]);
  }
  const taken = new Map<string, string>();
  for (const [conversationId, seqs] of seqsByConversation) {
    const wanted = new Set(seqs);
    let low = Infinity;
    let high = -Infinity;
    for (const seq of seqs) {
      if (seq < low) low = seq;
      if (seq > high) high = seq;
    }
    const stored =
      high - low + 1 <= 4 * wanted.size
        ? await db.messages.where('[conversationId+seq]').between([conversationId, low], [conversationId, high], true, true).toArray()
        : await db.messages
            .where('[conversationId+seq]')
            .anyOf([...wanted].map((seq) => [conversationId, seq]))
            .toArray();
    for (const m of stored) if (wanted.has(m.seq)) taken.set(`${conversationId}\u0000${m.seq}`, m.id);
  }
  return taken;
}
