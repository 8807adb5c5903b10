/**
 * One-time keys for sealed import staging files (vault lock on; codec: `src/platform/staging-seal.ts`).
 * The core hands out a fresh random 256-bit key per staging file name (`memory.stagingKey`), keeps
 * it in memory only, and forgets it after that file's import (whatever the outcome) or when the
 * core stops (the lock drops the core). Never the vault's data key.
 */
import { VaultError } from '../model/errors';
import { isStagingSealed, STAGING_KEY_BYTES, stagingFileReader } from '../platform/staging-seal';

/** The staging keys the core holds (see module doc). */
export interface StagingKeys {
  /** A new key for `fileName` (replacing one held for it), as base64 of its 32 raw bytes. */
  issue(fileName: string): string;
  /**
   * The readable content of the staging file `file` named `fileName`: as is when it is plain, a
   * decrypting view (`stagingFileReader`) when it is sealed.
   * @throws VaultError('damaged') for a sealed file whose key is not held (forgotten, never issued);
   *   a wrong key or a changed, reordered or cut chunk rejects from the view's reads, with the same error.
   */
  reader(file: Blob, fileName: string): Promise<Blob>;
  /** Forgets (and zeroes) the key of `fileName`, if held. */
  forget(fileName: string): void;
  /** Forgets every key (the core stops). */
  clear(): void;
}

/** An empty `StagingKeys`. */
export function createStagingKeys(): StagingKeys {
  const keys = new Map<string, Uint8Array>();
  const forget = (fileName: string) => {
    keys.get(fileName)?.fill(0);
    keys.delete(fileName);
  };
  return {
    issue(fileName) {
      forget(fileName);
      const key = crypto.getRandomValues(new Uint8Array(STAGING_KEY_BYTES));
      keys.set(fileName, key);
      return btoa(String.fromCharCode(...key));
    },
    async reader(file, fileName) {
      if (!(await isStagingSealed(file))) return file;
      const key = keys.get(fileName);
      if (!key) throw new VaultError('damaged', 'A sealed staging file has no key here (forgotten or never issued).');
      return stagingFileReader(file, key.slice(), fileName);
    },
    forget,
    clear() {
      for (const fileName of [...keys.keys()]) forget(fileName);
    },
  };
}
