/**
 * Fallback token estimator, used while no model tokenizer is loaded (`exact: false`).
 *
 * Method: split the text the way modern byte-level BPE tokenizers pre-tokenize it (the
 * Qwen2 / GPT-4-style split regex: letter runs with one optional leading non-letter, single
 * digits, punctuation runs, whitespace runs), then estimate tokens per piece:
 * - a piece with CJK characters (Han, kana, Hangul): `HAN_TOKENS_PER_CHAR` per CJK character,
 *   plus `PREFIX_TOKENS` for a leading space or punctuation mark (which rarely merges with
 *   a CJK character);
 * - a run of other letters (a word, with its leading space): 1 token up to
 *   `WORD_CHARS_PER_TOKEN_FREE` letters, then `1 / WORD_EXTRA_CHARS_PER_TOKEN` per extra letter;
 * - a digit: 1 token (Qwen2 splits numbers into digits);
 * - a punctuation run of n characters: `0.5 + 0.5·n` tokens;
 * - a whitespace or newline run: 1 token;
 * - any other character (emoji, symbols): one token per 2 UTF-8 bytes, at least 1.
 * Coefficients were fitted on the `calibration` texts of `bench/data/token-corpus.json`
 * against the Qwen2.5 tokenizer (per-piece least squares), and the error is measured on the
 * separate `heldOut` texts (tests/unit/tokens-estimator.test.ts, BENCHMARKS.md "Token counting").
 * Other tokenizers differ (Llama 3 packs Chinese less densely); the UI shows counts as
 * estimates (`exact: false`) until the model's tokenizer is loaded.
 */
import type { TokenCounter } from '../model/tokens';
import { CJK_CHAR as CJK } from '../text/language';
import { cachedCount } from './counter';

/** Tokens per CJK character inside a CJK run (fitted: 0.62). */
export const HAN_TOKENS_PER_CHAR = 0.62;
/** Tokens for a space/punctuation mark leading a CJK run (fitted: 1.06–1.12). */
export const PREFIX_TOKENS = 1;
/** Letters of a word covered by its first token. */
export const WORD_CHARS_PER_TOKEN_FREE = 7;
/** Letters per extra token beyond `WORD_CHARS_PER_TOKEN_FREE`. */
export const WORD_EXTRA_CHARS_PER_TOKEN = 6;

/** Qwen2's pre-tokenizer split (as in its tokenizer.json), in JavaScript regex syntax. */
const SPLIT = /(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;
const LETTER = /\p{L}/u;
const ASCII_PUNCT_OR_COMMON = /[\p{P}\p{S}]/u;
const encoder = new TextEncoder();

/** Estimated tokens of one pre-tokenized piece (see module doc). */
function pieceTokens(piece: string): number {
  if (/^\s+$/u.test(piece)) return 1;
  let cjk = 0;
  let letters = 0;
  for (const ch of piece) {
    if (CJK.test(ch)) cjk += 1;
    else if (LETTER.test(ch)) letters += 1;
  }
  if (cjk > 0 || letters > 0) {
    const first = piece[0]!;
    const prefix = !LETTER.test(first) && !CJK.test(first) ? 1 : 0;
    let n = 0;
    if (cjk > 0) n += cjk * HAN_TOKENS_PER_CHAR + prefix * PREFIX_TOKENS;
    if (letters > 0) n += 1 + Math.max(0, letters - WORD_CHARS_PER_TOKEN_FREE) / WORD_EXTRA_CHARS_PER_TOKEN;
    return n;
  }
  if (/^\p{N}$/u.test(piece)) return 1;
  const trimmed = piece.replace(/\s+$/u, '').replace(/^ /, '');
  let punct = 0;
  let other = 0;
  for (const ch of trimmed) {
    if (ASCII_PUNCT_OR_COMMON.test(ch) && ch.length === 1) punct += 1;
    else other += Math.max(1, encoder.encode(ch).length / 2);
  }
  return (punct > 0 ? 0.5 + 0.5 * punct : 0) + other || 1;
}

/**
 * Estimated tokens of `text` (see module doc for the method); not rounded per piece, rounded
 * once for the whole text. Empty text is 0 tokens.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (const piece of text.match(SPLIT) ?? []) n += pieceTokens(piece);
  return Math.max(1, Math.round(n));
}

/**
 * The fallback `TokenCounter` (`id: 'estimator:v1'`, `exact: false`). Per-message overhead and
 * reply primer are ChatML's (5 and 3 tokens: `<|im_start|>role\n … <|im_end|>\n` and
 * `<|im_start|>assistant\n`), the layout of the default models. Measured error against the
 * Qwen2.5 tokenizer: see BENCHMARKS.md "Token counting" (within 10% in English and Chinese).
 */
export function createTokenEstimator(): TokenCounter {
  return { id: 'estimator:v1', exact: false, count: cachedCount(estimateTokens), perMessageOverhead: 5, replyPrimerTokens: 3 };
}
