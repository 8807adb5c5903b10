/**
 * The vault's keys: a passphrase → a key-encryption key through scrypt (memory-hard, from
 * `@noble/hashes`), which wraps a random 256-bit data key with AES-GCM (WebCrypto). The wrapped
 * key and the KDF parameters are stored together (`VaultRecord`, the `settings` row `vault`, left
 * clear), so the parameters can change later and a passphrase change re-wraps only the data key.
 * A wrong passphrase makes the unwrap fail (GCM tag): `VaultError('wrong_passphrase')`, nothing changes.
 *
 * The data key exists only in the core's memory (`VaultKeys`); sub-keys for rows and files are
 * derived from it with HKDF-SHA-256, so one data key serves every use without key reuse across them.
 */
import { hkdf } from '@noble/hashes/hkdf.js';
import { scryptAsync } from '@noble/hashes/scrypt.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { VaultError } from '../model/errors';
import { MAX_VAULT_PASSPHRASE_CHARS, MIN_VAULT_PASSPHRASE_CHARS } from '../model/vault';

/**
 * scrypt parameters (RFC 7914): `N` (CPU/memory cost, a power of 2), `r` (block size), `p`
 * (parallelism), `salt` (16 random bytes, base64). Memory used: 128 · N · r bytes (32 MiB for the default).
 */
export interface VaultKdfParams {
  name: 'scrypt';
  N: number;
  r: number;
  p: number;
  salt: string;
}

/**
 * scrypt N = 2^15, r = 8, p = 1 (32 MiB): ~0.2–0.4 s per derivation on this 2-core machine in Node
 * (measured 368 ms loaded; 2^14: 210 ms, 2^16: 717 ms), so unlock + first retrieval at 10k fits in 1 s.
 */
export const DEFAULT_VAULT_KDF = { name: 'scrypt', N: 2 ** 15, r: 8, p: 1 } as const;

/** The persisted lock: KDF parameters, the wrapped data key, the auto-lock time and the in-place pass left to run. */
export interface VaultRecord {
  version: 1;
  kdf: VaultKdfParams;
  /** The data key sealed with AES-GCM by the derived key: `iv` (12 bytes) and `data` (32 + 16 bytes), base64. */
  wrapped: { iv: string; data: string };
  /** Idle minutes before auto-lock; `null` = only when the browser closes. */
  autoLockMinutes: number | null;
  /** The in-place pass not finished yet (`encrypt` after turning on, `decrypt` while turning off), else `null`. */
  pass: 'encrypt' | 'decrypt' | null;
  /** When the lock was turned on (ms epoch). */
  createdAt: number;
  /** Where the unfinished pass stands (written with each of its batches), else `null`/absent. */
  cursor?: PassCursor | null;
}

/** Where an in-place pass stands (`pass.ts`): the table it is in (by name) and the last primary key done there. */
export interface PassCursor {
  table: string;
  /** Last primary key rewritten in `table` (an IndexedDB key), or `null` at its start. */
  after: IDBValidKey | null;
  /** Rows visited so far (for progress). */
  done: number;
}

/** The `settings` key of the vault record (one of the rows that stay clear: `CLEAR_ROWS`). */
export const VAULT_RECORD_KEY = 'vault';

/** The keys the core holds while unlocked (never stored, never sent): the data key and its sub-keys. */
export interface VaultKeys {
  /** The 32-byte data key. */
  dataKey: Uint8Array;
  /** Seals rows (`middleware.ts`). */
  rowKey: Uint8Array;
  /** Seals staging files (`files.ts`). */
  fileKey: Uint8Array;
}

const encoder = new TextEncoder();
const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/**
 * Throws unless `passphrase` passes the rule: at least `MIN_VAULT_PASSPHRASE_CHARS` characters (code points).
 * @throws VaultError('weak_passphrase', params `{ min }`)
 */
export function checkPassphrase(passphrase: string): void {
  const chars = [...passphrase].length;
  if (chars < MIN_VAULT_PASSPHRASE_CHARS || chars > MAX_VAULT_PASSPHRASE_CHARS || passphrase.trim() === '') {
    throw new VaultError('weak_passphrase', `A passphrase needs at least ${MIN_VAULT_PASSPHRASE_CHARS} characters.`, {
      params: { min: MIN_VAULT_PASSPHRASE_CHARS },
    });
  }
}

/** New scrypt parameters with a fresh random salt (`DEFAULT_VAULT_KDF` unless `cost` overrides N, r, p; tests pass less). */
export function newKdfParams(cost: Partial<Pick<VaultKdfParams, 'N' | 'r' | 'p'>> = {}): VaultKdfParams {
  return { ...DEFAULT_VAULT_KDF, ...cost, salt: toBase64(crypto.getRandomValues(new Uint8Array(16))) };
}

/** The AES-GCM key-encryption key of `passphrase` under `kdf` (scrypt; ~0.3 s at the default cost, yields while it runs). */
async function deriveWrappingKey(passphrase: string, kdf: VaultKdfParams): Promise<CryptoKey> {
  const bytes = await scryptAsync(encoder.encode(passphrase.normalize('NFC')), fromBase64(kdf.salt), { N: kdf.N, r: kdf.r, p: kdf.p, dkLen: 32 });
  try {
    return await crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, 'AES-GCM', false, ['encrypt', 'decrypt']);
  } finally {
    bytes.fill(0);
  }
}

/** The wrap's additional data: the KDF parameters, so a record whose parameters were changed does not unwrap. */
const wrapAad = (kdf: VaultKdfParams) => encoder.encode(JSON.stringify([kdf.name, kdf.N, kdf.r, kdf.p, kdf.salt]));

/** `dataKey` wrapped under `passphrase` with `kdf` (see `VaultRecord.wrapped`). */
export async function wrapDataKey(dataKey: Uint8Array, passphrase: string, kdf: VaultKdfParams): Promise<VaultRecord['wrapped']> {
  const kek = await deriveWrappingKey(passphrase, kdf);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: wrapAad(kdf) }, kek, dataKey as Uint8Array<ArrayBuffer>));
  return { iv: toBase64(iv), data: toBase64(data) };
}

/**
 * The data key of `record`, unwrapped with `passphrase`.
 * @throws VaultError('wrong_passphrase') when the GCM tag does not verify (wrong passphrase or a changed record).
 */
export async function unwrapDataKey(record: Pick<VaultRecord, 'kdf' | 'wrapped'>, passphrase: string): Promise<Uint8Array> {
  const kek = await deriveWrappingKey(passphrase, record.kdf);
  try {
    const iv = fromBase64(record.wrapped.iv);
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: wrapAad(record.kdf) }, kek, fromBase64(record.wrapped.data));
    return new Uint8Array(plain);
  } catch (cause) {
    throw new VaultError('wrong_passphrase', 'The passphrase does not open the vault.', { cause });
  }
}

/** A new random 256-bit data key. */
export function newDataKey(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(32));
}

/** The data key and its HKDF-SHA-256 sub-keys (`VaultKeys`). */
export function vaultKeys(dataKey: Uint8Array): VaultKeys {
  const sub = (info: string) => hkdf(sha256, dataKey, undefined, encoder.encode(info), 32);
  return { dataKey, rowKey: sub('recall/vault/rows/v1'), fileKey: sub('recall/vault/files/v1') };
}

/** Overwrites the key bytes with zeros (the lock's wipe; the objects are dropped afterwards). */
export function wipeKeys(keys: VaultKeys): void {
  keys.dataKey.fill(0);
  keys.rowKey.fill(0);
  keys.fileKey.fill(0);
}
