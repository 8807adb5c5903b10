/**
 * What every parser of `src/importers/` shares: times to ms epoch, the refusal that names the file
 * and the place, and the last step of every parser (`finishConversation`: consecutive messages
 * of one role joined, the result checked against the one normalized shape).
 */
import { HistoryImportError, type HistoryImportErrorCode } from '../model/errors';
import { importedConversationSchema, type ImportedConversation, type ImportedMessage } from '../model/history-import';

/** Where a parser is: the file's name (shown to the user) and the import's clock (ms epoch), used for sources without times. */
export interface ParseContext {
  fileName: string;
  now: number;
}

/**
 * A refusal of the file: `HistoryImportError` with `params.file` and, when given, `params.place`.
 * @param what the problem in plain words (English; the panel shows the translated sentence of `code`).
 */
export function refuseFile(code: HistoryImportErrorCode, context: ParseContext, what: string, place?: string): HistoryImportError {
  const where = place ? ` (${place})` : '';
  return new HistoryImportError(code, `${context.fileName}${where}: ${what} Nothing was imported.`, {
    params: { file: context.fileName, ...(place ? { place } : {}) },
  });
}

/** The place of a conversation for messages: its title in quotes, else its position "#N" (N from 1). */
export function placeOf(title: unknown, index: number): string {
  return typeof title === 'string' && title.trim() ? `"${title.trim().slice(0, 80)}"` : `#${index + 1}`;
}

/**
 * A time of an export as ms epoch: numbers below 1e11 are seconds (ChatGPT's `create_time`),
 * larger ones ms; strings are ISO 8601 (Claude, Grok). `null` for anything else.
 */
export function toEpochMs(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  if (typeof value === 'string' && value.trim()) {
    const ms = Date.parse(value);
    return Number.isFinite(ms) && ms > 0 ? ms : null;
  }
  return null;
}

/** `value` when it is an object (not an array), else `null`. */
export const asObject = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/**
 * Builds one normalized conversation: messages with empty text dropped, consecutive messages of
 * one role joined by a blank line (a reply split over several nodes reads as one), times made
 * non-decreasing. `null` when no message is left (an empty conversation is not imported).
 * @throws HistoryImportError `bad_conversation` when the result does not have the normalized shape.
 */
export function finishConversation(
  raw: { sourceId: string; title: string; createdAt: number | null; updatedAt: number | null; messages: ImportedMessage[] },
  context: ParseContext,
  index: number,
): ImportedConversation | null {
  const messages: ImportedMessage[] = [];
  for (const m of raw.messages) {
    const text = m.text.trim();
    if (!text) continue;
    const last = messages[messages.length - 1];
    if (last && last.role === m.role) last.text = `${last.text}\n\n${text}`;
    else messages.push({ role: m.role, text, at: Math.max(m.at, last?.at ?? 0) });
  }
  if (messages.length === 0) return null;
  const createdAt = raw.createdAt ?? messages[0]!.at;
  const conversation = {
    sourceId: raw.sourceId,
    title: raw.title.trim() || messages[0]!.text.slice(0, 60),
    createdAt,
    updatedAt: Math.max(raw.updatedAt ?? createdAt, messages[messages.length - 1]!.at),
    messages,
  };
  const parsed = importedConversationSchema.safeParse(conversation);
  if (!parsed.success) throw refuseFile('bad_conversation', context, 'This conversation could not be read.', placeOf(raw.title, index));
  return parsed.data;
}
