/** Panel preferences in localStorage (src/ui/lib/ui-prefs.ts), over an in-memory Storage. */
import { describe, expect, it } from 'vitest';
import { readUiPref, writeUiPref, type PrefStorage } from '../../src/ui/lib/ui-prefs';

function memoryStorage(): PrefStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}
const KEY = 'recall.ui.v1.embedderBannerDismissed';

describe('ui prefs', () => {
  it('round-trips a value as JSON and removes it with null', () => {
    const storage = memoryStorage();
    expect(readUiPref(KEY, storage)).toBeNull();
    writeUiPref(KEY, 'Downloading the embedding model failed: "x"', storage);
    expect(storage.data.get(KEY)).toBe('"Downloading the embedding model failed: \\"x\\""');
    expect(readUiPref(KEY, storage)).toBe('Downloading the embedding model failed: "x"');
    writeUiPref(KEY, null, storage);
    expect(storage.data.has(KEY)).toBe(false);
  });

  it('treats a corrupt or mistyped value as unset, and never throws on a failing storage', () => {
    const storage = memoryStorage();
    storage.data.set(KEY, '{not json');
    expect(readUiPref(KEY, storage)).toBeNull();
    storage.data.set(KEY, '42');
    expect(readUiPref(KEY, storage)).toBeNull();
    const broken: PrefStorage = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
      removeItem: () => {
        throw new Error('SecurityError');
      },
    };
    expect(readUiPref(KEY, broken)).toBeNull();
    expect(() => writeUiPref(KEY, 'x', broken)).not.toThrow();
    expect(() => writeUiPref(KEY, null, broken)).not.toThrow();
    expect(readUiPref(KEY, null)).toBeNull();
  });
});
