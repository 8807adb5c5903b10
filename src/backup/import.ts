/**
 * Import of a backup file, in two passes over it:
 * 1. **Check** (nothing written): every record is validated (zod); duplicate ids (memories,
 *    conversations, messages) and two messages at one position (`conversationId` + `seq`) refuse
 *    the file whole, naming the record; vector dimensions are counted per embedding model.
 * 2. **Write**, in batches of `IMPORT_BATCH_SIZE` records, each batch in one Dexie transaction
 *    that also stores its undo record (settings row `state.import.undo.<importId>.<batch>`: ids
 *    added, previous versions of records updated); a batch's conversations and messages are looked
 *    up together (one `bulkGet` of ids, one [conversationId+seq] range read per conversation) and
 *    added with one `bulkAdd` per table. The journal row `state.import` is written
 *    before the first batch and deleted, together with every undo row, in the final commit
 *    transaction. A failure in this pass undoes the batches written so far; a context killed or
 *    a browser closed mid-import leaves the journal behind, and `recoverInterruptedImport` (run
 *    when the core starts, before the indexes are built) undoes it then. So the store holds all
 *    of a file or none of it, at any size.
 * What can be derived is recomputed, never trusted: `hash` from the text, `current` from
 * `validUntil`, vectors re-normalized; a vector of another dimension than the current embedder's
 * (or, without one, the file's most common dimension for that model), with NaN/±Infinity or a
 * zero norm is dropped and its memory re-embedded (`vectorsDropped`, `needsEmbedding`).
 * A corrupt file, another format or another version throws `ImportError` with a readable message
 * and changes nothing. Records that already exist are merged (`decideMemory` for memories): the
 * newer `updatedAt` wins; identical or older ones are skipped; a memory whose text duplicates a
 * current one in the same namespace is skipped. Each imported or updated memory gets an `IMPORT`
 * event in its history. Afterwards the store's lexical and vector indexes are rebuilt.
 */
import type { RecallDB } from '../db/schema';
import type { ConversationRecord, MessageRecord } from '../model/records';
import type { ImportReport, TransferProgress } from '../model/backup';
import { MAINTENANCE_STATE_KEY } from '../model/settings';
import { checkFile } from './check';
import { ImportError, refuse, type ExportFile } from './format';
import { IMPORT_JOURNAL_KEY, IMPORT_UNDO_PREFIX, rollbackImport, undoKey, type ImportJournal, type ImportUndo } from './journal';
import { bulkAddOrThrow, decideMemory, storedPositions, toMemoryRecord } from './merge';
import { readExportRecords, type FileRecord } from './reader';

/** Records written per import batch (one transaction + one undo record each). */
export const IMPORT_BATCH_SIZE = 500;

/** Result of `importAll`: the protocol's report plus how many memories lack a vector for the current model. */
export interface ImportResult extends ImportReport {
  /** Imported memories without an embedding (re-embed them with the `ltm.reembed` job). */
  needsEmbedding: number;
  /** Vectors of the file left out (wrong dimension, NaN/Infinity, zero norm); their memories are re-embedded. */
  vectorsDropped: number;
  /** Memories of the file left out because the user deleted or forgot them here (tombstones); counted in `skipped` too. */
  forgotten: number;
}

/**
 * Imports an export file (see module doc for the passes, the merge rules and the guarantee).
 * @param store the memory store; only its `rebuildIndexes()` is used, after the data is committed.
 * @param source the file (a `File` from OPFS, or any `Blob`), read as a stream twice.
 * @param options.embedder the current embedder's model id and dimension (vectors of that model
 *   must have that dimension); `null` when none is loaded.
 * @param options.fileName name recorded in the journal (default `'import'`).
 * @param options.onProgress bytes read in each pass (`check`, then `write`).
 * @param options.batchSize records per write transaction (default `IMPORT_BATCH_SIZE`).
 * @returns counts of added / updated / skipped records (memories, history, conversations and
 *   messages together), `errors` (empty: inconsistent files are refused whole), `needsEmbedding`
 *   and `vectorsDropped`.
 * @throws ImportError when the file is refused (nothing written, or everything written undone);
 *   a storage failure (e.g. `QuotaExceededError`) is rethrown after the undo.
 */
