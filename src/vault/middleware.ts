/**
 * Encryption at rest, at the root: one Dexie DBCore middleware every table's reads and writes go
 * through (installed by `RecallDB`, `src/db/schema.ts`), so no call site seals or opens anything.
 *
 * Per table, the fields IndexedDB must see stay clear: the primary key and every indexed key path
 * (their first segment), read from the schema Dexie built from `db.version(…).stores(…)` — declared
 * once, there. Every other field of a row is encoded (`codec.ts`) and sealed into one blob
 * (`cipher.ts`, ChaCha20-Poly1305 under the row key, bound to the table's name) stored as
 * `SEALED_FIELD`; reads open it and merge it back, so everything above (hooks, the store, the
 * backup) sees plain rows. Sealing and opening are synchronous, so Dexie transactions stay atomic.
 * The rows of `CLEAR_ROWS` (the vault record) are never sealed.
 *
 * A row without the blob (written while the lock was off, or before the in-place pass reached it)
 * reads as it is, so a half-done pass is readable and resumable. While locked (`keyring.keys`
 * null), reading a sealed row throws `VaultError('locked')`. Blobs opened or sealed under the keys
 * held now keep their plaintext in `OpenedBlobs` (exact, bounded, emptied with every key change).
 */
import type { DBCore, DBCoreTable, Middleware } from 'dexie';
import { VaultError } from '../model/errors';
import { decodeValue, encodeValue } from './codec';
import { open, seal, SEAL_NONCE_BYTES } from './cipher';
import type { VaultKeys } from './keys';
import { VAULT_RECORD_KEY } from './keys';

/** The field of a sealed row that holds its sealed fields. */
export const SEALED_FIELD = '$sealed';

/** Rows that stay clear whatever the lock (table → primary keys): the vault record, which the locked core must read (erased with all data). */
export const CLEAR_ROWS: Readonly<Record<string, readonly string[]>> = { settings: [VAULT_RECORD_KEY] };

/**
 * What the middleware seals with, swapped by the core's vault (`src/core/vault.ts`): `keys` while
 * unlocked (`null` while locked or with the lock off) and `sealing` (the lock is on and not being
 * turned off: writes are sealed, and refused with `VaultError('locked')` while no key is held).
 */
export class VaultKeyring {
  private held: VaultKeys | null = null;
  /**
   * Plaintexts of the blobs opened or sealed under `keys` (see `OpenedBlobs`): emptied whenever
   * `keys` is set, so no plaintext outlives the key it was opened with (lock, unlock, erase).
   */
  readonly opened = new OpenedBlobs();
  /** The keys rows are sealed and opened with: set while unlocked, `null` while locked or with the lock off. */
  get keys(): VaultKeys | null {
    return this.held;
  }
  set keys(keys: VaultKeys | null) {
    this.opened.clear();
    this.held = keys;
  }
  /** `true` while the lock is on (and not being turned off): writes are sealed, or refused without `keys`. */
  sealing = false;
  /** Told by `forget` (the vault controller sets it): the keys the keyring held, for wiping. */
  onForget: ((keys: VaultKeys | null) => void) | null = null;
  /**
   * `true` while an erase that ends in `forget` runs (`forgetAfter`): every write that would be
   * sealed is refused with `VaultError('busy')`, so no row sealed with the key about to be dropped
   * can be queued behind the erase's transaction and land, unreadable, once the lock is gone.
   */
  forgetting = false;
  /**
   * The lock is gone with the data ("Erase all data" = start over: `eraseUserData`, after its
   * transaction committed, the vault record included): no key is held and nothing is sealed from
   * now on; `onForget` gets the keys held until now.
   */
  forget(): void {
    const keys = this.keys;
    this.keys = null;
    this.sealing = false;
    this.forgetting = false;
    this.onForget?.(keys);
  }
  /**
   * Runs `erase` (a transaction that removes every sealed row and the vault record), then `forget`s
   * the lock. From the call until `forget`, sealed writes are refused (`forgetting`): IndexedDB
   * queues a transaction opened meanwhile behind the erase's, and its rows, sealed when issued,
   * would land after the erase with a key no one holds any more. When `erase` throws (nothing was
   * erased), the lock stays as it was and writes are taken again.
   * @returns what `erase` returned. @throws what `erase` threw.
   */
  async forgetAfter<T>(erase: () => Promise<T>): Promise<T> {
    this.forgetting = true;
    let result: T;
    try {
      result = await erase();
    } catch (error) {
      this.forgetting = false;
      throw error;
    }
    this.forget();
    return result;
  }
  /** The clear fields per table, filled in when Dexie builds the middleware stack (see `clearFieldsOf`). */
  readonly clearFields = new Map<string, ReadonlySet<string>>();
}

