/**
 * Which assistant a file comes from (`HistoryFormat`), by its content, never by its name alone:
 * JSON shapes first (see each parser's `is…`), then plain text or Markdown for a file that is not
 * JSON and is named `.txt`, `.md` or `.markdown` (or has no extension).
 */
import type { HistoryFormat } from '../model/history-import';
import { isBatchList } from './batch';
import { isChatbotUiExport } from './chatbotui';
import { isChatGptConversation } from './chatgpt';
import { isClaudeConversation } from './claude';

/** Names read as notes when their content is not JSON. */
export const NOTE_FILE = /(\.(txt|md|markdown|text)$)|(^[^.]+$)/i;

/**
 * The format of a parsed JSON value: a conversation list (or one conversation) of ChatGPT or Claude, a
 * Chatbot UI export, or a batch list. `null` when it is none of them.
 */
export function detectJsonFormat(value: unknown): Exclude<HistoryFormat, 'notes'> | null {
  const first = Array.isArray(value) ? value[0] : value;
  if (isChatbotUiExport(value)) return 'chatbotui';
  if (first === undefined) return null;
  if (isChatGptConversation(first)) return 'chatgpt';
  if (isClaudeConversation(first)) return 'claude';
  if (isBatchList(value)) return 'batch';
  return null;
}

/** `true` when the text is meant as JSON (after a BOM and white space it starts with `{` or `[`). */
export function looksLikeJson(text: string): boolean {
  return /^\uFEFF?\s*[[{]/.test(text);
}
