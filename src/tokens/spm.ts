/**
 * llama.cpp's SentencePiece ("llama" vocab type) tokenizer, rebuilt from GGUF metadata
 * (`tokenizer.ggml.tokens`, `.scores`, `.token_type`), so prompts can be counted exactly for
 * GGUF models run by wllama without loading the model.
 *
 * Algorithm: a port of `llm_tokenizer_spm_session` in llama.cpp `src/llama-vocab.cpp` (itself
 * the SentencePiece BPE encoder, `bpe_model.cc`): escape spaces as U+2581 ("▁"), prepend one
 * when `add_space_prefix` is set and the fragment starts the text or follows a special token,
 * split into code points, then repeatedly merge the adjacent pair whose concatenation is a
 * vocabulary token with the highest score (ties: leftmost first); symbols that are not tokens
 * fall back to `<0xXX>` byte tokens. Special tokens (control, user-defined, unknown) written
 * literally in the text are split out first, longest first, as llama.cpp does with
 * `parse_special`. Verified against Google's SentencePiece on the stories260K vocabulary
 * (tests/unit/tokens-gguf.test.ts).
 *
 * Counting by pieces (`countTokens`): when no vocabulary token other than "\n" itself contains a
 * newline (`newlineIsolated`), no pair with a "\n" symbol is ever a merge candidate, so each
 * stretch between two newlines is merged exactly as if it were encoded alone: its merges touch
 * only its own symbols, and the heap pops its candidates in the same relative order (score, then
 * leftmost; the other stretches' pops change none of them). The ids of a final symbol depend on
 * its text alone (see `resegment`), and each newline is one token (its own id or its one byte
 * token). A count is then the sum of cacheable per-line counts, exactly `encode(text).length`
 * (tests/unit/tokens-spm-incremental.test.ts).
 *
 * The same argument cuts a stretch into words (`wordIsolated`): when no vocabulary token has a
 * "▁" right after another code point than "▁" (so every token's "▁"s form its prefix; llama
 * vocabularies hold "▁▁"-style runs, which stay allowed), no merge candidate spans a cut made
 * before a "▁" that follows a non-"▁" code point: both sides of such a pair would form a string
 * with "x▁" inside, which is no token. Each word is then merged as if encoded alone, and the count
 * of a stretch is the sum of cacheable per-word counts (`countStretch`): a new memory or message
 * made of words already seen encodes nothing.
 */

/** GGUF `tokenizer.ggml.token_type` values (llama.cpp `llama_token_type`). */
export const GGUF_TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

/** The vocabulary of a llama-type GGUF. */
export interface SpmVocab {
  tokens: readonly string[];
  scores: ArrayLike<number>;
  /** One `GGUF_TOKEN_TYPE` per token; missing entries count as normal. */
  types: ArrayLike<number>;
}

interface Symbol {
  /** Start offset (UTF-16 units) in the fragment. */
  start: number;
  /** Length (UTF-16 units); 0 once merged into its left neighbour. */
  n: number;
  prev: number;
  next: number;
}

interface Bigram {
  left: number;
  right: number;
  score: number;
  size: number;
}

/** `true` when bigram `a` must be merged before `b`: higher score first, then leftmost. */
function before(a: Bigram, b: Bigram): boolean {
  return a.score > b.score || (a.score === b.score && a.left < b.left);
}

