/**
 * The in-place pass that turns the lock on or off: every row of every table is rewritten sealed
 * (`encrypt`) or plain (`decrypt`), in batches, each batch in one IndexedDB transaction together
 * with the pass's position (`PassCursor`, in the vault record's row, which stays clear). It goes
 * below Dexie (the native database of `db.backendDB()`), so no table hook or reading hook runs: the
 * rows are rewritten byte for byte as the middleware would write them.
 *
 * Crash-safe: a row is sealed or plain at any time and both read (see `middleware.ts`); a pass
 * killed midway resumes from its last committed position (`resumeFrom`), and rewriting a row that
 * is already in the target form changes nothing. Writes made meanwhile by the app already go
 * through the middleware in the target form (`VaultKeyring.sealing`).
 */
import type Dexie from 'dexie';
import type { PassCursor, VaultKeys } from './keys';
export type { PassCursor } from './keys';
import { VAULT_RECORD_KEY } from './keys';
import { isSealedRow, openRow, sealRow, type VaultKeyring } from './middleware';

/** Options of `runPass`. */
export interface PassOptions {
  /** Rows per transaction (default 200). */
  batchSize?: number;
  /** Where to resume (from the vault record), else the start. */
  resumeFrom?: PassCursor | null;
  /** Called after each committed batch with rows visited and the total counted at the start. */
  onProgress?: (done: number, total: number) => void;
  /** Called after each batch to persist the position (inside the batch's transaction: `value` → the vault row's `pass` cursor). */
  savePosition: (record: unknown, cursor: PassCursor | null) => unknown;
}

const requestDone = <T>(request: IDBRequest<T>) =>
  new Promise<T>((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });

/**
 * Rewrites every row of `db` sealed (`direction: 'encrypt'`, with `keys`) or plain (`'decrypt'`).
 * The database must be open. Returns the rows visited.
 * @throws whatever IndexedDB throws (the pass can be run again: it resumes at the last batch committed).
 */
export async function runPass(db: Dexie, keyring: VaultKeyring, keys: VaultKeys, direction: 'encrypt' | 'decrypt', options: PassOptions): Promise<number> {
  const idb = db.backendDB();
  const batchSize = options.batchSize ?? 200;
  const tables = db.tables.map((t) => t.name).sort();
  const total = await countRows(idb, tables);
  let cursor: PassCursor | null = options.resumeFrom ?? null;
  let done = cursor?.done ?? 0;
  const startAt = cursor ? Math.max(0, tables.indexOf(cursor.table)) : 0;
  for (const table of tables.slice(startAt)) {
    const clear = keyring.clearFields.get(table) ?? clearFieldsFromIdb(idb, table);
    let after: IDBValidKey | null = cursor?.table === table ? cursor.after : null;
    for (;;) {
      const tx = idb.transaction(table === 'settings' ? [table] : [table, 'settings'], 'readwrite');
      const committed = new Promise<void>((resolve, reject) => {
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
        tx.onabort = () => reject(tx.error ?? new Error('pass transaction aborted'));
      });
      const store = tx.objectStore(table);
      const range = after === null ? null : IDBKeyRange.lowerBound(after, true);
      const request = store.openCursor(range);
      let count = 0;
      let last: IDBValidKey | null = after;
      await new Promise<void>((resolve, reject) => {
        request.onerror = () => reject(request.error);
        request.onsuccess = () => {
          const c = request.result;
          if (!c || count >= batchSize) return resolve();
          const value: unknown = c.value;
          const sealed = isSealedRow(value);
          if (direction === 'encrypt' && !sealed) {
            const next = sealRow(table, value, clear, keys);
            if (next !== value) c.update(next);
          } else if (direction === 'decrypt' && sealed) c.update(openRow(table, value, keys));
          count++;
          last = c.primaryKey;
          c.continue();
        };
      });
      done += count;
      const finished = count < batchSize;
      cursor = { table, after: last, done };
      const settings = tx.objectStore('settings');
      const row = await requestDone(settings.get(VAULT_RECORD_KEY));
      if (row) settings.put(options.savePosition(row, cursor));
      await committed;
      options.onProgress?.(done, total);
      after = last;
      if (finished) break;
    }
  }
  return done;
}

/** Rows in all `tables` (one read-only transaction of counts). */
async function countRows(idb: IDBDatabase, tables: string[]): Promise<number> {
  const tx = idb.transaction(tables, 'readonly');
  const counts = await Promise.all(tables.map((t) => requestDone(tx.objectStore(t).count())));
  return counts.reduce((a, b) => a + b, 0);
}

/** The clear fields of `table` read from the native store (when Dexie has not built that table's middleware yet). */
function clearFieldsFromIdb(idb: IDBDatabase, table: string): ReadonlySet<string> {
  const store = idb.transaction(table, 'readonly').objectStore(table);
  const fields = new Set<string>();
  const add = (keyPath: string | string[] | null) => {
    for (const path of keyPath === null ? [] : Array.isArray(keyPath) ? keyPath : [keyPath]) fields.add(path.split('.')[0]!);
  };
  add(store.keyPath);
  for (const name of Array.from(store.indexNames)) add(store.index(name).keyPath);
  return fields;
}
