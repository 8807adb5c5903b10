/**
 * The text of a memory's creation entry in `memoryHistory`, derived instead of stored (schema v4:
 * fewer bytes per memory). An `ADD` entry, or an `IMPORT` entry that created the memory (`oldText`
 * null), is written with `newText: null`: the memory row holds that text, and every later change
 * records the text it replaced (`oldText`). So the text after the creation is the `oldText` of the
 * first later entry that has one, or else the memory's current text (`null` when the memory is
 * gone and nothing later recorded it). Entries written before v4 (or read from a backup file) keep
 * their stored text; only textless creation entries are derived.
 */
import type Dexie from 'dexie';
import type { MemoryHistoryRecord, MemoryRecord } from '../model/records';

/** Whether `h` is a creation entry whose text is derived (see module doc). */
export const isTextlessCreation = (h: MemoryHistoryRecord): boolean => (h.event === 'ADD' || h.event === 'IMPORT') && h.oldText === null && h.newText === null;

/** Order of one memory's entries: by time, then by id (insertion order). */
const byTime = (a: MemoryHistoryRecord, b: MemoryHistoryRecord) => a.at - b.at || (a.id ?? 0) - (b.id ?? 0);

/**
 * The text each creation entry of ONE memory stands for (pure; see module doc).
 * @param entries every history entry of one memory (any order).
 * @param currentText the memory's text now, `null` when its row is gone.
 * @returns creation entry → its text after the creation (`null` when unknown), for every
 *   `ADD`/`IMPORT` entry with `oldText` null (also those that store their text: the caller can compare).
 */
export function creationTexts(entries: readonly MemoryHistoryRecord[], currentText: string | null): Map<MemoryHistoryRecord, string | null> {
  const sorted = [...entries].sort(byTime);
  const out = new Map<MemoryHistoryRecord, string | null>();
  let after = currentText;
  for (let i = sorted.length - 1; i >= 0; i -= 1) {
    const h = sorted[i]!;
    if ((h.event === 'ADD' || h.event === 'IMPORT') && h.oldText === null) out.set(h, after);
    if (h.oldText !== null) after = h.oldText;
  }
  return out;
}

/**
 * `rows` with the text of each textless creation entry filled in (`newText`), read from the
 * memories' other entries and rows (one read-only transaction; nothing is read when no entry is
 * textless). Order and every other field are kept.
 * @param db the Recall database (a `RecallDB`).
 */
export async function withCreationTexts(db: Dexie, rows: MemoryHistoryRecord[]): Promise<MemoryHistoryRecord[]> {
  const ids = [...new Set(rows.filter(isTextlessCreation).map((h) => h.memoryId))];
  if (ids.length === 0) return rows;
  // `Dexie`, not `RecallDB`: `./schema.ts` imports this module for its v4 upgrade.
  const history = db.table<MemoryHistoryRecord, number>('memoryHistory');
  const rowsTable = db.table<MemoryRecord, string>('memories');
  const [entries, memories] = await db.transaction('r', history, rowsTable, () =>
    Promise.all([history.where('memoryId').anyOf(ids).toArray(), rowsTable.where(':id').anyOf(ids).raw().toArray()]),
  );
  const text = new Map(memories.map((m) => [m.id, m.text]));
  const byMemory = new Map<string, MemoryHistoryRecord[]>();
  for (const h of entries) byMemory.set(h.memoryId, [...(byMemory.get(h.memoryId) ?? []), h]);
  const derived = new Map<number, string | null>();
  for (const [memoryId, list] of byMemory) {
    for (const [h, t] of creationTexts(list, text.get(memoryId) ?? null)) if (h.id !== undefined) derived.set(h.id, t);
  }
  return rows.map((h) => (isTextlessCreation(h) && h.id !== undefined && derived.has(h.id) ? { ...h, newText: derived.get(h.id)! } : h));
}

/**
 * The v4 upgrade's part (inside its transaction): removes the stored text of every creation entry
 * whose text the rule of this module derives exactly (`newText` set to `null`); an entry whose
 * stored text differs from the derived one (a history imported from a file that disagrees with the
 * rows) keeps it. Reads the whole history and the memories' texts once.
 * @returns how many entries lost their stored text.
 */
export async function dropDerivableCreationTexts(tx: { table(name: string): Dexie.Table }): Promise<number> {
  const history = tx.table('memoryHistory') as Dexie.Table<MemoryHistoryRecord, number>;
  const entries = await history.toArray();
  if (!entries.some((h) => (h.event === 'ADD' || h.event === 'IMPORT') && h.oldText === null && h.newText !== null)) return 0;
  const text = new Map<string, string>();
  await (tx.table('memories') as Dexie.Table<MemoryRecord, string>).toCollection().each((m) => void text.set(m.id, m.text));
  const byMemory = new Map<string, MemoryHistoryRecord[]>();
  for (const h of entries) byMemory.set(h.memoryId, [...(byMemory.get(h.memoryId) ?? []), h]);
  const changed: MemoryHistoryRecord[] = [];
  for (const [memoryId, list] of byMemory) {
    for (const [h, t] of creationTexts(list, text.get(memoryId) ?? null)) if (h.newText !== null && h.newText === t) changed.push({ ...h, newText: null });
  }
  if (changed.length > 0) await history.bulkPut(changed);
  return changed.length;
}
