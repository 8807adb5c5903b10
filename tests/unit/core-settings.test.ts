import { afterEach, describe, expect, it } from 'vitest';
import { createSettingsStore, DEFAULT_SETTINGS } from '../../src/core/settings';
import { RecallDB } from '../../src/db/schema';

let db: RecallDB;
afterEach(async () => db?.delete());

describe('settings store', () => {
  it('returns the defaults on a fresh install and persists a valid patch', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    const settings = createSettingsStore(db);
    expect(await settings.get()).toEqual(DEFAULT_SETTINGS);
    const next = await settings.set({ maxAnswerTokens: 256, locale: 'zh_CN', wllamaSource: { type: 'opfs', fileName: 'm.gguf' } });
    expect(next).toEqual({ ...DEFAULT_SETTINGS, maxAnswerTokens: 256, locale: 'zh_CN', wllamaSource: { type: 'opfs', fileName: 'm.gguf' } });
    expect(await createSettingsStore(db).get()).toEqual(next); // read back from Dexie
  });

  it('rejects unknown keys and bad values and writes nothing', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    const settings = createSettingsStore(db);
    await expect(settings.set({ maxAnswerTokens: 3 })).rejects.toThrow();
    await expect(settings.set({ maxAnswerTokens: 300, nonsense: true } as never)).rejects.toThrow();
    await expect(settings.set({ defaultStrategy: { kind: 'magic' } as never })).rejects.toThrow();
    expect(await db.settings.count()).toBe(0);
  });

  it('clamps strategy parameters to their ranges', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    const settings = createSettingsStore(db);
    // buffer-window k is 1..50 in STRATEGIES; summary-buffer maxTokens 200..32,000.
    expect((await settings.set({ defaultStrategy: { kind: 'buffer-window', k: 0 } })).defaultStrategy).toEqual({ kind: 'buffer-window', k: 1 });
    expect((await settings.set({ defaultStrategy: { kind: 'summary-buffer', maxTokens: 10 } })).defaultStrategy).toEqual({ kind: 'summary-buffer', maxTokens: 200 });
  });

  it('falls back to the default for a stored value that no longer validates, keeping the others', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    await db.settings.bulkPut([
      { key: 'maxAnswerTokens', value: 'lots' },
      { key: 'memoryTopK', value: 4 },
    ]);
    const got = await createSettingsStore(db).get();
    expect(got.maxAnswerTokens).toBe(DEFAULT_SETTINGS.maxAnswerTokens);
    expect(got.memoryTopK).toBe(4);
  });
});
