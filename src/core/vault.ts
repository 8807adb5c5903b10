/**
 * The vault lock's life cycle in the core (issue 16): where the lock stands, the one check every
 * data request passes (`VaultGate.core`: refused with `VaultError('locked')` while locked), and the
 * `vault.*` requests. Key handling and encryption at rest live in `src/vault/`.
 */
import type { ProtocolMap } from '../messaging/protocol';
import { Mutex } from 'async-mutex';
import type { RecallDB } from '../db/schema';
import { MessagingError, VaultError } from '../model/errors';
import { DEFAULT_VAULT_AUTO_LOCK_MINUTES, MAX_VAULT_AUTO_LOCK_MINUTES, type VaultMigration, type VaultStatus } from '../model/vault';
import {
  checkPassphrase,
  newDataKey,
  newKdfParams,
  unwrapDataKey,
  vaultKeys,
  VAULT_RECORD_KEY,
  wipeKeys,
  wrapDataKey,
  type VaultKdfParams,
  type VaultKeys,
  type VaultRecord,
} from '../vault/keys';
import { runPass } from '../vault/pass';
import type { Core } from './index';

/** The `vault.*` requests of `ProtocolMap`. */
export type VaultRequestType = Extract<keyof ProtocolMap, `vault.${string}`>;

/**
 * Access to the running core through the lock: `core()` resolves the started core, or rejects with
 * `VaultError('locked')` while the lock is on and no key is in the core. Each call counts as panel
 * activity for auto-lock.
 */
export interface VaultGate {
  /** The started core. @throws VaultError('locked') while locked. */
  core(): Promise<Core>;
  /** Whether a data request would be refused now. */
  isLocked(): boolean;
}

/** The `vault.*` requests, answered while locked too (see `VaultRequestType`). */
export interface VaultController extends VaultGate {
  status(): Promise<VaultStatus>;
  enable(passphrase: string): Promise<VaultStatus>;
  unlock(passphrase: string): Promise<VaultStatus>;
  lock(): Promise<VaultStatus>;
  changePassphrase(current: string, next: string): Promise<VaultStatus>;
  disable(passphrase: string): Promise<VaultStatus>;
  setAutoLock(minutes: number | null): Promise<VaultStatus>;
}

/** A gate that is always open: a core without a vault (tests, or a caller that handles the lock itself). */
export function openGate(core: Promise<Core>): VaultGate {
  return { core: () => core, isLocked: () => false };
}

/** What the vault controller needs. */
export interface VaultDeps {
  db: RecallDB;
  /** Builds and starts a core (`createCore`): at start with the lock off, and after each unlock. */
  startCore: () => Promise<Core>;
  /** Broadcasts each new status (`event.vault`). */
  onStatus?: (status: VaultStatus) => void;
  /** scrypt cost of new wraps (default `DEFAULT_VAULT_KDF`; tests pass less). */
  kdfCost?: Partial<Pick<VaultKdfParams, 'N' | 'r' | 'p'>>;
  /** Rows per transaction of the in-place pass (default 200). */
  passBatchSize?: number;
  /** The auto-lock timer (default the global `setTimeout` / `clearTimeout`; tests pass a manual clock). */
  timers?: { set: (fn: () => void, ms: number) => unknown; clear: (handle: unknown) => void };
  now?: () => number;
}

/**
 * The core behind the vault lock. With the lock off the core starts at once. With it on the core
 * starts locked: no store is opened, no job runs, no index is built, and every data request is
 * refused (`VaultError('locked')`, the one check of `registerCoreHandlers`) until `unlock`, which
 * unwraps the data key, hands it to the database's middleware and starts a core (indexes built in
 * memory then). `lock` (or auto-lock after `autoLockMinutes` without a request) stops every
 * running turn — its partial reply is written, sealed — stops the core (jobs wait in their table),
 * drops it with its in-memory indexes and wipes the key. Closing the browser ends the offscreen
 * document, so the next start is locked. One vault change runs at a time (`busy` otherwise).
 */
