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
 * Any size: the export is produced as a stream of text pieces (`exportChunks`, tables read in
 * pages of `EXPORT_PAGE_SIZE` records, one record per line) that the core writes into an OPFS
 * staging file; the import reads a `Blob` (the staging file the panel copied into OPFS) with a
 * streaming JSON parser (`@streamparser/json`), record by record. No step holds the whole file
 * as one string or one parsed object, and no runtime message carries it.
 *
 * Import in two passes over the file:
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
import { JSONParser } from '@streamparser/json';
import type { Table } from 'dexie';
import { z } from 'zod';
import type { ConversationRecord, MemoryRecord, MessageRecord, RecallDB } from '../db/schema';
import type { ImportReport, InterruptedImport, TransferProgress } from '../messaging/protocol';
import { strategyKindSchema } from '../model/strategies';
import { memoryHash } from './long-term/text';
import { isTombstoned } from './long-term/store';
import { isUsableVector, l2normalize } from './long-term/retrieval/vector';
import {
  BackupError,
  ENGINE_ERROR_CODES,
  ERROR_CODES,
  isErrorCode,
  type BackupErrorCode,
  type CodedError,
  type ErrorDomain,
  type ErrorParams,
  type RecallErrorOptions,
} from '../model/errors';

/** Same key as `MAINTENANCE_STATE_KEY` of `./long-term/jobs` (not imported, to keep this module free of the job code). */
const MAINTENANCE_STATE_KEY = 'state.ltmMaintenance';

/** `format` marker of an export file. */
export const EXPORT_FORMAT = 'recall-export';
/** Current (and only readable) version of the export format. */
export const EXPORT_VERSION = 1;

/** An import that was refused; nothing was written. `message` is meant for the user. */
export class ImportError extends BackupError {
  constructor(code: BackupErrorCode, message: string, options?: RecallErrorOptions) {
    super(code, message, options);
    this.name = 'ImportError';
  }
}

/** Result of `importAll`: the protocol's report plus how many memories lack a vector for the current model. */
export interface ImportResult extends ImportReport {
  /** Imported memories without an embedding (re-embed them with the `ltm.reembed` job). */
  needsEmbedding: number;
  /** Vectors of the file left out (wrong dimension, NaN/Infinity, zero norm); their memories are re-embedded. */
  vectorsDropped: number;
  /** Memories of the file left out because the user deleted or forgot them here (tombstones); counted in `skipped` too. */
  forgotten: number;
}

/** Settings key of the journal of the import being written (see module doc). */
export const IMPORT_JOURNAL_KEY = 'state.import';
/** Settings key prefix of the per-batch undo records of an import. */
export const IMPORT_UNDO_PREFIX = 'state.import.undo.';
/** Settings key of the notice about an import undone at start-up (read once by the panel). */
export const IMPORT_NOTICE_KEY = 'state.importInterrupted';
/** Records read per page when exporting. */
export const EXPORT_PAGE_SIZE = 500;
/** Records written per import batch (one transaction + one undo record each). */
export const IMPORT_BATCH_SIZE = 500;

/** The journal row of an import in progress (`settings` key `IMPORT_JOURNAL_KEY`). */
export interface ImportJournal {
  importId: string;
  /** Name of the staging file being imported. */
  fileName: string;
  /** ms epoch. */
  startedAt: number;
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
    kind: strategyKindSchema,
    k: z.number().int().min(1).optional(),
    maxTokens: z.number().int().min(1).optional(),
    topK: z.number().int().min(1).optional(),
  }),
  createdAt: time,
  updatedAt: time,
});

/** A stored coded error (`MessageRecord.errorInfo`): a known domain and one of its codes, JSON params. */
const codedErrorSchema = z
  .object({
    domain: z.enum(Object.keys(ERROR_CODES) as [ErrorDomain, ...ErrorDomain[]]),
    code: z.string(),
    params: z.record(z.string(), z.union([z.string().max(200), z.number()])),
  })
  .refine((e) => isErrorCode(e.domain, e.code), { message: 'unknown error code' }) as unknown as z.ZodType<CodedError>;

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
  errorCode: z.enum(ENGINE_ERROR_CODES).optional(),
  errorInfo: codedErrorSchema.optional(),
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

/** File name of an export made at `exportedAt` (ms epoch, local date), e.g. `recall-export-2024-05-10.json`. */
export function exportFileName(exportedAt: number): string {
  const d = new Date(exportedAt);
  return `recall-export-${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}.json`;
}

