/**
 * What pass 2 of an import does with the records of a batch: the merge decisions for memories,
 * the record a file memory becomes, and the batched look-ups and writes of conversations and messages.
 */
import type { Table } from 'dexie';
import type { RecallDB } from '../db/schema';
import type { MemoryRecord, MessageRecord } from '../model/records';
import { memoryHash } from '../memory/long-term/text';
import { l2normalize } from '../memory/long-term/retrieval/vector';
import { type ImportPlan, decodeVector } from './check';
import type { ExportFile } from './format';

/** What happens to one memory of the file (see `decideMemory`). */
export type MemoryDecision =
  { action: 'add' } | { action: 'update'; existing: MemoryRecord } | { action: 'skip'; reason: 'up_to_date' | 'duplicate' | 'forgotten' };

/**
 * The one place that decides what an import does with the memories of a batch (run inside the
 * import's write transaction, which must include `db.memories` and `db.tombstones`), in file
 * order, each as if the ones before it were already written: `update` when a stored memory with
 * its id is older (`updatedAt`), `skip` ('up_to_date') when the stored one is as new or newer,
 * `skip` ('forgotten') when the user deleted or forgot that text in that namespace (a tombstone,
 * see `isTombstoned`: a re-import of an old export must not bring it back), `skip` ('duplicate')
 * when a current memory of the same namespace has the same text (hash recomputed from the text,
 * never the file's) — stored, or added or updated earlier in the batch —, else `add`.
 * Reads in bulk: one `bulkGet` of the ids, one of the tombstones, and one keyed read of the
 * `hash` index per distinct hash of the candidates, all issued together (no cursor).
 * @param incoming the memories as they will be stored (hash, `current` and vector already recomputed).
 * @returns one decision per memory, in the order of `incoming`.
 */
export async function decideMemories(db: RecallDB, incoming: readonly MemoryRecord[]): Promise<MemoryDecision[]> {
  if (incoming.length === 0) return [];
  const [existing, tombstones] = await Promise.all([
    db.memories.bulkGet(incoming.map((m) => m.id)),
    db.tombstones.bulkGet(incoming.map((m) => [m.namespace, m.hash] as [string, string])),
  ]);
  const hashes = [...new Set(incoming.filter((m, i) => !existing[i] && !tombstones[i] && m.current === 1).map((m) => m.hash))];
  const sameHash = (await Promise.all(hashes.map((h) => db.memories.where('hash').equals(h).toArray()))).flat();
  // The batch's view of the rows that matter for the duplicate check: stored ones, as changed by
  // the decisions made so far; `currentIds` indexes the current ones by namespace and hash.
  const live = new Map<string, Pick<MemoryRecord, 'namespace' | 'hash' | 'current'>>();
  const currentIds = new Map<string, Set<string>>();
  const keyOf = (m: Pick<MemoryRecord, 'namespace' | 'hash'>) => `${m.namespace}\u0000${m.hash}`;
  const setLive = (id: string, m: Pick<MemoryRecord, 'namespace' | 'hash' | 'current'>) => {
    const before = live.get(id);
    if (before) currentIds.get(keyOf(before))?.delete(id);
    live.set(id, m);
    if (m.current !== 1) return;
    const ids = currentIds.get(keyOf(m)) ?? new Set<string>();
    ids.add(id);
    currentIds.set(keyOf(m), ids);
  };
  for (const r of sameHash) setLive(r.id, r);
  return incoming.map((m, i): MemoryDecision => {
    const stored = existing[i];
    if (stored) {
      if (!(m.updatedAt > stored.updatedAt)) return { action: 'skip', reason: 'up_to_date' };
      setLive(m.id, m);
      return { action: 'update', existing: stored };
    }
    if (tombstones[i]) return { action: 'skip', reason: 'forgotten' };
    if (m.current === 1 && (currentIds.get(keyOf(m))?.size ?? 0) > 0) return { action: 'skip', reason: 'duplicate' };
    setLive(m.id, m);
    return { action: 'add' };
  });
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