export function createVaultController(deps: VaultDeps): VaultController {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const keyring = db.keyring;
  let record: VaultRecord | null = null;
  let core: Promise<Core> | null = null;
  let closing = false;
  let migrating: VaultMigration | null = null;
  let pass: Promise<void> | null = null;
  let idleTimer: unknown = null;
  const timers = deps.timers ?? {
    set: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clear: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>),
  };
  const changes = new Mutex();

  const status = (): VaultStatus => ({
    enabled: record !== null,
    locked: record !== null && (keyring.keys === null || closing),
    autoLockMinutes: record?.autoLockMinutes ?? null,
    migrating: migrating ? { ...migrating } : null,
  });
  const changed = () => {
    const s = status();
    deps.onStatus?.(s);
    return s;
  };
  const writeRecord = async (next: VaultRecord | null) => {
    if (next) await db.settings.put({ key: VAULT_RECORD_KEY, value: next });
    else await db.settings.delete(VAULT_RECORD_KEY);
    record = next;
  };
  /** One vault change at a time; a second one while a change or a pass runs is refused. */
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    if (changes.isLocked() || pass) return Promise.reject(new VaultError('busy', 'A vault change is running.'));
    return changes.runExclusive(fn);
  };
  const needRecord = (): VaultRecord => {
    if (!record) throw new VaultError('not_enabled', 'The vault lock is not on.');
    return record;
  };

  const armIdle = () => {
    if (idleTimer !== null) timers.clear(idleTimer);
    idleTimer = null;
    const minutes = record?.autoLockMinutes;
    if (!record || minutes == null || keyring.keys === null) return;
    idleTimer = timers.set(() => {
      idleTimer = null;
      // A change running now (a pass) re-arms the timer when it ends; the lock waits for it otherwise.
      void changes.runExclusive(lockNow).catch((error: unknown) => console.warn('[vault] auto-lock failed:', error));
    }, minutes * 60_000);
  };

  /** Hands `keys` to the middleware and starts a core; with `resume`, an unfinished pass resumes in the background. */
  const openWith = (keys: VaultKeys, resume = true) => {
    keyring.keys = keys;
    keyring.sealing = record !== null && record.pass !== 'decrypt';
    core = deps.startCore();
    armIdle();
    if (resume && record?.pass) void runPassInBackground(record.pass, keys);
  };

  /** Runs the in-place pass (`runPass`), persisting its position with each batch; progress as `event.vault`. */
  const runPassNow = async (direction: 'encrypt' | 'decrypt', keys: VaultKeys) => {
    // The position the last committed batch wrote (the in-memory record does not follow each batch).
    const from = ((await db.settings.get(VAULT_RECORD_KEY))?.value as VaultRecord | undefined)?.cursor ?? null;
    migrating = { direction, done: from?.done ?? 0, total: 0 };
    changed();
    await runPass(db, keyring, keys, direction, {
      resumeFrom: from,
      ...(deps.passBatchSize ? { batchSize: deps.passBatchSize } : {}),
      savePosition: (row, cursor) => {
        const value = (row as { value: VaultRecord }).value;
        return { key: VAULT_RECORD_KEY, value: { ...value, cursor } };
      },
      onProgress: (done, total) => {
        migrating = { direction, done, total };
        changed();
      },
    });
    migrating = null;
  };
  const runPassInBackground = (direction: 'encrypt' | 'decrypt', keys: VaultKeys): Promise<void> => {
    migrating = { direction, done: 0, total: 0 };
    return (pass = runPassNow(direction, keys)
      .then(async () => {
        if (direction === 'decrypt') await finishDisable(keys);
        else if (record) await writeRecord({ ...record, pass: null, cursor: null });
      })
      .catch((error: unknown) => {
        migrating = null;
        console.warn(`[vault] the ${direction} pass stopped (it resumes after the next unlock):`, error);
      })
      .finally(() => {
        pass = null;
        changed();
      }));
  };

  const finishDisable = async (keys: VaultKeys) => {
    await writeRecord(null);
    keyring.keys = null;
    keyring.sealing = false;
    wipeKeys(keys);
    armIdle();
  };

  /** Stops the turns and the core, drops it, wipes the key (see the controller's doc). */
  const lockNow = async (): Promise<VaultStatus> => {
    if (!record || keyring.keys === null) return status();
    closing = true;
    changed();
    try {
      await pass?.catch(() => undefined);
      const running = core;
      core = null;
      if (running) {
        const c = await running.catch(() => null);
        if (c) {
          await c.chat.stopAll();
          await c.stop();
        }
      }
      const keys = keyring.keys;
      keyring.keys = null;
      if (keys) wipeKeys(keys);
    } finally {
      closing = false;
      armIdle();
    }
    return changed();
  };

  const ready = (async () => {
    const row = await db.settings.get(VAULT_RECORD_KEY);
    record = (row?.value as VaultRecord | undefined) ?? null;
    // Locked: any write but the vault record is refused until unlock (no plaintext row while the lock is on).
    keyring.sealing = record !== null && record.pass !== 'decrypt';
    if (!record) core = deps.startCore();
  })();

  return {
    async core() {
      await ready;
      if (record !== null && (keyring.keys === null || closing)) throw new VaultError('locked', 'Recall is locked.');
      armIdle();
      return core ?? (core = deps.startCore());
    },
    isLocked: () => record !== null && (keyring.keys === null || closing),
    async status() {
      await ready;
      return status();
    },
    async enable(passphrase) {
      await ready;
      return exclusive(async () => {
        if (record) throw new VaultError('already_enabled', 'The vault lock is already on.');
        checkPassphrase(passphrase);
        if (!globalThis.crypto?.subtle || typeof globalThis.crypto.getRandomValues !== 'function') {
          throw new VaultError('unsupported', 'This browser has no WebCrypto.');
        }
        const dataKey = newDataKey();
        const kdf = newKdfParams(deps.kdfCost);
        const wrapped = await wrapDataKey(dataKey, passphrase, kdf);
        const keys = vaultKeys(dataKey);
        // The record first: a core killed after this finds the lock on and resumes the pass after unlock.
        await writeRecord({ version: 1, kdf, wrapped, autoLockMinutes: DEFAULT_VAULT_AUTO_LOCK_MINUTES, pass: 'encrypt', createdAt: now() });
        keyring.keys = keys;
        keyring.sealing = true;
        armIdle();
        changed();
        await runPassInBackground('encrypt', keys);
        return status();
      });
    },
    async unlock(passphrase) {
      await ready;
      return exclusive(async () => {
        const current = needRecord();
        if (keyring.keys !== null) {
          // Already unlocked: the passphrase is still checked (a wrong one is refused).
          wipeKey(await unwrapDataKey(current, passphrase));
          return status();
        }
        openWith(vaultKeys(await unwrapDataKey(current, passphrase)));
        return changed();
      });
    },
    async lock() {
      await ready;
      needRecord();
      if (changes.isLocked()) throw new VaultError('busy', 'A vault change is running.');
      return changes.runExclusive(lockNow);
    },
    async changePassphrase(currentPassphrase, next) {
      await ready;
      return exclusive(async () => {
        const current = needRecord();
        checkPassphrase(next);
        const dataKey = await unwrapDataKey(current, currentPassphrase);
        const kdf = newKdfParams(deps.kdfCost);
        const wrapped = await wrapDataKey(dataKey, next, kdf);
        wipeKey(dataKey);
        await writeRecord({ ...current, kdf, wrapped });
        return changed();
      });
    },
    async disable(passphrase) {
      await ready;
      return exclusive(async () => {
        const current = needRecord();
        const dataKey = await unwrapDataKey(current, passphrase);
        // Locked: open without resuming an unfinished encrypt pass (the decrypt pass below covers every row).
        if (keyring.keys === null) openWith(vaultKeys(dataKey), false);
        else wipeKey(dataKey);
        const keys = keyring.keys!;
        // Turning off midway through turning on starts the decrypt pass from the start (the encrypt cursor means nothing to it).
        if (current.pass !== 'decrypt') await writeRecord({ ...current, pass: 'decrypt', cursor: null });
        keyring.sealing = false;
        changed();
        await runPassInBackground('decrypt', keys);
        return status();
      });
    },
    async setAutoLock(minutes) {
      await ready;
      return exclusive(async () => {
        const current = needRecord();
        if (minutes !== null && (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_VAULT_AUTO_LOCK_MINUTES)) {
          throw new MessagingError('bad_request', `Auto-lock takes 1 to ${MAX_VAULT_AUTO_LOCK_MINUTES} minutes, or none.`);
        }
        await writeRecord({ ...current, autoLockMinutes: minutes });
        armIdle();
        return changed();
      });
    },
  };
}

const wipeKey = (key: Uint8Array) => key.fill(0);
