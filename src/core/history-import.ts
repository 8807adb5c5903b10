/**
 * Writing history from other assistants (parsed by `src/importers/`) and pasted saved memories.
 *
 * History (`importHistory`): each conversation becomes a Recall conversation with its own title and
 * dates, id `import:<sourceId>` (e.g. `import:chatgpt:<id>`), and its messages (`<conversation id>#<seq>`,
 * status `complete`, dated when they were said). A conversation whose id is already stored (an
 * earlier import of the same source) is left out, so importing the same file again adds nothing.
 * The file is written all or nothing with the backup import's journal (`src/backup/journal.ts`):
 * the journal row first, then one transaction per conversation (its row, its messages and its undo
 * record), then one commit transaction that removes the journal and the undo records. A failure
 * undoes what was written (`rollbackImport`); a context killed mid-import is undone when the core
 * starts (`recoverInterruptedImport`, as for a backup).
 * After the commit, each round (a user message and the reply after it, or a user message alone:
 * a note, a snippet) is queued as an `ltm.episodic` job — the round becomes an episodic memory
 * dated when it was said — and as an `ltm.extract` job, the extractions spaced
 * `HISTORY_EXTRACT_INTERVAL_MS` apart (a bounded rate; the queue pauses them for chat turns, as
 * all background work). A round without a reply names an assistant message id that is never
 * stored (`<user message id>.noreply`): both jobs read a missing reply as none.
 *
 * Saved memories (`importSavedMemories`): each line of the pasted list becomes a pinned memory
 * (kind `fact`, as a memory the user adds by hand); exact duplicates of a stored memory (the
 * store's normalized-text hash) or of another line are skipped.
 */
import type { RecallDB } from '../db/schema';
import { enqueueJob } from '../jobs/descriptor';
import type { JobQueue } from '../jobs/queue';
import { IMPORT_JOURNAL_KEY, IMPORT_UNDO_PREFIX, rollbackImport, undoKey, type ImportJournal, type ImportUndo } from '../backup/journal';
import { episodicJob } from '../memory/long-term';
import { extractJob } from '../memory/long-term/jobs';
import type { ExchangeInput, LongTermStore } from '../memory/long-term/types';
import { parseSavedMemories } from '../importers';
import { HistoryImportError } from '../model/errors';
import type { HistoryImportReport, ParsedHistory, SavedMemoriesReport } from '../model/history-import';
import { MAX_MEMORY_TEXT_CHARS } from '../model/memory';
import type { ConversationRecord, MessageRecord } from '../model/records';
import type { StrategyConfig } from '../model/strategies';
import { capChars } from '../prompt/neutralize';

/** Time between two queued extraction jobs of one history import (ms): at most one extraction every 3 s. */
export const HISTORY_EXTRACT_INTERVAL_MS = 3_000;

/** What the writer needs. */
export interface HistoryImportDeps {
  db: RecallDB;
  jobs: JobQueue;
  store: LongTermStore;
  /** Clock (ms epoch), default `Date.now`. */
  now?: () => number;
}

/** The stored conversation id of an imported conversation. */
export const importedConversationId = (sourceId: string) => `import:${sourceId}`;

/**
 * Writes a parsed file (see module doc).
 * @param options.namespace the memory namespace (profile) the conversations and rounds belong to.
 * @param options.strategy the short-term strategy of the new conversations (the user's default).
 * @param options.fileName the name of the picked file, for the journal and errors.
 * @returns counts: conversations added / skipped (already imported), messages written, rounds queued.
 * @throws HistoryImportError `busy` while another import (backup or history) runs; a storage
 *   failure is rethrown after everything written is undone.
 */
