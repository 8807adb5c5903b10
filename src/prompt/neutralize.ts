/**
 * The one gate every piece of stored or user-written text passes before it is placed in the
 * prompt (`assemble.ts`): it neutralizes what could change the prompt's structure, and caps sizes.
 *
 * Neutralized (replaced by a lookalike that reads the same to the model but is no delimiter and
 * tokenizes to ordinary tokens):
 * - (a) every delimiter of our own prompt sections (`SECTION_TAGS`): `<tag>`, `</tag>`, any case,
 *   spaces inside the brackets, attributes — only in stored text placed in a section;
 * - (b) special tokens of the active model: from its own tokenizer (`ChatTokenCounter.specialTokens`:
 *   Hugging Face `added_tokens` with `special: true`, GGUF CONTROL/USER_DEFINED tokens), plus
 *   `COMMON_SPECIAL_TOKENS` and any `<|…|>` marker — in stored text and in the user's own turns.
 *
 * Replacement: in the matched piece `<`/`>` become `‹`/`›` (U+2039/U+203A) and `[`/`]` become
 * `［`/`］` (U+FF3B/U+FF3D), e.g. `<|im_start|>` → `‹|im_start|›`; a token without brackets gets a
 * WORD JOINER (U+2060) after its first character.
 */
import type { ChatEngine } from '../engines/types';
import type { ChatMessage } from '../model/engine';
import type { TokenCounter } from '../model/tokens';
import { isChatTokenCounter } from '../tokens/counter';
import type { NeutralizedReport } from '../model/trace';

/** Tag names of the delimited sections of the system message, as `assemble.ts` writes them. */
export const SECTION_TAGS = ['long_term_memories', 'conversation_summary', 'entities', 'related_past_exchanges', 'current_page'] as const;

/**
 * Chat-template control tokens of common model families, neutralized whatever the active model:
 * text may be shown later to another model (a model switch), and a tokenizer may lack metadata.
 */
export const COMMON_SPECIAL_TOKENS: readonly string[] = [
  // ChatML (Qwen, SmolLM, many fine-tunes)
  '<|im_start|>',
  '<|im_end|>',
  '<|endoftext|>',
  '<|im_sep|>',
  // Llama 2 / Mistral / SentencePiece
  '<s>',
  '</s>',
  '<unk>',
  '[INST]',
  '[/INST]',
  '<<SYS>>',
  '<</SYS>>',
  '[SYSTEM_PROMPT]',
  '[/SYSTEM_PROMPT]',
  // Llama 3
  '<|begin_of_text|>',
  '<|end_of_text|>',
  '<|start_header_id|>',
  '<|end_header_id|>',
  '<|eot_id|>',
  '<|eom_id|>',
  '<|python_tag|>',
  // Gemma
  '<bos>',
  '<eos>',
  '<pad>',
  '<start_of_turn>',
  '<end_of_turn>',
  // Phi-3
  '<|system|>',
  '<|user|>',
  '<|assistant|>',
  '<|end|>',
  // Reasoning / tool markers (Qwen3, DeepSeek)
  '<think>',
  '</think>',
  '<tool_call>',
  '</tool_call>',
];

/**
 * Longest text (characters) of one stored piece (a memory, the summary, an entity note, a
 * retrieved exchange) placed in a prompt section. Longer text is cut to this many characters
 * (plus "…") before any token is counted, so an oversized stored text (an old import, a
 * 10 MB memory) costs at most this much tokenizer work per turn. 8,000 characters are ≥ 2,000
 * tokens, more than a section's share of the windows Recall runs.
 */
export const MAX_INJECTED_TEXT_CHARS = 8_000;

/**
 * Longest text (characters) of one recent turn sent verbatim. A longer stored message (a pasted
 * 1 MB text) is cut to this many characters (plus "…") before it is counted, so it does not
 * make every later turn slow; the stored message is never changed. Equal to the token counter's
 * cache limit, so the cut text is counted once and then served from the cache.
 */
export const MAX_RECENT_TURN_CHARS = 20_000;

/** Result of neutralizing one text. */
export interface NeutralizedText extends NeutralizedReport {
  text: string;
}

