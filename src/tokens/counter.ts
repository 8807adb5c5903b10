/**
 * Shared machinery of the exact token counters: a chat-aware `TokenCounter` built from an
 * "encode text, return token ids" function and a chat-template family, with an LRU cache of
 * counts (the same messages are counted again at every turn).
 *
 * Incremental counting: a text is counted as a sum of cached counts of its pieces, where that is
 * exact. For byte-level BPE whose pre-tokenizer never joins a newline to the printable character
 * after it (`splitsAtLineStarts`) the pieces are its lines (`lineSegments`), cut here; for a
 * SentencePiece vocabulary in which no token contains a newline (`LlamaSpmTokenizer.newlineIsolated`)
 * the tokenizer cuts the text around each newline itself (`LlamaSpmTokenizer.countTokens`, handed
 * in as an incremental `countText`). A prompt that changes a few lines from one turn to the next
 * (new memories, a new message) then costs only the changed lines, and the total is still
 * exactly what counting the whole text gives.
 */
import type { ChatMessage } from '../model/engine';
import type { TokenCounter } from '../model/tokens';
import { renderChat, type ChatTemplateInfo } from './chat-template';

/**
 * A `TokenCounter` that can also count a whole chat prompt exactly, template included.
 * Returned by `createHfTokenCounter` and `createGgufTokenCounter`; `countPromptTokens` uses
 * `countChat` when present.
 */
export interface ChatTokenCounter extends TokenCounter {
  /** Family of the chat template used for the overhead figures, and whether it is a guess. */
  readonly chatTemplate: ChatTemplateInfo;
  /**
   * Tokens of `messages` rendered with the model's chat template (BOS, default system message,
   * role markers) plus the reply primer — what the engine will feed the model.
   */
  countChat(messages: readonly ChatMessage[]): number;
  /**
   * `true` when `count` and `countChat` are sums of cached counts of pieces of the text — its
   * lines (`lineSegments`, exact where `splitsAtLineStarts`), or for SentencePiece the stretches
   * between newlines (exact where `LlamaSpmTokenizer.newlineIsolated`) — so a text or prompt that
   * changed a few lines costs only those; `false` when every text (or joined prompt) is tokenized
   * whole, with only whole texts cached.
   */
  readonly incremental: boolean;
  /**
   * Strings the tokenizer turns into special tokens when they appear in text (Hugging Face
   * `added_tokens`, special or not; GGUF tokens of type CONTROL or USER_DEFINED), e.g.
   * `<|im_start|>`. Stored text is neutralized against them before it enters a prompt
   * (`src/prompt/neutralize.ts`). Empty when the tokenizer declares none.
   */
  readonly specialTokens: readonly string[];
}

/** `true` when `counter` can count whole prompts exactly (see `ChatTokenCounter`). */
export function isChatTokenCounter(counter: TokenCounter): counter is ChatTokenCounter {
  return typeof (counter as Partial<ChatTokenCounter>).countChat === 'function';
}

/** Longest text (characters) kept in the count cache; longer texts are counted every time. */
const CACHE_MAX_CHARS = 20_000;
/** Entries of the count cache. */
const CACHE_ENTRIES = 4_096;

/** A line start: right after a newline, before a printable ASCII character that is not a space. */
const LINE_START = /(?<=\n)(?=[!-~])/u;

/**
 * `text` cut at every line start: before each printable, non-space ASCII character (U+0021–U+007E)
 * that follows a newline. The pieces joined give `text` back; a text without such a position is
 * one piece. Lines that start with a space, a CJK or another non-ASCII character stay joined to
 * the line before (no claim is made about those positions).
 */
export function lineSegments(text: string): string[] {
  return text.split(LINE_START);
}