/** Minimal binary heap ordered by `before`. */
class BigramHeap {
  private items: Bigram[] = [];
  get size(): number {
    return this.items.length;
  }
  push(item: Bigram): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Bigram | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && before(a[l]!, a[m]!)) m = l;
        if (r < a.length && before(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

const encoder = new TextEncoder();
/** "▁" (U+2581), SentencePiece's escaped space. */
const SPACE_MARK = 0x2581;
/** A "▁" right after another code point than "▁": a token with one is no `wordIsolated` vocabulary. */
const INNER_SPACE = /[^\u2581]\u2581/u;

/** The SentencePiece tokenizer of a llama-type GGUF (see module doc). */
export class LlamaSpmTokenizer {
  private readonly ids = new Map<string, number>();
  private readonly byteIds: (number | undefined)[] = [];
  private readonly specials: string[];
  private readonly unknownId: number;
  /**
   * `true` when no token other than "\n" itself contains a newline: no merge can then join a
   * newline to its neighbours, and `countTokens` counts the lines of a fragment separately.
   */
  readonly newlineIsolated: boolean;
  /**
   * `true` when no token has a "▁" right after a code point other than "▁": `countStretch` then
   * counts a stretch as the sum of its words, each cut before a "▁" that follows a non-"▁" (exact;
   * see the module doc).
   */
  readonly wordIsolated: boolean;

  /**
   * @param vocab tokens, scores and types from the GGUF.
   * @param options.addSpacePrefix GGUF `tokenizer.ggml.add_space_prefix` (llama.cpp default `true`).
   * @param options.unknownId GGUF `tokenizer.ggml.unknown_token_id` (default 0).
   */
  constructor(
    private readonly vocab: SpmVocab,
    private readonly options: { addSpacePrefix: boolean; unknownId?: number },
  ) {
    const specials: string[] = [];
    let newlineIsolated = true;
    let wordIsolated = true;
    vocab.tokens.forEach((text, id) => {
      if (!this.ids.has(text)) this.ids.set(text, id);
      if (text !== '\n' && text.includes('\n')) newlineIsolated = false;
      if (wordIsolated && INNER_SPACE.test(text)) wordIsolated = false;
      const type = vocab.types[id] ?? GGUF_TOKEN_TYPE.normal;
      if (type === GGUF_TOKEN_TYPE.byte) {
        const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(text);
        if (m) this.byteIds[parseInt(m[1]!, 16)] = id;
      } else if ((type === GGUF_TOKEN_TYPE.control || type === GGUF_TOKEN_TYPE.userDefined || type === GGUF_TOKEN_TYPE.unknown) && text.length > 0) {
        specials.push(text);
      }
    });
    this.specials = specials.sort((a, b) => b.length - a.length);
    this.unknownId = options.unknownId ?? 0;
    this.newlineIsolated = newlineIsolated;
    this.wordIsolated = wordIsolated;
  }

  /** Vocabulary size. */
  get size(): number {
    return this.vocab.tokens.length;
  }

  /** Token ids of `text` (no BOS/EOS), special-token strings parsed as special tokens. */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const fragment of this.fragments(text)) {
      if (fragment.special !== undefined) out.push(fragment.special);
      else this.encodeRaw(fragment.text, out);
    }
    return out;
  }

  /**
   * Tokens (a count) of one piece as `countTokens` hands it out: spaces already escaped as "▁",
   * the space prefix already applied, no special-token string in it. Equals the number of ids
   * `encode` produces for that stretch of the text.
   */
  countPiece(piece: string): number {
    const out: number[] = [];
    this.encodeRaw(piece, out);
    return out.length;
  }

  /**
   * Tokens (a count) of one stretch as `countTokens` hands it out (escaped, prefixed, no newline
   * when `newlineIsolated`): when `wordIsolated`, the sum of `countWord` over its words (cut before
   * each "▁" that follows a code point other than "▁"; "▁▁hello▁" → "▁▁hello", "▁"), otherwise
   * `countWord` of the whole stretch. Exact either way (module doc).
   * @param countWord tokens of one word: a memoized `this.countPiece` (it must return what
   *   `countPiece` returns), so that a stretch of words already seen costs no encoding.
   */
  countStretch(stretch: string, countWord: (word: string) => number = (word) => this.countPiece(word)): number {
    if (!this.wordIsolated) return countWord(stretch);
    let n = 0;
    let start = 0;
    for (let i = 1; i < stretch.length; i++) {
      if (stretch.charCodeAt(i) === SPACE_MARK && stretch.charCodeAt(i - 1) !== SPACE_MARK) {
        n += countWord(stretch.slice(start, i));
        start = i;
      }
    }
    return n + countWord(start === 0 ? stretch : stretch.slice(start));
  }

  /**
   * `encode(text).length` (tokens, no BOS/EOS), summed over pieces: special tokens count 1 each;
   * every other fragment (space-prefixed and escaped as `encode` does) is, when
   * `newlineIsolated`, cut around each "\n" — each newline is 1 token, each non-empty stretch
   * between newlines is counted by `countPiece` — and otherwise counted whole by `countPiece`.
   * Exact in both cases (see the module doc).
   * @param countPiece tokens of one piece; pass a memoized `this.countStretch` (e.g. `cachedCount`
   *   in counter.ts) so that a text that changed a few lines costs only those lines. Must return
   *   what `countPiece` (equally `countStretch`) returns. Default: `countStretch` unmemoized.
   */
  countTokens(text: string, countPiece: (piece: string) => number = (piece) => this.countStretch(piece)): number {
    let n = 0;
    for (const fragment of this.fragments(text)) {
      if (fragment.special !== undefined) {
        n += 1;
        continue;
      }
      if (!this.newlineIsolated || !fragment.text.includes('\n')) {
        n += countPiece(fragment.text);
        continue;
      }
      const lines = fragment.text.split('\n');
      n += lines.length - 1; // one token per newline: its id, or its single byte token (<0x0A> or unknown)
      for (const line of lines) if (line.length > 0) n += countPiece(line);
    }
    return n;
  }

  /**
   * The fragments `encode` tokenizes, in order: special tokens (`special` = id), and raw text
   * with the space prefix applied (when `addSpacePrefix` and the fragment starts the text or
   * follows a special token) and spaces escaped as "▁".
   */
  private *fragments(text: string): Generator<{ text: string; special?: number }> {
    let prevSpecial = true;
    for (const fragment of this.partition(text)) {
      if (fragment.special !== undefined) {
        yield fragment;
        prevSpecial = true;
        continue;
      }
      const raw = this.options.addSpacePrefix && prevSpecial ? ` ${fragment.text}` : fragment.text;
      yield { text: raw.replace(/ /g, '\u2581') };
      prevSpecial = false;
    }
  }

  /** Splits special-token strings out of `text`, longest special first (llama.cpp `tokenizer_st_partition`). */
  private partition(text: string): { text: string; special?: number }[] {
    // llama.cpp partitions (and so tokenizes) nothing for an empty text: no space prefix either.
    if (text.length === 0) return [];
    let fragments: { text: string; special?: number }[] = [{ text }];
    for (const special of this.specials) {
      if (!text.includes(special)) continue;
      const id = this.ids.get(special)!;
      const next: typeof fragments = [];
      for (const f of fragments) {
        if (f.special !== undefined || !f.text.includes(special)) {
          next.push(f);
          continue;
        }
        const parts = f.text.split(special);
        parts.forEach((part, i) => {
          if (i > 0) next.push({ text: special, special: id });
          if (part.length > 0) next.push({ text: part });
        });
      }
      fragments = next;
    }
    return fragments;
  }

  private encodeRaw(text: string, out: number[]): void {
    if (text.length === 0) return;
    const symbols: Symbol[] = [];
    for (let offset = 0; offset < text.length;) {
      const cp = text.codePointAt(offset)!;
      const n = cp > 0xffff ? 2 : 1;
      symbols.push({ start: offset, n, prev: symbols.length - 1, next: -1 });
      offset += n;
    }
    symbols.forEach((s, i) => (s.next = i + 1 < symbols.length ? i + 1 : -1));
    const heap = new BigramHeap();
    const revMerge = new Map<string, [number, number]>();
    const tryAdd = (left: number, right: number) => {
      if (left === -1 || right === -1) return;
      const l = symbols[left]!;
      const r = symbols[right]!;
      const piece = text.slice(l.start, l.start + l.n + r.n);
      const id = this.ids.get(piece);
      if (id === undefined) return;
      heap.push({ left, right, score: Number(this.vocab.scores[id] ?? 0), size: piece.length });
      revMerge.set(piece, [left, right]);
    };
    for (let i = 1; i < symbols.length; i++) tryAdd(i - 1, i);
    while (heap.size > 0) {
      const bigram = heap.pop()!;
      const l = symbols[bigram.left]!;
      const r = symbols[bigram.right]!;
      if (l.n === 0 || r.n === 0 || l.n + r.n !== bigram.size) continue;
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) symbols[r.next]!.prev = bigram.left;
      tryAdd(l.prev, bigram.left);
      tryAdd(bigram.left, l.next);
    }
    // As in llama.cpp: a final symbol is a single code point or a merge (always a vocabulary
    // token). `revMerge` keys are vocabulary tokens too, so it is reached only for pieces it
    // cannot hold: a symbol's ids depend on its own text alone (what `countTokens` relies on).
    const resegment = (s: Symbol) => {
      const piece = text.slice(s.start, s.start + s.n);
      const id = this.ids.get(piece);
      if (id !== undefined) {
        out.push(id);
        return;
      }
      const merge = revMerge.get(piece);
      if (merge) {
        resegment(symbols[merge[0]]!);
        resegment(symbols[merge[1]]!);
        return;
      }
      for (const byte of encoder.encode(piece)) out.push(this.byteIds[byte] ?? this.unknownId);
    };
    for (let i = 0; i !== -1; i = symbols[i]!.next) resegment(symbols[i]!);
  }
}
