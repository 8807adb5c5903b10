/**
 * Staging a file picked by the user for import: a quick look at its first bytes — which path it
 * takes (`importRouteOf`: a Recall backup goes to `memory.import`, an export of another
 * assistant or a note to `history.import`, where the core detects its format) and, for a backup,
 * a clear message at once for a wrong pick — then a streamed copy into OPFS
 * `backups/` (`src/platform/model-files.ts`: 8 MiB chunks, written under a `.partial` name and
 * renamed when complete). Only the stored name travels to the core, which parses and validates
 * the whole file as a stream; no step holds the file as one string.
 */
import { AGE_HEADER } from '../../model/backup';
import { BACKUPS_DIR, DEFAULT_CHUNK_BYTES, saveModelFile, writeFileChunks, type StorageRoot } from '../../platform/model-files';
import { sealStagingChunks } from '../../platform/staging-seal';

/**
 * Largest import file accepted (bytes): 4 GB. The import streams (memory stays flat at any size);
 * this only stops a wrong pick of a huge unrelated file before it is copied.
 */
export const MAX_IMPORT_BYTES = 4_000_000_000;

/** Bytes of the file's start looked at by `checkImportFile`. */
const HEAD_BYTES = 4096;

/** Outcome of checking an import file. `reason` is stable, for translated messages. */
export type ImportFileCheck = { ok: true; encrypted?: true } | { ok: false; reason: 'empty' | 'too_large' | 'not_json'; detail?: string };

/**
 * Checks the start of an import file: not empty, not over `MAX_IMPORT_BYTES`, and (after an
 * optional BOM and white space) a JSON object starts, or it is an age file (`AGE_HEADER` line:
 * an encrypted backup, `encrypted: true`). Whether the rest is a valid export is
 * checked by the core.
 * @param head the first characters of the file (e.g. 4,096 bytes decoded as UTF-8).
 * @param sizeBytes file size in bytes.
 */
export function checkImportStart(head: string, sizeBytes: number): ImportFileCheck {
  const size = checkImportSize(sizeBytes);
  if (!size.ok) return size;
  if (head.startsWith(`${AGE_HEADER}\n`)) return { ok: true, encrypted: true };
  const trimmed = head.replace(/^\uFEFF/, '').trim();
  if (sizeBytes === 0 || !trimmed) return { ok: false, reason: 'empty' };
  if (!trimmed.startsWith('{')) return { ok: false, reason: 'not_json', detail: 'it does not start with a JSON object' };
  return { ok: true };
}

/** Where a picked file goes: `backup` (a Recall export, `memory.import`) or `history` (another assistant's export or a note, `history.import`). */
export type ImportRoute = 'backup' | 'history';

/** Keys that start another assistant's export in a JSON object: ChatGPT (`mapping`), Claude (`chat_messages`), Chatbot UI (`history`). */
const HISTORY_KEYS = /"(mapping|chat_messages|history)"\s*:/;

/**
 * The route of a file from its first characters and its name: a zip archive (`PK\x03\x04`), a
 * JSON list, a JSON object holding another assistant's keys and no `"format"` marker, or a
 * `.txt` / `.md` / `.markdown` note go to `history`; anything else is checked as a Recall backup
 * (which refuses it with its own reason when it is not one).
 * @param head the first characters of the file (e.g. 4,096 bytes decoded as UTF-8).
 */
export function importRouteOf(head: string, fileName: string): ImportRoute {
  const trimmed = head.replace(/^\uFEFF/, '').trimStart();
  if (head.startsWith('PK\u0003\u0004') || /\.(txt|md|markdown)$/i.test(fileName)) return 'history';
  if (trimmed.startsWith('[')) return 'history';
  if (trimmed.startsWith('{') && !/"format"\s*:/.test(trimmed) && HISTORY_KEYS.test(trimmed)) return 'history';
  return 'backup';
}

/** `importRouteOf` on the first `HEAD_BYTES` of `file` and its name (reads only those bytes). */
export async function importRouteOfFile(file: File): Promise<ImportRoute> {
  return importRouteOf(await file.slice(0, HEAD_BYTES).text(), file.name);
}

/** The size check alone (for a history import, whose content the core checks): not empty, not over `MAX_IMPORT_BYTES`. @param sizeBytes file size in bytes. */
export function checkImportSize(sizeBytes: number): ImportFileCheck {
  if (sizeBytes > MAX_IMPORT_BYTES) return { ok: false, reason: 'too_large' };
  if (sizeBytes === 0) return { ok: false, reason: 'empty' };
  return { ok: true };
}

/** `checkImportStart` on the first `HEAD_BYTES` of `file` (reads only those bytes). */
export async function checkImportFile(file: Blob): Promise<ImportFileCheck> {
  return checkImportStart(await file.slice(0, HEAD_BYTES).text(), file.size);
}

/**
 * Copies the picked file into OPFS `backups/` under a fresh name. With `options.stagingKey` (the
 * vault lock on: it asks the core for the one-time key of that name, `memory.stagingKey`) a plain
 * file is sealed as it is written (`sealStagingChunks`), so no plaintext byte of it lands in OPFS;
 * an age file (already encrypted) and a `null` key (lock off) are copied as they are.
 * @param onProgress bytes of the picked file copied so far.
 * @returns the stored name to send with `memory.import` / `history.import`.
 * @throws ModelFileError (`quota`, `io`, `unsupported`) — nothing is left behind; the error of `stagingKey`.
 */
export async function stageImportFile(
  file: Blob,
  onProgress?: (bytes: number) => void,
  options: { root?: StorageRoot; stagingKey?: (fileName: string) => Promise<string | null> } = {},
): Promise<string> {
  const name = `import-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.json`;
  const store = { folder: BACKUPS_DIR, ...(options.root ? { root: options.root } : {}) };
  const encrypted = (await file.slice(0, AGE_HEADER.length + 1).text()) === `${AGE_HEADER}\n`;
  const key = options.stagingKey && !encrypted ? await options.stagingKey(name) : null;
  if (key === null) return (await saveModelFile(new File([file], name), onProgress, store)).fileName;
  async function* slices(): AsyncGenerator<Uint8Array> {
    for (let offset = 0; offset < file.size; offset += DEFAULT_CHUNK_BYTES) {
      yield new Uint8Array(await file.slice(offset, offset + DEFAULT_CHUNK_BYTES).arrayBuffer());
      onProgress?.(Math.min(file.size, offset + DEFAULT_CHUNK_BYTES));
    }
  }
  const raw = Uint8Array.from(atob(key), (c) => c.charCodeAt(0));
  const { fileName } = await writeFileChunks(name, sealStagingChunks(slices(), raw, name), store);
  return fileName;
}
