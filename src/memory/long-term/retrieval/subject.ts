/**
 * Subject agreement of hybrid retrieval: a question about the user ("What's my shoe size?",
 * "我对什么过敏？") is not answered by what the user said about someone else ("My neighbour wears
 * size 40 shoes.", "我邻居对海鲜过敏。"). Near-distractors of that kind match the question's words as
 * well as the user's own statement does (often better: they are shorter), and a store holds many
 * of them — the more memories, the more other people's facts share the question's words.
 *
 * The query's subject is `subjectOf` (`slots.ts`: the relation the question names, else `user`);
 * a memory's is `statedSubject` of its user turn (the relation its statements start with; stored with
 * the memory in the index's `subjects` column, see `memorySubject`). A memory
 * whose statements are about another person than the one asked about loses
 * `SUBJECT_MISMATCH_PENALTY` of relevance; the user's own statements, those of the user's
 * household (partner, pets: "我家的猫叫小白" answers "我养了什么宠物？") and memories that state
 * nothing (questions only) never do. This is the subject part of the same-slot rule
 * (`memorySlotLabel` is `subject:slot`) for memories about no slot.
 */
import { ROUND_LABELS } from '../../../text/speakers';
import { statedSubject, subjectOf } from '../slots';

/**
 * Relevance (the [0, 1] scale of `convexFusion`) taken from a memory about another person than
 * the query's subject: half of a perfect match (`SLOT_MATCH_WEIGHT` adds a whole one). Measured on the
 * benchmark's calibration seed 1 (10k rounds, lexical): penalty 0 / 0.25 / 0.5 / 1 gave R@1 45.1 /
 * 50.4 / 53.1 / 54.0, R@5 59.3 / 61.9 / 65.5 / 65.5, MRR .524 / .565 / .592 / .597; 0.5 is the
 * smallest with the full R@5 gain (a wrong subject costs less than a full unit).
 */
export const SUBJECT_MISMATCH_PENALTY = 0.5;

/** Subjects that are the user's own household: their statements are never another person's fact. */
const HOUSEHOLD = new Set(['user', 'partner', 'dog', 'cat', 'pet']);

/** The user turn of an episodic round's normalized text (`user: … assistant: …`, lower case, one line), else the text. */
function userTurn(normalized: string): string {
  const user = `${ROUND_LABELS.user.toLowerCase()}: `;
  const text = normalized.startsWith(user) ? normalized.slice(user.length) : normalized;
  const at = text.indexOf(` ${ROUND_LABELS.assistant.toLowerCase()}: `);
  return at >= 0 ? text.slice(0, at) : text;
}

/**
 * Whom a memory's statements are about (`statedSubject` of its user turn), from its normalized
 * text (`normalizeMemoryText`). Computed once per write (`indexedOf` of `blocks/layout.ts`) into
 * the index's `subjects` meta column, which searches read (`MemoryMeta.subject`): no candidate is
 * classified at query time (cold after a restart, that was ~30 µs per candidate in Node). The
 * column is versioned by `SLOT_CLASSIFIER_VERSION` (`slots.ts`), the one constant to bump when what
 * this returns for a stored text changes: a layout of another version is rebuilt on open.
 * @returns a relation label, `user`, or `null` when the memory states nothing.
 */
export function memorySubject(normalized: string): string | null {
  return statedSubject(userTurn(normalized));
}

/** The subject a query asks about (`subjectOf`: the relation it names, else `user`). */
export function querySubject(text: string): string {
  return subjectOf(text);
}

/**
 * Whether a memory about `memory` (a `memorySubject`) is about another person than the query's
 * `query` subject: not the user, not the user's household, not the one asked about.
 */
export function aboutAnotherPerson(query: string, memory: string | null): boolean {
  return memory !== null && !HOUSEHOLD.has(memory) && memory !== query;
}
