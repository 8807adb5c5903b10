/**
 * The plain batch list of past dialogue snippets (the seed format): `[{ "id": …, "text": … }]`,
 * optionally with `title` and a time (`createdAt` / `created_at` / `timestamp`: ISO 8601, seconds
 * or ms). Each snippet becomes one conversation with the snippet as one user message; sourceId `batch:<id>`.
 */
import type { ImportedConversation } from '../model/history-import';
import { asObject, finishConversation, placeOf, refuseFile, toEpochMs, type ParseContext } from './shared';

/** `true` when `value` is a non-empty list whose items all have a string `text` and no message tree. */
export function isBatchList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof asObject(item)?.text === 'string' && asObject(item)?.mapping === undefined);
}

/**
 * Reads a batch list.
 * @throws HistoryImportError `bad_conversation` naming the snippet when one has no id (string or number).
 */
export function parseBatch(value: unknown, context: ParseContext): ImportedConversation[] {
  const out: ImportedConversation[] = [];
  (Array.isArray(value) ? value : []).forEach((item, index) => {
    const s = asObject(item);
    const id = s?.id;
    const title = typeof s?.title === 'string' ? s.title : '';
    if (!s || (typeof id !== 'string' && typeof id !== 'number') || String(id) === '' || typeof s.text !== 'string') {
      throw refuseFile('bad_conversation', context, 'This snippet has no id or no text.', placeOf(title, index));
    }
    const at = toEpochMs(s.createdAt ?? s.created_at ?? s.timestamp) ?? context.now;
    const done = finishConversation(
      { sourceId: `batch:${id}`, title, createdAt: at, updatedAt: at, messages: [{ role: 'user', text: s.text, at }] },
      context,
      index,
    );
    if (done) out.push(done);
  });
  return out;
}
