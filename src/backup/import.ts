/**
 * Import of a backup file, in two passes over its records (a file up to `PARSE_ONCE_MAX_BYTES` is
 * parsed once: the check pass keeps the validated records for the write pass; a larger one is
 * streamed twice):
 * 1. **Check** (nothing written): every record is validated (zod); duplicate ids (memories,
 *    conversations, messages) and two messages at one position (`conversationId` + `seq`) refuse
 *    the file whole, naming the record; vector dimensions are counted per embedding model.
 * 2. **Write**, in batches of `IMPORT_BATCH_SIZE` records, each batch in ONE Dexie transaction
 *    (the long-term store's `putMemories` when it holds memories) holding its records, the
 *    store's index blocks and header for its memories, and its undo record (settings row
 *    `state.import.undo.<importId>.<batch>`: ids added, previous versions of records updated).
 *    A batch reads what it decides on in bulk, every request issued together (no read waits
 *    for another): conversations, messages and memories by id (`bulkGet`), message positions
 *    (one [conversationId+seq] range read per conversation), tombstones (`bulkGet`), stored
 *    memories with the same text hash and stored history of its memories (one keyed read each);
 *    it writes with one bulk call per table. So the store's indexes are up to date after every
 *    batch: no rebuild afterwards, and rows are written once, without their vectors (which go
 *    into the blocks). The lexical index is updated after each batch's commit; its snapshot is
 *    written once the import is idle. The journal row `state.import` is written before the first
 *    batch and deleted, together with every undo row, in the final commit transaction. A
 *    failure in this pass undoes the batches written so far (then the store's indexes are
 *    rebuilt from the rows); a context killed or a browser closed mid-import leaves the journal
 *    behind, and `recoverInterruptedImport` (run when the core starts, before the store opens)
 *    undoes it then: the undo deletes added rows (the row count then disagrees with the
 *    persisted index's header) and puts previous versions back with their `embedding` field
 *    (marked `pending` by the schema's hooks), so the store's open repairs its index from the
 *    rows. So the store holds all of a file or none of it, at any size.
 * What can be derived is recomputed, never trusted: `hash` from the text, `current` from
 * `validUntil`, vectors re-normalized; a vector of another dimension than the current embedder's
 * (or, without one, the file's most common dimension for that model), with NaN/±Infinity or a
 * zero norm is dropped and its memory re-embedded (`vectorsDropped`, `needsEmbedding`).
 * Entity notes and strategy states (v2) follow the same rule as conversations (absent: added;
 * newer `updatedAt`: replaced, the old row kept in the undo); the file's settings (validated in
 * pass 1), its "not relevant here" feedback and rejected suggestions' hashes (`./feedback.ts`:
 * merged without duplicates) are written in the commit transaction, so they land with the
 * records or not at all.
 * A corrupt file, another format or another version throws `ImportError` with a readable message
 * and changes nothing. Records that already exist are merged (`decideMemories` for memories): the
 * newer `updatedAt` wins; identical or older ones are skipped; a memory whose text duplicates a
 * current one in the same namespace is skipped. Each imported or updated memory gets an `IMPORT`
 * event in its history.
 */
import type { RecallDB } from '../db/schema';
import type { ConversationRecord, EntityRecord, MemoryHistoryRecord, MemoryRecord, MessageRecord, StrategyStateRecord } from '../model/records';
import type { LongTermStore } from '../memory/long-term/types';
import type { ImportReport, TransferProgress } from '../model/backup';
import { MAINTENANCE_STATE_KEY, type Settings } from '../model/settings';
import { checkFile } from './check';
import { ImportError, refuse, type ExportFile } from './format';
import { IMPORT_JOURNAL_KEY, IMPORT_UNDO_PREFIX, rollbackImport, undoKey, type ImportJournal, type ImportUndo } from './journal';
import { bulkAddOrThrow, decideMemories, storedPositions, toMemoryRecord } from './merge';
import { readExportRecords, type FileRecord } from './reader';
import type { FileFeedback, FileProfile, FileRejectedSuggestion } from './format';
import { mergeFeedback } from './feedback';

/** Records written per import batch (one transaction + one undo record each). */
export const IMPORT_BATCH_SIZE = 500;
/**
 * Files up to this size (bytes) are parsed and validated once: the check pass keeps its records
 * for the write pass (in memory about 2× the file's bytes), instead of the write pass streaming
 * and validating the file a second time. Larger files are read twice as streams, so memory holds
 * one piece at a time.
 */
