/**
 * Coded errors: one list of error codes per domain, one base class (`RecallError`) and one
 * subclass per domain. Part of the shared vocabulary (`src/model/`): imports nothing from `src/`.
 *
 * An error that can reach the user carries a `domain`, a stable `code` from that domain's list
 * and `params` (JSON values only: numbers and short strings such as ids, sizes, versions, never a
 * memory's or a message's text). Its `message` stays a readable English sentence for logs and
 * the detail line. All three are own enumerable properties, so `@webext-core/messaging`'s error
 * serialization carries them from the core to the panel (it copies an error's own properties and
 * rebuilds a plain `Error` with them); the panel reads them back with `codedErrorOf` and shows the
 * sentence of `errorCodes.<domain>.<code>` (engine codes: `engineErrors.chat.<code>`) in the
 * user's language, interpolating `params` (`src/ui/lib/errors.ts`).
 *
 * THE RULE: throw a `RecallError` subclass for every failure a user can see (a rejected request,
 * a failed job's reason, an engine status). A plain `new Error` is only for programmer errors —
 * broken invariants, misuse of an internal API, a packaging fault, a script's command line —
 * that never reach a user. Adding a code: add it to its domain's list below and its sentence to
 * both locale files (a unit test checks every code has both).
 */

/** Engine failures (chat model or embedder); also stored as `errorCode` on error replies and engine status. */
export const ENGINE_ERROR_CODES = ['not_loaded', 'no_webgpu', 'download', 'load', 'generation', 'embedding', 'unsupported', 'disconnected'] as const;
/** Browser storage failures (IndexedDB). */
export const STORAGE_ERROR_CODES = ['storage_full'] as const;
/** Files in the Origin Private File System (model files, backups). */
export const MODEL_FILE_ERROR_CODES = ['not_found', 'invalid_name', 'quota', 'aborted', 'io', 'unsupported'] as const;
/** Backups: reading, checking and importing an export file. Every one means nothing was imported. */
export const BACKUP_ERROR_CODES = [
  'invalid_json',
  'not_backup',
  'unsupported_version',
  'damaged',
  'inconsistent',
  'empty',
  'cut_off',
  'trailing_data',
  'unreadable',
  'busy',
  'position_taken',
  'passphrase_required',
  'wrong_passphrase',
  'encrypted_damaged',
] as const;
/**
 * Importing history from another assistant (`src/importers/`, `src/core/history-import.ts`).
 * Every one means nothing of the file was imported; `params.file` names the file, `params.place`
 * the conversation (its title or its position) where the problem is.
 */
export const HISTORY_IMPORT_ERROR_CODES = [
  'unknown_format',
  'invalid_json',
  'bad_conversation',
  'no_conversations',
  'zip_without_conversations',
  'busy',
] as const;
/** Long-term and short-term memory: stored memories and conversations. */
export const MEMORY_ERROR_CODES = [
  'text_empty',
  'text_too_long',
  'not_found',
  'unknown_kind',
  'namespace_missing',
  'removed_during_update',
  'conversation_not_found',
  'message_not_found',
  // Profiles (`src/core/profiles.ts`).
  'profile_not_found',
  'profile_name_empty',
  'profile_name_too_long',
  'profile_name_taken',
  'profile_default_kept',
] as const;
/** Requests between the panel and the core. */
export const MESSAGING_ERROR_CODES = ['rejected_sender', 'bad_request', 'message_empty', 'message_too_long', 'core_timeout'] as const;
/** Prompt assembly, the token budget and the tokenizers behind it. */
export const PROMPT_ERROR_CODES = ['prompt_too_long', 'tokenizer_load', 'gguf_read'] as const;
/** Background jobs: why a job waits, was stopped or failed (shown in the job list). */
export const JOB_ERROR_CODES = [
  'deferred',
  'failed_permanently',
  'preempted',
  'summary_rejected',
  'entity_rejected',
  'extraction_failed',
  'reembed_incomplete',
] as const;

/**
 * Reading the page the user is on (`src/page/`): `unreadable` (a browser page, the Web Store, a
 * viewer Recall cannot read), `blocked` (on the user's list of sites never to read), `empty` (no
 * readable text), `no_access` (no gesture granted access to the tab), `no_tab` (no tab to read).
 * `params.host` names the site where there is one.
 */
