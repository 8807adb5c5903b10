/**
 * Model files the user opened from disk (GGUF for wllama), kept in the Origin Private File System
 * (OPFS) folder `models/`. OPFS is shared by every page of the extension's origin, so the side
 * panel can copy a picked file there and the offscreen engine host can open it later, with no
 * network and across browser restarts. Files travel between pages by name, never through
 * messages (which cannot carry Blobs).
 *
 * Writes stream chunk by chunk into a temporary `<name>.<random>.partial` file that is renamed
 * only once complete, so a killed page, a full disk or an abort never leaves a truncated model
 * under the real name. Window/worker contexts only (OPFS `createWritable` is not available in a
 * service worker).
 */

/** Name of the OPFS folder that holds the model files. */
export const MODELS_DIR = 'models';

/** Bytes read and written per step when copying a file (8 MiB: large enough to be fast, small enough to keep memory flat). */
export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;

/** Suffix of files still being written. They are never listed or opened. */
const PARTIAL_SUFFIX = '.partial';

/** Why a model-file operation failed; stable for the UI to translate. */
export type ModelFileErrorCode = 'not_found' | 'invalid_name' | 'quota' | 'aborted' | 'io' | 'unsupported';

/** A model-file failure with a stable `code` and a readable message. */
export class ModelFileError extends Error {
  constructor(
    readonly code: ModelFileErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ModelFileError';
  }
}

/** The writable stream of a file handle (subset of `FileSystemWritableFileStream`). */
export interface WritableFileLike {
  write(data: Uint8Array): Promise<void>;
  close(): Promise<void>;
  abort(reason?: unknown): Promise<void>;
}

/** Subset of `FileSystemFileHandle` used here. `move` renames within the same folder (OPFS, Chrome 110+). */
export interface FileHandleLike {
  readonly kind: 'file';
  readonly name: string;
  getFile(): Promise<File>;
  createWritable(): Promise<WritableFileLike>;
  move?(newName: string): Promise<void>;
}

/** Subset of `FileSystemDirectoryHandle` used here. */
export interface DirectoryHandleLike {
  readonly kind?: 'directory';
  getFileHandle(name: string, options?: { create?: boolean }): Promise<FileHandleLike>;
  getDirectoryHandle(name: string, options?: { create?: boolean }): Promise<DirectoryHandleLike>;
  removeEntry(name: string, options?: { recursive?: boolean }): Promise<void>;
  entries(): AsyncIterableIterator<[string, FileHandleLike | DirectoryHandleLike | { kind: string }]>;
}

/** Where the `models/` folder lives: the OPFS root by default; tests pass an in-memory folder. */
export type StorageRoot = () => Promise<DirectoryHandleLike>;

/** The extension's OPFS root. @throws ModelFileError('unsupported') where there is no OPFS. */
export const opfsRoot: StorageRoot = async () => {
  const storage = (globalThis.navigator as { storage?: { getDirectory?: () => Promise<unknown> } } | undefined)?.storage;
  if (!storage?.getDirectory) throw new ModelFileError('unsupported', 'This browser context has no Origin Private File System.');
  return (await storage.getDirectory()) as DirectoryHandleLike;
};

async function modelsDir(root: StorageRoot): Promise<DirectoryHandleLike> {
  try {
    return await (await root()).getDirectoryHandle(MODELS_DIR, { create: true });
  } catch (cause) {
    if (cause instanceof ModelFileError) throw cause;
    throw new ModelFileError('io', `Cannot open the model folder: ${describe(cause)}`, { cause });
  }
}

/**
 * Makes a safe OPFS file name from a user's file name: the base name only, without path
 * separators, control characters or characters Windows forbids (`\ / : * ? " < > |`), trimmed,
 * at most 200 characters (the extension is kept). Chinese and other non-ASCII letters are kept.
 * @throws ModelFileError('invalid_name') when nothing usable is left.
 */
