/**
 * The import journal: the row that marks an import in progress, the per-batch undo rows, and the
 * undo itself (on failure, and at start-up for an import a killed context left behind).
 */
import type { RecallDB } from '../db/schema';
import type { ConversationRecord, EntityRecord, MemoryRecord, StrategyStateRecord } from '../model/records';
import type { StrategyKind } from '../model/strategies';
import type { InterruptedImport } from '../model/backup';

/** Settings key of the journal of the import being written: written before its first batch, deleted at its commit. */
export const IMPORT_JOURNAL_KEY = 'state.import';
/** Settings key prefix of the per-batch undo records of an import. */
export const IMPORT_UNDO_PREFIX = 'state.import.undo.';
/** Settings key of the notice about an import undone at start-up (read once by the panel). */
export const IMPORT_NOTICE_KEY = 'state.importInterrupted';

/** The journal row of an import in progress (`settings` key `IMPORT_JOURNAL_KEY`). */
export interface ImportJournal {
  importId: string;
  /** Name of the staging file being imported. */
  fileName: string;
  /** ms epoch. */
  startedAt: number;
}

/**
 * Undo record of one written batch (settings row `IMPORT_UNDO_PREFIX<importId>.<batch>`). The
 * entity and strategy-state lists (format v2) are absent from undo rows written before them.
 */
export interface ImportUndo {
  added: {
    memories: string[];
    conversations: string[];
    messages: string[];
    memoryHistory: number[];
    entities?: string[];
    strategyState?: [string, StrategyKind][];
  };
  before: { memories: MemoryRecord[]; conversations: ConversationRecord[]; entities?: EntityRecord[]; strategyState?: StrategyStateRecord[] };
}

/** Settings key of the undo row of batch `batch` of import `importId` (zero-padded, so keys sort by batch). */
export const undoKey = (importId: string, batch: number) => `${IMPORT_UNDO_PREFIX}${importId}.${String(batch).padStart(8, '0')}`;

/**
 * Undoes what the batches of an import wrote (latest batch first; each batch's undo and the
 * removal of its undo record in one transaction, so an undo cut short resumes where it stopped),
 * then removes the journal row.
 */
export async function rollbackImport(db: RecallDB, importId: string): Promise<void> {
  const tables = [db.memories, db.memoryHistory, db.conversations, db.messages, db.settings, db.tombstones, db.entities, db.strategyState];
  const keys = (await db.settings.where('key').startsWith(`${IMPORT_UNDO_PREFIX}${importId}.`).primaryKeys()).sort().reverse();
  for (const key of keys) {
    await db.transaction('rw', tables, async () => {
      const row = await db.settings.get(key);
      if (row) {
        const undo = row.value as ImportUndo;
        await db.memoryHistory.bulkDelete(undo.added.memoryHistory);
        await db.messages.bulkDelete(undo.added.messages);
        await db.memories.bulkDelete(undo.added.memories);
        await db.conversations.bulkDelete(undo.added.conversations);
        await db.memories.bulkPut(undo.before.memories);
        await db.conversations.bulkPut(undo.before.conversations);
        await db.entities.bulkDelete(undo.added.entities ?? []);
        await db.strategyState.bulkDelete(undo.added.strategyState ?? []);
        await db.entities.bulkPut(undo.before.entities ?? []);
        await db.strategyState.bulkPut(undo.before.strategyState ?? []);
      }
      await db.settings.delete(key);
    });
  }
  await db.transaction('rw', db.settings, async () => {
    const journal = (await db.settings.get(IMPORT_JOURNAL_KEY))?.value as ImportJournal | undefined;
    if (journal?.importId === importId) await db.settings.delete(IMPORT_JOURNAL_KEY);
  });
}

/**
 * Run when the core starts, before its indexes are built: undoes an import whose journal was
 * left behind (the context was killed or the browser closed before it committed), removes undo
 * records no journal refers to, and leaves a notice (`IMPORT_NOTICE_KEY`) for the panel.
 * @returns the interrupted import, or `null` when there was none.
 */
export async function recoverInterruptedImport(db: RecallDB, now: () => number = Date.now): Promise<InterruptedImport | null> {
  const journal = (await db.settings.get(IMPORT_JOURNAL_KEY))?.value as ImportJournal | undefined;
  let notice: InterruptedImport | null = null;
  if (journal) {
    await rollbackImport(db, journal.importId);
    notice = { fileName: journal.fileName, startedAt: journal.startedAt, undoneAt: now() };
    await db.settings.put({ key: IMPORT_NOTICE_KEY, value: notice });
  }
  const stray = await db.settings.where('key').startsWith(IMPORT_UNDO_PREFIX).primaryKeys();
  if (stray.length > 0) await db.settings.bulkDelete(stray);
  return notice;
}
