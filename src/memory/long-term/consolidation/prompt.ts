/**
 * The decision prompt of consolidation: one new item against its candidates, shown under short
 * integer ids ("0", "1", …), never the real ids, which models garble.
 */
import type { ChatMessage } from '../../../model/engine';
import { truncateMiddle } from '../../../text/terms';

/**
 * The decision prompt (Mem0's update-memory prompt, adapted and shortened for small models: one
 * new fact at a time, four events, one example).
 */
export const DECISION_SYSTEM_PROMPT = [
  "You keep a user's memory up to date. Compare the NEW fact with the EXISTING memories and choose one event:",
  'ADD - the new fact is new information.',
  'UPDATE - it is about the same thing as one existing memory and adds or corrects detail; give the merged text.',
  'DELETE - it contradicts one existing memory, which is no longer true (the user moved, changed job, changed their mind).',
  'NONE - it is already known.',
  'Keep the language of the memories; never translate.',
  'Reply with JSON only: {"event": "ADD|UPDATE|DELETE|NONE", "id": "<id of the existing memory, for UPDATE, DELETE, NONE>", "text": "<merged text, for UPDATE>"}',
  'Example:',
  'EXISTING:\n0: 我住在深圳\n1: 喜欢爬山',
  'NEW: 2024-04 搬到了杭州',
  '{"event": "DELETE", "id": "0"}',
].join('\n');

/** Builds the decision request messages; candidates appear as "0", "1", … in the given order. */
export function buildDecisionMessages(itemText: string, candidateTexts: string[]): ChatMessage[] {
  const existing = candidateTexts.map((t, i) => `${i}: ${truncateMiddle(t.replace(/\s+/g, ' '), 300)}`).join('\n');
  return [
    { role: 'system', content: DECISION_SYSTEM_PROMPT },
    { role: 'user', content: `EXISTING:\n${existing}\nNEW: ${itemText}\nJSON:` },
  ];
}
