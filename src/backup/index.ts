/**
 * Backup: export and import of everything needed to restore the user's state — long-term
 * memories with their change history (and, optionally, their vectors), conversations with their
 * messages, entity notes, strategy states (running summaries), the portable settings, the
 * namespaces in use and the embedding model id — as one versioned JSON file (`./format.ts`, v2;
 * v1 files import too), written as a stream (`./writer.ts`) and read as a stream
 * (`./reader.ts`) in two passes (`./check.ts`, then `./import.ts` with `./merge.ts`), under a
 * journal that makes an import all-or-nothing (`./journal.ts`).
 */
export { checkFile, type ImportPlan } from './check';
export { base64ToVector, EXPORT_FORMAT, EXPORT_VERSION, exportFileSchema, ImportError, vectorToBase64, type ExportFile } from './format';
export { IMPORT_BATCH_SIZE, importAll, type ImportResult, type ImportStore } from './import';
export { IMPORT_JOURNAL_KEY, IMPORT_NOTICE_KEY, IMPORT_UNDO_PREFIX, recoverInterruptedImport, rollbackImport, type ImportJournal } from './journal';
export { decideMemories, type MemoryDecision } from './merge';
export { parseExportFile, readExportRecords, type FileRecord } from './reader';
export { EXPORT_PAGE_SIZE, exportAll, exportBytes, exportChunks, exportFileName } from './writer';