/** A neutralizer bound to one model's special tokens (see `neutralizerFor`). */
export interface Neutralizer {
  /** Stored text placed in a section: section delimiters and special tokens neutralized. */
  stored(text: string): NeutralizedText;
  /** A user's or assistant's turn sent as its own chat message: special tokens neutralized. */
  turn(text: string): NeutralizedText;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const SECTION_TAG_SOURCE = `<\\s*/?\\s*(?:${SECTION_TAGS.join('|')})\\b[^<>]*>`;
/** Any ChatML-style marker `<|name|>` (names without spaces, up to 64 characters). */
const PIPE_MARKER_SOURCE = '<\\|[^|<>\\s]{1,64}\\|>';
/** Shapes most special tokens have: `<…>` and `[…]` (checked against the token set when found). */
const ANGLE_SOURCE = '<[^<>\\n]{1,64}>';
const SQUARE_SOURCE = '\\[[^[\\]\\n]{1,64}\\]';
const ANGLE = new RegExp(`^${ANGLE_SOURCE}$`, 'u');
const SQUARE = new RegExp(`^${SQUARE_SOURCE}$`, 'u');

/** Whether a tokenizer's special token is worth neutralizing: looks like markup, ≥ 2 characters. */
function isMarkupToken(token: string): boolean {
  return token.length >= 2 && token.trim() === token && /[<>[\]|]/u.test(token);
}

const BRACKETS: Record<string, string> = { '<': '‹', '>': '›', '[': '［', ']': '］' };

/** The lookalike of one matched delimiter or special token (see module doc). */
function lookalike(piece: string): string {
  if (/[<>[\]]/u.test(piece)) return piece.replace(/[<>[\]]/gu, (c) => BRACKETS[c]!);
  return wordJoined(piece);
}

/** `piece` with a WORD JOINER (U+2060, invisible) after its first character. */
function wordJoined(piece: string): string {
  const [first, ...rest] = Array.from(piece);
  return `${first}\u2060${rest.join('')}`;
}

/** Distinct pieces a report lists (the count covers all), and the longest piece kept (characters). */
const MAX_REPORTED_PIECES = 20;
const MAX_REPORTED_PIECE_CHARS = 64;

/**
 * A scanner for one token list. Tokens shaped `<…>` or `[…]` (nearly all) are looked up in a Set
 * when the generic shape matches (a regex alternation of thousands of tokens — Gemma has over
 * 6,000 — costs ~300 ms per 8,000 characters; the lookup is linear); the few others are matched
 * literally, first. Case-insensitive.
 */
function compile(tokens: readonly string[], withSections: boolean): (text: string, replace: (piece: string) => string) => NeutralizedText {
  const shaped = new Set<string>();
  const literal: string[] = [];
  for (const t of new Set(tokens)) {
    if (ANGLE.test(t) || SQUARE.test(t)) shaped.add(t.toLowerCase());
    else literal.push(t);
  }
  const literalSource =
    literal
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|') || '(?!)';
  // Groups: 1 literal token, 2 section tag, 3 pipe marker → always; 4 `<…>`, 5 `[…]` → when in the set.
  const pattern = new RegExp(
    `(${literalSource})|(${withSections ? SECTION_TAG_SOURCE : '(?!)'})|(${PIPE_MARKER_SOURCE})|(${ANGLE_SOURCE})|(${SQUARE_SOURCE})`,
    'giu',
  );
  return (text, replace) => {
    const pieces: string[] = [];
    let count = 0;
    let out = '';
    let last = 0;
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      const piece = m[0];
      if (m[1] === undefined && m[2] === undefined && m[3] === undefined && !shaped.has(piece.toLowerCase())) {
        pattern.lastIndex = m.index + 1; // not a token: a token may still start inside it
        continue;
      }
      out += text.slice(last, m.index) + replace(piece);
      last = m.index + piece.length;
      count += 1;
      const reported = capChars(piece, MAX_REPORTED_PIECE_CHARS);
      if (pieces.length < MAX_REPORTED_PIECES && !pieces.includes(reported)) pieces.push(reported);
    }
    return { text: last === 0 ? text : out + text.slice(last), count, pieces };
  };
}

/** Lookalikes first; a token written with the lookalikes themselves (no model has one so far) gets word joiners. */
function run(scan: ReturnType<typeof compile>, text: string): NeutralizedText {
  let result = scan(text, lookalike);
  for (let pass = 0; pass < 2 && result.count > 0; pass++) {
    const again = scan(result.text, wordJoined);
    if (again.count === 0) break;
    result = { text: again.text, count: result.count + again.count, pieces: [...result.pieces, ...again.pieces.filter((p) => !result.pieces.includes(p))] };
  }
  return result;
}

/**
 * Builds a neutralizer for a list of special tokens (the model's own plus `COMMON_SPECIAL_TOKENS`).
 * @param specialTokens special-token strings of the model's tokenizer; tokens that do not look like
 *   markup (no `<`, `>`, `[`, `]`, `|`, or shorter than 2 characters) are ignored.
 */
export function createNeutralizer(specialTokens: readonly string[] = []): Neutralizer {
  const tokens = [...COMMON_SPECIAL_TOKENS, ...specialTokens.filter(isMarkupToken)];
  const storedScan = compile(tokens, true);
  const turnScan = compile(tokens, false);
  return { stored: (text) => run(storedScan, text), turn: (text) => run(turnScan, text) };
}

