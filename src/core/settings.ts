/**
 * User settings, persisted in Dexie `settings` (one row per key). The offscreen document has
 * no `chrome.storage`, so settings live in IndexedDB with everything else. Shape, schema and
 * defaults: `src/model/settings.ts`; reading: `readSettings` (`src/db/settings.ts`); this store
 * adds validation of writes and the strategy's parameter ranges (`normalizeStrategyConfig`).
 */
import { readSettings } from '../db/settings';
import type { RecallDB } from '../db/schema';
import { normalizeStrategyConfig } from '../memory/short-term/config';
import { settingsPatchSchema, type SettingKey, type Settings } from '../model/settings';

/** Reads and writes settings. */
export interface SettingsStore {
  /** All settings, defaults filled in; the default strategy's parameters clamped to their ranges. */
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
      const { settings } = await readSettings(db);
      return { ...settings, defaultStrategy: normalizeStrategyConfig(settings.defaultStrategy) };
    },
    async isStored(key) {
      return (await readSettings(db)).stored.has(key);
    },
    async set(patch) {
      const valid = settingsPatchSchema.parse(patch);
      if (valid.defaultStrategy) valid.defaultStrategy = normalizeStrategyConfig(valid.defaultStrategy);
      await db.settings.bulkPut(Object.entries(valid).map(([key, value]) => ({ key, value })));
      return this.get();
    },
  };
}
