/**
 * Reading a file from another assistant into the normalized shape (`ParsedHistory`): a `.zip`
 * export (its `conversations.json`), a JSON export (ChatGPT, Claude, Chatbot UI, batch list) or
 * plain text / Markdown notes. Pure: no storage (the core writes, `src/core/history-import.ts`).
 */
import type { ParsedHistory } from '../model/history-import';
import { parseBatch } from './batch';
import { parseChatbotUi } from './chatbotui';
import { parseChatGpt } from './chatgpt';
import { parseClaude } from './claude';
import { detectJsonFormat, looksLikeJson, NOTE_FILE } from './detect';
import { parseNotes } from './notes';
import { refuseFile, type ParseContext } from './shared';
import { conversationsJsonOf, isZip } from './zip';

export { parseSavedMemories } from './saved-memories';
export type { ParseContext } from './shared';

/**
 * Detects the format of `bytes` and reads every conversation in it.
 * @param bytes the whole file.
 * @param context the file's name (named in errors; `.txt`/`.md` allow notes) and the clock (ms epoch).
 * @param modifiedAt the file's last-modified time (ms epoch), dating a note.
 * @throws HistoryImportError `zip_without_conversations` (a zip without `conversations.json`),
 *   `invalid_json` (JSON cut off or malformed), `unknown_format` (none of the formats),
 *   `no_conversations` (a known format with nothing to import), `bad_conversation` (one
 *   conversation cannot be read; the error names it). Nothing is written in any case.
 */
export function parseHistoryFile(bytes: Uint8Array, context: ParseContext, modifiedAt?: number): ParsedHistory {
  let text: string;
  if (isZip(bytes)) {
    let inner: string | null;
    try {
      inner = conversationsJsonOf(bytes);
    } catch (error) {
      throw Object.assign(refuseFile('zip_without_conversations', context, 'The zip archive is damaged.'), { cause: error });
    }
    if (inner === null) throw refuseFile('zip_without_conversations', context, 'The zip archive holds no conversations.json.');
    text = inner;
  } else text = new TextDecoder().decode(bytes);

  if (!looksLikeJson(text)) {
    if (!NOTE_FILE.test(context.fileName)) throw refuseFile('unknown_format', context, 'This file is not an export Recall can read.');
    const conversations = parseNotes(text, context, modifiedAt);
    if (conversations.length === 0) throw refuseFile('no_conversations', context, 'The note is empty.');
    return { format: 'notes', conversations };
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw Object.assign(refuseFile('invalid_json', context, 'The file is cut off or is not valid JSON.'), { cause: error });
  }
  const format = detectJsonFormat(value);
  if (format === null) throw refuseFile('unknown_format', context, 'This file is not an export Recall can read.');
  const conversations =
    format === 'chatgpt'
      ? parseChatGpt(value, context)
      : format === 'claude'
        ? parseClaude(value, context)
        : format === 'chatbotui'
          ? parseChatbotUi(value, context)
          : parseBatch(value, context);
  if (conversations.length === 0) throw refuseFile('no_conversations', context, 'The file holds no conversation with messages.');
  return { format, conversations };
}
