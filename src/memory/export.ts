/**
 * Export and import of everything the user would expect to take along: long-term memories with
 * their change history, and conversations with their messages.
 *
 * File format (JSON, UTF-8), version 1:
 * ```json
 * {
 *   "format": "recall-export",
 *   "version": 1,
 *   "exportedAt": 1715322600000,            // ms epoch
 *   "memories": [ { ...MemoryRecord, "embedding": "<base64 of little-endian float32>" | null } ],
 *   "memoryHistory": [ { "memoryId", "event", "oldText", "newText", "at", "source" } ],
 *   "conversations": [ ConversationRecord ],
 *   "messages": [ MessageRecord ]
 * }
 * ```
 * Field meanings are those of `src/db/schema.ts` (times in ms epoch). Embeddings are optional
 * (`embedding: null`); a memory keeps the id of the model that made its vector
 * (`embeddingModel`), and memories whose model is not the current one are re-embedded by the
 * `ltm.reembed` job. Not exported (derived or private to a device): prompt traces, short-term
 * strategy state (summaries are rebuilt), entities, jobs, settings, vector snapshots, model files.
 *
 * Import is all-or-nothing: the file is parsed and validated (zod) completely before anything is
 * written, and all writes happen in one Dexie transaction. A corrupt file, another format or
 * another version throws `ImportError` with a readable message and changes nothing. Records that
 * already exist are merged: the newer `updatedAt` wins; identical or older ones are skipped; a
 * memory whose text duplicates a current one in the same namespace is skipped. Each imported or
 * updated memory gets an `IMPORT` event in its history. Afterwards the store's lexical and vector
 * indexes are rebuilt.
 */
import { z } from 'zod';
import type { ConversationRecord, MemoryHistoryRecord, MemoryRecord, MessageRecord, RecallDB } from '../db/schema';
import type { ImportReport } from '../messaging/protocol';

/** Same key as `MAINTENANCE_STATE_KEY` of `./long-term/jobs` (not imported, to keep this module free of the job code). */
const MAINTENANCE_STATE_KEY = 'state.ltmMaintenance';

/** `format` marker of an export file. */
export const EXPORT_FORMAT = 'recall-export';
/** Current (and only readable) version of the export format. */
export const EXPORT_VERSION = 1;

/** An import that was refused; nothing was written. `message` is meant for the user. */
export class ImportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ImportError';
  }
}

/** Result of `importAll`: the protocol's report plus how many memories lack a vector for the current model. */
export interface ImportResult extends ImportReport {
  /** Imported memories without an embedding (re-embed them with the `ltm.reembed` job). */
  needsEmbedding: number;
}

// ── base64 of Float32Array (browser and Node: btoa/atob) ───────────────────────

/** Encodes a vector as base64 of its little-endian float32 bytes. */
export function vectorToBase64(vector: Float32Array): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((x, i) => view.setFloat32(i * 4, x, true));
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Decodes `vectorToBase64` output.
 * @throws Error when the text is not base64 or its length is not a multiple of 4 bytes.
 */