export async function importHistory(
  deps: HistoryImportDeps,
  parsed: ParsedHistory,
  options: { namespace: string; strategy: StrategyConfig; fileName: string },
): Promise<HistoryImportReport> {
  const { db } = deps;
  const now = (deps.now ?? Date.now)();
  const importId = `${now.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const journal: ImportJournal = { importId, fileName: options.fileName, startedAt: now };
  await db.transaction('rw', db.settings, async () => {
    if (await db.settings.get(IMPORT_JOURNAL_KEY)) {
      throw new HistoryImportError('busy', `Another import is still running. Nothing of ${options.fileName} was imported.`, {
        params: { file: options.fileName },
      });
    }
    await db.settings.put({ key: IMPORT_JOURNAL_KEY, value: journal });
  });

  const report: HistoryImportReport = { format: parsed.format, conversations: { added: 0, skipped: 0 }, messages: 0, rounds: 0 };
  const exchanges: ExchangeInput[] = [];
  try {
    for (const [batch, conversation] of parsed.conversations.entries()) {
      const id = importedConversationId(conversation.sourceId);
      const record: ConversationRecord = {
        id,
        title: conversation.title,
        namespace: options.namespace,
        strategy: options.strategy,
        createdAt: conversation.createdAt,
        updatedAt: conversation.updatedAt,
      };
      const messages: MessageRecord[] = conversation.messages.map((m, seq) => ({
        id: `${id}#${seq}`,
        conversationId: id,
        seq,
        role: m.role,
        content: m.text,
        createdAt: m.at,
        status: 'complete',
      }));
      const added = await db.transaction('rw', [db.conversations, db.messages, db.settings], async () => {
        if (await db.conversations.get(id)) return false;
        await db.conversations.add(record);
        await db.messages.bulkAdd(messages);
        const undo: ImportUndo = {
          added: { memories: [], conversations: [id], messages: messages.map((m) => m.id), memoryHistory: [] },
          before: { memories: [], conversations: [] },
        };
        await db.settings.put({ key: undoKey(importId, batch), value: undo });
        return true;
      });
      if (!added) {
        report.conversations.skipped += 1;
        continue;
      }
      report.conversations.added += 1;
      report.messages += messages.length;
      messages.forEach((m, i) => {
        if (m.role !== 'user') return;
        const reply = messages[i + 1]?.role === 'assistant' ? messages[i + 1]!.id : `${m.id}.noreply`;
        exchanges.push({ conversationId: id, namespace: options.namespace, userMessageId: m.id, assistantMessageId: reply });
      });
    }
    // Commit point: the journal and every undo record go in one transaction.
    await db.transaction('rw', db.settings, async () => {
      await db.settings.bulkDelete(await db.settings.where('key').startsWith(`${IMPORT_UNDO_PREFIX}${importId}.`).primaryKeys());
      await db.settings.delete(IMPORT_JOURNAL_KEY);
    });
  } catch (error) {
    await rollbackImport(db, importId);
    throw error;
  }
  for (const [i, exchange] of exchanges.entries()) {
    await enqueueJob(deps.jobs, episodicJob, exchange);
    await enqueueJob(deps.jobs, extractJob, exchange, { delayMs: i * HISTORY_EXTRACT_INTERVAL_MS });
  }
  report.rounds = exchanges.length;
  return report;
}

/**
 * Stores a pasted list of saved memories (see module doc) in `namespace`.
 * @param text the pasted list, one memory per line or bullet; a line over `MAX_MEMORY_TEXT_CHARS` characters is shortened to it.
 * @returns memories added, and lines skipped as duplicates (of a stored memory or of another line).
 */
export async function importSavedMemories(deps: Pick<HistoryImportDeps, 'store'>, input: { namespace: string; text: string }): Promise<SavedMemoriesReport> {
  const memories = parseSavedMemories(input.text).map((line) => capChars(line, MAX_MEMORY_TEXT_CHARS));
  if (memories.length === 0) return { added: 0, skipped: 0 };
  const results = await deps.store.addMany(
    memories.map((text) => ({ namespace: input.namespace, kind: 'fact' as const, text, pinned: true, importance: 0.9 })),
    'user',
  );
  const added = results.filter((r) => r.created).length;
  return { added, skipped: memories.length - added };
}
