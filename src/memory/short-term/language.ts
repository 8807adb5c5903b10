/**
 * Which language a text is mostly written in — enough to keep Chinese conversations' summaries
 * in Chinese (and English ones in English) and to reject a model reply in the wrong language.
 */

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/gu;
const LATIN_WORD = /[A-Za-z\u00c0-\u024f]+/gu;

/**
 * Share of CJK in `text`, 0..1: CJK characters / (CJK characters + 1.5 × Latin words). A Latin
 * word counts 1.5 because a Chinese word is about 1.5 characters, so equal content in both
 * languages scores near 0.5. `null` for text with neither (digits, punctuation, empty).
 */
export function cjkShare(text: string): number | null {
  const cjk = text.match(CJK)?.length ?? 0;
  const words = text.match(LATIN_WORD)?.length ?? 0;
  if (cjk + words === 0) return null;
  return cjk / (cjk + 1.5 * words);
}

/** Dominant language of a text: `zh` (CJK share ≥ 0.6), `en` (≤ 0.4, any Latin-script language), else `mixed`. */
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
 * `true` when `output` is plausibly written in the language of a conversation that is
 * `expected`: a Chinese conversation needs a CJK share ≥ 0.3 (names and terms in Latin script
 * are fine), an English one ≤ 0.7; `mixed` accepts anything.
 */
export function languageMatches(output: string, expected: DominantLanguage): boolean {
  const share = cjkShare(output);
  if (share === null || expected === 'mixed') return true;
  return expected === 'zh' ? share >= 0.3 : share <= 0.7;
}

/**
 * Language of a conversation: `dominantLanguage` of its last 40 messages together, so that a
 * bilingual conversation counts as `mixed` even when one chunk is monolingual.
 */
export function conversationLanguage(messages: readonly { content: string }[]): DominantLanguage {
  return dominantLanguage(
    messages
      .slice(-40)
      .map((m) => m.content)
      .join('\n'),
  );
}
