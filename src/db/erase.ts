/**
 * "Erase everything", driven by the schema's own classification of its tables (`TABLE_DATA` in
 * `./schema.ts`): every table of `db.tables` that holds user data is cleared — a table the
 * classification does not know is treated as user data, so a table added later is never left
 * behind — and the `settings` table is filtered by key (preferences without user text stay;
 * `stats.*`, `state.*` and every other key go). One Dexie transaction: all or nothing.
 */
import { STATE_KEY_PREFIX, STATS_KEY_PREFIX } from '../model/settings';
import type { RecallDB } from './schema';
import { TABLE_DATA } from './schema';

/** What `eraseUserData` removed. */
export interface EraseReport {
  /** Names of the tables cleared whole. */
  clearedTables: string[];
  /** Settings keys removed. */
  removedSettings: string[];
  /** Names of the tables kept (device data). */
  keptTables: string[];
}

/**
 * Whether a `settings` row must go on erase: every key except the user's preferences (which hold
 * choices such as the UI language or a model id, never text the user wrote). `stats.*` (e.g. the
 * extraction statistics, which cite conversation and message ids) and `state.*` (job resume points)
 * always go, even if listed as preferences.
 * @param isPreference whether `key` is a known preference (the core passes the keys of its default settings).
 */
export function settingHoldsUserData(key: string, isPreference: (key: string) => boolean): boolean {
  if (key.startsWith(STATS_KEY_PREFIX) || key.startsWith(STATE_KEY_PREFIX)) return true;
  return !isPreference(key);
}

/**
 * Erases everything derived from the user in `db` (see module doc), in one transaction.
 * @param options.isPreference see `settingHoldsUserData`.
 * @throws Dexie's error when the transaction fails (then nothing was erased).
 */
export async function eraseUserData(db: RecallDB, options: { isPreference: (key: string) => boolean }): Promise<EraseReport> {
  const report: EraseReport = { clearedTables: [], removedSettings: [], keptTables: [] };
  await db.transaction('rw', db.tables, async () => {
    for (const table of db.tables) {
      const kind = TABLE_DATA[table.name] ?? 'user';
      if (kind === 'device') {
        report.keptTables.push(table.name);
      } else if (kind === 'settings') {
        const keys = ((await table.toCollection().primaryKeys()) as unknown[]).filter((k): k is string => typeof k === 'string');
        const doomed = keys.filter((key) => settingHoldsUserData(key, options.isPreference));
        await table.bulkDelete(doomed);
        report.removedSettings.push(...doomed);
      } else {
        await table.clear();
        report.clearedTables.push(table.name);
      }
    }
  });
  return report;
}
