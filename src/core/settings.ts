/**
 * User settings, persisted in Dexie `settings` (one row per key). The offscreen document has
 * no `chrome.storage`, so settings live in IndexedDB with everything else. Shape, schema and
 * defaults: `src/model/settings.ts`; reading: `readSettings` (`src/db/settings.ts`); this store
 * adds the validated writes.
 */
import { readSettings } from '../db/settings';
import type { RecallDB } from '../db/schema';
import { settingsPatchSchema, type SettingKey, type Settings } from '../model/settings';

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

/** Creates the settings store over `db.settings`. */
export function createSettingsStore(db: RecallDB): SettingsStore {
  return {
    async get() {
      return (await readSettings(db)).settings;
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
