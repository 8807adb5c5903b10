/**
 * The backup file format, `recall-export` version 2 (version 1 files still import): its markers,
 * the zod schema of every record, the vector codec, and the error an unreadable file raises.
 *
 * File format (JSON, UTF-8, one record per line), version 2:
 * ```json
 * {
 *   "format": "recall-export",
 *   "version": 2,
 *   "exportedAt": 1715322600000,            // ms epoch
 *   "embeddingModel": "Xenova/…" | null,   // the embedding model chosen when exported (v2)
 *   "memories": [ { ...MemoryRecord, "embedding": "<base64 of little-endian float32>" | null } ],
 *   "memoryHistory": [ { "memoryId", "event", "oldText", "newText", "at", "source" } ],
 *   "conversations": [ ConversationRecord ],
 *   "messages": [ MessageRecord ],
 *   "entities": [ EntityRecord ],            // v2: entity-memory notes per conversation
 *   "strategyState": [ StrategyStateRecord ],// v2: running summaries and fold watermarks
 *   "settings": [ { "key", "value" } ],      // v2: the user's portable settings (`PORTABLE_SETTING_KEYS`)
 *   "feedback": [ { ...FeedbackRecord, "embedding": "<base64>" | null } ],  // v2, optional: "not relevant here" rows
 *   "rejectedSuggestions": [ { "id", "namespace", "hash", "kind", "createdAt" } ], // v2, optional: hashes of rejected suggestions
 *   "profiles": [ { "namespace", "name"?, "createdAt"? } ]  // v2: the namespaces in use, with their profile names (written last)
 * }
 * ```
 * Version 1 has the first four sections only; a missing section reads as empty, so a v1 file
 * imports as before (and so does a v2 file written before `feedback` and `rejectedSuggestions`). Field meanings are those of `src/db/schema.ts` (times in ms epoch).
 * Embeddings are optional (`embedding: null`); a memory keeps the id of the model that made its
 * vector (`embeddingModel`), and memories without a vector, or whose model is not the current
 * one, are re-embedded by the `ltm.reembed` job. Not exported (derived, or facts of this
 * device): prompt traces, jobs, the persisted index (vector blocks, lexical snapshot),
 * tombstones, job bookkeeping (`stats.*`, `state.*`), the engine choices (`preferredEngine`,
 * `webllmModelId`, `wllamaSource`: they name models downloaded or opened on this device) and the
 * model files themselves. Pending suggestions are not exported (extraction suggests them again).
 *
 * Over 300 lines: it is the one schema of the file (every section's record), kept whole.
 */
import { MAX_PROFILE_NAME_CHARS } from '../model/profiles';
import { z } from 'zod';
import { FACT_KINDS, MEMORY_COMMANDS, MEMORY_EVENTS, MEMORY_KINDS } from '../model/memory';
import { MESSAGE_ROLES, MESSAGE_STATUSES } from '../model/records';
import { PORTABLE_SETTING_KEYS } from '../model/settings';
import { strategyKindSchema } from '../model/strategies';
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

/** `format` marker of an export file. */
export const EXPORT_FORMAT = 'recall-export';
/** Version of the export format written now. */
export const EXPORT_VERSION = 2;
/** Versions this reader imports (1: memories, history, conversations and messages only). */
export const READABLE_VERSIONS: readonly number[] = [1, 2];

/** An import that was refused; nothing was written. `message` is meant for the user. */
export class ImportError extends BackupError {
  constructor(code: BackupErrorCode, message: string, options?: RecallErrorOptions) {
    super(code, message, options);
    this.name = 'ImportError';
  }
}

// ── base64 of Float32Array (browser and Node) ─────────────────────────────────

/** Whether this platform stores typed-array elements little-endian (every platform Recall runs on; checked, not assumed). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The TC39 base64 methods of `Uint8Array` (Chromium 140+; absent in Node 20), when present. */
const nativeBase64 = Uint8Array as unknown as { fromBase64?: (text: string) => Uint8Array };
const nativeToBase64 = (bytes: Uint8Array): string | null => {
  const toBase64 = (bytes as unknown as { toBase64?: () => string }).toBase64;
  return typeof toBase64 === 'function' ? toBase64.call(bytes) : null;
};