/** One exported memory: the record with its vector as base64 (or `null`). */
function exportedMemory(m: MemoryRecord, includeEmbeddings: boolean): ExportFile['memories'][number] {
  return {
    ...m,
    embedding: includeEmbeddings && m.embedding ? vectorToBase64(m.embedding) : null,
    embeddingModel: includeEmbeddings && m.embedding ? m.embeddingModel : null,
  };
}

/**
 * Reads a table in pages of `pageSize` records by an index (keyset pagination: each page starts
 * after the last key of the previous one), so memory holds one page at a time.
 */
async function* pagesOf<T, K extends string | number | (string | number)[]>(
  first: () => Promise<T[]>,
  after: (key: K) => Promise<T[]>,
  keyOf: (record: T) => K,
): AsyncGenerator<T[]> {
  let page = await first();
  while (page.length > 0) {
    yield page;
    page = await after(keyOf(page[page.length - 1]!));
  }
}

/**
 * The export file as a stream of text pieces (version 1, one record per line; see module doc).
 * Tables are read in pages of `pageSize` records (default `EXPORT_PAGE_SIZE`), each page in its
 * own read, so the export of a store of any size holds one page at a time. Records changed while
 * the export runs may or may not be in it (each record is whole either way).
 * @param options.includeEmbeddings write vectors as base64 (default `true`; a 384-d vector is
 *   1,536 bytes = 2,048 base64 characters). Without them, the importing side re-embeds.
 * @param options.onProgress called after each page with records written / total records.
 */
export async function* exportChunks(
  db: RecallDB,
  options: { includeEmbeddings?: boolean; exportedAt?: number; pageSize?: number; onProgress?: (progress: TransferProgress) => void } = {},
): AsyncGenerator<string> {
  const includeEmbeddings = options.includeEmbeddings ?? true;
  const n = Math.max(1, options.pageSize ?? EXPORT_PAGE_SIZE);
  const total = (await Promise.all([db.memories.count(), db.memoryHistory.count(), db.conversations.count(), db.messages.count()])).reduce((a, b) => a + b, 0);
  let done = 0;
  yield `{\n  "format": ${JSON.stringify(EXPORT_FORMAT)},\n  "version": ${EXPORT_VERSION},\n  "exportedAt": ${options.exportedAt ?? Date.now()}`;
  const sections: [string, AsyncGenerator<unknown[]>][] = [
    ['memories', mapPages(pagesOf(() => db.memories.orderBy(':id').limit(n).toArray(), (k: string) => db.memories.where(':id').above(k).limit(n).toArray(), (m) => m.id), (m) => exportedMemory(m, includeEmbeddings))],
    ['memoryHistory', mapPages(pagesOf(() => db.memoryHistory.orderBy(':id').limit(n).toArray(), (k: number) => db.memoryHistory.where(':id').above(k).limit(n).toArray(), (h) => h.id!), ({ id: _id, ...h }) => h)],
    ['conversations', pagesOf(() => db.conversations.orderBy(':id').limit(n).toArray(), (k: string) => db.conversations.where(':id').above(k).limit(n).toArray(), (c) => c.id)],
    [
      'messages',
      pagesOf(
        () => db.messages.orderBy('[conversationId+seq]').limit(n).toArray(),
        (k: [string, number]) => db.messages.where('[conversationId+seq]').above(k).limit(n).toArray(),
        (m) => [m.conversationId, m.seq] as [string, number],
      ),
    ],
  ];
  for (const [name, pages] of sections) {
    yield `,\n  ${JSON.stringify(name)}: [`;
    let first = true;
    for await (const page of pages) {
      const lines: string[] = [];
      for (const record of page) {
        lines.push(`${first ? '' : ','}\n    ${JSON.stringify(record)}`);
        first = false;
      }
      yield lines.join('');
      done += page.length;
      options.onProgress?.({ phase: 'export', done, total });
    }
    yield first ? ']' : '\n  ]';
  }
  yield '\n}\n';
}

async function* mapPages<T, U>(pages: AsyncGenerator<T[]>, fn: (record: T) => U): AsyncGenerator<U[]> {
  for await (const page of pages) yield page.map(fn);
}

/**
 * `exportChunks` as UTF-8 bytes, gathered into pieces of about `pieceBytes` (default 1 MiB) for
 * efficient file writes.
 */
