/**
 * Plain text or Markdown notes: the whole file becomes one conversation holding the note as one
 * user message (no reply). Title: the first Markdown heading, else the file name without its
 * extension. SourceId `notes:<FNV-1a-64 of the text>`, so the same note imported again adds nothing.
 */
import type { ImportedConversation } from '../model/history-import';
import { finishConversation, type ParseContext } from './shared';

/** FNV-1a 64-bit hash of `text` (UTF-16 code units) as 16 hex digits. */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) hash = BigInt.asUintN(64, (hash ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n);
  return hash.toString(16).padStart(16, '0');
}

/**
 * Reads a note. `modifiedAt` (ms epoch; the file's last-modified time when known) dates it, else the import.
 * @returns one conversation, or none for an empty note.
 */
export function parseNotes(text: string, context: ParseContext, modifiedAt?: number): ImportedConversation[] {
  const clean = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .trim();
  const heading = /^#{1,6}\s+(.+)$/m.exec(clean)?.[1]?.trim();
  const title = heading || context.fileName.replace(/\.[^.]+$/, '');
  const at = modifiedAt ?? context.now;
  const done = finishConversation(
    { sourceId: `notes:${fnv1a64(clean)}`, title, createdAt: at, updatedAt: at, messages: [{ role: 'user', text: clean, at }] },
    context,
    0,
  );
  return done ? [done] : [];
}
