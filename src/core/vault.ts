/**
 * The vault lock's life cycle in the core (issue 16): where the lock stands, the one check every
 * data request passes (`VaultGate.core`: refused with `VaultError('locked')` while locked), and the
 * `vault.*` requests. Key handling and encryption at rest live in `src/vault/`.
 */
import browser from 'webextension-polyfill';
import { assertSender, onMessage, type ProtocolMap } from '../messaging/protocol';
import { VaultError } from '../model/errors';
import type { VaultStatus } from '../model/vault';
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

/**
 * A controller for a core whose lock is off and cannot be turned on yet (until `src/vault/` lands):
 * `vault.enable` refuses with `VaultError('unsupported')`, the others with `not_enabled`.
 */
export function createUnsupportedVault(core: Promise<Core>): VaultController {
  const status = async (): Promise<VaultStatus> => ({ enabled: false, locked: false, autoLockMinutes: null, migrating: null });
  const notEnabled = async (): Promise<VaultStatus> => {
    throw new VaultError('not_enabled', 'The vault lock is not on.');
  };
  return {
    ...openGate(core),
    status,
    enable: async () => {
      throw new VaultError('unsupported', 'The vault lock is not available in this build yet.');
    },
    unlock: notEnabled,
    lock: notEnabled,
    changePassphrase: notEnabled,
    disable: notEnabled,
    setAutoLock: notEnabled,
  };
}

/** The handler of each `vault.*` request: the controller and the request's data → the new status. */
export const VAULT_HANDLERS: {
  [K in VaultRequestType]: (vault: VaultController, data: Parameters<ProtocolMap[K]>[0]) => Promise<VaultStatus>;
} = {
  'vault.status': (v) => v.status(),
  'vault.enable': (v, { passphrase }) => v.enable(passphrase),
  'vault.unlock': (v, { passphrase }) => v.unlock(passphrase),
  'vault.lock': (v) => v.lock(),
  'vault.changePassphrase': (v, { current, next }) => v.changePassphrase(current, next),
  'vault.disable': (v, { passphrase }) => v.disable(passphrase),
  'vault.setAutoLock': (v, { minutes }) => v.setAutoLock(minutes),
};

/**
 * Registers the `vault.*` handlers (sender: the side panel only). Returns a function that removes them.
 * @throws MessagingError('rejected_sender') to a sender that is not this extension's side panel.
 */
export function registerVaultHandlers(vault: VaultController): () => void {
  const removers = (Object.keys(VAULT_HANDLERS) as VaultRequestType[]).map((type) => {
    const handler = VAULT_HANDLERS[type] as (vault: VaultController, data: unknown) => Promise<VaultStatus>;
    return onMessage(type, (async (message: { data: unknown; sender: Parameters<typeof assertSender>[0] }) => {
      assertSender(message.sender, ['sidepanel'], browser.runtime.id);
      return handler(vault, message.data);
    }) as never);
  });
  return () => removers.forEach((remove) => remove());
}
