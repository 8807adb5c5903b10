/**
 * The one way settings are read from the `settings` table: only the rows whose keys are
 * settings (`SETTING_KEYS`), each parsed on its own by `parseSettings` (`src/model/settings.ts`),
 * so `stats.*` / `state.*` rows and a value an older version wrote never make the others fall
 * back. Writes go through the core's `SettingsStore` (`src/core/settings.ts`), which validates.
 */
import { parseSettings, SETTING_KEYS, type SettingKey, type Settings } from '../model/settings';
import type { RecallDB } from './schema';

/** What is stored for the settings: the parsed settings and which keys have a stored row at all. */
export interface StoredSettings {
  /** Every setting; a missing or invalid value is its default. */
  settings: Settings;
  /** Keys with a row in the table (valid or not): e.g. whether the user ever picked an embedding model. */
  stored: ReadonlySet<SettingKey>;
}

/**
 * Reads every setting (one `bulkGet` of `SETTING_KEYS`), defaults filled in.
 * @throws whatever Dexie throws when the database cannot be read.
 */
export async function readSettings(db: RecallDB): Promise<StoredSettings> {
  const rows = await db.settings.bulkGet(SETTING_KEYS);
  const values: Record<string, unknown> = {};
  const stored = new Set<SettingKey>();
  rows.forEach((row, i) => {
    if (!row) return;
    values[SETTING_KEYS[i]!] = row.value;
    stored.add(SETTING_KEYS[i]!);
  });
  return { settings: parseSettings(values), stored };
}
