/**
 * Text normalization and hashing for long-term memories.
 *
 * `normalizeMemoryText` defines when two memory texts are "the same" (exact duplicates are caught
 * by comparing `memoryHash` values, without the LLM, like Mem0's hash-based dedup). The text a
 * user sees is never changed: normalization only feeds the hash and comparisons.
 */
import { MAX_MEMORY_TEXT_CHARS } from '../../model/memory';
import type { MessageRecord } from '../../model/records';
import { MemoryError } from '../../model/errors';

/** Sentence-final punctuation (ASCII and CJK) ignored at the end of a memory text. */
const TRAILING_PUNCTUATION = /[\s.!?。！？…~～、,，;；:：]+$/u;

/**
 * Canonical form of a memory text for duplicate detection: Unicode NFKC (full-width ASCII →
 * ASCII, compatibility ideographs → unified ones), lower case, every run of white space → one
 * space, trimmed, trailing sentence punctuation removed. Chinese text is kept as is (no
 * translation, no simplified/traditional conversion).
 * @param text any string (may be empty).
 * @returns the normalized string ('' for blank input).
 */
export function normalizeMemoryText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim().replace(TRAILING_PUNCTUATION, '');
}

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;
const encoder = new TextEncoder();

/**
 * FNV-1a 64-bit hash (Fowler–Noll–Vo, http://www.isthe.com/chongo/tech/comp/fnv/) of the UTF-8
 * bytes of `text`, as 16 lower-case hex digits. Not cryptographic: it identifies duplicates.
 * Reference values: `fnv1a64('') === 'cbf29ce484222325'`, `fnv1a64('a') === 'af63dc4c8601ec8c'`.
 */
export function fnv1a64(text: string): string {
  let hash = FNV64_OFFSET;
  for (const byte of encoder.encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * FNV64_PRIME) & MASK64;
  }
  return hash.toString(16).padStart(16, '0');
}

/** Hash stored in `MemoryRecord.hash`: `fnv1a64(normalizeMemoryText(text))`. */
export function memoryHash(text: string): string {
  return fnv1a64(normalizeMemoryText(text));
}

/**
 * The part of an assistant reply that long-term memory may learn from: its trimmed text when the
 * reply completed (also when cut off at the answer limit), `''` when it was stopped by the user
 * (`aborted`: a fragment such as `"Mom`), failed (`error`) or is missing. The user's message of
 * such an exchange is still remembered.
 */
export function rememberedReply(assistant: Pick<MessageRecord, 'status' | 'content'> | undefined | null): string {
  return assistant && assistant.status === 'complete' ? assistant.content.trim() : '';
}

/** Thrown by the memory store when a text is longer than `MAX_MEMORY_TEXT_CHARS`; nothing is stored. */
export class MemoryTextTooLongError extends MemoryError {
  constructor(
    /** Length of the refused text, in characters. */
    readonly chars: number,
    readonly maxChars: number = MAX_MEMORY_TEXT_CHARS,
  ) {
    super('text_too_long', `This memory is ${chars} characters long; a memory can hold at most ${maxChars}. Shorten it; nothing was saved.`, {
      params: { chars, maxChars },
    });
    this.name = 'MemoryTextTooLongError';
  }
}
