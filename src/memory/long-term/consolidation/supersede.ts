/**
 * Write-time supersession of episodic rounds: when a new round restates what an older round of
 * the same namespace said about the same subject, with another value ("I'm training for a 10k
 * race." → "Changed plans: I am training for a marathon race now."; "我下周五上午十点半要去理发。" →
 * "我下周二上午九点要去理发。"; "I live in Boston with my parents." → "I moved out of Boston last month,
 * I live in Denver now."), the older round is marked
 * superseded (`supersededBy` = the new round's id, through the store's row writer) when the new one
 * is stored, not per query. Its validity is not closed — the round is still what was said, found by
 * a question about that time — but it is no longer current (`MemoryRecord.current` 0), so retrieval
 * puts it below the current round it shares its matched words with (`recencyTieBreak` in
 * `retrieval/fusion.ts`) and the Memory tab shows it as past.
 *
 * Episodic rounds are never reconciled by the language model (consolidation handles extracted
 * items only), so this is the model-free part of Mem0's UPDATE for them. Two rounds are about the
 * same thing when their user turns' statements (questions state nothing; `statementSlot`'s rule)
 * have the same subject (`subjectOf` / the slot's subject: "my sister …" is not "I …"), are not
 * about two different slots (`slots.ts`), and one restates the other with a changed value or time
 * (`supersedes`). The same slot alone does not supersede (a heuristic classifier's false positive
 * would hide the real statement); same-slot rounds are ordered newest first at query time.
 * A wrong call costs one demotion among rounds that match a query the same way, never a deletion.
 */
import type { MemoryRecord } from '../../../model/records';
import { ROUND_LABELS } from '../../../text/speakers';
import { contentTerms } from '../../../text/terms';
import type { LongTermStore } from '../types';
import { sameSlot, statementSlot, subjectOf, type SlotKey } from '../slots';

/** Shared content terms a restatement needs at least ("training", "race"). */
export const RESTATEMENT_MIN_SHARED = 2;

/** Share of the older statement's content terms the newer one must repeat to restate it (2 of "training, 10k, race"). */
export const RESTATEMENT_MIN_COVERAGE = 0.5;

/** Older rounds looked at per new round: the lexical hits of its statement. */
export const SUPERSESSION_CANDIDATES = 10;

/**
 * The user turn of an episodic round's stored text (`User: …\nAssistant: …`), the text itself for
 * any other memory.
 */
export function userTurnOf(memory: Pick<MemoryRecord, 'kind' | 'text'>): string {
  if (memory.kind !== 'episodic') return memory.text;
  const userLabel = `${ROUND_LABELS.user}: `;
  const text = memory.text.startsWith(userLabel) ? memory.text.slice(userLabel.length) : memory.text;
  const at = text.indexOf(`\n${ROUND_LABELS.assistant}: `);
  return at >= 0 ? text.slice(0, at) : text;
}

/** A sentence and its end mark (as in `slots.ts`). */
const SENTENCE = /[^.!?。！？；\n]+[.!?。！？；\n]*/gu;

/** The sentences of `text` that are not questions, joined by a space ('' when there are none). */
export function statementsOf(text: string): string {
  return (text.normalize('NFKC').match(SENTENCE) ?? [])
    .filter((sentence) => !/[?？]\s*$/u.test(sentence))
    .map((sentence) => sentence.trim())
    .join(' ');
}

/**
 * Time expressions and numbers among content terms (`contentTerms`): they say when (or how much),
 * not what — "下周五上午十点半", "next Monday at 9am", "3000" —, so they are the value of a statement, never its topic.
 */
const VALUE_TERM =
  /^(?:\d[\d.,:]*(?:am|pm|k|st|nd|rd|th)?|[零〇一二三四五六七八九十百千万两半]+|(?:下|上|这|本)?(?:周|星期|礼拜)[一二三四五六日天末]?|[上下中]午|早上|晚上|今天|明天|昨天|今晚|昨晚|现在|最近|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|today|tomorrow|yesterday|tonight|next|last|now|days?|weeks?|months?|years?|morning|afternoon|evening|noon)$/u;

/**
 * Words that frame a statement rather than say what it is about — a reminder, an update, a change
 * of plans ("提醒一下，我周四约了复诊", "Reminder for myself: …", "Changed plans: …", "Update on my
 * diet: …"): two reminders about different things share them, so they are never topic terms.
 */
const FRAME_TERM = /^(?:提醒|一下|提醒一下|记得|更新|更新一下|计划|变了|reminder|remind|myself|update|changed?|plans?|news|big|note)$/u;

/** One Han character: too little to say what a statement is about (as in the retrieval tie-break). */
const SINGLE_HAN = /^\p{Script=Han}$/u;

/** What a statement is about: its subject (its slot's, else `subjectOf`), its slot, its topic terms and its value terms (`VALUE_TERM`). */
interface StatementKey {
  subject: string;
  slot: SlotKey | null;
  topic: string[];
  values: string[];
}

/** Statement keys kept by `keyOf` (user turns; the oldest dropped first): ~1 kB each. */
const KEY_CACHE_MAX = 4_096;
const keys = new Map<string, Readonly<StatementKey> | null>();

/**
 * The statement key of a memory's user turn (`null`: it states nothing), kept per turn text: a
 * new round is compared with each of its `SUPERSESSION_CANDIDATES`, and an older round is a
 * candidate of many later ones (an ingestion of 3k rounds spent 1.1 s of its 12 s here).
 */
