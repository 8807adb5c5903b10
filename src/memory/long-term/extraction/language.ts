/**
 * Small language helpers shared by extraction, consolidation and the memory commands: CJK
 * detection, text normalization, and content terms over a CJK-aware word segmentation
 * (`Intl.Segmenter`, the ICU dictionary segmenter that Chrome and Node ship).
 *
 * Chinese and English are both first-class: nothing here translates or drops CJK text.
 */

/** CJK ideographs (Unified + Extension A + Compatibility), kana and Hangul. */
const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;
const CJK_CHAR_G = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/gu;
const WORD_G = /\p{L}+/gu;

/** `true` when `text` contains at least one CJK character. */
export function containsCjk(text: string): boolean {
  return CJK_CHAR.test(text);
}

/**
 * Share of the text written in CJK (0..1; 0 for text without letters), counted in word
 * equivalents: a run of Latin letters is one word, and 1.5 CJK characters make one word (a
 * typical Chinese word length). So "我喜欢Python和Rust" gives (4/1.5) / (4/1.5 + 2) ≈ 0.57 and
 * "I like 火锅" gives (2/1.5) / (2/1.5 + 2) = 0.4.
 */
export function cjkRatio(text: string): number {
  const cjk = (text.match(CJK_CHAR_G)?.length ?? 0) / 1.5;
  const words = text.replace(CJK_CHAR_G, ' ').match(WORD_G)?.length ?? 0;
  return cjk + words === 0 ? 0 : cjk / (cjk + words);
}

/**
 * The language the user mostly writes in, as far as extraction cares: `'zh'` when at least half
 * of the text is CJK (`cjkRatio` ≥ 0.5: Chinese with some Latin names or code), else `'other'`
 * (English or another alphabetic language; the model is asked to keep that language too).
 */
export function dominantLanguage(text: string): 'zh' | 'other' {
  return cjkRatio(text) >= 0.5 ? 'zh' : 'other';
}

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

/** English and Chinese function words that carry no content for matching. */
const STOPWORDS = new Set([
  // English
  'a', 'an', 'the', 'and', 'or', 'but', 'of', 'to', 'in', 'on', 'at', 'for', 'with', 'about', 'from', 'by', 'as',
  'is', 'am', 'are', 'was', 'were', 'be', 'been', 'being', 'do', 'does', 'did', 'have', 'has', 'had',
  'i', 'me', 'my', 'mine', 'myself', 'we', 'us', 'our', 'you', 'your', 'he', 'she', 'it', 'its', 'they', 'them', 'their',
  'this', 'that', 'these', 'those', 'there', 'here', 'what', 'which', 'who', 'whom',
  'not', 'no', 'so', 'too', 'very', 'just', 'also', 'any', 'all', 'some', 'will', 'would', 'can', 'could', 'should',
  'please', 'user', "i'm", "i've", "it's", 'im',
  // Chinese
  '我', '我的', '你', '你的', '他', '她', '它', '我们', '你们', '他们', '的', '了', '是', '在', '和', '与', '跟', '也', '都',
  '就', '还', '又', '很', '吧', '吗', '呢', '啊', '呀', '哦', '把', '被', '这', '那', '这个', '那个', '一个', '有', '没有',
  '不', '请', '用户', '之', '得', '地', '着', '过', '要', '会',
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

/** Cosine similarity of two vectors of the same length (dot product over the norms; 0 for a zero vector). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
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