export function base64ToVector(text: string): Float32Array {
  let binary: string;
  try {
    binary = atob(text);
  } catch (error) {
    throw new Error('embedding is not valid base64', { cause: error });
  }
  if (binary.length % 4 !== 0) throw new Error(`embedding has ${binary.length} bytes, not a multiple of 4`);
  const view = new DataView(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) view.setUint8(i, binary.charCodeAt(i));
  const out = new Float32Array(binary.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

// ── schema ─────────────────────────────────────────────────────────────────────

const time = z.number().finite();
const memoryKind = z.enum(['profile', 'preference', 'event', 'fact', 'instruction', 'episodic', 'summary']);
const memoryEvent = z.enum(['ADD', 'UPDATE', 'DELETE', 'INVALIDATE', 'MERGE', 'EXPIRE', 'FORGET', 'PIN', 'UNPIN', 'IMPORT']);

const memorySchema = z.object({
  id: z.string().min(1),
  namespace: z.string().min(1),
  kind: memoryKind,
  text: z.string().min(1),
  topic: z.string().optional(),
  embedding: z.string().nullable(),
  embeddingModel: z.string().nullable(),
  importance: z.number().min(0).max(1),
  createdAt: time,
  updatedAt: time,
  validFrom: time.nullable(),
  validUntil: time.nullable(),
  current: z.union([z.literal(0), z.literal(1)]),
  lastAccessedAt: time.nullable(),
  accessCount: z.number().int().min(0),
  sourceConversationId: z.string().nullable(),
  sourceMessageIds: z.array(z.string()),
  pinned: z.boolean(),
  hash: z.string().min(1),
  supersededBy: z.string().optional(),
});

const historySchema = z.object({
  memoryId: z.string().min(1),
  event: memoryEvent,
  oldText: z.string().nullable(),
  newText: z.string().nullable(),
  at: time,
  source: z.string(),
});

const conversationSchema = z.object({
  id: z.string().min(1),
  title: z.string(),
  namespace: z.string().min(1),
  strategy: z.object({
    kind: z.enum(['full-buffer', 'buffer-window', 'token-buffer', 'summary', 'summary-buffer', 'entity', 'vector']),
    k: z.number().int().min(1).optional(),
    maxTokens: z.number().int().min(1).optional(),
    topK: z.number().int().min(1).optional(),
  }),
  createdAt: time,
  updatedAt: time,
});

const messageSchema = z.object({
  id: z.string().min(1),
  conversationId: z.string().min(1),
  seq: z.number().int().min(0),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  createdAt: time,
  status: z.enum(['complete', 'aborted', 'error']),
  error: z.string().optional(),
  modelId: z.string().optional(),
  usage: z.object({ promptTokens: z.number().int().min(0), completionTokens: z.number().int().min(0) }).optional(),
  errorCode: z.enum(['not_loaded', 'no_webgpu', 'download', 'load', 'generation', 'embedding', 'unsupported', 'disconnected']).optional(),
  truncated: z.boolean().optional(),
  command: z
    .object({
      kind: z.enum(['remember', 'forget']),
      affected: z.array(z.object({ id: z.string().min(1), kind: memoryKind, text: z.string() })).optional(),
    })
    .optional(),
});

/** zod schema of an export file, version 1. */
export const exportFileSchema = z.object({
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  exportedAt: time,
  memories: z.array(memorySchema),
  memoryHistory: z.array(historySchema),
  conversations: z.array(conversationSchema),
  messages: z.array(messageSchema),
});

/** The parsed shape of an export file. */
export type ExportFile = z.infer<typeof exportFileSchema>;

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * Exports memories (with history) and conversations (with messages) as JSON, read in one
 * read-only transaction so the snapshot is consistent.
 * @param options.includeEmbeddings write vectors as base64 (default `true`; a 384-d vector is
 *   1,536 bytes = 2,048 base64 characters). Without them, the importing side re-embeds.
 * @returns `fileName` like `recall-export-2024-05-10.json` (local date) and the JSON text.
 */
export async function exportAll(
  db: RecallDB,
  options: { includeEmbeddings?: boolean; now?: () => number } = {},
): Promise<{ fileName: string; json: string }> {
  const includeEmbeddings = options.includeEmbeddings ?? true;
  const exportedAt = (options.now ?? Date.now)();
  const [memories, memoryHistory, conversations, messages] = await db.transaction(
    'r',
    [db.memories, db.memoryHistory, db.conversations, db.messages],
    () => Promise.all([db.memories.toArray(), db.memoryHistory.orderBy('at').toArray(), db.conversations.toArray(), db.messages.toArray()]),
  );
  const file: ExportFile = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt,
    memories: memories.map((m) => ({
      ...m,
      embedding: includeEmbeddings && m.embedding ? vectorToBase64(m.embedding) : null,
      embeddingModel: includeEmbeddings && m.embedding ? m.embeddingModel : null,
    })),
    memoryHistory: memoryHistory.map(({ id: _id, ...h }) => h),
    conversations,
    messages: messages.sort((a, b) => a.conversationId.localeCompare(b.conversationId) || a.seq - b.seq),
  };
  const d = new Date(exportedAt);
  // Indented: the file is the user's own copy of what the assistant remembers, meant to be readable.
  return { fileName: `recall-export-${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}.json`, json: JSON.stringify(file, null, 2) };
}

/**
 * Parses and validates an export file without writing anything.
 * @throws ImportError for invalid JSON, another format, another version, or invalid records
 *   (the message names up to five problems with their JSON paths).
 */
export function parseExportFile(json: string): ExportFile {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new ImportError(`The file is not valid JSON (${(error as Error).message}). Nothing was imported.`, { cause: error });
  }
  if (typeof data !== 'object' || data === null || (data as { format?: unknown }).format !== EXPORT_FORMAT) {
    throw new ImportError('This is not a Recall export file (missing "format": "recall-export"). Nothing was imported.');
  }
  const version = (data as { version?: unknown }).version;
  if (version !== EXPORT_VERSION) {
    throw new ImportError(
      `This export file has version ${JSON.stringify(version)}; this version of Recall reads version ${EXPORT_VERSION}. Nothing was imported.`,
    );
  }
  const parsed = exportFileSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    const more = parsed.error.issues.length > 5 ? ` (and ${parsed.error.issues.length - 5} more)` : '';
    throw new ImportError(`The export file is damaged: ${problems.join('; ')}${more}. Nothing was imported.`);
  }
  return parsed.data;
}

/**
 * Imports an export file (see module doc for the merge rules).
 * @param store the memory store; only its `rebuildIndexes()` is used, after the data is committed.
 * @returns counts of added / updated / skipped records (memories, history, conversations and
 *   messages together), `errors` for records that could not be merged (e.g. a message whose
 *   position is taken by another message), and `needsEmbedding`.
 * @throws ImportError when the file is refused (nothing written).
 */
