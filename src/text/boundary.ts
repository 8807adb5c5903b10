/**
 * Cutting a text short at a natural boundary (pure): the end of a sentence when one is near,
 * else the end of a word, never inside a word or a surrogate pair. Boundaries come from
 * `Intl.Segmenter` (Unicode UAX #29), so Chinese sentences (。！？) and words work as well as English.
 */

/** Where `cutAtBoundary` cut: at a sentence end, at a word end, at a code point (no boundary in reach), or not at all. */
export type CutKind = 'sentence' | 'word' | 'char' | 'none';

/**
 * A sentence boundary is preferred while it keeps at least this share of `maxChars`; a text whose
 * last sentence end comes earlier is cut at a word end instead (keeping most of what fits).
 */
export const SENTENCE_CUT_MIN_SHARE = 0.5;

/**
 * The longest prefix of `text` of at most `maxChars` characters (UTF-16 code units, as
 * `String.length` counts) that ends at a sentence boundary (when that keeps ≥
 * `SENTENCE_CUT_MIN_SHARE` of `maxChars`), else at the end of a word, else at a code point.
 * Trailing whitespace is removed. `text` itself when it fits; `''` when `maxChars` ≤ 0.
 * @returns the prefix and which kind of boundary it ends at.
 */
export function cutAtBoundary(text: string, maxChars: number, locale?: string): { text: string; cut: CutKind } {
  if (text.length <= maxChars) return { text, cut: 'none' };
  if (maxChars <= 0) return { text: '', cut: 'char' };
  const sentenceEnd = lastBoundary(text, maxChars, new Intl.Segmenter(locale, { granularity: 'sentence' }), () => true);
  if (sentenceEnd >= maxChars * SENTENCE_CUT_MIN_SHARE) return { text: text.slice(0, sentenceEnd).trimEnd(), cut: 'sentence' };
  // The end of the last word-like segment (a letter, digit or ideograph run) that fits.
  const wordEnd = lastBoundary(text, maxChars, new Intl.Segmenter(locale, { granularity: 'word' }), (s) => s.isWordLike === true);
  if (wordEnd > 0) return { text: text.slice(0, wordEnd).trimEnd(), cut: 'word' };
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // do not split a surrogate pair
  return { text: text.slice(0, end), cut: 'char' };
}

/** End (exclusive index) of the last segment accepted by `accept` that ends at or before `maxChars`; 0 when none does. */
function lastBoundary(text: string, maxChars: number, segmenter: Intl.Segmenter, accept: (segment: Intl.SegmentData) => boolean): number {
  let best = 0;
  // Only the part that can fit is segmented (plus one character, so a boundary exactly at `maxChars` is seen).
  for (const segment of segmenter.segment(text.slice(0, maxChars + 1))) {
    const end = segment.index + segment.segment.length;
    if (end > maxChars) break;
    if (accept(segment)) best = end;
  }
  return best;
}