/** The vector's float32 values as little-endian bytes (a copy). */
function vectorBytes(vector: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((x, i) => view.setFloat32(i * 4, x, true));
  return bytes;
}

/** Encodes a vector as base64 of its little-endian float32 bytes. */
export function vectorToBase64(vector: Float32Array): string {
  const bytes = vectorBytes(vector);
  const native = nativeToBase64(bytes);
  if (native !== null) return native;
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The bytes of a base64 text (`Uint8Array.fromBase64` where the platform has it, else `atob`). @throws Error when it is not base64. */
function base64Bytes(text: string): Uint8Array {
  try {
    if (nativeBase64.fromBase64) return nativeBase64.fromBase64(text);
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch (error) {
    throw new Error('embedding is not valid base64', { cause: error });
  }
}

/**
 * Decodes `vectorToBase64` output.
 * @throws Error when the text is not base64 or its length is not a multiple of 4 bytes.
 */
export function base64ToVector(text: string): Float32Array {
  const bytes = base64Bytes(text);
  if (bytes.length % 4 !== 0) throw new Error(`embedding has ${bytes.length} bytes, not a multiple of 4`);
  if (LITTLE_ENDIAN) return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

// ── schema ─────────────────────────────────────────────────────────────────────

/** A time in ms epoch (finite). */
export const time = z.number().finite();
const memoryKind = z.enum(MEMORY_KINDS);
const memoryEvent = z.enum(MEMORY_EVENTS);

/** One memory record of the file. */
export const memorySchema = z.object({
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
  /** Who said it (`MemoryRecord.speakers`); files written before speakers existed have none. */
  speakers: z
    .object({ user: z.string().min(1).max(200).optional(), assistant: z.string().min(1).max(200).optional() })
    .strict()
    .optional(),
  /** The web page it was saved from (`MemoryRecord.sourceUrl` / `sourceTitle`); older files have none. */
  sourceUrl: z.string().min(1).max(4096).optional(),
  sourceTitle: z.string().max(1000).optional(),
});

/** One history entry of the file (no auto-increment id). */
export const historySchema = z.object({
  memoryId: z.string().min(1),
  event: memoryEvent,
  oldText: z.string().nullable(),
  newText: z.string().nullable(),
  at: time,
  source: z.string(),
});

/** One conversation record of the file. */
export const conversationSchema = z.object({
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

/** One message record of the file. */
export const messageSchema = z.object({
  id: z.string().min(1),
  conversationId: z.string().min(1),
  seq: z.number().int().min(0),
  role: z.enum(MESSAGE_ROLES),
  content: z.string(),
  createdAt: time,
  status: z.enum(MESSAGE_STATUSES),
  error: z.string().optional(),
  modelId: z.string().optional(),
  usage: z.object({ promptTokens: z.number().int().min(0), completionTokens: z.number().int().min(0) }).optional(),
  errorCode: z.enum(ENGINE_ERROR_CODES).optional(),
  errorInfo: codedErrorSchema.optional(),
  truncated: z.boolean().optional(),
  /** The speaker's display name (`MessageRecord.speaker`), when the conversation names its speakers. */
  speaker: z.string().min(1).max(200).optional(),
  command: z
    .object({
      kind: z.enum(MEMORY_COMMANDS),
      affected: z.array(z.object({ id: z.string().min(1), kind: memoryKind, text: z.string() })).optional(),
    })
    .optional(),
});

/** One entity note of the file (`EntityRecord`, v2). */
export const entitySchema = z.object({
  id: z.string().min(1),
  conversationId: z.string().min(1),
  key: z.string().min(1),
  name: z.string(),
  summary: z.string(),
  updatedAt: time,
  lastSeenSeq: z.number().int(),
});

/** One strategy state of the file (`StrategyStateRecord`, v2): its `state` is the strategy's own JSON. */
export const strategyStateSchema = z.object({
  conversationId: z.string().min(1),
  strategy: strategyKindSchema,
  state: z.unknown().refine((v) => v !== undefined, { message: 'state is missing' }),
  updatedAt: time,
});

/** One setting of the file (v2): a portable key; its value is validated against that setting's schema on import. */
export const settingSchema = z.object({ key: z.enum(PORTABLE_SETTING_KEYS), value: z.unknown() });

/** One profile of the file (v2): a namespace in use. */
export const profileSchema = z.object({
  namespace: z.string().min(1),
  /** The profile's display name (`ProfileRecord.name`), when the user named it. */
  name: z.string().max(MAX_PROFILE_NAME_CHARS).optional(),
  /** When the profile was created, ms epoch. */
  createdAt: time.optional(),
});

/** One "not relevant here" row of the file (`FeedbackRecord`, v2, optional section): its query vector as base64 (or `null`). */
export const feedbackSchema = z.object({
  id: z.string().min(1),
  memoryId: z.string().min(1),
  namespace: z.string().min(1),
  query: z.string(),
  terms: z.array(z.string()),
  embedding: z.string().nullable(),
  embeddingModel: z.string().nullable(),
  messageId: z.string().min(1),
  conversationId: z.string().min(1),
  createdAt: time,
});

/** One rejected suggestion of the file (v2, optional section): only its text's hash is kept (`SuggestionRecord` with `status: 'rejected'`). */
export const rejectedSuggestionSchema = z.object({
  id: z.string().min(1),
  namespace: z.string().min(1),
  hash: z.string().min(1),
  kind: z.enum(FACT_KINDS),
  createdAt: time,
});

/** zod schema of an export file, version 1 or 2 (the v2 sections default to empty). */
export const exportFileSchema = z.object({
  format: z.literal(EXPORT_FORMAT),
  version: z.union([z.literal(1), z.literal(2)]),
  exportedAt: time,
  embeddingModel: z.string().min(1).nullable().optional(),
  memories: z.array(memorySchema),
  memoryHistory: z.array(historySchema),
  conversations: z.array(conversationSchema),
  messages: z.array(messageSchema),
  entities: z.array(entitySchema).default([]),
  strategyState: z.array(strategyStateSchema).default([]),
  settings: z.array(settingSchema).default([]),
  feedback: z.array(feedbackSchema).default([]),
  rejectedSuggestions: z.array(rejectedSuggestionSchema).default([]),
  profiles: z.array(profileSchema).default([]),
});

/** The shape of an export file (v1 files lack the v2 sections; `parseExportFile` fills them with `[]`). */
export type ExportFile = z.input<typeof exportFileSchema>;
/** One entity note of the file (v2 section), as validated. */
export type FileEntity = z.infer<typeof entitySchema>;
/** One strategy state of the file (v2 section), as validated. */
export type FileStrategyState = z.infer<typeof strategyStateSchema>;
/** One portable setting of the file (v2 section; `PORTABLE_SETTING_KEYS` only), as validated. */
export type FileSetting = z.infer<typeof settingSchema>;
/** One profile of the file (v2 section), as validated. */
export type FileProfile = z.infer<typeof profileSchema>;
/** One "not relevant here" feedback row of the file (v2 section), as validated. */
export type FileFeedback = z.infer<typeof feedbackSchema>;
/** One rejected suggestion of the file (v2 section: its hash, never its text), as validated. */
export type FileRejectedSuggestion = z.infer<typeof rejectedSuggestionSchema>;

/** The record sections of a file, in the order they are written. */
export const SECTIONS = [
  'memories',
  'memoryHistory',
  'conversations',
  'messages',
  'entities',
  'strategyState',
  'settings',
  'feedback',
  'rejectedSuggestions',
  'profiles',
] as const;
/** One record section of a file. */
export type Section = (typeof SECTIONS)[number];
/** The schema of each section's records. */
export const SECTION_SCHEMAS = {
  memories: memorySchema,
  memoryHistory: historySchema,
  conversations: conversationSchema,
  messages: messageSchema,
  entities: entitySchema,
  strategyState: strategyStateSchema,
  settings: settingSchema,
  feedback: feedbackSchema,
  rejectedSuggestions: rejectedSuggestionSchema,
  profiles: profileSchema,
};

/** An `ImportError` for a refused file: `what` followed by "Nothing was imported.", with its `code` and `params`. */
export const refuse = (code: BackupErrorCode, what: string, params?: ErrorParams) =>
  new ImportError(code, `${what} Nothing was imported.`, params ? { params } : {});

/** The `params` of an `unsupported_version` refusal (the file's version cut to 40 characters). */
export const versionParams = (version: unknown): ErrorParams => ({
  version: String(JSON.stringify(version)).slice(0, 40),
  supported: Math.max(...READABLE_VERSIONS),
});