/** Bytes of plaintext (and of the sealed blobs they came from) `OpenedBlobs` keeps at most, by default. */
export const OPENED_BLOBS_MAX_BYTES = 8 * 1024 * 1024;
/** Largest blob `OpenedBlobs` keeps (bytes): a turn's rows are a few kB; the index blocks, read once per open, are not kept. */
export const OPENED_BLOB_MAX_BYTES = 64 * 1024;

/**
 * A bounded cache of the plaintexts of sealed blobs: a turn reads the same rows again and again
 * (the recent messages, the settings, the conversation, the memories it cites), and opening each
 * (ChaCha20-Poly1305 in JS) was most of what the lock added to a turn. An entry answers only for a
 * byte-identical blob — the same bytes under the same key open to the same plaintext — so nothing
 * is authenticated less: a blob changed in any byte (its nonce kept or not) is a miss, opened and
 * refused as before. Keyed by the nonce (random per seal), checked against the table and bytes; least recently used entries go
 * first once `maxBytes` (blob + plaintext bytes) would be exceeded; a blob over `maxBlobBytes` is not kept. The owner (`VaultKeyring`) empties it whenever its keys change.
 */
export class OpenedBlobs {
  private readonly entries = new Map<number, { table: string; blob: Uint8Array; plain: Uint8Array }>();
  private held = 0;
  /** Reads answered from the cache, and reads that opened their blob (diagnostics and tests). */
  hits = 0;
  misses = 0;
  /** @param maxBytes bound on the blob + plaintext bytes kept. @param maxBlobBytes largest blob kept. */
  constructor(
    readonly maxBytes = OPENED_BLOBS_MAX_BYTES,
    readonly maxBlobBytes = OPENED_BLOB_MAX_BYTES,
  ) {}
  /** Bytes (blobs + plaintexts) held now. */
  get bytes(): number {
    return this.held;
  }
  /** The plaintext of `blob` in `table` when that exact blob was opened or sealed since the last `clear`, else `null`. */
  get(table: string, blob: Uint8Array): Uint8Array | null {
    const key = blobKey(blob);
    const entry = this.entries.get(key);
    if (!entry || entry.table !== table || !sameBytes(entry.blob, blob)) {
      this.misses += 1;
      return null;
    }
    this.entries.delete(key); // most recently used last
    this.entries.set(key, entry);
    this.hits += 1;
    return entry.plain;
  }
  /** Keeps `plain` as the plaintext of `blob` in `table` (neither is copied: neither may be changed after). */
  put(table: string, blob: Uint8Array, plain: Uint8Array): void {
    const size = blob.byteLength + plain.byteLength;
    if (blob.byteLength > this.maxBlobBytes || size > this.maxBytes) return;
    const key = blobKey(blob);
    const old = this.entries.get(key);
    if (old) {
      this.held -= old.blob.byteLength + old.plain.byteLength;
      this.entries.delete(key);
    }
    this.entries.set(key, { table, blob, plain });
    this.held += size;
    for (const [k, e] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(k);
      this.held -= e.blob.byteLength + e.plain.byteLength;
    }
  }
  /** Drops every entry (their bytes are left to the collector). */
  clear(): void {
    this.entries.clear();
    this.held = 0;
  }
}

/**
 * The first 48 bits of the nonce of `blob` (bytes 1–6 of `cipher.ts`'s layout; the nonce is random
 * per seal) as a number: the cache's key. Two blobs with the same key (another table, a 2⁻⁴⁸
 * coincidence) are told apart by the entry's table and bytes.
 */
function blobKey(blob: Uint8Array): number {
  if (blob.byteLength < 1 + SEAL_NONCE_BYTES) return -1;
  return blob[1]! + blob[2]! * 2 ** 8 + blob[3]! * 2 ** 16 + blob[4]! * 2 ** 24 + blob[5]! * 2 ** 32 + blob[6]! * 2 ** 40;
}

/** Whether `a` and `b` hold the same bytes (4 at a time where both views are 4-byte aligned). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  const n = a.byteLength;
  if (n !== b.byteLength) return false;
  let i = 0;
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    const words = n >> 2;
    const wa = new Int32Array(a.buffer, a.byteOffset, words);
    const wb = new Int32Array(b.buffer, b.byteOffset, words);
    for (let w = 0; w < words; w += 1) if (wa[w] !== wb[w]) return false;
    i = words << 2;
  }
  for (; i < n; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

type Row = Record<string, unknown>;
const encoder = new TextEncoder();
const aadCache = new Map<string, Uint8Array>();
const aadOf = (table: string) => {
  let aad = aadCache.get(table);
  if (!aad) aadCache.set(table, (aad = encoder.encode(`recall/row/${table}`)));
  return aad;
};

const isPlainRow = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);

/** `true` when `value` is a row with a sealed blob. */
export function isSealedRow(value: unknown): boolean {
  return isPlainRow(value) && value[SEALED_FIELD] instanceof Uint8Array;
}

/** Whether the row `value` of `table` must stay clear (`CLEAR_ROWS`). */
function staysClear(table: string, value: Row): boolean {
  const keys = CLEAR_ROWS[table];
  return keys !== undefined && typeof value.key === 'string' && keys.includes(value.key);
}

