import { afterEach, describe, expect, it } from 'vitest';
import { createSettingsStore } from '../../src/core/settings';
import { RecallDB } from '../../src/db/schema';
import { readSettings } from '../../src/db/settings';
import { DEFAULT_SETTINGS, MAINTENANCE_STATE_KEY, SETTING_KEYS } from '../../src/model/settings';

let db: RecallDB;
afterEach(async () => db?.delete());

describe('settings store: the cached read', () => {
  /** Counts the settings keys Dexie reads (its `reading` hook runs once per key of a `bulkGet`, stored or not). */
  function countReads(d: RecallDB): { n: number } {
    const reads = { n: 0 };
    d.settings.hook('reading', (row) => {
      reads.n += 1;
      return row;
    });
    return reads;
  }

  it('reads the rows once until a write touches a settings key, by any writer', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    await db.settings.put({ key: 'memoryTopK', value: 5 });
    const reads = countReads(db);
    const settings = createSettingsStore(db);
    expect((await settings.get()).memoryTopK).toBe(5);
    const first = reads.n;
    expect(first).toBe(SETTING_KEYS.length); // one read of every key
    expect((await settings.get()).memoryTopK).toBe(5);
    expect(reads.n).toBe(first); // cached
    // Rows of other keys in the same table (the open-turn markers, stats) leave the cache alone.
    await db.settings.put({ key: MAINTENANCE_STATE_KEY, value: { mergedThrough: 1 } });
    await db.settings.put({ key: 'chat.openTurn.x', value: {} });
    await db.settings.delete('chat.openTurn.x');
    expect((await settings.get()).memoryTopK).toBe(5);
    expect(reads.n).toBe(first);
    // A write of a settings key by another writer than the store (a backup import) is seen.
    await db.settings.put({ key: 'memoryTopK', value: 3 });
    expect((await settings.get()).memoryTopK).toBe(3);
    expect(reads.n).toBe(2 * first);
    // The store's own write, a bulk delete and a clear are seen too.
    expect((await settings.set({ locale: 'en' })).locale).toBe('en');
    await db.settings.bulkDelete(['locale']);
    expect((await settings.get()).locale).toBe(DEFAULT_SETTINGS.locale);
    await db.settings.clear();
    expect(await settings.get()).toEqual(DEFAULT_SETTINGS);
  });

  it('hands out copies: changing a returned value changes neither the cache nor the next answer', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    const settings = createSettingsStore(db);
    await settings.set({ blockedSites: ['a.example'] });
    const got = await settings.get();
    got.blockedSites.push('b.example');
    got.memoryTopK = 99;
    expect((await settings.get()).blockedSites).toEqual(['a.example']);
    expect((await settings.get()).memoryTopK).toBe(DEFAULT_SETTINGS.memoryTopK);
  });

  it('does not keep a read that a settings write overlapped', async () => {
    db = new RecallDB(`settings-${crypto.randomUUID()}`);
    const settings = createSettingsStore(db);
    await settings.get();
    // The write is issued first, the read right after (before the write settles): the read sees it,
    // and the next read goes to the rows again rather than trusting a read the write overlapped.
    const write = db.settings.put({ key: 'memoryTopK', value: 4 });
    const during = settings.get();
    await write;
    expect((await during).memoryTopK).toBe(4);
    const reads = countReads(db);
    expect((await settings.get()).memoryTopK).toBe(4);
    expect(reads.n).toBe(SETTING_KEYS.length);
    expect((await settings.get()).memoryTopK).toBe(4);
    expect(reads.n).toBe(SETTING_KEYS.length);
  });
});

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