export function sanitizeModelFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  let clean = base.replace(/[\u0000-\u001f\u007f:*?"<>|]/g, '_').trim();
  if (clean.endsWith(PARTIAL_SUFFIX)) clean = clean.slice(0, -PARTIAL_SUFFIX.length);
  if (clean.length > 200) {
    const dot = clean.lastIndexOf('.');
    const ext = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : '';
    clean = clean.slice(0, 200 - ext.length) + ext;
  }
  if (!clean || clean === '.' || clean === '..') throw new ModelFileError('invalid_name', `"${name}" is not a usable file name.`);
  return clean;
}

function isNamed(error: unknown, name: string): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === name;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Copies `file` into OPFS `models/`, chunk by chunk (`file.slice` → write; memory use stays at
 * one chunk whatever the file size).
 * @param onProgress called after each chunk with the bytes written so far.
 * @param options.chunkBytes bytes per step (default `DEFAULT_CHUNK_BYTES`).
 * @param options.signal aborting stops the copy and removes the partial file.
 * @param options.root storage root (default: OPFS; tests pass an in-memory folder).
 * @returns the stored name (see `sanitizeModelFileName`; a file with that name is replaced) and
 *   its size in bytes.
 * @throws ModelFileError: `invalid_name`, `aborted`, `quota` (disk full), `io` (read/write
 *   failure, or the stored size differs from `file.size`), `unsupported` (no OPFS). Nothing is
 *   left behind on failure, and an existing file of the same name is only replaced on success.
 */
export async function saveModelFile(
  file: File,
  onProgress?: (writtenBytes: number) => void,
  options: { signal?: AbortSignal; root?: StorageRoot; chunkBytes?: number } = {},
): Promise<{ fileName: string; sizeBytes: number }> {
  const fileName = sanitizeModelFileName(file.name);
  const { signal } = options;
  const dir = await modelsDir(options.root ?? opfsRoot);
  const tempName = `${fileName}.${Math.random().toString(36).slice(2, 10)}${PARTIAL_SUFFIX}`;
  let writable: WritableFileLike | null = null;
  let closed = false;
  try {
    if (signal?.aborted) throw new ModelFileError('aborted', 'Saving the model file was cancelled.');
    const handle = await dir.getFileHandle(tempName, { create: true });
    if (typeof handle.move !== 'function') throw new ModelFileError('unsupported', 'This browser cannot rename files in its private storage.');
    writable = await handle.createWritable();
    const chunkBytes = Math.max(1, options.chunkBytes ?? DEFAULT_CHUNK_BYTES);
    for (let offset = 0; offset < file.size; offset += chunkBytes) {
      if (signal?.aborted) throw new ModelFileError('aborted', 'Saving the model file was cancelled.');
      const chunk = new Uint8Array(await file.slice(offset, offset + chunkBytes).arrayBuffer());
      await writable.write(chunk);
      onProgress?.(offset + chunk.byteLength);
    }
    await writable.close();
    closed = true;
    const stored = await handle.getFile();
    if (stored.size !== file.size) {
      throw new ModelFileError('io', `The stored copy has ${stored.size} bytes instead of ${file.size}.`);
    }
    await dir.removeEntry(fileName).catch((error: unknown) => {
      if (!isNamed(error, 'NotFoundError')) throw error;
    });
    await handle.move(fileName);
    return { fileName, sizeBytes: stored.size };
  } catch (error) {
    if (writable && !closed) await writable.abort().catch(() => undefined);
    await dir.removeEntry(tempName).catch(() => undefined);
    if (error instanceof ModelFileError) throw error;
    if (isNamed(error, 'QuotaExceededError')) {
      throw new ModelFileError('quota', `Not enough storage space to keep "${fileName}" (${Math.ceil(file.size / 1048576)} MB).`, { cause: error });
    }
    if (isNamed(error, 'NotReadableError')) {
      throw new ModelFileError('io', `"${file.name}" could not be read (was it moved or deleted?).`, { cause: error });
    }
    throw new ModelFileError('io', `Saving "${fileName}" failed: ${describe(error)}`, { cause: error });
  }
}

/**
 * Opens a stored model file. The returned `File` reads lazily from disk (no copy in memory).
 * @throws ModelFileError('not_found') when no complete file has that name; 'io' otherwise.
 */
export async function openModelFile(fileName: string, options: { root?: StorageRoot } = {}): Promise<File> {
  if (fileName.endsWith(PARTIAL_SUFFIX)) throw new ModelFileError('not_found', `The model file "${fileName}" is not stored.`);
  const dir = await modelsDir(options.root ?? opfsRoot);
  try {
    return await (await dir.getFileHandle(fileName)).getFile();
  } catch (cause) {
    if (isNamed(cause, 'NotFoundError') || isNamed(cause, 'TypeMismatchError') || isNamed(cause, 'TypeError')) {
      throw new ModelFileError('not_found', `The model file "${fileName}" is not stored.`, { cause });
    }
    throw new ModelFileError('io', `Opening "${fileName}" failed: ${describe(cause)}`, { cause });
  }
}

/**
 * Deletes a stored model file. Deleting a file that does not exist is not an error.
 * @throws ModelFileError('io') when the file exists but cannot be removed (e.g. open elsewhere).
 */
export async function deleteModelFile(fileName: string, options: { root?: StorageRoot } = {}): Promise<void> {
  const dir = await modelsDir(options.root ?? opfsRoot);
  try {
    await dir.removeEntry(fileName);
  } catch (cause) {
    if (isNamed(cause, 'NotFoundError') || isNamed(cause, 'TypeError')) return;
    throw new ModelFileError('io', `Deleting "${fileName}" failed: ${describe(cause)}`, { cause });
  }
}

/**
 * Lists the complete model files (partial files of an interrupted copy are left out), by name.
 * @returns name and size in bytes of each file, sorted by name.
 */
export async function listModelFiles(options: { root?: StorageRoot } = {}): Promise<{ fileName: string; sizeBytes: number }[]> {
  const dir = await modelsDir(options.root ?? opfsRoot);
  const out: { fileName: string; sizeBytes: number }[] = [];
  for await (const [name, handle] of dir.entries()) {
    if (handle.kind !== 'file' || name.endsWith(PARTIAL_SUFFIX)) continue;
    out.push({ fileName: name, sizeBytes: (await (handle as FileHandleLike).getFile()).size });
  }
  return out.sort((a, b) => a.fileName.localeCompare(b.fileName));
}
