/**
 * "Recently learned" (issue 14 item 2, review off): the last memories that extraction saved, read
 * from the history (an `ADD` whose source is `conversation:<id>`, the source `ltm.extract` and an
 * accepted suggestion write), newest first; and undo, which deletes one with its history kept and
 * no tombstone (the user did not say "forget": the same fact may be learned again later; a user who
 * wants it gone for good uses forget or delete in the memory manager).
 */
import type { RecallDB } from '../../../db/schema';
import type { LearnedMemory } from '../../../model/records';
import { MemoryError } from '../../../model/errors';
import { toView } from '../store';
import type { LongTermStore } from '../types';

/** History `source` of an undo from the Recently learned list (not `user`: no tombstone is written). */
export const UNDO_SOURCE = 'review:undo';
/** History entries read at most per call: the list looks this far back. */
const HISTORY_WINDOW = 1_000;

/**
 * The last `limit` (default 10) memories of `namespace` that extraction saved and that are still
 * stored and current: extracted kinds only (no episodic rounds), newest `ADD` first.
 */
export async function recentlyLearned(db: RecallDB, namespace: string, limit = 10): Promise<LearnedMemory[]> {
  const entries = await db.memoryHistory.orderBy('at').reverse().limit(HISTORY_WINDOW).toArray();
  const added = new Map<string, number>();
  for (const e of entries) if (e.event === 'ADD' && e.source.startsWith('conversation:') && !added.has(e.memoryId)) added.set(e.memoryId, e.at);
  const rows = await db.memories.bulkGet([...added.keys()]);
  const out: LearnedMemory[] = [];
  for (const row of rows) {
    if (!row || row.namespace !== namespace || row.kind === 'episodic' || row.kind === 'summary' || row.current !== 1) continue;
    out.push({ memory: toView(row), learnedAt: added.get(row.id)! });
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Undoes a learned memory: deletes it from the store and its indexes (history event `DELETE`,
 * source `UNDO_SOURCE`, no tombstone).
 * @throws MemoryError `not_found` when the memory does not exist.
 */
export async function undoLearned(store: LongTermStore, id: string): Promise<void> {
  if (!(await store.get(id))) throw new MemoryError('not_found', `No memory ${id}`, { params: { id } });
  await store.remove([id], 'DELETE', UNDO_SOURCE);
}