/**
 * `value` with every field but `clear` sealed under `keys.rowKey` (see module doc). Rows of
 * `CLEAR_ROWS`, non-objects and already sealed rows are returned as they are. With `opened` (the
 * cache of the keys, see `OpenedBlobs`), the new blob's plaintext is kept there: the row's next read does not open it.
 */
export function sealRow(table: string, value: unknown, clear: ReadonlySet<string>, keys: VaultKeys, opened?: OpenedBlobs): unknown {
  if (!isPlainRow(value) || isSealedRow(value) || staysClear(table, value)) return value;
  const out: Row = {};
  const hidden: Row = {};
  for (const field of Object.keys(value)) (clear.has(field) ? out : hidden)[field] = value[field];
  const plain = encodeValue(hidden);
  const blob = seal(keys.rowKey, plain, aadOf(table));
  opened?.put(table, blob, plain);
  out[SEALED_FIELD] = blob;
  return out;
}

/**
 * The plain row of `value` (a row without a blob is returned as it is; a new object otherwise, its
 * nested values its own). With `opened` (the cache of `keys`, see `OpenedBlobs`), a blob opened or
 * sealed before is decoded from the kept plaintext instead of being opened again.
 * @throws VaultError('locked') for a sealed row while no key is held; VaultError('damaged') when the blob does not open.
 */
export function openRow(table: string, value: unknown, keys: VaultKeys | null, opened?: OpenedBlobs): unknown {
  if (!isSealedRow(value)) return value;
  if (!keys) throw new VaultError('locked', 'Recall is locked.');
  const { [SEALED_FIELD]: sealed, ...clear } = value as Row;
  const blob = sealed as Uint8Array;
  let plain = opened?.get(table, blob) ?? null;
  if (!plain) {
    plain = open(keys.rowKey, blob, aadOf(table));
    opened?.put(table, blob, plain);
  }
  const hidden = decodeValue(plain) as Row;
  return Object.assign(clear, hidden);
}

/** The top-level fields of `table` that IndexedDB indexes or keys on (see module doc). */
function clearFieldsOf(table: DBCoreTable): ReadonlySet<string> {
  const fields = new Set<string>();
  const add = (keyPath: string | string[] | null) => {
    for (const path of keyPath === null ? [] : Array.isArray(keyPath) ? keyPath : [keyPath]) fields.add(path.split('.')[0]!);
  };
  add(table.schema.primaryKey.keyPath);
  for (const index of table.schema.indexes) add(index.keyPath);
  return fields;
}

/** The middleware (install with `db.use(vaultMiddleware(keyring))`, before the database opens). */
export function vaultMiddleware(keyring: VaultKeyring): Middleware<DBCore> {
  return {
    stack: 'dbcore',
    name: 'VaultMiddleware',
    // Below Dexie's own middlewares (hooks, cache, observability: levels -1 … 2): they see plain rows.
    level: -10,
    create(down: DBCore): DBCore {
      return {
        ...down,
        table(name: string): DBCoreTable {
          const table = down.table(name);
          const clear = clearFieldsOf(table);
          keyring.clearFields.set(name, clear);
          const read = (value: unknown) => openRow(name, value, keyring.keys, keyring.opened);
          return {
            ...table,
            mutate(req) {
              if ((req.type === 'add' || req.type === 'put') && keyring.sealing) {
                // An erase that drops the key runs: a row sealed now would land after it, unreadable.
                if (keyring.forgetting) return Promise.reject(new VaultError('busy', 'Recall is erasing everything.'));
                const keys = keyring.keys;
                // Locked: nothing but the rows that stay clear may be written (never a plaintext row while the lock is on).
                if (!keys) {
                  if (req.values.every((v) => isPlainRow(v) && staysClear(name, v))) return table.mutate(req);
                  return Promise.reject(new VaultError('locked', 'Recall is locked.'));
                }
                return table.mutate({ ...req, values: req.values.map((v) => sealRow(name, v, clear, keys, keyring.opened)) } as typeof req);
              }
              return table.mutate(req);
            },
            get: (req) => table.get(req).then(read),
            getMany: (req) => table.getMany(req).then((values) => values.map(read)),
            query: (req) => table.query(req).then((res) => (req.values ? { ...res, result: res.result.map(read) } : res)),
            openCursor: (req) =>
              table.openCursor(req).then((cursor) => {
                if (!cursor || !req.values) return cursor;
                let raw: unknown = undefined;
                let plain: unknown = undefined;
                return Object.create(cursor, {
                  key: { get: () => cursor.key },
                  primaryKey: { get: () => cursor.primaryKey },
                  value: {
                    get: () => {
                      const value = cursor.value;
                      if (value !== raw) plain = read((raw = value));
                      return plain;
                    },
                  },
                });
              }),
          };
        },
      };
    },
  };
}
