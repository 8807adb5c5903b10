/**
 * Files kept in the Origin Private File System (OPFS): model files the user opened from disk
 * (GGUF for wllama) in the folder `models/`, and staging copies of memory backups (export and
 * import files) in `backups/` (`BACKUPS_DIR`; every function takes `options.folder`). OPFS is shared by every page of the extension's origin, so the side
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

/** Name of the OPFS folder that holds export/import staging files (deleted after use and on start-up). */
export const BACKUPS_DIR = 'backups';

/** Bytes read and written per step when copying a file (8 MiB: large enough to be fast, small enough to keep memory flat). */
export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;

/** Suffix of files still being written. They are never listed or opened. */
const PARTIAL_SUFFIX = '.partial';

/** Why a model-file operation failed: a coded error of the `modelFile` domain (`src/model/errors.ts`). */
import { ModelFileError } from '../model/errors';

export { ModelFileError, type ModelFileErrorCode } from '../model/errors';

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

/** Options shared by the file functions: storage root (default OPFS) and folder (default `MODELS_DIR`). */
export interface FileStoreOptions {
  root?: StorageRoot;
  folder?: string;
}

/** The extension's OPFS root. @throws ModelFileError('unsupported') where there is no OPFS. */
export const opfsRoot: StorageRoot = async () => {
  const storage = (globalThis.navigator as { storage?: { getDirectory?: () => Promise<unknown> } } | undefined)?.storage;
  if (!storage?.getDirectory) throw new ModelFileError('unsupported', 'This browser context has no Origin Private File System.');
  return (await storage.getDirectory()) as DirectoryHandleLike;
};

async function modelsDir(options: FileStoreOptions): Promise<DirectoryHandleLike> {
  try {
    return await (await (options.root ?? opfsRoot)()).getDirectoryHandle(options.folder ?? MODELS_DIR, { create: true });
  } catch (cause) {
    if (cause instanceof ModelFileError) throw cause;
    throw new ModelFileError('io', `Cannot open the folder "${options.folder ?? MODELS_DIR}": ${describe(cause)}`, { cause });
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
 * Copies `file` into OPFS `models/` (or `options.folder`), chunk by chunk (`file.slice` → write;
 * memory use stays at one chunk whatever the file size), through `writeFileChunks`.
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
  options: { signal?: AbortSignal; chunkBytes?: number } & FileStoreOptions = {},
): Promise<{ fileName: string; sizeBytes: number }> {
  const chunkBytes = Math.max(1, options.chunkBytes ?? DEFAULT_CHUNK_BYTES);
  async function* slices(): AsyncGenerator<Uint8Array> {
    for (let offset = 0; offset < file.size; offset += chunkBytes) {
      try {
        yield new Uint8Array(await file.slice(offset, offset + chunkBytes).arrayBuffer());
      } catch (error) {
        if (isNamed(error, 'NotReadableError'))
          throw new ModelFileError('io', `"${file.name}" could not be read (was it moved or deleted?).`, { cause: error });
        throw error;
      }
    }
  }
  return writeFileChunks(file.name, slices(), { ...options, ...(onProgress ? { onProgress } : {}), expectedBytes: file.size });
}

/**
 * Writes a stream of byte chunks as one file in OPFS `options.folder` (default `models/`): into a
 * temporary `<name>.<random>.partial` file, renamed to the real name only once complete, so a
 * killed page, a full disk or an abort never leaves a truncated file under the real name. Memory
 * use is one chunk (the caller's) at a time.
 * @param name wanted file name (made safe with `sanitizeModelFileName`).
 * @param chunks the content, in order.
 * @param options.onProgress called after each chunk with the bytes written so far.
 * @param options.expectedBytes when given, the stored size must equal it.
 * @returns stored name and size in bytes.
 * @throws ModelFileError: `invalid_name`, `aborted`, `quota`, `io`, `unsupported` (nothing left
 *   behind; an existing file of the same name is only replaced on success). An error thrown by
 *   `chunks` is rethrown as is when it is a `ModelFileError`, else wrapped as `io`.
 */
export async function writeFileChunks(
  name: string,
  chunks: AsyncIterable<Uint8Array>,
  options: { signal?: AbortSignal; onProgress?: (writtenBytes: number) => void; expectedBytes?: number } & FileStoreOptions = {},
): Promise<{ fileName: string; sizeBytes: number }> {
  const fileName = sanitizeModelFileName(name);
  const { signal } = options;
  const dir = await modelsDir(options);
  const tempName = `${fileName}.${Math.random().toString(36).slice(2, 10)}${PARTIAL_SUFFIX}`;
  let writable: WritableFileLike | null = null;
  let closed = false;
  let written = 0;
  try {
    if (signal?.aborted) throw new ModelFileError('aborted', 'Saving the file was cancelled.');
    const handle = await dir.getFileHandle(tempName, { create: true });
    if (typeof handle.move !== 'function') throw new ModelFileError('unsupported', 'This browser cannot rename files in its private storage.');
    writable = await handle.createWritable();
    for await (const chunk of chunks) {
      if (signal?.aborted) throw new ModelFileError('aborted', 'Saving the file was cancelled.');
      await writable.write(chunk);
      written += chunk.byteLength;
      options.onProgress?.(written);
    }
    await writable.close();
    closed = true;
    const stored = await handle.getFile();
    const expected = options.expectedBytes ?? written;
    if (stored.size !== expected) {
      throw new ModelFileError('io', `The stored copy has ${stored.size} bytes instead of ${expected}.`);
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
      throw new ModelFileError('quota', `Not enough storage space to keep "${fileName}" (${Math.ceil((options.expectedBytes ?? written) / 1048576)} MB).`, {
        cause: error,
      });
    }
    throw new ModelFileError('io', `Saving "${fileName}" failed: ${describe(error)}`, { cause: error });
  }
}

/**
 * Opens a stored model file. The returned `File` reads lazily from disk (no copy in memory).
 * @throws ModelFileError('not_found') when no complete file has that name; 'io' otherwise.
 */
export async function openModelFile(fileName: string, options: FileStoreOptions = {}): Promise<File> {
  if (fileName.endsWith(PARTIAL_SUFFIX)) throw new ModelFileError('not_found', `The model file "${fileName}" is not stored.`);
  const dir = await modelsDir(options);
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
export async function deleteModelFile(fileName: string, options: FileStoreOptions = {}): Promise<void> {
  const dir = await modelsDir(options);
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
export async function listModelFiles(options: FileStoreOptions = {}): Promise<{ fileName: string; sizeBytes: number }[]> {
  return (await listStoredFiles(options)).map(({ fileName, sizeBytes }) => ({ fileName, sizeBytes }));
}

/**
 * Lists the files of a folder, by name, with their last change (ms epoch).
 * @param options.includePartial also list `.partial` files of copies in progress or interrupted.
 * @returns name, size in bytes and `lastModified` of each file, sorted by name.
 */
export async function listStoredFiles(
  options: FileStoreOptions & { includePartial?: boolean } = {},
): Promise<{ fileName: string; sizeBytes: number; lastModified: number }[]> {
  const dir = await modelsDir(options);
  const out: { fileName: string; sizeBytes: number; lastModified: number }[] = [];
  for await (const [name, handle] of dir.entries()) {
    if (handle.kind !== 'file' || (name.endsWith(PARTIAL_SUFFIX) && !options.includePartial)) continue;
    const file = await (handle as FileHandleLike).getFile();
    out.push({ fileName: name, sizeBytes: file.size, lastModified: file.lastModified });
  }
  return out.sort((a, b) => a.fileName.localeCompare(b.fileName));
}
