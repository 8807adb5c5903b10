/**
 * Text normalization and hashing for long-term memories.
 *
 * `normalizeMemoryText` defines when two memory texts are "the same" (exact duplicates are caught
 * by comparing `memoryHash` values, without the LLM, like Mem0's hash-based dedup). The text a
 * user sees is never changed: normalization only feeds the hash and comparisons.
 *
 * `indexedMemoryText` is the lexical document of a memory (its date, its speakers and the text with
 * relative dates resolved against that date); `embeddingInput` is the same without the date.
 */
import { MAX_MEMORY_TEXT_CHARS } from '../../model/memory';
import type { MemoryRecord, MessageRecord } from '../../model/records';
import { MemoryError } from '../../model/errors';
import { labelSpeakers } from '../../text/speakers';
import { formatLocalDate, resolveRelativeDates } from './extraction/dates';

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

/**
 * Version of `indexedMemoryText`'s format. The persisted index records the version it was built
 * with (`IndexHeaderRecord.textVersion`); a store opening an index of another version rebuilds the
 * lexical index from the rows and embeds every vector again (`ltm.reembed`), once; the old vectors
 * are searched meanwhile. Version 1 (no field): the bare text. Version 2: `indexedMemoryText` /
 * `embeddingInput` (speakers named, relative dates resolved; the date in the lexical document).
 */
export const INDEXED_TEXT_VERSION = 2;

/**
 * The lexical document of a memory (dense-retrieval baselines on multi-session dialogs index
 * "(date) Speaker: text" the same way): `(YYYY-MM-DD) ` — the local date of
 * `createdAt`, when it was said — then the text with its speakers named (`labelSpeakers`) and
 * each relative date ("last year", "two months ago", "上周", "去年") followed by the absolute
 * date it means on that day (`resolveRelativeDates`, e.g. "last month (2025-02)"). Only the
 * index sees it; `text` stays what the user and the prompt see.
 * Example: `{ kind: 'episodic', text: 'User: Last month we went to Peru\nAssistant: Nice!',
 * createdAt: <2025-03-04>, speakers: { user: 'Mia', assistant: 'Jonas' } }` →
 * `(2025-03-04) Mia: Last month (2025-02) we went to Peru\nJonas: Nice!`.
 */
export function indexedMemoryText(memory: Pick<MemoryRecord, 'kind' | 'text' | 'createdAt' | 'speakers'>): string {
  const { text } = resolveRelativeDates(memory.text, memory.createdAt);
  return `(${formatLocalDate(memory.createdAt)}) ${labelSpeakers({ kind: memory.kind, text, speakers: memory.speakers })}`;
}

/**
 * The embedding input of a memory: the text with its speakers named and relative dates resolved,
 * as in `indexedMemoryText`, but without the leading `(date)`. Measured on the generated benchmark
 * (1k memories, vector-only R@10): bare text / speakers / date + speakers = 35.4 / 38.1 / 29.2 %
 * with the BERT fixture, 18.6 / 18.6 / 12.4 with model2vec, 21.2 / 19.5 / 17.7 with GloVe,
 * 47.8 / 49.6 / 52.2 with the hashed embedder: a date shared by the whole corpus pulls
 * mean-pooled vectors together, so dates are matched lexically and by the time filters instead.
 */
export function embeddingInput(memory: Pick<MemoryRecord, 'kind' | 'text' | 'createdAt' | 'speakers'>): string {
  return labelSpeakers({ kind: memory.kind, text: resolveRelativeDates(memory.text, memory.createdAt).text, speakers: memory.speakers });
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