export const PAGE_ERROR_CODES = ['unreadable', 'blocked', 'empty', 'no_access', 'no_tab'] as const;

/**
 * The vault lock (`src/vault/`, `src/core/vault.ts`): `locked` (a data request while the lock is on
 * and no key is in the core: the panel shows its unlock screen), `wrong_passphrase` (nothing
 * changed), `weak_passphrase` (`params.min`: fewer characters than the rule), `busy` (an in-place
 * pass or another vault change is running), `unsupported` (this browser lacks what the lock needs),
 * `not_enabled` / `already_enabled` (a request that needs the lock off or on), `damaged` (a sealed
 * row or file that does not open with the key: tampered or cut).
 */
export const VAULT_ERROR_CODES = ['locked', 'wrong_passphrase', 'weak_passphrase', 'busy', 'unsupported', 'not_enabled', 'already_enabled', 'damaged'] as const;

/** Every domain with its codes. The UI's translation keys and the locale test derive from this. */
export const ERROR_CODES = {
  engine: ENGINE_ERROR_CODES,
  storage: STORAGE_ERROR_CODES,
  modelFile: MODEL_FILE_ERROR_CODES,
  backup: BACKUP_ERROR_CODES,
  historyImport: HISTORY_IMPORT_ERROR_CODES,
  memory: MEMORY_ERROR_CODES,
  messaging: MESSAGING_ERROR_CODES,
  prompt: PROMPT_ERROR_CODES,
  jobs: JOB_ERROR_CODES,
  page: PAGE_ERROR_CODES,
  vault: VAULT_ERROR_CODES,
} as const;

/** An error domain (`engine`, `storage`, …). */
export type ErrorDomain = keyof typeof ERROR_CODES;
/** The codes of one domain. */
export type ErrorCodeOf<D extends ErrorDomain> = (typeof ERROR_CODES)[D][number];
/** Engine error codes (`not_loaded`, `download`, …). */
export type EngineErrorCode = ErrorCodeOf<'engine'>;
/** Model-file (OPFS) error codes. */
export type ModelFileErrorCode = ErrorCodeOf<'modelFile'>;
/** Backup (import/export) error codes. */
export type BackupErrorCode = ErrorCodeOf<'backup'>;
/** History import error codes. */
export type HistoryImportErrorCode = ErrorCodeOf<'historyImport'>;
/** Memory error codes. */
export type MemoryErrorCode = ErrorCodeOf<'memory'>;
/** Messaging error codes. */
export type MessagingErrorCode = ErrorCodeOf<'messaging'>;
/** Prompt / token budget error codes. */
export type PromptErrorCode = ErrorCodeOf<'prompt'>;
/** Job error codes. */
export type JobErrorCode = ErrorCodeOf<'jobs'>;
/** Vault lock error codes. */
export type VaultErrorCode = ErrorCodeOf<'vault'>;

/** Interpolation values of an error's sentence: JSON numbers and short strings only (no user text). */
export type ErrorParams = Readonly<Record<string, string | number>>;

/** What of a coded error crosses the message boundary and is stored (e.g. a job's last error). */
export interface CodedError<D extends ErrorDomain = ErrorDomain> {
  domain: D;
  code: ErrorCodeOf<D>;
  params: ErrorParams;
}

/** Options of every coded error: the underlying error and the sentence's parameters. */
export interface RecallErrorOptions {
  cause?: unknown;
  params?: ErrorParams;
}

/** `true` when `code` is one of `domain`'s codes. */
export function isErrorCode<D extends ErrorDomain>(domain: D, code: unknown): code is ErrorCodeOf<D> {
  return typeof code === 'string' && (ERROR_CODES[domain] as readonly string[]).includes(code);
}

