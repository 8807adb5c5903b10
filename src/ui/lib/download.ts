/**
 * Saving files through the browser's download UI (an object URL and a temporary `<a download>`),
 * with no `downloads` permission. Browser only.
 */
import { BACKUPS_DIR, deleteModelFile, openModelFile } from '../../platform/model-files';

/** How long (ms) a staged export is kept after its download started (then deleted; the core also clears `backups/` on start-up). */
export const STAGED_EXPORT_KEEP_MS = 60_000;

/** Starts a download of `blob` under `fileName`; the object URL is revoked after `keepMs`. */
function downloadBlob(fileName: string, blob: Blob, keepMs: number, onDone?: () => void): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // Revoke later: revoking synchronously can cancel the download in Chromium.
  setTimeout(() => {
    URL.revokeObjectURL(url);
    onDone?.();
  }, keepMs);
}

/**
 * Downloads a file the core wrote into OPFS `backups/` (an export), read lazily from disk (the
 * `File` is not copied into memory), then deletes the staging file after `STAGED_EXPORT_KEEP_MS`.
 * @param fileName stored name in `backups/`.
 * @param downloadName name offered to the user.
 * @throws ModelFileError('not_found') when the staging file is gone.
 */
export async function downloadStagedFile(fileName: string, downloadName: string): Promise<void> {
  const file = await openModelFile(fileName, { folder: BACKUPS_DIR });
  downloadBlob(downloadName, file, STAGED_EXPORT_KEEP_MS, () => void deleteModelFile(fileName, { folder: BACKUPS_DIR }).catch(() => undefined));
}
