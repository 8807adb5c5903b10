/**
 * Shortening text for display and prompts without cutting a word in two: the cut falls on a word
 * boundary found by `Intl.Segmenter` (ICU's word breaker, the same in Chrome and Node; Chinese and
 * Japanese are split into dictionary words, so a cut there falls between words or characters),
 * and "…" marks it. Pure; lengths are in code points (never splits a surrogate pair).
 */

const wordSegmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

/** Spaces and punctuation before a cut, which the "…" replaces ("Hangzhou." → "Hangzhou…", "and," → "and…"); closing brackets and quotes stay. */
const DANGLING = /[\s,;:.!?、，；：。！？\-–—(（[「『"'“‘]+$/u;

/**
 * The longest prefix of `text` of at most `maxChars` code points that ends on a word boundary,
 * with trailing spaces and dangling punctuation removed; `text` itself when it is that short.
 * A first word longer than `maxChars` (a URL, a long number) is cut inside, at `maxChars`.
 * No ellipsis is added (see `cutAtWord`). `maxChars <= 0` gives ''.
 * @example wordPrefix('test fact number two', 11) // 'test fact'
 */
export function wordPrefix(text: string, maxChars: number): string {
  const chars = Array.from(text);
  if (chars.length <= maxChars) return text;
  if (maxChars <= 0) return '';
  const limit = chars.slice(0, maxChars).join('').length; // UTF-16 length of the allowed prefix
  // The next characters stay in view: whether `limit` itself is a boundary depends on them.
  const window = text.slice(0, limit + 64);
  // The last boundary at or before `limit`: the start of the segment that contains `limit`
  // (`limit < window.length` here, since the text is longer than `maxChars`). One ICU lookup
  // instead of a walk over every segment before it (~10× less CPU; the same boundaries,
  // checked against that walk in `text-cut.test.ts`).
  const cut = wordSegmenter.segment(window).containing(limit)?.index ?? 0;
  const head = cut > 0 ? text.slice(0, cut).replace(DANGLING, '') : '';
  return head || chars.slice(0, maxChars).join('');
}

/**
 * `text` in at most `maxChars` code points plus "…": whole when it fits, else `wordPrefix` of it
 * (one code point less, for the "…") with "…" appended.
 * @example cutAtWord('test fact number two', 12) // 'test fact…'
 */
export function cutAtWord(text: string, maxChars: number): string {
  if (Array.from(text).length <= maxChars) return text;
  const head = wordPrefix(text, maxChars - 1);
  return head ? `${head}…` : '';
}