export const PARSE_ONCE_MAX_BYTES = 48 * 1024 * 1024;

/**
 * What `importAll` needs of the long-term store: its bulk write (`putMemories`), after a failure
 * its repair (`rebuildIndexes`), and after the commit `reloadFeedback` (feedback rows were written).
 */
export type ImportStore = Pick<LongTermStore, 'putMemories' | 'rebuildIndexes' | 'reloadFeedback'>;

/** Result of `importAll`: the protocol's report plus how many memories lack a vector for the current model. */
export interface ImportResult extends ImportReport {
  /** Imported memories without an embedding (re-embed them with the `ltm.reembed` job). */
  needsEmbedding: number;
  /** Vectors of the file left out (wrong dimension, NaN/Infinity, zero norm); their memories are re-embedded. */
  vectorsDropped: number;
  /** Memories of the file left out because the user deleted or forgot them here (tombstones); counted in `skipped` too. */
  forgotten: number;
  /** How many settings the file carried (v2; absent when none): all of them were written at the commit. */
  settingsRestored?: number;
  /** The settings written (absent when none; the core reloads the embedder when `embeddingModelId` changed). */
  restoredSettings?: Partial<Settings>;
}

/**
 * Imports an export file (see module doc for the passes, the merge rules and the guarantee).
 * @param store the long-term store: each batch's memories go through its `putMemories` (rows and
 *   index in the batch's transaction); `rebuildIndexes()` only after a failure's undo.
 * @param source the file (a `File` from OPFS, or any `Blob`), read as a stream once (up to
 *   `options.parseOnceMaxBytes`, default `PARSE_ONCE_MAX_BYTES`) or twice.
 * @param options.embedder the current embedder's model id and dimension (vectors of that model
 *   must have that dimension); `null` when none is loaded.
 * @param options.fileName name recorded in the journal (default `'import'`).
 * @param options.onProgress progress of each pass: `check` (bytes of the file read, records
 *   validated so far), then `write` (records written of the file's total, after each batch).
 * @param options.batchSize records per write transaction (default `IMPORT_BATCH_SIZE`).
 * @param options.parseOnceMaxBytes the largest file (bytes) whose records the check pass keeps
 *   for the write pass (default `PARSE_ONCE_MAX_BYTES`; 0 or less: always stream twice).
 * @returns counts of added / updated / skipped records (memories, history, conversations and
 *   messages together), `errors` (empty: inconsistent files are refused whole), `needsEmbedding`
 *   and `vectorsDropped`.
 * @throws ImportError when the file is refused (nothing written, or everything written undone);
 *   a storage failure (e.g. `QuotaExceededError`) is rethrown after the undo.
 */
