/**
 * The two erases of the user's data in the database, each one Dexie transaction (all or nothing):
 * - **All data** (`eraseUserData`), driven by the schema's own classification of its tables
 *   (`TABLE_DATA` in `./schema.ts`): every table of `db.tables` that holds user data is cleared —
 *   a table the classification does not know is treated as user data, so a table added later is
 *   never left behind —, the `settings` table included (preferences too: after it the extension
 *   is as freshly installed, but for the model files). Erase all = start over: the vault lock's
 *   record goes too (locked or not: the forgotten passphrase's way out), and the database's keyring
 *   forgets the lock once the transaction committed (`VaultKeyring.forgetAfter`: nothing is sealed
 *   after it, the rows it would open are gone; a sealed write issued while the erase runs is
 *   refused, so none lands behind it with the dropped key). Only `device` tables stay (`localModels`,
 *   the GGUF files opened on this device; delete them one by one, like the other downloaded models).
 * - **All memories** (`eraseMemories`): the long-term memory tables (`MEMORY_TABLES`: memories,
 *   their history, the persisted index, the tombstones, the "not relevant here" feedback) and the queued long-term jobs
 *   (`ltm.*`: extraction, episodic rounds, re-embedding — they would write memories again).
 *   Conversations, messages, strategy states and settings stay.
 */
import { ABOUT_ME_KEY_PREFIX } from '../model/about-me';
import { STATE_KEY_PREFIX, STATS_KEY_PREFIX } from '../model/settings';
import type { RecallDB } from './schema';
import { TABLE_DATA } from './schema';

/** What `eraseUserData` removed. */
export interface EraseReport {
  /** Names of the tables cleared whole. */
  clearedTables: string[];
  /** Settings keys removed (all of them). */
  removedSettings: string[];
  /** Names of the tables kept (device data). */
  keptTables: string[];
}

/**
 * Erases everything of the user in `db` (see module doc), in one transaction; works while the vault
 * is locked (no sealed row is read). The vault controller stops the turns first (`VaultController.eraseAll`).
 * @throws Dexie's error when the transaction fails (then nothing was erased).
 */
export async function eraseUserData(db: RecallDB): Promise<EraseReport> {
  const report: EraseReport = { clearedTables: [], removedSettings: [], keptTables: [] };
  // No sealed write is taken while it runs; the keyring forgets the lock once it committed (`forgetAfter`).
  await db.keyring.forgetAfter(() =>
    db.transaction('rw', db.tables, async () => {
      for (const table of db.tables) {
        const kind = TABLE_DATA[table.name] ?? 'user';
        if (kind === 'device') {
          report.keptTables.push(table.name);
          continue;
        }
        // Keys only (no row is opened): this runs while the vault is locked too.
        if (kind === 'settings') report.removedSettings.push(...((await table.toCollection().primaryKeys()) as unknown[]).map(String));
        await table.clear();
        report.clearedTables.push(table.name);
      }
    }),
  );
  return report;
}

/** The tables of long-term memory, cleared by `eraseMemories`. */
export const MEMORY_TABLES = ['memories', 'memoryHistory', 'memoryIndex', 'tombstones', 'feedback', 'suggestions'] as const;

/** Prefix of the long-term memory jobs' types (`ltm.extract`, `ltm.episodic`, `ltm.reembed`, `ltm.maintenance`). */
export const MEMORY_JOB_PREFIX = 'ltm.';

/** Settings keys of long-term memory's bookkeeping (`stats.ltmExtraction`, `state.ltmMaintenance`, …) and the "about me" profiles built from the memories. */
const MEMORY_SETTING_PREFIXES = [`${STATS_KEY_PREFIX}ltm`, `${STATE_KEY_PREFIX}ltm`, ABOUT_ME_KEY_PREFIX];

/** What `eraseMemories` removed: rows per table, and the jobs. */
export interface MemoryEraseReport {
  /** Rows removed per table of `MEMORY_TABLES`. */
  rows: Record<(typeof MEMORY_TABLES)[number], number>;
  /** Long-term jobs removed (queued, running or failed). */
  jobs: number;
  /** `stats.*` / `state.*` settings rows of long-term memory removed (extraction statistics, maintenance resume point). */
  settings: string[];
}

/**
 * Erases every long-term memory (see module doc) in one transaction; the caller stops the job
 * queue first and rebuilds the store's in-memory indexes afterwards.
 * @throws Dexie's error when the transaction fails (then nothing was erased).
 */
export async function eraseMemories(db: RecallDB): Promise<MemoryEraseReport> {
  const tables = MEMORY_TABLES.map((name) => db.table(name));
  return db.transaction('rw', [...tables, db.jobs, db.settings], async () => {
    const rows = {} as MemoryEraseReport['rows'];
    for (const table of tables) {
      rows[table.name as (typeof MEMORY_TABLES)[number]] = await table.count();
      await table.clear();
    }
    const jobs = await db.jobs.filter((j) => j.type.startsWith(MEMORY_JOB_PREFIX)).primaryKeys();
    await db.jobs.bulkDelete(jobs);
    const settings = (await db.settings.toCollection().primaryKeys()).filter((k) => MEMORY_SETTING_PREFIXES.some((prefix) => k.startsWith(prefix)));
    await db.settings.bulkDelete(settings);
    return { rows, jobs: jobs.length, settings };
  });
}
