/**
 * The vault lock's panel side (issue 16): where the lock stands (`vault.status`, followed through
 * `event.vault`), the unlock screen's action and Settings → Privacy's actions (turn the lock on,
 * change the passphrase, turn it off, auto-lock, lock now).
 *
 * The panel never holds key material: a passphrase is sent once with its request and never kept
 * here (the components clear their fields after a success). While `locked` the panel shows only
 * the unlock screen (`App.svelte`); a `locked` error from ANY request (auto-lock happened, or
 * another panel locked) switches to it through `requestFailed`, which the composition root
 * (`app.svelte.ts`) wires to every store's requests (`observeFailures` in `./api.ts`). When the
 * vault goes from locked to unlocked (this panel's unlock or another's, seen through the event),
 * `onUnlocked` makes the panel re-read its state (conversation, messages, lists).
 *
 * Errors of an action are kept in `error` (its action and translated sentence, shown beside the
 * form that sent it), not as notices: the forms say what went wrong in place.
 */
import type { VaultStatus } from '../../model/vault';
import { translate } from '../i18n/instance';
import { errorText, isVaultLocked } from '../lib/errors';
import { codedErrorOf } from '../../model/errors';
import type { StoreApi } from './api';

/** An action of the vault store; `error` and `busy` name the one they belong to. */
export type VaultAction = 'unlock' | 'enable' | 'change' | 'disable' | 'lock' | 'autoLock';

/** A failed action: which one, the sentence to show (UI language), and the error's code when it had one (`wrong_passphrase`, `mismatch` …). */
export interface VaultActionError {
  action: VaultAction;
  text: string;
  /** The vault error code, `mismatch` (the two entries differ; checked here, nothing sent), or `null`. */
  code: string | null;
}

/** What the vault store needs. */
export interface VaultStoreDeps extends StoreApi {
  /**
   * Called once each time the vault goes from locked to unlocked (this panel's unlock, or another
   * panel's seen through `event.vault`): the panel re-reads its state. Its failure is its own.
   */
  onUnlocked: () => Promise<void>;
}

/** See module doc. Created by `createVaultStore`. */
export class VaultStore {
  /** Where the lock stands; `null` before the first read (treated as off and unlocked). */
  status = $state<VaultStatus | null>(null);
  /** The action in flight, or `null`. */
  busy = $state<VaultAction | null>(null);
  /** The last failed action, until the next action starts; `null` when none. */
  error = $state<VaultActionError | null>(null);
  readonly #deps: VaultStoreDeps;

  constructor(deps: VaultStoreDeps) {
    this.#deps = deps;
  }

  /** The lock is on and the core has no key now: the panel shows only the unlock screen. */
  get locked(): boolean {
    return this.status?.locked === true;
  }

  /** The lock is on (data at rest encrypted), locked or not. */
  get enabled(): boolean {
    return this.status?.enabled === true;
  }

  /** Follows `event.vault` (every change, from any panel or the auto-lock). @returns the unsubscribe. */
  listen(): () => void {
    return this.#deps.subscribe('event.vault', (status) => void this.#apply(status));
  }

  /**
   * Reads where the lock stands (`vault.status`, answered while locked too).
   * @returns the status, or `null` when the read failed (the last status is kept).
   */
  async refresh(): Promise<VaultStatus | null> {
    try {
      const status = await this.#deps.request('vault.status', undefined, { retry: true });
      await this.#apply(status);
      return status;
    } catch {
      return null;
    }
  }

  /**
   * Told of every failed request of the panel (the composition root wires it): a `locked` error
   * means the core locked (auto-lock, another panel, a restart) — the panel switches to the unlock
   * screen at once and reads the full status. Any other error is left to the caller.
   */
  requestFailed(error: unknown): void {
    if (!isVaultLocked(error) || this.locked) return;
    this.status = { enabled: true, autoLockMinutes: null, migrating: null, ...this.status, locked: true };
    void this.refresh();
  }

  /** Unlocks with `passphrase`. @returns `true` when unlocked; a wrong passphrase sets `error` (nothing changes in the core). */
  unlock(passphrase: string): Promise<boolean> {
    return this.#act('unlock', () => this.#deps.request('vault.unlock', { passphrase }));
  }

  /**
   * Turns the lock on with `passphrase` (the core encrypts everything in place, with progress in
   * `status.migrating`, and stays unlocked).
   * @returns `true` when on; `false` with `error` set when the two entries differ (`mismatch`, nothing sent) or the core refused (`weak_passphrase`, `busy` …).
   */
  enable(passphrase: string, repeat: string): Promise<boolean> {
    if (passphrase !== repeat) return Promise.resolve(this.#mismatch('enable'));
    return this.#act('enable', () => this.#deps.request('vault.enable', { passphrase }));
  }

  /**
   * Changes the passphrase (the core re-wraps the data key; nothing else is re-encrypted).
   * @returns `true` when changed; `false` with `error` set (`mismatch`, `wrong_passphrase`, `weak_passphrase` …).
   */
  changePassphrase(current: string, next: string, repeat: string): Promise<boolean> {
    if (next !== repeat) return Promise.resolve(this.#mismatch('change'));
    return this.#act('change', () => this.#deps.request('vault.changePassphrase', { current, next }));
  }

  /** Turns the lock off (the core decrypts in place). @returns `true` when off; a wrong passphrase sets `error`. */
  disable(passphrase: string): Promise<boolean> {
    return this.#act('disable', () => this.#deps.request('vault.disable', { passphrase }));
  }

  /** Locks now (the core wipes its key and in-memory indexes; the panel shows the unlock screen). @returns `true` when locked. */
  lock(): Promise<boolean> {
    return this.#act('lock', () => this.#deps.request('vault.lock'));
  }

  /** Sets the idle minutes before auto-lock (`null`: only when the browser closes). @returns `true` when saved. */
  setAutoLock(minutes: number | null): Promise<boolean> {
    return this.#act('autoLock', () => this.#deps.request('vault.setAutoLock', { minutes }));
  }

  /** Clears the shown error (the user edits the field again). */
  clearError(): void {
    this.error = null;
  }

  /** Runs one action: `busy` while it runs, its reply applied, its failure kept in `error`. */
  async #act(action: VaultAction, call: () => Promise<VaultStatus>): Promise<boolean> {
    this.busy = action;
    this.error = null;
    try {
      // An unlock returns once the panel has re-read its state (the button says "Unlocking…" until then).
      await this.#apply(await call());
      return true;
    } catch (error) {
      const coded = codedErrorOf(error);
      this.error = { action, text: errorText(error), code: coded?.code ?? null };
      return false;
    } finally {
      this.busy = null;
    }
  }

  #mismatch(action: VaultAction): false {
    this.error = { action, text: translate('vault.mismatch'), code: 'mismatch' };
    return false;
  }

  /** Shows `next`; a locked → unlocked change makes the panel re-read its state (once). @returns that re-read, when it started one. */
  #apply(next: VaultStatus): Promise<void> | undefined {
    const wasLocked = this.locked;
    this.status = next;
    if (wasLocked && !next.locked) return this.#deps.onUnlocked().catch(() => undefined);
    return undefined;
  }
}

/** Creates the vault store (status unknown until `refresh` or the first `event.vault`). */
export function createVaultStore(deps: VaultStoreDeps): VaultStore {
  return new VaultStore(deps);
}