export async function importAll(
  db: RecallDB,
  store: ImportStore,
  source: Blob,
  options: {
    now?: () => number;
    embedder?: { modelId: string | null; dimension: number | null } | null;
    fileName?: string;
    batchSize?: number;
    parseOnceMaxBytes?: number;
    onProgress?: (progress: TransferProgress) => void;
  } = {},
): Promise<ImportResult> {
  const clock = options.now ?? Date.now;
  const now = clock();
  const total = source.size;
  const busy = (await db.settings.get(IMPORT_JOURNAL_KEY))?.value as ImportJournal | undefined;
  if (busy) throw new ImportError('busy', `Another import ("${busy.fileName}") is still running. Nothing was imported.`);
  // A small file's validated records, kept by the check pass for the write pass (see `PARSE_ONCE_MAX_BYTES`).
  const kept: FileRecord[][] | null = total <= Math.max(0, options.parseOnceMaxBytes ?? PARSE_ONCE_MAX_BYTES) && total > 0 ? [] : null;
  const plan = await checkFile(
    db,
    source,
    options.embedder ?? null,
    (done, records) => options.onProgress?.({ phase: 'check', done, total, records }),
    kept ? (records) => kept.push(records) : undefined,
  );

  const importId = `${now.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const journal: ImportJournal = { importId, fileName: options.fileName ?? 'import', startedAt: now };
  await db.transaction('rw', db.settings, async () => {
    if (await db.settings.get(IMPORT_JOURNAL_KEY)) throw new ImportError('busy', 'Another import is still running. Nothing was imported.');
    await db.settings.put({ key: IMPORT_JOURNAL_KEY, value: journal });
  });

  const report: ImportResult = {
    added: 0,
    updated: 0,
    skipped: 0,
    errors: [],
    needsEmbedding: 0,
    vectorsDropped: 0,
    forgotten: 0,
    ...(Object.keys(plan.settings).length > 0 ? { settingsRestored: Object.keys(plan.settings).length, restoredSettings: plan.settings } : {}),
  };
  const imported = new Set<string>();
  const processedMemories = new Set<string>();
  const deferredHistory: ExportFile['memoryHistory'] = [];
  const batchSize = Math.max(1, options.batchSize ?? IMPORT_BATCH_SIZE);
  let batchNo = 0;
  let recordsWritten = 0;
  let queue: FileRecord[] = [];

  /**
   * Whether a file record replaces `stored` (absent, or older `updatedAt`), counting it in the
   * report and calling `onAdd` / `onReplace(stored)` for the undo.
   */
  const newer = <T extends { updatedAt: number }>(record: T, stored: T | undefined, onAdd: () => void, onReplace: (stored: T) => void): boolean => {
    if (!stored) {
      onAdd();
      report.added += 1;
      return true;
    }
    if (record.updatedAt > stored.updatedAt) {
      onReplace(stored);
      report.updated += 1;
      return true;
    }
    report.skipped += 1;
    return false;
  };

  /** A history entry's identity: two entries of one memory with the same event, time and texts are the same entry. */
  const historyKey = (h: Omit<ExportFile['memoryHistory'][number], 'source'>) => JSON.stringify([h.memoryId, h.event, h.at, h.oldText, h.newText]);

  /**
   * The file's history entries of a batch that are added: not stored already (nor earlier in the
   * batch: `added` holds the keys of the entries this batch adds, its `IMPORT` ones included), and
   * not about a memory of the file that was skipped as a duplicate or forgotten (its history would
   * describe the wrong record). Reads: the stored history of each memory, one keyed read each,
   * and the stored memories it may be about, in one `bulkGet`, issued together.
   */
  const historyToAdd = async (entries: ExportFile['memoryHistory'], added: Set<string>): Promise<ExportFile['memoryHistory']> => {
    if (entries.length === 0) return [];
    const memoryIds = [...new Set(entries.map((h) => h.memoryId))];
    const unsure = memoryIds.filter((id) => !imported.has(id) && plan.memoryIds.has(id));
    const [stored, present] = await Promise.all([
      Promise.all(memoryIds.map((id) => db.memoryHistory.where('memoryId').equals(id).toArray())),
      db.memories.bulkGet(unsure),
    ]);
    const seen = new Set([...added, ...stored.flat().map(historyKey)]);
    const missing = new Set(unsure.filter((_, i) => !present[i]));
    return entries.filter((h) => {
      const key = historyKey(h);
      if (seen.has(key) || missing.has(h.memoryId)) {
        report.skipped += 1;
        return false;
      }
      seen.add(key);
      report.added += 1;
      return true;
    });
  };

  /** The file's `profiles` entries, feedback rows and rejected hashes (written with the commit). */
  const fileProfiles: FileProfile[] = [];
  const fileChoices: { feedback: FileFeedback[]; rejectedSuggestions: FileRejectedSuggestion[] } = { feedback: [], rejectedSuggestions: [] };
  const writeBatch = async (records: FileRecord[], history: ExportFile['memoryHistory'] = []) => {
    const undo: ImportUndo = {
      added: { memories: [], conversations: [], messages: [], memoryHistory: [], entities: [], strategyState: [] },
      before: { memories: [], conversations: [], entities: [], strategyState: [] },
    };
    for (const r of records) {
      if (r.section === 'profiles') fileProfiles.push(r.value);
      else if (r.section === 'feedback') fileChoices.feedback.push(r.value);
      else if (r.section === 'rejectedSuggestions') fileChoices.rejectedSuggestions.push(r.value);
    }
    const conversationsOfBatch = records.filter((r) => r.section === 'conversations').map((r) => r.value as ConversationRecord);
    const entitiesOfBatch = records.flatMap((r) => (r.section === 'entities' ? [r.value as EntityRecord] : []));
    const statesOfBatch = records.flatMap((r) => (r.section === 'strategyState' ? [r.value as StrategyStateRecord] : []));
    const messagesOfBatch = records.filter((r) => r.section === 'messages').map((r) => r.value as MessageRecord);
    const memoriesOfBatch = records.flatMap((r) => (r.section === 'memories' ? [toMemoryRecord(r.value, r.index, plan, now)] : []));
    for (const { record } of memoriesOfBatch) processedMemories.add(record.id);
    // History of a memory of the file that a later batch holds waits until that memory is written.
    const fileHistory = [...history];
    for (const r of records) {
      if (r.section !== 'memoryHistory') continue;
      if (plan.memoryIds.has(r.value.memoryId) && !processedMemories.has(r.value.memoryId)) deferredHistory.push(r.value);
      else fileHistory.push(r.value);
    }
    let stored: MemoryRecord[] = [];
    // A batch without memories (conversations, messages, history) leaves the store's index alone:
    // its own transaction over the same tables, without the index header's read and write.
    const tables = [db.conversations, db.messages, db.settings, db.entities, db.strategyState];
    const inTransaction: ImportStore['putMemories'] =
      memoriesOfBatch.length > 0
        ? (write) => store.putMemories(write, { tables })
        : async (write) => ({
            result: (await db.transaction('rw', [db.memories, db.memoryHistory, db.tombstones, ...tables], write)).result,
            unindexed: [],
          });
    const { unindexed } = await inTransaction(async () => {
      // Everything the batch decides on is read first, all requests issued together: the
      // conversations and messages by id (one bulkGet each) and their positions (one range read
      // per conversation), the memories' ids, tombstones and hashes (`decideMemories`). That
      // decides as a look-up per record would: the check pass refused files with two records of
      // one id or two messages at one position, so a record of the batch cannot meet another one.
      const [storedConversationRows, storedMessageRows, decisions, storedEntities, storedStates] = await Promise.all([
        db.conversations.bulkGet(conversationsOfBatch.map((c) => c.id)),
        messagesOfBatch.length > 0 ? db.messages.bulkGet(messagesOfBatch.map((m) => m.id)) : Promise.resolve([]),
        decideMemories(
          db,
          memoriesOfBatch.map((m) => m.record),
        ),
        entitiesOfBatch.length > 0 ? db.entities.bulkGet(entitiesOfBatch.map((e) => e.id)) : Promise.resolve([]),
        statesOfBatch.length > 0 ? db.strategyState.bulkGet(statesOfBatch.map((r) => [r.conversationId, r.strategy])) : Promise.resolve([]),
      ]);
      // Entity notes and strategy states: added when absent, replaced when the file's is newer (`updatedAt`).
      const newerEntities = entitiesOfBatch.filter((e, i) =>
        newer(
          e,
          storedEntities[i],
          () => undo.added.entities!.push(e.id),
          (old) => undo.before.entities!.push(old),
        ),
      );
      const newerStates = statesOfBatch.filter((r, i) =>
        newer(
          r,
          storedStates[i],
          () => undo.added.strategyState!.push([r.conversationId, r.strategy]),
          (old) => undo.before.strategyState!.push(old),
        ),
      );
      const storedConversations = new Map<string, ConversationRecord>();
      for (const c of storedConversationRows) if (c) storedConversations.set(c.id, c);
      const storedMessageIds = new Set(storedMessageRows.flatMap((m) => (m ? [m.id] : [])));
      const takenPositions = await storedPositions(
        db,
        messagesOfBatch.filter((m) => !storedMessageIds.has(m.id)),
      );
      const newConversations: ConversationRecord[] = [];
      const newerConversations: ConversationRecord[] = [];
      for (const c of conversationsOfBatch) {
        const existing = storedConversations.get(c.id);
        if (!existing) {
          newConversations.push(c);
          undo.added.conversations.push(c.id);
          report.added += 1;
        } else if (c.updatedAt > existing.updatedAt) {
          undo.before.conversations.push(existing);
          newerConversations.push(c);
          report.updated += 1;
        } else report.skipped += 1;
      }
      const newMessages: MessageRecord[] = [];
      for (const m of messagesOfBatch) {
        if (storedMessageIds.has(m.id)) {
          report.skipped += 1;
          continue;
        }
        const taken = takenPositions.get(`${m.conversationId}\u0000${m.seq}`);
        if (taken !== undefined) {
          throw refuse(
            'position_taken',
            `Message ${m.id} cannot be imported: position ${m.seq} of conversation ${m.conversationId} already holds another message (${taken}).`,
            { seq: m.seq },
          );
        }
        newMessages.push(m);
        undo.added.messages.push(m.id);
        report.added += 1;
      }
      const added: MemoryRecord[] = [];
      const updated: MemoryRecord[] = [];
      const historyRows: MemoryHistoryRecord[] = [];
      memoriesOfBatch.forEach(({ record: m, vectorDropped }, i) => {
        const decision = decisions[i]!;
        if (decision.action === 'skip') {
          report.skipped += 1;
          if (decision.reason === 'forgotten') report.forgotten += 1;
          return;
        }
        if (vectorDropped) report.vectorsDropped += 1;
        if (decision.action === 'update') {
          undo.before.memories.push(decision.existing);
          updated.push(m);
          report.updated += 1;
        } else {
          added.push(m);
          undo.added.memories.push(m.id);
          report.added += 1;
        }
        historyRows.push({
          memoryId: m.id,
          event: 'IMPORT',
          oldText: decision.action === 'update' ? decision.existing.text : null,
          // A created memory's text is not copied: `db/history.ts` derives it from the row.
          newText: decision.action === 'update' ? m.text : null,
          at: now,
          source: 'import',
        });
        imported.add(m.id);
      });
      historyRows.push(...(await historyToAdd(fileHistory, new Set(historyRows.map(historyKey)))).map((h) => ({ ...h })));
      const [historyIds] = await Promise.all([
        historyRows.length > 0 ? db.memoryHistory.bulkAdd(historyRows, { allKeys: true }) : Promise.resolve([]),
        bulkAddOrThrow(db.conversations, newConversations),
        newerConversations.length > 0 ? db.conversations.bulkPut(newerConversations) : Promise.resolve(),
        bulkAddOrThrow(db.messages, newMessages),
        newerEntities.length > 0 ? db.entities.bulkPut(newerEntities) : Promise.resolve(),
        newerStates.length > 0 ? db.strategyState.bulkPut(newerStates) : Promise.resolve(),
      ]);
      undo.added.memoryHistory.push(...(historyIds as number[]));
      await db.settings.put({ key: undoKey(importId, batchNo), value: undo });
      stored = [...added, ...updated];
      return { added, updated, result: undefined };
    });
    // A vector the blocks refused (another dimension than the stored vectors of its model) is dropped too.
    report.vectorsDropped += unindexed.length;
    report.needsEmbedding += stored.filter((m) => !m.embedding).length;
    batchNo += 1;
    recordsWritten += records.filter((r) => r.section !== 'profiles').length + history.length;
    options.onProgress?.({ phase: 'write', done: recordsWritten, total: plan.records });
  };

  try {
    const take = async (records: FileRecord[]) => {
      queue.push(...records);
      while (queue.length >= batchSize) await writeBatch(queue.splice(0, batchSize));
    };
    if (kept) for (let records = kept.shift(); records; records = kept.shift()) await take(records);
    else await readExportRecords(source, take);
    if (queue.length > 0) await writeBatch(queue.splice(0));
    while (deferredHistory.length > 0) await writeBatch([], deferredHistory.splice(0, batchSize));
    // Commit point: the journal and every undo record go in one transaction.
    await db.transaction('rw', [db.settings, db.profiles, db.feedback, db.suggestions, db.memories], async () => {
      // Profile names of the file, for namespaces that have no profile row here (a local name wins).
      for (const profile of fileProfiles) {
        if (!profile.name || (await db.profiles.get(profile.namespace))) continue;
        await db.profiles.add({ id: profile.namespace, name: profile.name, createdAt: profile.createdAt ?? now });
      }
      // "Not relevant here" rows and rejected hashes, merged without duplicates (`./feedback.ts`).
      const merged = await mergeFeedback(db, fileChoices, plan.dimensions);
      report.added += merged.added;
      report.skipped += merged.skipped;
      const undoRows = await db.settings.where('key').startsWith(`${IMPORT_UNDO_PREFIX}${importId}.`).primaryKeys();
      await db.settings.bulkDelete(undoRows);
      await db.settings.delete(IMPORT_JOURNAL_KEY);
      // The file's settings (validated by the check pass) are part of the commit: all or nothing.
      const restored = Object.entries(plan.settings).map(([key, value]) => ({ key, value }));
      if (restored.length > 0) await db.settings.bulkPut(restored);
      // Imported memories keep their old `updatedAt`: the next maintenance run must compare them all.
      await db.settings.delete(MAINTENANCE_STATE_KEY);
    });
  } catch (error) {
    // The undo changes memory rows behind the store (the persisted index then disagrees with
    // them: a start-up repairs that too); the live index is rebuilt from the rows now.
    await rollbackImport(db, importId);
    await store.rebuildIndexes();
    throw error;
  }
  if (fileChoices.feedback.length > 0) store.reloadFeedback();
  queue = [];
  return report;
}
