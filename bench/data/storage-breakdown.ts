/**
 * Where the bytes of a Recall database go, per table, per index and per column of the long-term
 * index (`memoryIndex`), counted in Node on fake-indexeddb — a model of what Chromium stores, not
 * the browser's own estimate (that is `bench/coldstart.bench.ts`'s storage part).
 *
 * Method: every record is serialized with `v8.serialize` (V8's ValueSerializer, the format Chromium
 * writes an IndexedDB value in; Blink adds a few header bytes) and, per table, its key and every
 * index entry is counted with IndexedDB's key encoding (Chromium `IndexedDBKey` encoding: a type
 * byte, a number as 8 bytes, a string as a length varint + UTF-16, an array as a length + its items;
 * an index entry holds the index key and the primary key, its value the primary key again). LevelDB's
 * own prefixes, block compression (Snappy) and garbage from rewritten records are not modelled.
 */
import { serialize } from 'node:v8';
import type Dexie from 'dexie';

/** Bytes of one table: its records (values) and keys, and each index's entries. */
export interface TableBytes {
  table: string;
  rows: number;
  /** Sum of `v8.serialize(record).length` (bytes). */
  values: number;
  /** Primary keys, encoded (bytes). */
  keys: number;
  /** Index name → bytes of its entries (index key + primary key, twice the primary key counted once as value). */
  indexes: Record<string, number>;
}

/** Bytes of `value` as an encoded IndexedDB key (see module doc); `0` when it is not a valid key. */
export function encodedKeyBytes(value: unknown): number {
  if (typeof value === 'number') return 9;
  if (typeof value === 'string') return 1 + varintBytes(value.length) + 2 * value.length;
  if (value instanceof Date) return 9;
  if (Array.isArray(value)) return 1 + varintBytes(value.length) + value.reduce((a: number, v) => a + encodedKeyBytes(v), 0);
  return 0;
}

const varintBytes = (n: number) => (n < 128 ? 1 : n < 16384 ? 2 : n < 2097152 ? 3 : 4);

/** The value at a Dexie key path (`a`, `[a+b]` as an array, `:id` not supported). */
function keyAt(record: Record<string, unknown>, keyPath: string | string[] | null): unknown {
  if (keyPath === null) return undefined;
  if (Array.isArray(keyPath)) {
    const parts = keyPath.map((p) => record[p]);
    return parts.some((p) => p === undefined) ? undefined : parts;
  }
  return record[keyPath];
}

/**
 * Counts every table of `db` (raw reads: no reading hook).
 * @returns one `TableBytes` per table, in the schema's order.
 */
export async function tableBytes(db: Dexie): Promise<TableBytes[]> {
  const out: TableBytes[] = [];
  for (const table of db.tables) {
    const rows = (await table.toCollection().raw().toArray()) as Record<string, unknown>[];
    const pk = table.schema.primKey;
    const result: TableBytes = { table: table.name, rows: rows.length, values: 0, keys: 0, indexes: {} };
    for (const idx of table.schema.indexes) result.indexes[idx.name] = 0;
    for (const r of rows) {
      result.values += serialize(r).length;
      const key = encodedKeyBytes(keyAt(r, pk.keyPath ?? null));
      result.keys += key;
      for (const idx of table.schema.indexes) {
        const v = keyAt(r, idx.keyPath ?? null);
        if (v === undefined) continue;
        const entries = idx.multi && Array.isArray(v) ? v : [v];
        for (const e of entries) {
          const k = encodedKeyBytes(e);
          if (k > 0) result.indexes[idx.name]! += k + 2 * key;
        }
      }
    }
    out.push(result);
  }
  return out;
}

/**
 * Bytes of the long-term index (`memoryIndex`) by record type and, for meta and vector blocks, by
 * column (`v8.serialize` of each column on its own; the record's other fields under `other`).
 */
export async function memoryIndexBytes(db: Dexie): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const add = (k: string, n: number) => (out[k] = (out[k] ?? 0) + n);
  const records = (await db.table('memoryIndex').toArray()) as unknown as Record<string, unknown>[];
  for (const r of records) {
    const type = typeof r.type === 'string' ? r.type : String(r.key);
    const total = serialize(r).length;
    add(`${type}: total`, total);
    if (type !== 'meta' && type !== 'vector') continue;
    let columns = 0;
    for (const [name, value] of Object.entries(r)) {
      if (typeof value !== 'object' || value === null) continue;
      const n = serialize(value).length;
      columns += n;
      add(`${type}.${name}`, n);
    }
    add(`${type}.other`, total - columns);
  }
  return out;
}

/** Bytes per memory of one part of the database (see `seededBreakdown`). */
export interface BreakdownRow {
  part: string;
  bytesPerMemory: number;
}

/**
 * Seeds a fresh database (fake-indexeddb; `RecallDB` at the current schema) with `memories`
 * through the real import path (`importAll` with an open store, as `memory.import` does), waits
 * for the index and the lexical snapshot, and returns the bytes per memory of each part: each
 * table's values, keys and indexes (the long-term index by record type), and the total.
 * @param file the import file's JSON (e.g. `importFileJson`).
 */
export async function seededBreakdown(file: string, memories: number, embedder: { modelId: string; dimension: number }): Promise<BreakdownRow[]> {
  const { RecallDB } = await import('../../src/db/schema');
  const { createMemoryStore } = await import('../../src/memory/long-term/store');
  const { importAll } = await import('../../src/backup');
  const { nodeVoyWasm } = await import('./node-voy');
  const db = new RecallDB(`bench-breakdown-${crypto.randomUUID()}`);
  try {
    const store = await createMemoryStore({ db, embedder: () => null, loadVoyWasm: nodeVoyWasm });
    await importAll(db, store, new Blob([file]), { embedder });
    await store.whenIndexed();
    await store.flushSnapshot();
    const rows: BreakdownRow[] = [];
    let total = 0;
    for (const t of await tableBytes(db)) {
      if (t.rows === 0 || t.table === 'settings' || t.table === 'jobs') continue;
      const indexes = Object.entries(t.indexes).filter(([, b]) => b > 0);
      total += t.values + t.keys + indexes.reduce((a, [, b]) => a + b, 0);
      if (t.table === 'memoryIndex') {
        for (const [k, b] of Object.entries(await memoryIndexBytes(db)))
          if (k.endsWith(': total')) rows.push({ part: `memoryIndex ${k.replace(': total', '')} records`, bytesPerMemory: b / memories });
      } else rows.push({ part: `${t.table} values`, bytesPerMemory: t.values / memories });
      rows.push({ part: `${t.table} keys`, bytesPerMemory: t.keys / memories });
      for (const [name, b] of indexes) rows.push({ part: `${t.table} index ${name}`, bytesPerMemory: b / memories });
    }
    rows.push({ part: 'total', bytesPerMemory: total / memories });
    return rows;
  } finally {
    db.close();
    await db.delete();
  }
}