export async function importAll(
  db: RecallDB,
  store: { rebuildIndexes(): Promise<void> },
  json: string,
  options: { now?: () => number } = {},
): Promise<ImportResult> {
  const now = (options.now ?? Date.now)();
  const file = parseExportFile(json);
  const memories: MemoryRecord[] = file.memories.map((m, i) => {
    let embedding: Float32Array | null = null;
    if (m.embedding !== null) {
      try {
        embedding = base64ToVector(m.embedding);
      } catch (error) {
        throw new ImportError(`The export file is damaged: memories.${i}.embedding: ${(error as Error).message}. Nothing was imported.`);
      }
      if (embedding.length === 0 || !m.embeddingModel) {
        throw new ImportError(`The export file is damaged: memories.${i} has an embedding without a model id. Nothing was imported.`);
      }
    }
    const { topic, supersededBy, ...rest } = m;
    return {
      ...rest,
      ...(topic !== undefined ? { topic } : {}),
      ...(supersededBy !== undefined ? { supersededBy } : {}),
      embedding,
      embeddingModel: embedding ? m.embeddingModel : null,
      current: m.validUntil !== null && m.validUntil <= now ? 0 : 1,
    };
  });
  const knownConversations = new Set(file.conversations.map((c) => c.id));
  const orphanMessages = file.messages.filter((m) => !knownConversations.has(m.conversationId));
  if (orphanMessages.length > 0) {
    const existing = new Set((await db.conversations.bulkGet([...new Set(orphanMessages.map((m) => m.conversationId))])).filter(Boolean).map((c) => c!.id));
    const missing = orphanMessages.find((m) => !existing.has(m.conversationId));
    if (missing) {
      throw new ImportError(`The export file is damaged: message ${missing.id} belongs to conversation ${missing.conversationId}, which is not in the file. Nothing was imported.`);
    }
  }

  const report: ImportResult = { added: 0, updated: 0, skipped: 0, errors: [], needsEmbedding: 0 };
  await db.transaction('rw', [db.memories, db.memoryHistory, db.conversations, db.messages, db.settings], async () => {
    // Imported memories keep their old `updatedAt`: the next maintenance run must compare them all.
    await db.settings.delete(MAINTENANCE_STATE_KEY);
    for (const c of file.conversations as ConversationRecord[]) {
      const existing = await db.conversations.get(c.id);
      if (!existing) {
        await db.conversations.add(c);
        report.added += 1;
      } else if (c.updatedAt > existing.updatedAt) {
        await db.conversations.put(c);
        report.updated += 1;
      } else report.skipped += 1;
    }
    for (const m of file.messages as MessageRecord[]) {
      if (await db.messages.get(m.id)) {
        report.skipped += 1;
        continue;
      }
      const taken = await db.messages.where('[conversationId+seq]').equals([m.conversationId, m.seq]).first();
      if (taken) {
        report.errors.push(`Message ${m.id} was not imported: position ${m.seq} of conversation ${m.conversationId} already holds message ${taken.id}.`);
        continue;
      }
      await db.messages.add(m);
      report.added += 1;
    }
    const imported = new Set<string>();
    const inFile = new Set(memories.map((m) => m.id));
    for (const m of memories) {
      const existing = await db.memories.get(m.id);
      if (existing) {
        if (m.updatedAt > existing.updatedAt) {
          await db.memories.put(m);
          await db.memoryHistory.add({ memoryId: m.id, event: 'IMPORT', oldText: existing.text, newText: m.text, at: now, source: 'import' });
          report.updated += 1;
          imported.add(m.id);
          if (!m.embedding) report.needsEmbedding += 1;
        } else report.skipped += 1;
        continue;
      }
      const duplicate = m.current === 1 && (await db.memories.where('hash').equals(m.hash).and((x) => x.namespace === m.namespace && x.current === 1).first());
      if (duplicate) {
        report.skipped += 1;
        continue;
      }
      await db.memories.add(m);
      await db.memoryHistory.add({ memoryId: m.id, event: 'IMPORT', oldText: null, newText: m.text, at: now, source: 'import' });
      report.added += 1;
      imported.add(m.id);
      if (!m.embedding) report.needsEmbedding += 1;
    }
    for (const h of file.memoryHistory as Omit<MemoryHistoryRecord, 'id'>[]) {
      const same = await db.memoryHistory
        .where('memoryId')
        .equals(h.memoryId)
        .and((x) => x.event === h.event && x.at === h.at && x.oldText === h.oldText && x.newText === h.newText)
        .first();
      // History of a memory skipped as a duplicate of another one would describe the wrong record.
      if (same || (!imported.has(h.memoryId) && !(await db.memories.get(h.memoryId)) && inFile.has(h.memoryId))) {
        report.skipped += 1;
        continue;
      }
      await db.memoryHistory.add({ ...h });
      report.added += 1;
    }
  });
  await store.rebuildIndexes();
  return report;
}