function keyOf(memory: Pick<MemoryRecord, 'kind' | 'text'>): Readonly<StatementKey> | null {
  const turn = userTurnOf(memory);
  const kept = keys.get(turn);
  if (kept !== undefined) return kept;
  const key = statementKeyOf(turn);
  if (keys.size >= KEY_CACHE_MAX) keys.delete(keys.keys().next().value!);
  keys.set(turn, key);
  return key;
}

function statementKeyOf(turn: string): StatementKey | null {
  const statement = statementsOf(turn);
  if (!statement) return null;
  const slot = statementSlot(statement);
  const terms = contentTerms(statement);
  return {
    subject: slot?.subject ?? subjectOf(statement),
    slot,
    topic: terms.filter((t) => !VALUE_TERM.test(t) && !SINGLE_HAN.test(t) && !FRAME_TERM.test(t)),
    values: terms.filter((t) => VALUE_TERM.test(t)),
  };
}

/**
 * Whether `newer` supersedes `older` (see the module doc): same subject, not two different slots, and
 * - a changed value: at least `RESTATEMENT_MIN_SHARED` shared topic terms covering at least
 *   `RESTATEMENT_MIN_COVERAGE` of the older one's, each side with a topic term the other lacks
 *   ("training for a 10k race" → "training for a marathon race"), or
 * - a changed time: one's topic terms contain the other's and their times differ ("理发" next
 *   Friday 10:30 → "理发" next Tuesday 9:00; a haircut is not a dentist appointment).
 * Two texts about different slots are never the same thing.
 * @param newer the new round; `older` an earlier one (episodic rounds: their user turns are compared; other kinds: their texts).
 * @returns `true` when `older` should no longer count as current.
 * @example supersedes({ kind: 'episodic', text: 'User: Changed plans: I am training for a marathon race now.' },
 *   { kind: 'episodic', text: "User: I'm training for a 10k race." }) // true
 * @example supersedes({ kind: 'episodic', text: 'User: My sister is training for a marathon race.' },
 *   { kind: 'episodic', text: "User: I'm training for a 10k race." }) // false: another subject
 */
export function supersedes(newer: Pick<MemoryRecord, 'kind' | 'text'>, older: Pick<MemoryRecord, 'kind' | 'text'>): boolean {
  const a = keyOf(newer);
  const b = keyOf(older);
  if (!a || !b || a.subject !== b.subject) return false;
  // Two different slots of one subject are two attributes. The same slot alone is not enough: the
  // classifier is a heuristic, and a later mention ("今天好累，一直在忙作息时间的事", user:schedule)
  // would supersede the real statement ("健身时间换了，现在是周三"); same-slot statements are ordered
  // newest first at query time instead (`recencyTieBreak`).
  if (a.slot && b.slot && !sameSlot(a.slot, b.slot)) return false;
  const newTopic = new Set(a.topic);
  const oldTopic = new Set(b.topic);
  const shared = b.topic.filter((t) => newTopic.has(t)).length;
  const changedValue =
    shared >= RESTATEMENT_MIN_SHARED && shared >= RESTATEMENT_MIN_COVERAGE * oldTopic.size && shared < oldTopic.size && shared < newTopic.size;
  const contained = shared > 0 && (shared === oldTopic.size || shared === newTopic.size);
  const changedTime = contained && a.values.length > 0 && b.values.length > 0 && a.values.join('\u0000') !== b.values.join('\u0000');
  return changedValue || changedTime;
}

/**
 * Marks the current episodic rounds that `memory` (a round just stored) supersedes: candidates are
 * the lexical hits of its statement (`SUPERSESSION_CANDIDATES`), stated before it
 * (`validFrom`, else `createdAt`); each that `supersedes` says is updated with `supersededBy` =
 * `memory.id` (history event `UPDATE`, source `source`).
 * @param store the long-term store (its `search` and `update`).
 * @returns the ids marked superseded.
 * @throws what the store throws.
 */
export async function supersedeEarlierRounds(store: Pick<LongTermStore, 'search' | 'update'>, memory: MemoryRecord, source: string): Promise<string[]> {
  if (memory.kind !== 'episodic' || memory.current !== 1) return [];
  const statement = statementsOf(userTurnOf(memory));
  if (!statement) return [];
  const at = memory.validFrom ?? memory.createdAt;
  const candidates = new Map<string, Pick<MemoryRecord, 'id' | 'kind' | 'text' | 'validFrom' | 'createdAt' | 'current' | 'supersededBy'>>();
  const hits = await store.search(
    { text: statement, namespace: memory.namespace, k: SUPERSESSION_CANDIDATES, now: at },
    { mode: 'lexical', timeFilters: false, depth: SUPERSESSION_CANDIDATES },
  );
  for (const { memory: m } of hits) candidates.set(m.id, m);
  const marked: string[] = [];
  for (const older of candidates.values()) {
    if (older.id === memory.id || older.kind !== 'episodic' || older.current !== 1 || older.supersededBy !== undefined) continue;
    if ((older.validFrom ?? older.createdAt) >= at) continue;
    if (!supersedes(memory, older)) continue;
    await store.update(older.id, { supersededBy: memory.id }, source, 'UPDATE');
    marked.push(older.id);
  }
  return marked;
}
