/**
 * Content terms for matching short texts (memories, items, commands, summaries): which words of a
 * text carry content, whether another text has them, and text normalization for comparisons.
 * Word segmentation is `Intl.Segmenter` (ICU's dictionary word breaker, the same in Chrome and
 * Node), so Chinese is split into words without spaces. Nothing here translates or drops CJK text.
 *
 * Two extractors with different jobs, both here:
 * - `contentTerms`: dictionary words without stop words, for comparing a memory with another
 *   (duplicates, grounding of a merged text, command targets);
 * - `contentTokens`: Latin words of ≥ 3 letters, numbers and CJK character bigrams, for
 *   measuring how much of a summary is grounded in its source (bigrams do not depend on how a
 *   long text segments).
 * The BM25 index has its own analyzer with stemming (`src/memory/long-term/retrieval/tokenize.ts`).
 */
import { CJK_CLASS, containsCjk } from './language';

/**
 * Normalizes text for comparison: Unicode NFKC (full-width → half-width, compatibility forms),
 * lower case, punctuation removed, whitespace collapsed. Used for exact-duplicate checks; it never
 * changes what is stored.
 */
export function normalizeForCompare(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** English and Chinese function words that carry no content for matching (`contentTerms`). */
const STOPWORDS = new Set([
  // English
  'a',
  'an',
  'the',
  'and',
  'or',
  'but',
  'of',
  'to',
  'in',
  'on',
  'at',
  'for',
  'with',
  'about',
  'from',
  'by',
  'as',
  'is',
  'am',
  'are',
  'was',
  'were',
  'be',
  'been',
  'being',
  'do',
  'does',
  'did',
  'have',
  'has',
  'had',
  'i',
  'me',
  'my',
  'mine',
  'myself',
  'we',
  'us',
  'our',
  'you',
  'your',
  'he',
  'she',
  'it',
  'its',
  'they',
  'them',
  'their',
  'this',
  'that',
  'these',
  'those',
  'there',
  'here',
  'what',
  'which',
  'who',
  'whom',
  'not',
  'no',
  'so',
  'too',
  'very',
  'just',
  'also',
  'any',
  'all',
  'some',
  'will',
  'would',
  'can',
  'could',
  'should',
  'please',
  'user',
  "i'm",
  "i've",
  "it's",
  'im',
  // Chinese
  '我',
  '我的',
  '你',
  '你的',
  '他',
  '她',
  '它',
  '我们',
  '你们',
  '他们',
  '的',
  '了',
  '是',
  '在',
  '和',
  '与',
  '跟',
  '也',
  '都',
  '就',
  '还',
  '又',
  '很',
  '吧',
  '吗',
  '呢',
  '啊',
  '呀',
  '哦',
  '把',
  '被',
  '这',
  '那',
  '这个',
  '那个',
  '一个',
  '有',
  '没有',
  '不',
  '请',
  '用户',
  '之',
  '得',
  '地',
  '着',
  '过',
  '要',
  '会',
]);

const wordSegmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

/**
 * Content terms of `text`: word-like segments from `Intl.Segmenter` (CJK runs split into
 * dictionary words), NFKC-normalized and lower-cased, stopwords and 1-letter Latin tokens removed,
 * de-duplicated in order of appearance.
 * @example contentTerms('我住在深圳') // ['住在', '深圳']
 * @example contentTerms('Forget my address') // ['forget', 'address']
 */
export function contentTerms(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const { segment, isWordLike } of wordSegmenter.segment(text.normalize('NFKC').toLowerCase())) {
    if (!isWordLike) continue;
    const term = segment.trim();
    if (!term || STOPWORDS.has(term)) continue;
    if (!containsCjk(term) && term.length < 2 && !/\d/.test(term)) continue;
    if (seen.has(term)) continue;
    seen.add(term);
    out.push(term);
  }
  return out;
}

/**
 * Share of `terms` (from `contentTerms`) found in `text` (0..1; 0 when `terms` is empty).
 * CJK terms match as substrings (segmentation of a longer text may split differently); other
 * terms match whole words, so "art" does not match "party".
 */
export function termCoverage(terms: string[], text: string): number {
  if (terms.length === 0) return 0;
  const normalized = text.normalize('NFKC').toLowerCase();
  const words = new Set<string>();
  for (const { segment, isWordLike } of wordSegmenter.segment(normalized)) if (isWordLike) words.add(segment);
  let hit = 0;
  for (const term of terms) {
    if (containsCjk(term) ? normalized.includes(term) : words.has(term)) hit += 1;
  }
  return hit / terms.length;
}

/**
 * `true` when `richer` contains every content word of `base` (`contentTerms`, `termCoverage` = 1)
 * and has more of them: the longer text says strictly more.
 * @example saysMore('Lives in Hangzhou with a cat', 'Lives in Hangzhou') // true
 */
export function saysMore(richer: string, base: string): boolean {
  const r = contentTerms(richer);
  const b = contentTerms(base);
  return r.length > b.length && termCoverage(b, richer) === 1;
}

/**
 * Truncates `text` to at most `maxChars` characters (code points), keeping the head and the tail
 * around a " … " marker, so facts at either end survive.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  const chars = Array.from(text);
  if (chars.length <= maxChars) return text;
  const keep = Math.max(0, maxChars - 3);
  const head = Math.ceil(keep * 0.7);
  return `${chars.slice(0, head).join('')} … ${chars.slice(chars.length - (keep - head)).join('')}`;
}

/** Words too common to show that a summary talks about the conversation (`contentTokens`). */
const GROUNDING_STOPWORDS = new Set(
  (
    'the and that this with from have has had was were are for not but you your user users assistant they them their there then than what when where ' +
    'which while will would about into also been being after before over under just very more most some such only other told said says asked wants want ' +
    'like likes she her his him its our out all any can did does get got how may one two too use way who why yes now new its let see day'
  ).split(' '),
);

/** Runs of CJK characters (`CJK_CLASS`) in a text. */
const CJK_RUNS_G = new RegExp(`${CJK_CLASS}+`, 'gu');

/**
 * Content tokens of a text: Latin words of ≥ 3 letters (no stop words), numbers, CJK bigrams
 * (single characters for one-character runs); NFKC-normalized and lower-cased.
 * @example contentTokens('Ana lives in 里斯本') // Set { 'ana', 'lives', '里斯', '斯本' }
 */
export function contentTokens(text: string): Set<string> {
  const out = new Set<string>();
  const lower = text.normalize('NFKC').toLowerCase();
  for (const w of lower.match(/\p{Script=Latin}{3,}/gu) ?? []) if (!GROUNDING_STOPWORDS.has(w)) out.add(w);
  for (const n of lower.match(/\p{N}+/gu) ?? []) out.add(n);
  for (const run of lower.match(CJK_RUNS_G) ?? []) {
    const chars = Array.from(run);
    if (chars.length === 1) out.add(run);
    for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
  }
  return out;
}
