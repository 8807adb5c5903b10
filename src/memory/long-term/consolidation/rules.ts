/**
 * The checks consolidation applies without the model: near duplicates, and whether an UPDATE's
 * merged text is grounded and whether it changes the old memory's meaning.
 */
import { contentTerms, termCoverage, truncateMiddle } from '../../../text/terms';

/** Jaccard index of two term lists as sets (0..1; 1 when both are empty). */
function jaccard(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const sa = new Set(a);
  const sb = new Set(b);
  let inter = 0;
  for (const x of sa) if (sb.has(x)) inter += 1;
  return inter / (sa.size + sb.size - inter);
}

/**
 * Near-duplicate test without the LLM: cosine `similarity` ≥ `threshold` (when known), or a
 * content-word Jaccard ≥ 0.9 between the two texts.
 */
export function nearDuplicate(aText: string, bText: string, similarity: number | null, threshold: number): boolean {
  if (similarity !== null && similarity >= threshold) return true;
  const a = contentTerms(aText);
  const b = contentTerms(bText);
  return a.length > 0 && b.length > 0 && jaccard(a, b) >= 0.9;
}

/**
 * Limits on an UPDATE's merged text (see `updateTextProblem`): `minGrounded` is the share (0..1)
 * of its content words that must occur in the new item or the old memory; `minNewCoverage` the
 * share it must keep of the new item's content words that the old memory lacks (the new
 * information); `extraChars` how many characters (code points) it may be longer than the new item
 * and the old memory together.
 */
export const UPDATE_TEXT_LIMITS = { minGrounded: 0.5, minNewCoverage: 0.5, extraChars: 40 } as const;

/**
 * Checks that an UPDATE's merged `text` is grounded in the new item and the old memory, so that a
 * bad reply ("ok", a story, another subject) can neither overwrite a memory nor drop the new fact:
 * it has content words (`contentTerms`), at least `minGrounded` of them occur in `itemText` or
 * `oldText` (`termCoverage`: whole words, CJK as substrings), it keeps at least `minNewCoverage`
 * of the item's content words that are not in `oldText` (what the item adds), and it is at most
 * `extraChars` characters longer than both texts together.
 * @returns a readable problem, or `null` when the text is usable.
 * @example updateTextProblem('ok', 'Lives in Hangzhou', 'Lives in Shenzhen') // 'the merged text "ok" is not grounded …'
 */
export function updateTextProblem(text: string, itemText: string, oldText: string): string | null {
  const limit = Array.from(itemText).length + Array.from(oldText).length + UPDATE_TEXT_LIMITS.extraChars;
  const length = Array.from(text).length;
  if (length > limit) return `the merged text is ${length} characters long (at most ${limit}: the new fact and the old memory together)`;
  const terms = contentTerms(text);
  const quoted = JSON.stringify(truncateMiddle(text, 60));
  if (terms.length === 0) return `the merged text ${quoted} has no content words`;
  const grounded = termCoverage(terms, `${itemText}\n${oldText}`);
  if (grounded < UPDATE_TEXT_LIMITS.minGrounded)
    return `the merged text ${quoted} is not grounded in the new fact or the old memory (${Math.round(grounded * 100)}% of its words occur in them)`;
  // What the item says that the old memory does not: the merge exists to carry it.
  const newTerms = contentTerms(itemText).filter((t) => termCoverage([t], oldText) === 0);
  const kept = termCoverage(newTerms, text);
  if (newTerms.length > 0 && kept < UPDATE_TEXT_LIMITS.minNewCoverage)
    return `the merged text ${quoted} drops the new fact (${Math.round(kept * 100)}% of its words kept)`;
  return null;
}

/**
 * `true` when replacing `oldText` by `newText` changes its meaning rather than adding detail:
 * some content word of the old text (`contentTerms`) is not contained in the new one
 * (`termCoverage` < 1; token containment, CJK terms as substrings). "Lives in Shenzhen" →
 * "Lives in Hangzhou" changes it (Shenzhen is gone); "喜欢喝茶" → "喜欢喝茶，尤其是乌龙茶" adds
 * detail. A text without content words never changes meaning.
 */
export function updateChangesMeaning(oldText: string, newText: string): boolean {
  const terms = contentTerms(oldText);
  return terms.length > 0 && termCoverage(terms, newText) < 1;
}
