/**
 * The vault lock (issue 16): an opt-in passphrase lock that keeps the user's data encrypted at
 * rest in IndexedDB and OPFS staging files. Shared vocabulary of the core (`src/vault/`,
 * `src/core/vault.ts`) and the panel. Leaf module: imports nothing from `src/`.
 *
 * Key material never appears in these types: the data key lives only in the core's memory.
 */

/** Where the vault lock stands (never carries key material). */
export interface VaultStatus {
  /** The lock is on (data at rest encrypted). */
  enabled: boolean;
  /** `enabled` and no key in the core now (always `false` when `!enabled`). */
  locked: boolean;
  /** Idle minutes before auto-lock (idle = no panel request); `null` = only when the browser closes. */
  autoLockMinutes: number | null;
  /** The in-place pass running now (turning the lock on or off), else `null`; `done`/`total` count rows. */
  migrating: VaultMigration | null;
}

/** Progress of the in-place pass: rows rewritten so far of all rows to rewrite. */
export interface VaultMigration {
  direction: 'encrypt' | 'decrypt';
  /** Rows rewritten so far. */
  done: number;
  /** Rows to rewrite in all (counted when the pass starts or resumes). */
  total: number;
}

/** The passphrase rule: at least this many characters (code points, after trimming nothing). */
export const MIN_VAULT_PASSPHRASE_CHARS = 8;

/** Longest accepted passphrase, in characters (a bound on the KDF's input, not a security rule). */
export const MAX_VAULT_PASSPHRASE_CHARS = 1024;

/** Auto-lock choices the panel offers, in minutes (`null`, only on browser close, is offered too). */
export const VAULT_AUTO_LOCK_CHOICES = [5, 15, 30, 60, 240] as const;

/** Longest accepted auto-lock idle time, in minutes (one day). */
export const MAX_VAULT_AUTO_LOCK_MINUTES = 1440;

/** The default auto-lock idle time, in minutes, when the lock is turned on. */
export const DEFAULT_VAULT_AUTO_LOCK_MINUTES = 15;