export async function* exportBytes(db: RecallDB, options: Parameters<typeof exportChunks>[1] & { pieceBytes?: number } = {}): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  const limit = options.pieceBytes ?? 1 << 20;
  let parts: string[] = [];
  let size = 0;
  for await (const text of exportChunks(db, options)) {
    parts.push(text);
    size += text.length;
    if (size >= limit) {
      yield encoder.encode(parts.join(''));
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield encoder.encode(parts.join(''));
}

/**
 * Exports everything as one JSON string. For small stores and tests only: the extension writes
 * `exportBytes` into a file instead (a string of a large store exceeds what a message can carry).
 * @returns `fileName` like `recall-export-2024-05-10.json` (local date) and the JSON text.
 */
export async function exportAll(
  db: RecallDB,
  options: { includeEmbeddings?: boolean; now?: () => number } = {},
): Promise<{ fileName: string; json: string }> {
  const exportedAt = (options.now ?? Date.now)();
  const parts: string[] = [];
  for await (const text of exportChunks(db, { exportedAt, ...(options.includeEmbeddings !== undefined ? { includeEmbeddings: options.includeEmbeddings } : {}) })) parts.push(text);
  return { fileName: exportFileName(exportedAt), json: parts.join('') };
}

/**
 * Parses and validates a whole export file held as one string, without writing anything (small
 * files; `importAll` streams instead).
 * @throws ImportError for invalid JSON, another format, another version, or invalid records
 *   (the message names up to five problems with their JSON paths).
 */
export function parseExportFile(json: string): ExportFile {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new ImportError('invalid_json', `The file is not valid JSON (${(error as Error).message}). Nothing was imported.`, { cause: error });
  }
  if (typeof data !== 'object' || data === null || (data as { format?: unknown }).format !== EXPORT_FORMAT) {
    throw new ImportError('not_backup', 'This is not a Recall export file (missing "format": "recall-export"). Nothing was imported.');
  }
  const version = (data as { version?: unknown }).version;
  if (version !== EXPORT_VERSION) {
    throw new ImportError(
      'unsupported_version',
      `This export file has version ${JSON.stringify(version)}; this version of Recall reads version ${EXPORT_VERSION}. Nothing was imported.`,
      { params: versionParams(version) },
    );
  }
  const parsed = exportFileSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    const more = parsed.error.issues.length > 5 ? ` (and ${parsed.error.issues.length - 5} more)` : '';
    throw new ImportError('damaged', `The export file is damaged: ${problems.join('; ')}${more}. Nothing was imported.`, { params: { problems: `${problems.join('; ')}${more}` } });
  }
  return parsed.data;
}

// ── streaming reader ───────────────────────────────────────────────────────────

const SECTIONS = ['memories', 'memoryHistory', 'conversations', 'messages'] as const;
type Section = (typeof SECTIONS)[number];
const SECTION_SCHEMAS = { memories: memorySchema, memoryHistory: historySchema, conversations: conversationSchema, messages: messageSchema };

/** A validated record of one section of the file. */
type FileRecord =
  | { section: 'memories'; index: number; value: ExportFile['memories'][number] }
  | { section: 'memoryHistory'; index: number; value: ExportFile['memoryHistory'][number] }
  | { section: 'conversations'; index: number; value: ExportFile['conversations'][number] }
  | { section: 'messages'; index: number; value: ExportFile['messages'][number] };

/** An `ImportError` whose message is `what` + " Nothing was imported." */
const refuse = (code: BackupErrorCode, what: string, params?: ErrorParams) => new ImportError(code, `${what} Nothing was imported.`, params ? { params } : {});

/** The `params` of an `unsupported_version` refusal (the file's version cut to 40 characters). */
const versionParams = (version: unknown): ErrorParams => ({ version: String(JSON.stringify(version)).slice(0, 40), supported: EXPORT_VERSION });

/**
 * Reads an export file record by record with a streaming JSON parser: `onRecords` gets the
 * validated records parsed from each piece of the file (awaited before the next piece is read,
 * so memory holds one piece and its records). A missing section counts as empty.
 * @param onBytes called after each piece with bytes read so far.
 * @throws ImportError for invalid or cut-off JSON, another format or version, a section that is
 *   not a list, or a record that fails its schema (named by its JSON path).
 */
