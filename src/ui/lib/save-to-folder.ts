/**
 * "Back up to a folder": the export the core staged in OPFS `backups/` is copied, as a stream,
 * into a folder the user picked with the File System Access API (`showDirectoryPicker`,
 * Chromium 86+), then the staging file is deleted. The browser writes into a swap file until the
 * copy closes, so a cut-short copy leaves no half file under the backup's name.
 */
import { BACKUPS_DIR, deleteModelFile, openModelFile, type DirectoryHandleLike, type StorageRoot } from '../../platform/model-files';

/** Whether this browser lets a page pick a folder to write into. */
export function canPickFolder(): boolean {
  return typeof (globalThis as { showDirectoryPicker?: unknown }).showDirectoryPicker === 'function';
}

/**
 * Asks the user for a folder to write backups into (remembered by the browser under the id
 * `recall-backups`, so the picker opens there next time).
 * @returns the folder, or `null` when the user cancelled the picker.
 * @throws the browser's error for anything but a cancel (e.g. `SecurityError`).
 */
export async function pickBackupFolder(): Promise<DirectoryHandleLike | null> {
  const picker = (globalThis as { showDirectoryPicker?: (options: object) => Promise<DirectoryHandleLike> }).showDirectoryPicker;
  if (!picker) return null;
  try {
    return await picker({ id: 'recall-backups', mode: 'readwrite', startIn: 'documents' });
  } catch (error) {
    if ((error as { name?: string }).name === 'AbortError') return null;
    throw error;
  }
}

/**
 * Copies the staged export `backups/<fileName>` into `folder` as `saveName` (replacing a file of
 * that name), chunk by chunk, then deletes the staging file.
 * @param options.root the OPFS root of the staging file (tests pass an in-memory one).
 * @returns the bytes written.
 * @throws ModelFileError('not_found') when the staging file is gone; the browser's error when the
 *   folder cannot be written (then the staging file is kept for the start-up clean-up).
 */
export async function saveStagedFileToFolder(
  fileName: string,
  saveName: string,
  folder: DirectoryHandleLike,
  options: { root?: StorageRoot } = {},
): Promise<number> {
  const store = { folder: BACKUPS_DIR, ...(options.root ? { root: options.root } : {}) };
  const file = await openModelFile(fileName, store);
  const writable = await (await folder.getFileHandle(saveName, { create: true })).createWritable();
  const reader = file.stream().getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await writable.write(value);
      bytes += value.byteLength;
    }
    await writable.close();
  } catch (error) {
    await writable.abort(error).catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
  await deleteModelFile(fileName, store).catch(() => undefined);
  return bytes;
}
