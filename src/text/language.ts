/**
 * Which script and language a text is written in: CJK detection and the one language classifier
 * of the project (summaries and entity notes are kept in the conversation's language, extraction
 * keeps the user's). Chinese and English are both first-class: nothing here translates.
 *
 * One measure, `cjkShare`: CJK characters / (CJK characters + 1.5 × words of other letters). A
 * word counts 1.5 because a Chinese word is about 1.5 characters long, so equal content in both
 * languages scores near 0.5.
 */

/**
 * Source of the CJK character class: Han (Unified, Extension A, Compatibility, Extensions B–F and
 * the Compatibility Supplement), kana and Hangul syllables. Build regexes with the `u` flag.
 */
export const CJK_CLASS = '[\\u3040-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff\\u{20000}-\\u{2fa1f}]';

/** One CJK character (`CJK_CLASS`). */
export const CJK_CHAR = new RegExp(CJK_CLASS, 'u');
const CJK_CHAR_G = new RegExp(CJK_CLASS, 'gu');
const WORD_G = /\p{L}+/gu;

/** `true` when `text` contains at least one CJK character. */
export function containsCjk(text: string): boolean {
  return CJK_CHAR.test(text);
}

/**
 * Share of CJK in `text`, 0..1 (see module doc): words are runs of letters of any other script
 * (Latin, Cyrillic, Greek, …). `null` for text with neither (digits, punctuation, empty).
 * @example cjkShare('我喜欢Python和Rust') // 4 / (4 + 1.5·2) ≈ 0.57
 * @example cjkShare('I like 火锅') // 2 / (2 + 1.5·2) = 0.4
 */
export function cjkShare(text: string): number | null {
  const cjk = text.match(CJK_CHAR_G)?.length ?? 0;
  const words = text.replace(CJK_CHAR_G, ' ').match(WORD_G)?.length ?? 0;
  if (cjk + words === 0) return null;
  return cjk / (cjk + 1.5 * words);
}

/** Dominant language of a text: `zh` (CJK share ≥ 0.6), `en` (≤ 0.4: English or another alphabetic language), else `mixed`. */
export type DominantLanguage = 'zh' | 'en' | 'mixed';

/** See `DominantLanguage`. Text without letters counts as `mixed` (no constraint). */
export function dominantLanguage(text: string): DominantLanguage {
  const share = cjkShare(text);
  if (share === null) return 'mixed';
  if (share >= 0.6) return 'zh';
  if (share <= 0.4) return 'en';
  return 'mixed';
}

/**
 * `true` when at least half of `text` is CJK (`cjkShare` ≥ 0.5): the user writes Chinese, with
 * perhaps some Latin names or code ("我喜欢Python和Rust"). Extraction then asks for Chinese items
 * and refuses translated ones; a prompt rule, unlike `languageMatches`' check of a reply, costs
 * nothing when it is wrong, so the bar is lower than `dominantLanguage`'s `zh`.
 */
export function writesChinese(text: string): boolean {
  return (cjkShare(text) ?? 0) >= 0.5;
}

/**
 * `true` when `output` is plausibly written in the language of a conversation that is
 * `expected`: a Chinese conversation needs a CJK share ≥ 0.3 (names and terms in Latin script
 * are fine), an English one ≤ 0.7; `mixed` accepts anything.
 */
export function languageMatches(output: string, expected: DominantLanguage): boolean {
  const share = cjkShare(output);
  if (share === null || expected === 'mixed') return true;
  return expected === 'zh' ? share >= 0.3 : share <= 0.7;
}
