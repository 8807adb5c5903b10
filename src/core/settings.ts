/**
 * User settings, persisted in Dexie `settings` (one row per key). The offscreen document has
 * no `chrome.storage`, so settings live in IndexedDB with everything else. Shape, schema and
 * defaults: `src/model/settings.ts`; reading: `readSettings` (`src/db/settings.ts`); this store
 * adds the validated writes.
 */
import { readSettings } from '../db/settings';
import type { RecallDB } from '../db/schema';
import { readThrough } from '../db/write-counters';
import { SETTING_KEYS, settingsPatchSchema, type SettingKey, type Settings } from '../model/settings';

/** Reads and writes settings. */
export interface SettingsStore {
  /** All settings, defaults filled in (see `parseSettings`). */
  get(): Promise<Settings>;
  /** Whether `key` has a stored value (the user or an older version set it), valid or not. */
  isStored(key: SettingKey): Promise<boolean>;
  /**
   * Applies a validated partial update and returns the new settings.
   * @throws ZodError when the patch has unknown keys or invalid values (nothing is written).
   */
  set(patch: Partial<Settings>): Promise<Settings>;
}

/**
 * Creates the settings store over `db.settings`. `get` keeps the parsed settings until a write
 * touches a settings key (`db.writes`, `src/db/write-counters.ts`: any writer, a backup import
 * too): every chat turn reads them, and reading them is one request per key plus a parse.
 */
export function createSettingsStore(db: RecallDB): SettingsStore {
  const settingsKeys = new Set<unknown>(SETTING_KEYS);
  const writes = db.writes.watch('settings', 'settings', (key) => settingsKeys.has(key));
  const read = readThrough<null, Settings>(writes, async () => (await readSettings(db)).settings, structuredClone);
  return {
    get() {
      return read(null);
    },
    async isStored(key) {
      return (await readSettings(db)).stored.has(key);
    },
    async set(patch) {
      const valid = settingsPatchSchema.parse(patch);
      await db.settings.bulkPut(Object.entries(valid).map(([key, value]) => ({ key, value })));
      return this.get();
    },
  };
}
