/**
 * The repository side of the long-term store: memory rows (`db.memories`) and their shape,
 * access bookkeeping, tombstones, and the reading hook that gives rows their `embedding` back
 * from the vector blocks. No index logic lives here (see `./index-sync.ts`).
 */
import type { RecallDB } from '../../../db/schema';
import { MAX_MEMORY_TEXT_CHARS, MEMORY_KINDS, type MemoryKind } from '../../../model/memory';
import type { MemoryRecord, MemoryView } from '../../../model/records';
import { MemoryTextTooLongError } from '../text';
import { MemoryError } from '../../../model/errors';

/**
 * Records that memories were retrieved: `lastAccessedAt = at` (ms epoch), `accessCount + 1`, in
 * one Dexie transaction. Unknown ids are ignored; content and `updatedAt` do not change.
 * Duplicate ids in one call count once.
 */
export async function recordAccess(db: RecallDB, ids: string[], at: number): Promise<void> {
  await recordAccesses(db, new Map([...new Set(ids)].map((id) => [id, { count: 1, at }])));
}

/**
 * Writes a batch of accesses in one read-write transaction on `memories`: for each memory id,
 * `accessCount += count` and `lastAccessedAt = max(stored, at)` (ms epoch). Reads the rows by
 * primary key (`bulkGet`) and writes them back (`bulkPut`): no cursor, so the cost is O(ids), not
 * O(table) (a `where('id').anyOf(…).modify` walks a key cursor). Unknown ids are ignored; content
 * and `updatedAt` do not change.
 */
export async function recordAccesses(db: RecallDB, accesses: ReadonlyMap<string, { count: number; at: number }>): Promise<void> {
  if (accesses.size === 0) return;
  const ids = [...accesses.keys()];
  await db.transaction('rw', db.memories, async () => {
    const rows = (await db.memories.bulkGet(ids)).filter((r): r is MemoryRecord => r !== undefined);
    for (const r of rows) {
      const a = accesses.get(r.id)!;
      r.lastAccessedAt = Math.max(r.lastAccessedAt ?? a.at, a.at);
      r.accessCount += a.count;
    }
    // Rows read through Dexie carry their vector (reading hook); written back with it they would be
    // marked `pending` and the next start would rebuild the whole index: write the row shape.
    if (rows.length > 0) await db.memories.bulkPut(rows.map(toRow));
  });
}

/**
 * Whether the user deleted or forgot a memory with this normalized-text hash (`memoryHash`) in
 * `namespace` (a `tombstones` row; see `TombstoneRecord`). Work that re-creates memories on its
 * own — extraction/consolidation re-runs, episodic rounds, import — must skip such a text.
 */
export async function isTombstoned(db: RecallDB, namespace: string, hash: string): Promise<boolean> {
  return (await db.tombstones.get([namespace, hash])) !== undefined;
}

/** Batch form of `isTombstoned`: the subset of `hashes` tombstoned in `namespace` (one indexed read). */
export async function tombstonedHashes(db: RecallDB, namespace: string, hashes: string[]): Promise<Set<string>> {
  const unique = [...new Set(hashes)];
  if (unique.length === 0) return new Set();
  const rows = await db.tombstones.bulkGet(unique.map((hash) => [namespace, hash] as [string, string]));
  return new Set(rows.flatMap((r) => (r ? [r.hash] : [])));
}

/** The memory without its embedding (vectors never leave the core). */
export function toView(record: MemoryRecord): MemoryView {
  const { embedding: _embedding, ...view } = record;
  return view;
}

/** A row as stored since v3: the record without its embedding (and without the `pending` mark). */
export function toRow(record: MemoryRecord): MemoryRecord {
  const { pending: _pending, ...row } = toView(record);
  return row as MemoryRecord;
}

/** The memory kinds a row may have. */
export const KINDS: ReadonlySet<MemoryKind> = new Set(MEMORY_KINDS);

/** Whether a memory is valid at `t` (ms epoch): its validity has not ended (a future `validFrom` is fine: plans). */
export const validAt = (m: { validUntil: number | null }, t: number): boolean => m.validUntil === null || m.validUntil > t;

/** Whether a row read raw from IndexedDB still holds its own `embedding` field (v1 rows, imports). */
export const holdsEmbedding = (row: object): boolean => Object.prototype.hasOwnProperty.call(row, 'embedding');

/**
 * Checks a memory text before it is stored.
 * @returns the text.
 * @throws Error when it is empty or blank; `MemoryTextTooLongError` over `MAX_MEMORY_TEXT_CHARS` characters.
 */
export function checkText(text: string): string {
  if (typeof text !== 'string' || !text.trim()) throw new MemoryError('text_empty', 'Memory text is empty');
  if (text.length > MAX_MEMORY_TEXT_CHARS) throw new MemoryTextTooLongError(text.length);
  return text;
}

/** Which live store's vectors the reading hook of a database attaches (the latest store opened over it). */
const hookTargets = new WeakMap<RecallDB, { vectorOf(id: string, model: string | null): Float32Array | null }>();
const hooked = new WeakSet<RecallDB>();

/**
 * Installs (once per database) the reading hook that gives rows their `embedding` back, and
 * points it at `vectorOf` (the latest store opened over `db`: its vector of the row's model, or
 * `null`). A row that still holds an `embedding` field is left as it is.
 */
export function installReadingHook(db: RecallDB, vectorOf: (id: string, model: string | null) => Float32Array | null): void {
  hookTargets.set(db, { vectorOf });
  if (hooked.has(db)) return;
  hooked.add(db);
  db.memories.hook('reading', (row: MemoryRecord | undefined) => {
    if (row && !holdsEmbedding(row)) (row as MemoryRecord).embedding = hookTargets.get(db)?.vectorOf(row.id, row.embeddingModel) ?? null;
    return row as MemoryRecord;
  });
}