async function readExportRecords(source: Blob, onRecords: (records: FileRecord[]) => Promise<void>, onBytes?: (bytes: number) => void): Promise<void> {
  let format: unknown;
  let version: unknown;
  let pending: FileRecord[] = [];
  let problem: ImportError | null = null;
  const checkHeader = () => {
    if (format !== undefined && format !== EXPORT_FORMAT) throw refuse('not_backup', 'This is not a Recall export file (missing "format": "recall-export").');
    if (version !== undefined && version !== EXPORT_VERSION) {
      throw refuse('unsupported_version', `This export file has version ${JSON.stringify(version)}; this version of Recall reads version ${EXPORT_VERSION}.`, versionParams(version));
    }
  };
  const parser = new JSONParser({ paths: ['$.format', '$.version', '$.exportedAt', ...SECTIONS.map((s) => `$.${s}.*`)], keepStack: false, stringBufferSize: 0 });
  parser.onValue = ({ value, key, stack }) => {
    if (problem) return;
    try {
      if (stack.length === 1) {
        if (key === 'format') format = value;
        else if (key === 'version') version = value;
        else if (key === 'exportedAt' && !time.safeParse(value).success) throw refuse('damaged', 'The export file is damaged: exportedAt is not a time.', { problems: 'exportedAt' });
        checkHeader();
        return;
      }
      const section = stack[1]?.key as Section;
      if (typeof key !== 'number') throw refuse('damaged', `The export file is damaged: "${section}" is not a list.`, { problems: section });
      const parsed = SECTION_SCHEMAS[section].safeParse(value);
      if (!parsed.success) {
        const problems = parsed.error.issues.slice(0, 5).map((i) => `${[section, key, ...i.path].join('.')}: ${i.message}`);
        throw refuse('damaged', `The export file is damaged: ${problems.join('; ')}.`, { problems: problems.join('; ') });
      }
      pending.push({ section, index: key, value: parsed.data } as FileRecord);
    } catch (error) {
      problem = error instanceof ImportError ? error : refuse('unreadable', `The file could not be read (${(error as Error).message}).`);
    }
  };
  parser.onError = (error) => {
    problem ??= new ImportError('invalid_json', `The file is not valid JSON (${error.message}). Nothing was imported.`, { cause: error });
  };
  const reader = source.stream().getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (!parser.isEnded) parser.write(value);
      else if (new TextDecoder().decode(value).trim() !== '') problem ??= new ImportError('trailing_data', 'The file has data after its end. Nothing was imported.');
      if (problem) throw problem;
      if (pending.length > 0) {
        const records = pending;
        pending = [];
        await onRecords(records);
      }
      onBytes?.(bytes);
    }
  } finally {
    reader.releaseLock();
  }
  if (bytes === 0) throw refuse('empty', 'The file is empty.');
  if (!parser.isEnded) throw refuse('cut_off', 'The file is cut off (it ends in the middle of the data) or is not valid JSON.');
  if (format === undefined) throw refuse('not_backup', 'This is not a Recall export file (missing "format": "recall-export").');
  if (version === undefined) throw refuse('damaged', 'The export file has no version.', { problems: 'version' });
}

// ── pass 1: check ──────────────────────────────────────────────────────────────

/** What the check pass learned about a file (ids and dimensions, no records). */
interface ImportPlan {
  memoryIds: Set<string>;
  /** Dimension each embedding model's vectors must have. */
  dimensions: Map<string, number>;
  records: number;
}

/** Decodes a file vector, or `null` when it cannot be used (see `isUsableVector`). */
function decodeVector(m: ExportFile['memories'][number], where: string): Float32Array | null {
  if (m.embedding === null) return null;
  let vector: Float32Array;
  try {
    vector = base64ToVector(m.embedding);
  } catch (error) {
    throw refuse('damaged', `The export file is damaged: ${where}.embedding: ${(error as Error).message}.`, { problems: `${where}.embedding` });
  }
  if (vector.length === 0 || !m.embeddingModel) throw refuse('damaged', `The export file is damaged: ${where} has an embedding without a model id.`, { problems: `${where}.embeddingModel` });
  return isUsableVector(vector) ? vector : null;
}

/**
 * Pass 1: validates the whole file and refuses inconsistent ones (see module doc).
 * @param embedder the current embedder (its vectors fix the dimension of its model).
 */