export async function importAll(
  db: RecallDB,
  store: { rebuildIndexes(): Promise<void> },
  source: Blob,
  options: {
    now?: () => number;
    embedder?: { modelId: string | null; dimension: number | null } | null;
    fileName?: string;
    batchSize?: number;
    onProgress?: (progress: TransferProgress) => void;
  } = {},
): Promise<ImportResult> {
  const clock = options.now ?? Date.now;
  const now = clock();
  const total = source.size;
  const busy = (await db.settings.get(IMPORT_JOURNAL_KEY))?.value as ImportJournal | undefined;
  if (busy) throw new ImportError('busy', `Another import ("${busy.fileName}") is still running. Nothing was imported.`);
  const plan = await checkFile(db, source, options.embedder ?? null, (done) => options.onProgress?.({ phase: 'check', done, total }));

  const importId = `${now.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const journal: ImportJournal = { importId, fileName: options.fileName ?? 'import', startedAt: now };
  await db.transaction('rw', db.settings, async () => {
    if (await db.settings.get(IMPORT_JOURNAL_KEY)) throw new ImportError('busy', 'Another import is still running. Nothing was imported.');
    await db.settings.put({ key: IMPORT_JOURNAL_KEY, value: journal });
  });

  const report: ImportResult = { added: 0, updated: 0, skipped: 0, errors: [], needsEmbedding: 0, vectorsDropped: 0, forgotten: 0 };
  const imported = new Set<string>();
  const processedMemories = new Set<string>();
  const deferredHistory: ExportFile['memoryHistory'] = [];
  const batchSize = Math.max(1, options.batchSize ?? IMPORT_BATCH_SIZE);
  const tables = [db.memories, db.memoryHistory, db.conversations, db.messages, db.settings, db.tombstones];
  let batchNo = 0;
  let queue: FileRecord[] = [];

  const addHistory = async (h: ExportFile['memoryHistory'][number], undo: ImportUndo) => {
    const same = await db.memoryHistory
      .where('memoryId')
      .equals(h.memoryId)
      .and((x) => x.event === h.event && x.at === h.at && x.oldText === h.oldText && x.newText === h.newText)
      .first();
    // History of a memory skipped as a duplicate of another one would describe the wrong record.
    if (same || (!imported.has(h.memoryId) && plan.memoryIds.has(h.memoryId) && !(await db.memories.get(h.memoryId)))) {
      report.skipped += 1;
      return;
    }
    undo.added.memoryHistory.push((await db.memoryHistory.add({ ...h })) as number);
    report.added += 1;
  };

  const writeBatch = async (records: FileRecord[], history: ExportFile['memoryHistory'] = []) => {
    const undo: ImportUndo = { added: { memories: [], conversations: [], messages: [], memoryHistory: [] }, before: { memories: [], conversations: [] } };
    await db.transaction('rw', tables, async () => {
      // Conversations and messages of the batch are looked up with one bulkGet (ids) and one
      // anyOf over [conversationId+seq] (positions) and written with one bulkAdd each. That is
      // the same as a lookup per record: the check pass refused files with two records of one
      // id or two messages at one position, so a record of the batch cannot meet another one.
      const conversationsOfBatch = records.filter((r) => r.section === 'conversations').map((r) => r.value as ConversationRecord);
      const messagesOfBatch = records.filter((r) => r.section === 'messages').map((r) => r.value as MessageRecord);
      const storedConversations = new Map<string, ConversationRecord>();
      for (const c of await db.conversations.bulkGet(conversationsOfBatch.map((c) => c.id))) if (c) storedConversations.set(c.id, c);
      const storedMessageIds = new Set<string>();
      const takenPositions = new Map<string, string>();
      if (messagesOfBatch.length > 0) {
        for (const m of await db.messages.bulkGet(messagesOfBatch.map((m) => m.id))) if (m) storedMessageIds.add(m.id);
        for (const [position, id] of await storedPositions(
          db,
          messagesOfBatch.filter((m) => !storedMessageIds.has(m.id)),
        ))
          takenPositions.set(position, id);
      }
      const newConversations: ConversationRecord[] = [];
      const newMessages: MessageRecord[] = [];
      for (const r of records) {
        if (r.section === 'conversations') {
          const c = r.value as ConversationRecord;
          const existing = storedConversations.get(c.id);
          if (!existing) {
            newConversations.push(c);
            undo.added.conversations.push(c.id);
            report.added += 1;
          } else if (c.updatedAt > existing.updatedAt) {
            undo.before.conversations.push(existing);
            await db.conversations.put(c);
            report.updated += 1;
          } else report.skipped += 1;
        } else if (r.section === 'messages') {
          const m = r.value as MessageRecord;
          if (storedMessageIds.has(m.id)) {
            report.skipped += 1;
            continue;
          }
          const taken = takenPositions.get(`${m.conversationId}\u0000${m.seq}`);
          if (taken !== undefined) {
            throw refuse(
              'position_taken',
              `Message ${m.id} cannot be imported: position ${m.seq} of conversation ${m.conversationId} already holds another message (${taken}).`,
              {
                seq: m.seq,
              },
            );
          }
          newMessages.push(m);
          undo.added.messages.push(m.id);
          report.added += 1;
        } else if (r.section === 'memories') {
          const { record: m, vectorDropped } = toMemoryRecord(r.value, r.index, plan, now);
          processedMemories.add(m.id);
          const decision = await decideMemory(db, m);
          if (decision.action === 'skip') {
            report.skipped += 1;
            if (decision.reason === 'forgotten') report.forgotten += 1;
            continue;
          }
          if (vectorDropped) report.vectorsDropped += 1;
          if (decision.action === 'update') {
            undo.before.memories.push(decision.existing);
            await db.memories.put(m);
            report.updated += 1;
          } else {
            await db.memories.add(m);
            undo.added.memories.push(m.id);
            report.added += 1;
          }
          undo.added.memoryHistory.push(
            (await db.memoryHistory.add({
              memoryId: m.id,
              event: 'IMPORT',
              oldText: decision.action === 'update' ? decision.existing.text : null,
              // A created memory's text is not copied: `db/history.ts` derives it from the row.
              newText: decision.action === 'update' ? m.text : null,
              at: now,
              source: 'import',
            })) as number,
          );
          imported.add(m.id);
          if (!m.embedding) report.needsEmbedding += 1;
        } else {
          const h = r.value as ExportFile['memoryHistory'][number];
          if (plan.memoryIds.has(h.memoryId) && !processedMemories.has(h.memoryId)) deferredHistory.push(h);
          else await addHistory(h, undo);
        }
      }
      for (const h of history) await addHistory(h, undo);
      await bulkAddOrThrow(db.conversations, newConversations);
      await bulkAddOrThrow(db.messages, newMessages);
      await db.settings.put({ key: undoKey(importId, batchNo), value: undo });
    });
    batchNo += 1;
  };

  try {
    await readExportRecords(
      source,
      async (records) => {
        queue.push(...records);
        while (queue.length >= batchSize) await writeBatch(queue.splice(0, batchSize));
      },
      (done) => options.onProgress?.({ phase: 'write', done, total }),
    );
    if (queue.length > 0) await writeBatch(queue.splice(0));
    while (deferredHistory.length > 0) await writeBatch([], deferredHistory.splice(0, batchSize));
    // Commit point: the journal and every undo record go in one transaction.
    await db.transaction('rw', db.settings, async () => {
      const undoRows = await db.settings.where('key').startsWith(`${IMPORT_UNDO_PREFIX}${importId}.`).primaryKeys();
      await db.settings.bulkDelete(undoRows);
      await db.settings.delete(IMPORT_JOURNAL_KEY);
      // Imported memories keep their old `updatedAt`: the next maintenance run must compare them all.
      await db.settings.delete(MAINTENANCE_STATE_KEY);
    });
  } catch (error) {
    await rollbackImport(db, importId);
    await store.rebuildIndexes();
    throw error;
  }
  queue = [];
  await store.rebuildIndexes();
  return report;
}