const byCounter = new WeakMap<TokenCounter, Neutralizer>();
/** The neutralizer of `COMMON_SPECIAL_TOKENS` alone, shared by every counter (and engine) without markup special tokens of its own. */
let builtInOnly: Neutralizer | undefined;

/**
 * The neutralizer of the model behind `counter` (its `specialTokens` when it is a
 * `ChatTokenCounter`, else the built-in list only), built once per counter; one shared object for
 * every counter whose tokenizer adds no markup token of its own (the estimator among them).
 */
export function neutralizerFor(counter: TokenCounter): Neutralizer {
  let n = byCounter.get(counter);
  if (!n) {
    const own = isChatTokenCounter(counter) ? (counter.specialTokens ?? []).filter(isMarkupToken) : [];
    n = own.length > 0 ? createNeutralizer(own) : (builtInOnly ??= createNeutralizer());
    byCounter.set(counter, n);
  }
  return n;
}

/**
 * `text` cut to at most `maxChars` characters (UTF-16 code units, as `String.length` counts
 * them; a surrogate pair is never split), with "…" appended when cut, so the result has at most
 * `maxChars + 1` characters. Constant work whatever the length of `text`.
 */
export function capChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate whose pair would be cut off
  return `${text.slice(0, end)}…`;
}

/**
 * Multi-line stored text made unambiguous inside a section: blank lines removed and every line
 * after the first indented by two spaces, so no line can look like the start of another item or
 * of another part of the system message.
 */
export function indentContinuation(text: string): string {
  return text
    .split(/\r?\n/u)
    .filter((line) => line.trim() !== '')
    .map((line, i) => (i === 0 ? line : `  ${line.trimStart()}`))
    .join('\n');
}

/** Sums reports (distinct pieces kept in first-seen order). */
export function mergeReports(reports: readonly NeutralizedReport[]): NeutralizedReport {
  const pieces: string[] = [];
  let count = 0;
  for (const r of reports) {
    count += r.count;
    for (const p of r.pieces) if (!pieces.includes(p)) pieces.push(p);
  }
  return { count, pieces };
}

/** Message lists sealed by `sealNeutralized`, with the neutralizer every piece of them passed. */
const sealed = new WeakMap<readonly ChatMessage[], Neutralizer>();

/**
 * Marks an assembled prompt as already neutralized against `neutralizer`, so the engine boundary
 * (`guardChatEngine`) does not scan it a second time. The list and each message are frozen first:
 * a sealed list cannot change after it was sealed, and any other list — a copy, a list with a
 * message added, a background job's own prompt, a list sealed for another model's tokens — is not
 * sealed and is neutralized at the boundary as before. Only for messages whose every piece of
 * stored or user-written text passed `neutralizer` (`.stored` for section text, `.turn` for
 * turns; `.stored` covers every token `.turn` does): `assemble.ts` is the one caller.
 * @returns `messages`, frozen.
 */
export function sealNeutralized(messages: ChatMessage[], neutralizer: Neutralizer): ChatMessage[] {
  for (const m of messages) Object.freeze(m);
  Object.freeze(messages);
  sealed.set(messages, neutralizer);
  return messages;
}

const guardedEngines = new WeakMap<ChatEngine, ChatEngine>();

/**
 * `engine` with every message of every request passed through its model's `turn` neutralizer
 * before it reaches the engine, so no text — a stored message inside a summarizer, entity,
 * extraction or consolidation prompt as much as a chat turn — can carry a chat-template control
 * token into the prompt. Section delimiters are not touched (the system message needs its own).
 * A chat turn's prompt, which `assemble.ts` neutralized piece by piece and sealed
 * (`sealNeutralized`) against this same model's tokens, goes through as it is (the same array):
 * the text is scanned once per turn, and its exact token counts hold. One wrapper per engine (the
 * same object is returned each time); every other member is the engine's own.
 */
export function guardChatEngine(engine: ChatEngine): ChatEngine {
  let guarded = guardedEngines.get(engine);
  if (!guarded) {
    const complete: ChatEngine['complete'] = (request, onDelta) => {
      const counter = engine.tokenCounter();
      const n = counter ? neutralizerFor(counter) : (builtInOnly ??= createNeutralizer());
      if (sealed.get(request.messages) === n) return engine.complete(request, onDelta);
      return engine.complete({ ...request, messages: request.messages.map((m) => ({ ...m, content: n.turn(m.content).text })) }, onDelta);
    };
    guarded = new Proxy(engine, {
      get(target, prop) {
        if (prop === 'complete') return complete;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    guardedEngines.set(engine, guarded);
  }
  return guarded;
}
