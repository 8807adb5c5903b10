/**
 * The erase window of the vault keyring (`VaultKeyring.forgetAfter`, `src/vault/middleware.ts`):
 * sealed writes are refused while the erase runs; after it the lock is gone; an erase that throws
 * leaves the lock as it was and takes writes again. The refusal itself, through a real database
 * and a write queued behind the erase, is in `vault-lock.test.ts` › "Erase all data": ….
 */
import { describe, expect, it } from 'vitest';
import { VaultKeyring } from '../../src/vault/middleware';
import { newDataKey, vaultKeys } from '../../src/vault/keys';

function lockedOn(): VaultKeyring {
  const ring = new VaultKeyring();
  ring.keys = vaultKeys(newDataKey());
  ring.sealing = true;
  return ring;
}

describe('VaultKeyring.forgetAfter', () => {
  it('refuses sealed writes (forgetting) while the erase runs, then forgets the lock and hands the keys to onForget', async () => {
    const ring = lockedOn();
    const held = ring.keys;
    const forgotten: unknown[] = [];
    ring.onForget = (keys) => forgotten.push(keys);
    let during: boolean | null = null;
    expect(await ring.forgetAfter(async () => ((during = ring.forgetting), 'erased'))).toBe('erased');
    expect(during).toBe(true);
    expect(ring).toMatchObject({ keys: null, sealing: false, forgetting: false });
    expect(forgotten).toEqual([held]);
  });

  it('an erase that throws (nothing erased) keeps the lock and its keys, takes writes again, and rethrows', async () => {
    const ring = lockedOn();
    const held = ring.keys;
    let forgotten = 0;
    ring.onForget = () => (forgotten += 1);
    await expect(
      ring.forgetAfter(async () => {
        throw new Error('quota exceeded');
      }),
    ).rejects.toThrow('quota exceeded');
    expect(ring).toMatchObject({ sealing: true, forgetting: false });
    expect(ring.keys).toBe(held);
    expect(forgotten).toBe(0);
  });
});
