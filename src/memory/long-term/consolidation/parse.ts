/**
 * Parsing a decision reply: the JSON is cut out and repaired (`parseJsonReply`), the event read
 * leniently (synonyms such as MERGE, INVALIDATE, NOOP), the id checked against the candidates.
 */
import { parseJsonReply } from '../../../text/json-reply';
import { containsCjk } from '../../../text/language';
import type { Decision } from './schema';

const EVENT_SYNONYMS: Record<string, 'ADD' | 'UPDATE' | 'DELETE' | 'NONE'> = {
  ADD: 'ADD',
  NEW: 'ADD',
  CREATE: 'ADD',
  INSERT: 'ADD',
  UPDATE: 'UPDATE',
  MERGE: 'UPDATE',
  MODIFY: 'UPDATE',
  REPLACE: 'UPDATE',
  DELETE: 'DELETE',
  INVALIDATE: 'DELETE',
  REMOVE: 'DELETE',
  CONTRADICT: 'DELETE',
  NONE: 'NONE',
  NOOP: 'NONE',
  NO_CHANGE: 'NONE',
  NOCHANGE: 'NONE',
  SKIP: 'NONE',
  KEEP: 'NONE',
};

/**
 * Validates a decision reply against `candidateCount` candidates. The id may be a string or a
 * number ("0" or 0); UPDATE needs a non-empty text, which must keep Chinese when the memory or the
 * new fact is Chinese.
 * @returns the decision, or a readable problem (used as the retry feedback).
 */
export function parseDecision(
  reply: string,
  candidateCount: number,
  itemText: string,
  candidateTexts: string[],
): { ok: true; decision: Decision } | { ok: false; message: string } {
  const json = parseJsonReply(reply);
  if (!json.ok) return { ok: false, message: json.message };
  const obj = (Array.isArray(json.value) ? json.value[0] : json.value) as Record<string, unknown> | undefined;
  if (!obj || typeof obj !== 'object') return { ok: false, message: 'The reply was not a JSON object.' };
  const rawEvent =
    typeof obj.event === 'string'
      ? obj.event
          .trim()
          .toUpperCase()
          .replace(/[\s-]+/g, '_')
      : '';
  const event = EVENT_SYNONYMS[rawEvent];
  if (!event) return { ok: false, message: `"event" must be one of ADD, UPDATE, DELETE, NONE (got ${JSON.stringify(obj.event ?? null)}).` };
  if (event === 'ADD') return { ok: true, decision: { event } };
  const rawId = typeof obj.id === 'number' ? String(obj.id) : typeof obj.id === 'string' ? obj.id.trim() : '';
  const index = /^\d+$/.test(rawId) ? Number(rawId) : null;
  if (index !== null && index >= candidateCount)
    return { ok: false, message: `"id" must be one of the EXISTING ids 0 to ${candidateCount - 1} (got ${rawId}).` };
  if (event === 'NONE') return { ok: true, decision: { event, index } };
  if (index === null) return { ok: false, message: `${event} needs the "id" of an EXISTING memory (0 to ${candidateCount - 1}).` };
  if (event === 'DELETE') return { ok: true, decision: { event, index } };
  const text = typeof obj.text === 'string' ? obj.text.trim() : '';
  if (!text) return { ok: false, message: 'UPDATE needs the merged "text".' };
  if ((containsCjk(itemText) || containsCjk(candidateTexts[index] ?? '')) && !containsCjk(text)) {
    return { ok: false, message: 'The merged "text" must stay in Chinese (中文); never translate.' };
  }
  return { ok: true, decision: { event, index, text } };
}
