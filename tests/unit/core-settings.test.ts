import { afterEach, describe, expect, it } from 'vitest';
import { createSettingsStore } from '../../src/core/settings';
import { RecallDB } from '../../src/db/schema';
import { readSettings } from '../../src/db/settings';
import { DEFAULT_SETTINGS, MAINTENANCE_STATE_KEY } from '../../src/model/settings';

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
    expect((await settings.set({ defaultStrategy: { kind: 'summary-buffer', maxTokens: 10 } })).defaultStrategy).toEqual({
      kind: 'summary-buffer',
      maxTokens: 200,
    });
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

  it('parses stored settings the same way when job bookkeeping rows (stats.*, state.*) share the table', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    await db.settings.bulkPut([
      // Stored without its parameter (an older version): the store fills k = 5, the spec default.
      { key: 'defaultStrategy', value: { kind: 'buffer-window' } },
      { key: 'memoryTopK', value: 4 },
      { key: 'stats.ltmExtraction', value: { succeeded: 1 } },
      { key: MAINTENANCE_STATE_KEY, value: { mergedThrough: 1 } },
    ]);
    const got = await createSettingsStore(db).get();
    expect(got.defaultStrategy).toEqual({ kind: 'buffer-window', k: 5 });
    expect(got).toEqual({ ...DEFAULT_SETTINGS, defaultStrategy: { kind: 'buffer-window', k: 5 }, memoryTopK: 4 });
  });

  it('readSettings reads only the settings keys and says which ones are stored', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    await db.settings.bulkPut([
      { key: 'embeddingModelId', value: '' }, // stored but invalid: the default is used, the key counts as stored
      { key: 'episodicRetentionDays', value: 30 },
      { key: 'stats.ltmMaintenance', value: { at: 1 } },
    ]);
    const { settings, stored } = await readSettings(db);
    expect(settings).toEqual({ ...DEFAULT_SETTINGS, episodicRetentionDays: 30 });
    expect([...stored].sort()).toEqual(['embeddingModelId', 'episodicRetentionDays']);
    expect(await createSettingsStore(db).isStored('embeddingModelId')).toBe(true);
    expect(await createSettingsStore(db).isStored('locale')).toBe(false);
  });
});
