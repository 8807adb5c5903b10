/**
 * Reading a memory export file picked by the user, before it is sent to `memory.import`.
 * The core validates every record; this check only catches files that are not JSON at all
 * (wrong file, truncated download) so the user gets a clear message at once.
 */

/** Largest import file accepted (bytes): 200 MB, far above any realistic memory export. */
export const MAX_IMPORT_BYTES = 200_000_000;

/** Outcome of reading an import file. `reason` is stable, for translated messages. */
export type ImportFileCheck = { ok: true; json: string } | { ok: false; reason: 'empty' | 'too_large' | 'not_json'; detail?: string };

/**
 * Checks the text of an import file: not empty, parseable JSON whose top level is an object or
 * an array. Returns the text unchanged (the core parses it again).
 * @param text file content.
 * @param sizeBytes file size in bytes (for the size limit).
 */
export function checkImportText(text: string, sizeBytes: number): ImportFileCheck {
  if (sizeBytes > MAX_IMPORT_BYTES) return { ok: false, reason: 'too_large' };
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (!trimmed) return { ok: false, reason: 'empty' };
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (parsed === null || typeof parsed !== 'object') return { ok: false, reason: 'not_json', detail: 'top level is not an object' };
  } catch (error) {
    return { ok: false, reason: 'not_json', detail: error instanceof Error ? error.message : String(error) };
  }
  return { ok: true, json: trimmed };
}
