/**
 * Shared machinery of the exact token counters: a chat-aware `TokenCounter` built from an
 * "encode text, return token ids" function and a chat-template family, with an LRU cache of
 * counts (the same messages are counted again at every turn).
 */
import type { ChatMessage, TokenCounter } from '../engines/types';
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
 *   BOS/EOS added (pure; will be cached).
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
 * with `joined` it counts the joined prompt itself.
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
  /** See `ChatTokenCounter.specialTokens` (default none). */
  specialTokens?: readonly string[];
}): ChatTokenCounter {
  const count = cachedCount(options.countText);
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
      (role) => countChat([{ role: 'user', content: probe }, { role, content: probe }], false) - countChat([{ role: 'user', content: probe }], false) - probeTokens,
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
  };
}