async function checkFile(
  db: RecallDB,
  source: Blob,
  embedder: { modelId: string | null; dimension: number | null } | null,
  onBytes: (bytes: number) => void,
): Promise<ImportPlan> {
  const ids: Record<'memories' | 'conversations' | 'messages', Set<string>> = { memories: new Set(), conversations: new Set(), messages: new Set() };
  const positions = new Map<string, string>();
  const messageConversations = new Map<string, string>();
  const dimensionCounts = new Map<string, Map<number, number>>();
  let records = 0;
  const label = { memories: 'memories', conversations: 'conversations', messages: 'messages' } as const;
  await readExportRecords(
    source,
    async (batch) => {
      for (const r of batch) {
        records += 1;
        if (r.section === 'memoryHistory') continue;
        const seen = ids[r.section];
        if (seen.has(r.value.id)) throw refuse('inconsistent', `The file holds two ${label[r.section]} with the id "${r.value.id}"; it is inconsistent.`);
        seen.add(r.value.id);
        if (r.section === 'messages') {
          const position = `${r.value.conversationId}\u0000${r.value.seq}`;
          const other = positions.get(position);
          if (other !== undefined) {
            throw refuse('inconsistent', `The file holds two messages at position ${r.value.seq} of conversation "${r.value.conversationId}" ("${other}" and "${r.value.id}"); it is inconsistent.`);
          }
          positions.set(position, r.value.id);
          if (!messageConversations.has(r.value.conversationId)) messageConversations.set(r.value.conversationId, r.value.id);
        } else if (r.section === 'memories') {
          const vector = decodeVector(r.value, `memories.${r.index}`);
          if (vector && r.value.embeddingModel) {
            const counts = dimensionCounts.get(r.value.embeddingModel) ?? new Map<number, number>();
            counts.set(vector.length, (counts.get(vector.length) ?? 0) + 1);
            dimensionCounts.set(r.value.embeddingModel, counts);
          }
        }
      }
    },
    onBytes,
  );
  const orphans = [...messageConversations].filter(([conversationId]) => !ids.conversations.has(conversationId));
  if (orphans.length > 0) {
    const existing = new Set((await db.conversations.bulkGet(orphans.map(([c]) => c))).filter(Boolean).map((c) => c!.id));
    const missing = orphans.find(([c]) => !existing.has(c));
    if (missing) throw refuse('damaged', `The export file is damaged: message ${missing[1]} belongs to conversation ${missing[0]}, which is not in the file.`, { problems: `messages: ${missing[1]}` });
  }
  const dimensions = new Map<string, number>();
  for (const [model, counts] of dimensionCounts) {
    if (embedder?.modelId === model && embedder.dimension) dimensions.set(model, embedder.dimension);
    else dimensions.set(model, [...counts].sort((a, b) => b[1] - a[1])[0]![0]);
  }
  if (embedder?.modelId && embedder.dimension) dimensions.set(embedder.modelId, embedder.dimension);
  return { memoryIds: ids.memories, dimensions, records };
}

// ── pass 2: write ──────────────────────────────────────────────────────────────

/** Undo record of one written batch (settings row `IMPORT_UNDO_PREFIX<importId>.<batch>`). */
interface ImportUndo {
  added: { memories: string[]; conversations: string[]; messages: string[]; memoryHistory: number[] };
  before: { memories: MemoryRecord[]; conversations: ConversationRecord[] };
}

/** What happens to one memory of the file (see `decideMemory`). */
export type MemoryDecision = { action: 'add' } | { action: 'update'; existing: MemoryRecord } | { action: 'skip'; reason: 'up_to_date' | 'duplicate' | 'forgotten' };

/**
 * The one place that decides what an import does with a memory of the file (run inside the
 * import's write transaction, which must include `db.memories`): `update` when a stored memory
 * with its id is older (`updatedAt`), `skip` ('up_to_date') when the stored one is as new or
 * newer, `skip` ('duplicate') when a current memory of the same namespace has the same text
 * (hash recomputed from the text, never the file's), `skip` ('forgotten') when the user deleted
 * or forgot that text in that namespace (a tombstone, see `isTombstoned`: a re-import of an old
 * export must not bring it back), else `add`. The transaction must also include `db.tombstones`.
 * @param incoming the memory as it will be stored (hash, `current` and vector already recomputed).
 */
export async function decideMemory(db: RecallDB, incoming: MemoryRecord): Promise<MemoryDecision> {
  const existing = await db.memories.get(incoming.id);
  if (existing) return incoming.updatedAt > existing.updatedAt ? { action: 'update', existing } : { action: 'skip', reason: 'up_to_date' };
  if (await isTombstoned(db, incoming.namespace, incoming.hash)) return { action: 'skip', reason: 'forgotten' };
  if (incoming.current === 1) {
    const duplicate = await db.memories
      .where('hash')
      .equals(incoming.hash)
      .and((x) => x.namespace === incoming.namespace && x.current === 1)
      .first();
    if (duplicate) return { action: 'skip', reason: 'duplicate' };
  }
  return { action: 'add' };
}

