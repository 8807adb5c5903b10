/**
 * Storage failures the user must hear about in plain words. IndexedDB reports a full disk (or a
 * quota the browser imposes) as a `QuotaExceededError` DOMException; Dexie passes it on either
 * as its own `Dexie.QuotaExceededError` (same `name`) or wrapped in an `AbortError` /
 * `Dexie.AbortError` whose `inner` is the original. `isQuotaExceeded` looks through that chain;
 * `StorageFullError` (a coded `StorageError`, `src/model/errors.ts`) carries the code `storage_full` across the runtime messaging (whose
 * rebuilt errors keep their own properties), so the panel can show a translated sentence.
 */

import { StorageError, type RecallErrorOptions } from '../model/errors';

/** Stable code of `StorageFullError` (domain `storage`; the side panel translates it as `errorCodes.storage.storage_full`). */
export const STORAGE_FULL_CODE = 'storage_full';

/** A write was refused because browser storage is full. Nothing of the failed operation was stored. */
export class StorageFullError extends StorageError {
  constructor(
    message = 'Browser storage is full: nothing of this change was saved. Free disk space (or delete old conversations or model files) and try again.',
    options?: RecallErrorOptions,
  ) {
    super(STORAGE_FULL_CODE, message, options);
    this.name = 'StorageFullError';
  }
}

/**
 * `true` when `error`, or an error it wraps (`inner` as Dexie does, or `cause`), up to 5 levels
 * deep, is a quota failure (`name` `QuotaExceededError`, or a `StorageFullError`).
 */
export function isQuotaExceeded(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const e = current as { name?: unknown; code?: unknown; inner?: unknown; cause?: unknown };
    if (e.name === 'QuotaExceededError' || e.code === STORAGE_FULL_CODE) return true;
    current = e.inner ?? e.cause;
  }
  return false;
}

/**
 * `error` as a `StorageFullError` when it is a quota failure (see `isQuotaExceeded`), otherwise
 * `error` unchanged; use as `catch (e) { throw asStorageError(e) }`.
 */
export function asStorageError(error: unknown): unknown {
  if (error instanceof StorageFullError || !isQuotaExceeded(error)) return error;
  return new StorageFullError(undefined, { cause: error });
}