/** Split regexes whose matches never contain a newline followed by a non-space character (see `splitsAtLineStarts`). */
const LINE_SAFE_SPLITS: ReadonlySet<string> = new Set([
  // Qwen2 / Qwen2.5 / Qwen3 (and llama.cpp's `qwen2` pre-tokenizer)
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  // Llama 3 / 3.1 / 3.2
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether counting a text as the sum of its `lineSegments` equals counting it whole, for the
 * tokenizer defined by `definition` (a parsed `tokenizer.json`). `true` only for this shape:
 * - normalizer none or NFC (NFC never composes a newline with an ASCII character);
 * - pre-tokenizer = a `Split` (behavior `Isolated`) by one of the Qwen2 / Llama 3 regexes, then
 *   `ByteLevel` without prefix space or regex. In those regexes the only alternatives that can
 *   match a newline match whitespace only, or end at the newline (` ?[^\s\p{L}\p{N}]+[\r\n]*`),
 *   and `\s*[\r\n]+` comes before the look-ahead `\s+(?!\S)`, so the pieces before a line start
 *   are the same whether or not the text goes on: every line start is a pre-token boundary, and
 *   BPE merges only inside pre-tokens;
 * - no added token contains a newline or strips the whitespace around it (`lstrip`/`rstrip`).
 * GPT-2's byte-level regex is not accepted: there `\s+(?!\S)` at the end of a piece depends on
 * what follows. SentencePiece tokenizers are never split (no pre-tokenizer boundary at all).
 */
export function splitsAtLineStarts(definition: unknown): boolean {
  if (!isObject(definition)) return false;
  const normalizer = definition.normalizer;
  if (normalizer !== null && normalizer !== undefined && !(isObject(normalizer) && normalizer.type === 'NFC')) return false;
  const pre = definition.pre_tokenizer;
  if (!isObject(pre) || pre.type !== 'Sequence' || !Array.isArray(pre.pretokenizers) || pre.pretokenizers.length !== 2) return false;
  const [split, byteLevel] = pre.pretokenizers as unknown[];
  if (!isObject(split) || split.type !== 'Split' || split.behavior !== 'Isolated' || split.invert === true) return false;
  const pattern = isObject(split.pattern) ? split.pattern.Regex : undefined;
  if (typeof pattern !== 'string' || !LINE_SAFE_SPLITS.has(pattern)) return false;
  if (!isObject(byteLevel) || byteLevel.type !== 'ByteLevel' || byteLevel.add_prefix_space === true || byteLevel.use_regex === true) return false;
  const added = Array.isArray(definition.added_tokens) ? (definition.added_tokens as unknown[]) : [];
  return added.every((t) => isObject(t) && typeof t.content === 'string' && !t.content.includes('\n') && t.lstrip !== true && t.rstrip !== true);
}

/**
 * Memoizes `count` with a least-recently-used cache of `CACHE_ENTRIES` texts.
 * @param count pure function text → tokens.
 */
export function cachedCount(count: (text: string) => number): (text: string) => number {
  const cache = new Map<string, number>();
  return (text) => {
    if (text.length === 0) return 0;
    if (text.length > CACHE_MAX_CHARS) return count(text);
    const hit = cache.get(text);
    if (hit !== undefined) {
      cache.delete(text);
      cache.set(text, hit);
      return hit;
    }
    const n = count(text);
    cache.set(text, n);
    if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    return n;
  };
}

/**
 * Builds a `ChatTokenCounter`.
 * @param id tokenizer id (`TokenCounter.id`).
 * @param countText tokens of a text with special-token strings parsed as special tokens and no
 *   BOS/EOS added (pure; `count` caches it per whole text; a `joined` prompt calls it directly).
 * @param template chat-template family.
 * @param extraFixedTokens tokens added once per prompt outside the rendered text (e.g. the BOS
 *   that llama.cpp prepends when `add_bos_token` is set and the template does not print it).
 * @param bos BOS text printed by templates that include it.
 *
 * `perMessageOverhead` is the largest, over the three roles, of (tokens of a one-message
 * rendering − tokens of its content), measured on a short neutral content; `replyPrimerTokens`
 * holds the primer plus the once-per-prompt tokens (BOS), measured on a system + user prompt.
 * `countChat` is exact: every rendered piece starts or ends at a special marker, so counting
 * pieces separately equals counting the joined prompt (tested against the joined string);
 * with `joined` it counts the joined prompt itself with `countText` (incremental when
 * `incrementalCountText`).
 */
export function makeChatCounter(options: {
  id: string;
  countText: (text: string) => number;
  template: ChatTemplateInfo;
  extraFixedTokens?: number;
  bos?: string;
  /**
   * Count the joined prompt instead of its pieces: needed when the template markers are not
   * special tokens of the vocabulary (a SentencePiece model run with llama.cpp's ChatML fallback),
   * because then text on both sides of a piece boundary can merge.
   */
  joined?: boolean;
  /**
   * Count texts as the sum of their cached `lineSegments` (see `splitsAtLineStarts`, which says
   * when this is exact). Ignored with `joined`.
   */
  incremental?: boolean;
  /**
   * `countText` is itself incremental: an exact sum of cached per-piece counts (e.g.
   * `LlamaSpmTokenizer.countTokens` with a `cachedCount` of `countPiece`, when `newlineIsolated`).
   * Only reported (`ChatTokenCounter.incremental`); also with `joined`.
   */
  incrementalCountText?: boolean;
  /** See `ChatTokenCounter.specialTokens` (default none). */
  specialTokens?: readonly string[];
}): ChatTokenCounter {
  const byLines = options.incremental === true && !options.joined;
  const whole = cachedCount(options.countText);
  const count = byLines
    ? (text: string): number => {
        if (!text.includes('\n')) return whole(text);
        let n = 0;
        for (const piece of lineSegments(text)) n += whole(piece);
        return n;
      }
    : whole;
  const extra = options.extraFixedTokens ?? 0;
  const renderOptions = options.bos !== undefined ? { bos: options.bos } : {};
  const countChat = (messages: readonly ChatMessage[], addGenerationPrompt = true): number => {
    const r = renderChat(options.template, messages, { ...renderOptions, addGenerationPrompt });
    if (options.joined) return extra + options.countText(r.prefix + r.messages.join('') + r.primer);
    let n = extra + count(r.prefix) + count(r.primer);
    for (const piece of r.messages) n += count(piece);
    return n;
  };
  const probe = 'hello';
  const probeTokens = count(probe);
  const perMessageOverhead = Math.max(
    ...(['system', 'user', 'assistant'] as const).map(
      (role) =>
        countChat(
          [
            { role: 'user', content: probe },
            { role, content: probe },
          ],
          false,
        ) -
        countChat([{ role: 'user', content: probe }], false) -
        probeTokens,
    ),
  );
  // Once-per-prompt tokens (BOS, primer) measured on the usual shape: a system message and a user message.
  const usual: ChatMessage[] = [
    { role: 'system', content: probe },
    { role: 'user', content: probe },
  ];
  const replyPrimerTokens = countChat(usual, true) - 2 * (probeTokens + perMessageOverhead);
  return {
    id: options.id,
    exact: true,
    count,
    perMessageOverhead,
    replyPrimerTokens: Math.max(0, replyPrimerTokens),
    chatTemplate: options.template,
    specialTokens: options.specialTokens ?? [],
    countChat: (messages) => countChat(messages, true),
    incremental: byLines || options.incrementalCountText === true,
  };
}
