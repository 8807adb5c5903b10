/**
 * Storage-full errors: recognised through Dexie's wrapping, carried across the runtime messaging
 * with their code, and shown to the user as a translated sentence (English and Chinese).
 */
import { deserializeError, serializeError } from '@aklinker1/zero-serialize-error';
import Dexie from 'dexie';
import { describe, expect, it } from 'vitest';
import { asStorageError, isQuotaExceeded, StorageFullError } from '../../src/db/errors';
import { isStorageFull } from '../../src/ui/lib/connect';
import en from '../../src/ui/i18n/locales/en.json';
import zh from '../../src/ui/i18n/locales/zh_CN.json';

const quota = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');

describe('isQuotaExceeded / asStorageError', () => {
  it('sees a QuotaExceededError directly, as Dexie.QuotaExceededError, and inside an AbortError', () => {
    expect(isQuotaExceeded(quota())).toBe(true);
    expect(isQuotaExceeded(new Dexie.QuotaExceededError('full', quota()))).toBe(true);
    expect(isQuotaExceeded(new Dexie.AbortError('Transaction aborted', quota()))).toBe(true);
    expect(isQuotaExceeded(new Error('wrapped', { cause: quota() }))).toBe(true);
    expect(isQuotaExceeded(new Dexie.ConstraintError('Key already exists'))).toBe(false);
    expect(isQuotaExceeded(new Error('other'))).toBe(false);
    expect(isQuotaExceeded(null)).toBe(false);
  });

  it('turns only quota failures into StorageFullError and leaves other errors as they are', () => {
    const converted = asStorageError(new Dexie.AbortError('aborted', quota()));
    expect(converted).toBeInstanceOf(StorageFullError);
    expect(converted).toMatchObject({ code: 'storage_full' });
    const other = new Error('boom');
    expect(asStorageError(other)).toBe(other);
  });
});

describe('the panel side', () => {
  it("keeps the code across @webext-core/messaging's error serialization, so the panel recognises it", () => {
    const received = deserializeError(JSON.parse(JSON.stringify(serializeError(new StorageFullError()))));
    expect(isStorageFull(received)).toBe(true);
    expect(isStorageFull(deserializeError(serializeError(new Error('other'))))).toBe(false);
  });

  it('has the sentence in English and Simplified Chinese', () => {
    expect(en.errorCodes.storage.storage_full).toMatch(/^Storage is full/);
    expect(zh.errorCodes.storage.storage_full).toMatch(/^存储空间已满/);
  });
});
