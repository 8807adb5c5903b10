/**
 * The `.zip` of a data export (ChatGPT's and Claude's are zips holding `conversations.json` next to
 * images and other files). Read with fflate: only the `conversations.json` entry is inflated, the
 * other entries are skipped unread (their bytes are not decompressed).
 */
import { unzipSync } from 'fflate';

/** `true` when `bytes` start with a zip local-file header (`PK\x03\x04`) or an empty archive's end record (`PK\x05\x06`). */
export function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && ((bytes[2] === 3 && bytes[3] === 4) || (bytes[2] === 5 && bytes[3] === 6));
}

/**
 * The text of the export's `conversations.json` (at the top or in one folder: the shallowest one wins).
 * @returns `null` when the archive holds none.
 * @throws Error from fflate when the archive is damaged.
 */
export function conversationsJsonOf(bytes: Uint8Array): string | null {
  const entries = unzipSync(bytes, { filter: (file) => /(^|\/)conversations\.json$/i.test(file.name) });
  const names = Object.keys(entries).sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  const first = names[0];
  return first === undefined ? null : new TextDecoder().decode(entries[first]);
}