/** `true` when `value` names a domain of `ERROR_CODES`. */
export function isErrorDomain(value: unknown): value is ErrorDomain {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/**
 * The base of every user-facing error: `domain`, `code` and `params` (see module doc) plus an
 * English `message`. Use a domain subclass; this class is for code that handles any of them.
 */
export class RecallError<D extends ErrorDomain = ErrorDomain> extends Error {
  /** Which part of Recall refused or failed (a key of `ERROR_CODES`). */
  readonly domain: D;
  /** One of the domain's codes (`ERROR_CODES[domain]`): selects the translated sentence. */
  readonly code: ErrorCodeOf<D>;
  /** Values interpolated into the translated sentence (strings and numbers; `{}` when it has none). */
  readonly params: ErrorParams;

  /**
   * @param message English sentence for logs and the detail line.
   * @param options `cause` (kept on the error), `params` (interpolated into the translation).
   */
  constructor(domain: D, code: ErrorCodeOf<D>, message: string, options: RecallErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RecallError';
    this.domain = domain;
    this.code = code;
    this.params = { ...options.params };
  }
}

/**
 * The coded part of anything thrown: a `RecallError`, or the plain `Error` that the messaging
 * rebuilt from one on the other side (its own `domain`, `code`, `params` properties).
 * @returns `null` for errors without a known domain and code (plain `Error`s, connection errors).
 */
export function codedErrorOf(error: unknown): CodedError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { domain, code, params } = error as { domain?: unknown; code?: unknown; params?: unknown };
  if (!isErrorDomain(domain) || !isErrorCode(domain, code)) return null;
  const safe: Record<string, string | number> = {};
  if (typeof params === 'object' && params !== null) {
    for (const [key, value] of Object.entries(params)) if (typeof value === 'string' || typeof value === 'number') safe[key] = value;
  }
  return { domain, code, params: safe };
}

/**
 * `error` for one item of a batch: `prefix` before its message and `extra` added to its params.
 * A `RecallError` keeps its domain, code and name (so the panel still translates it); anything
 * else becomes a plain `Error` with the same message shape. The original is the `cause`.
 */
export function withItemContext(error: unknown, prefix: string, extra: ErrorParams): Error {
  const message = `${prefix}${error instanceof Error ? error.message : String(error)}`;
  if (!(error instanceof RecallError)) return new Error(message, { cause: error });
  const out = new RecallError(error.domain, error.code as never, message, { cause: error, params: { ...error.params, ...extra } });
  out.name = error.name;
  return out;
}

/**
 * The `RecallError` subclass of one domain (the base of each class below): its constructor takes
 * a code of `domain`, an English message and the options; `name` is the class's name.
 */
function domainError<D extends ErrorDomain>(domain: D, name: string) {
  return class extends RecallError<D> {
    constructor(code: ErrorCodeOf<D>, message: string, options?: RecallErrorOptions) {
      super(domain, code, message, options);
      this.name = name;
    }
  };
}

/** A chat model or embedder failure (`ENGINE_ERROR_CODES`). */
export class EngineError extends domainError('engine', 'EngineError') {}

/** A browser storage (IndexedDB) failure (`STORAGE_ERROR_CODES`). */
export class StorageError extends domainError('storage', 'StorageError') {}

/** An OPFS file failure (`MODEL_FILE_ERROR_CODES`): model files and backup files. */
export class ModelFileError extends domainError('modelFile', 'ModelFileError') {}

/** A backup that was refused (`BACKUP_ERROR_CODES`); nothing was imported. */
export class BackupError extends domainError('backup', 'BackupError') {}

/**
 * A file from another assistant that was refused (`HISTORY_IMPORT_ERROR_CODES`); nothing of it was
 * imported. `params` holds `file` (its name) and, where one conversation is at fault, `place`
 * (its title in quotes, or "#N" counted from 1).
 */
export class HistoryImportError extends domainError('historyImport', 'HistoryImportError') {}

/** A memory or conversation request that cannot be done (`MEMORY_ERROR_CODES`); nothing was changed. */
export class MemoryError extends domainError('memory', 'MemoryError') {}

/** A request refused at the message boundary (`MESSAGING_ERROR_CODES`). */
export class MessagingError extends domainError('messaging', 'MessagingError') {}

/** A prompt that cannot be built or counted (`PROMPT_ERROR_CODES`). */
export class PromptError extends domainError('prompt', 'PromptError') {}

/** A background job's failure or signal to the queue (`JOB_ERROR_CODES`). */
export class JobError extends domainError('jobs', 'JobError') {}

/** A page that could not be read (`PAGE_ERROR_CODES`); nothing was read from it. */
export class PageError extends domainError('page', 'PageError') {}

/** A vault lock request refused, or a data request while locked (`VAULT_ERROR_CODES`); nothing was changed. */
export class VaultError extends domainError('vault', 'VaultError') {}
