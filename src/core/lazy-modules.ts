/**
 * Parts of the core that the first answered retrieval does not need, loaded at first use with a
 * dynamic `import()`, so the offscreen document does not evaluate them at start-up (the cold start's
 * module-evaluation phase, issue 9): the backup file format, reader and writer (`@streamparser/json`),
 * its age encryption (`age-encryption` and the `@noble/*` curves, hashes and ciphers), the other
 * assistants' importers (`fflate`) and the history import. The bundler puts each in its own chunk;
 * a module is fetched and evaluated once, the first call's promise answers every later one.
 * `recoverInterruptedImport` (`backup/journal.ts`) stays on the start path: it runs before the
 * indexes are built.
 */

/** The backup module (`src/backup`): `exportBytes`, `exportFileName`, `importAll`, `ImportError`. */
export const loadBackup = () => import('../backup');

/** Age encryption of backups (`src/backup/encryption.ts`): `encryptChunks`, `decryptChunks`, `isAgeFile`. */
export const loadBackupEncryption = () => import('../backup/encryption');

/** Other assistants' exports and notes (`src/importers`): `parseHistoryFile`. */
export const loadImporters = () => import('../importers');

/** The history import into the store (`./history-import.ts`): `importHistory`, `importSavedMemories`. */
export const loadHistoryImport = () => import('./history-import');