/** The record a file memory becomes: recomputed hash, `current` and a checked, normalized vector. */
function toMemoryRecord(m: ExportFile['memories'][number], index: number, plan: ImportPlan, now: number): { record: MemoryRecord; vectorDropped: boolean } {
  let embedding = decodeVector(m, `memories.${index}`);
  const vectorDropped = m.embedding !== null && (embedding === null || embedding.length !== plan.dimensions.get(m.embeddingModel!));
  if (vectorDropped) embedding = null;
  const { topic, supersededBy, ...rest } = m;
  return {
    record: {
      ...rest,
      ...(topic !== undefined ? { topic } : {}),
      ...(supersededBy !== undefined ? { supersededBy } : {}),
      hash: memoryHash(m.text),
      embedding: embedding ? l2normalize(embedding) : null,
      embeddingModel: embedding ? m.embeddingModel : null,
      current: m.validUntil !== null && m.validUntil <= now ? 0 : 1,
    },
    vectorDropped,
  };
}

/**
 * `table.bulkAdd(rows)` (nothing when `rows` is empty) that throws the first failure itself
 * (e.g. a `QuotaExceededError` or a `ConstraintError`) instead of Dexie's `BulkError` wrapping it,
 * as a per-record `add` would; the caller's transaction then aborts whole.
 */
async function bulkAddOrThrow<T>(table: Table<T>, rows: T[]): Promise<void> {
  if (rows.length === 0) return;
  try {
    await table.bulkAdd(rows);
  } catch (error) {
    const failure = (error as { name?: string; failures?: unknown[] }).name === 'BulkError' ? (error as { failures?: unknown[] }).failures?.[0] : undefined;
    throw failure ?? error;
  }
}

/**
 * The stored messages at the positions of `messages` (`conversationId` + `seq`), as a map from
 * `` `${conversationId}\u0000${seq}` `` to the stored message's id. Per conversation, one read of
 * the [conversationId+seq] range from the lowest to the highest wanted `seq` (one request; the
 * messages of a batch are mostly consecutive) when that range is at most 4 times the number of
 * wanted positions, else one `anyOf` of the exact positions (a cursor step per position).
 * Stored messages in the range at positions not wanted are left out.
 */
async function storedPositions(db: RecallDB, messages: Pick<MessageRecord, 'conversationId' | 'seq'>[]): Promise<Map<string, string>> {
  const seqsByConversation = new Map<string, number[]>();
  for (const m of messages) {
    const seqs = seqsByConversation.get(m.conversationId);
    if (seqs) seqs.push(m.seq);
    else seqsByConversation.set(m.conversationId, [m.seq]);
  }
  const taken = new Map<string, string>();
  for (const [conversationId, seqs] of seqsByConversation) {
    const wanted = new Set(seqs);
    let low = Infinity;
    let high = -Infinity;
    for (const seq of seqs) {
      if (seq < low) low = seq;
      if (seq > high) high = seq;
    }
    const stored =
      high - low + 1 <= 4 * wanted.size
        ? await db.messages.where('[conversationId+seq]').between([conversationId, low], [conversationId, high], true, true).toArray()
        : await db.messages.where('[conversationId+seq]').anyOf([...wanted].map((seq) => [conversationId, seq])).toArray();
    for (const m of stored) if (wanted.has(m.seq)) taken.set(`${conversationId}\u0000${m.seq}`, m.id);
  }
  return taken;
}

const undoKey = (importId: string, batch: number) => `${IMPORT_UNDO_PREFIX}${importId}.${String(batch).padStart(8, '0')}`;

/**
 * Undoes what the batches of an import wrote (latest batch first; each batch's undo and the
 * removal of its undo record in one transaction, so an undo cut short resumes where it stopped),
 * then removes the journal row.
 */
export async function rollbackImport(db: RecallDB, importId: string): Promise<void> {
  const tables = [db.memories, db.memoryHistory, db.conversations, db.messages, db.settings, db.tombstones];
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
        for (const [position, id] of await storedPositions(db, messagesOfBatch.filter((m) => !storedMessageIds.has(m.id)))) takenPositions.set(position, id);
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
            throw refuse('position_taken', `Message ${m.id} cannot be imported: position ${m.seq} of conversation ${m.conversationId} already holds another message (${taken}).`, { seq: m.seq });
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
            (await db.memoryHistory.add({ memoryId: m.id, event: 'IMPORT', oldText: decision.action === 'update' ? decision.existing.text : null, newText: m.text, at: now, source: 'import' })) as number,
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
