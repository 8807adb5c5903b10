/**
 * Backup vocabulary: what an import reports, the progress of an export or import, and the notice
 * of an import undone at start-up (format and codec: `src/memory/export.ts`). Leaf module:
 * imports nothing from `src/`.
 */

/** First line of every binary age file (https://age-encryption.org/v1): how an encrypted backup is recognised. */
export const AGE_HEADER = 'age-encryption.org/v1';

/** Report of a memory import. */
export interface ImportReport {
  added: number;
  updated: number;
  skipped: number;
  /** Messages about rejected records (never silently dropped). */
  errors: string[];
  /** Vectors of the file left out (wrong dimension, NaN/Infinity, zero norm); their memories are re-embedded. */
  vectorsDropped?: number;
  /** Memories left out because the user deleted or forgot them on this device (tombstones); also counted in `skipped`. */
  forgotten?: number;
  /** Settings the file carried that were written (format v2; not counted in added / updated / skipped). */
  settingsRestored?: number;
}

/**
 * Progress of an export or import (`event.transfer`): `done` of `total` — records for `export`
 * and `encrypt` (an export with a passphrase: records read into the age stream) and for `write`
 * (the import's writing pass: records of the file written, of all its records as the check pass
 * counted them), bytes of the file for `decrypt` (an age file being decrypted before the import:
 * encrypted bytes read of the file's size) and `check` (the import's validation pass).
 */
export interface TransferProgress {
  phase: 'export' | 'encrypt' | 'decrypt' | 'check' | 'write';
  done: number;
  total: number;
  /** `check` only: records validated so far (how many the file holds is known when the pass ends). */
  records?: number;
}

/** An import that did not finish (context killed, browser closed) and was undone when the core started. */
export interface InterruptedImport {
  /** Name of the staging file that was being imported. */
  fileName: string;
  /** ms epoch when it started and when it was undone. */
  startedAt: number;
  undoneAt: number;
}
