/**
 * Guards against junk memories from small models (issue 14 item 3). A memory layer fed by a
 * 0.5–3B model stores mostly junk when it trusts every item the model lists: the assistant's own
 * suggestions, people from the example in the prompt, facts the prompt had injected from memory,
 * and the assistant's statements about itself ("I am an AI assistant"). Each extracted item passes
 * three checks, without the model, before it may reach consolidation or review:
 *
 * 1. `ungrounded`: the item must be stated in the USER's own words of that exchange. Grounding is
 *    lexical: the item's content tokens (`contentTokens`: Latin words ≥ 3 letters, numbers, CJK
 *    character bigrams — both languages) minus absolute dates (the model is told to write
 *    "2024-05-15" for "下周三") and minus paraphrase words a model adds when it rewrites "I love
 *    tea" as "User loves tea" (`PARAPHRASE_WORDS`); at least `MIN_GROUNDED_SHARE` (a third) of what is left
 *    must occur in the user message (a word matches a word with the same stem: a shared prefix of
 *    ≥ max(3, shorter length − 2) letters, so "loves" meets "love", "moved" meets "move", "art"
 *    does not meet "party"). An item with nothing left to check is ungrounded, and so is one with a
 *    number or a name (a capitalized word after the first) that the user did not write.
 * 2. `injected`: an item that repeats a long-term memory injected into that turn's prompt (the
 *    turn's `PromptTrace.memories`, episodic rounds excluded: their facts were never extracted) is
 *    not a new fact — the assistant's reply echoed it, or the user repeated it; either way it is
 *    stored already. Repeat = at least `INJECTED_SHARE` of the item's tokens are in the memory.
 * 3. `assistant_self`: a statement whose subject is the assistant ("I am an AI language model",
 *    "As an assistant…", "The assistant…", "我是一个人工智能助手", "作为AI…") is not a fact about the
 *    user, unless the user's own message names that subject (a user who says "I am an AI
 *    researcher" may be remembered as one).
 *
 * Pure functions; nothing is written. Embedding similarity is not used: the extraction job runs
 * with or without an embedder and the verdict must not depend on which one is loaded.
 */
import { contentTokens } from '../../../text/terms';

/** Why an item was refused by a guard. */
export type GuardReason = 'ungrounded' | 'injected' | 'assistant_self';
/** Every `GuardReason`, for telling guard refusals from other dropped items. */
export const GUARD_REASONS: ReadonlySet<string> = new Set<GuardReason>(['ungrounded', 'injected', 'assistant_self']);

/**
 * Share (0..1) of an item's checked tokens that must occur in the user's message. A third, not a
 * half: a faithful paraphrase keeps the user's key word but may swap the rest ("The code of my
 * journal is swordfish" → "Diary password is swordfish", 1 of 3); junk shares nothing, and the
 * names and numbers rule catches junk that shares a word.
 */
export const MIN_GROUNDED_SHARE = 1 / 3;
/** Share (0..1) of an item's tokens found in one injected memory that makes it a repeat of it. */
export const INJECTED_SHARE = 0.8;

/** Words a model adds when it rewrites the user's first person into a memory ("User's name is…", "Prefers…"). */
const PARAPHRASE_WORDS = new Set(
  (
    'user name named called lives live living works work working likes like liked loves love enjoys enjoy prefers prefer preference ' +
    'dislikes dislike hates hate favorite favourite wants want plans plan going has have owns is are was mentioned mentions says stated ' +
    'currently person personal'
  ).split(' '),
);
/** Chinese paraphrase words ("用户", "喜欢", "名字叫"), cut out of the item before its bigrams are taken. */
const PARAPHRASE_ZH = /用户|喜欢|偏好|名字叫|名字是|名字|目前|现在/gu;

/** Absolute dates the model was told to write (ISO, 5月15日, May 15, 2024); they are not words the user must have said. */
const ISO_DATES =
  /\d{4}-\d{1,2}(?:-\d{1,2})?(?:\s*~\s*\d{4}-\d{1,2}(?:-\d{1,2})?)?|(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?/giu;

/** True when `a` and `b` look like forms of one word (see module doc). CJK bigrams and numbers must be equal. */
function sameStem(a: string, b: string): boolean {
  if (a === b) return true;
  if (!/^\p{Script=Latin}+$/u.test(a) || !/^\p{Script=Latin}+$/u.test(b)) return false;
  const need = Math.max(3, Math.min(a.length, b.length) - 2);
  let shared = 0;
  while (shared < a.length && shared < b.length && a[shared] === b[shared]) shared += 1;
  return shared >= need;
}

/** Share (0..1) of `tokens` that have a same-stem token in `pool` (0 when `tokens` is empty). */
function share(tokens: readonly string[], pool: ReadonlySet<string>): number {
  if (tokens.length === 0) return 0;
  const list = [...pool];
  let hit = 0;
  for (const t of tokens) if (pool.has(t) || list.some((p) => sameStem(t, p))) hit += 1;
  return hit / tokens.length;
}

/** The tokens of an item that grounding checks: `contentTokens` without dates and paraphrase words. */
export function checkedTokens(text: string): string[] {
  return [...contentTokens(text.replace(ISO_DATES, ' ').replace(PARAPHRASE_ZH, ' '))].filter((t) => !PARAPHRASE_WORDS.has(t));
}

/**
 * Share (0..1) of the item's checked tokens (`checkedTokens`) found in `userText`, stems matched
 * (see module doc). 0 when the item has no checked token.
 * @example groundedShare('Has a cat named Miso', 'I have a cat, Miso.') // 1
 */
export function groundedShare(itemText: string, userText: string): number {
  return share(checkedTokens(itemText), contentTokens(userText));
}

const SELF_EN =
  /^(?:(?:i am|i'm|as)\s+(?:an?\s+|your\s+)?(?:ai|artificial intelligence|(?:large\s+)?language model|llm|(?:ai\s+|virtual\s+|digital\s+)?assistant|chatbot|bot)\b|(?:the|this|your)\s+(?:ai|assistant|chatbot|bot)\b|assistant\b|i (?:don'?t|do not|cannot|can'?t) have (?:personal|feelings|emotions|preferences|opinions|a body|memories)\b)/iu;
const SELF_ZH =
  /^(?:我是|作为)(?:一个|一名|你的)?(?:AI|ai|人工智能|(?:大)?语言模型|(?:智能|AI|ai)?助手|聊天机器人|机器人)|^(?:助手|AI助手)|^我(?:没有|不具备)(?:个人|感情|情感|偏好|身体)/u;
/** The subject words of a self-statement; the user naming one of them makes the statement theirs. */
const SELF_SUBJECTS = /\b(?:ai|artificial intelligence|language model|llm|assistant|chatbot|bot)\b|人工智能|语言模型|助手|机器人|AI/iu;

/**
 * `true` when `itemText` is the assistant speaking about itself (see module doc, rule 3) and the
 * user's message does not name that subject.
 */
export function isAssistantSelfStatement(itemText: string, userText: string): boolean {
  const t = itemText.trim();
  if (!SELF_EN.test(t) && !SELF_ZH.test(t)) return false;
  return !SELF_SUBJECTS.test(userText);
}

/**
 * `true` when `itemText` has a number or a capitalized Latin word (a name: not the first word) that
 * the user's message (`userTokens`, from `contentTokens`) lacks: small models invent people
 * ("Has a sister named Lily") and numbers; one invented name is enough to refuse the item.
 */
function inventsNameOrNumber(itemText: string, userTokens: ReadonlySet<string>): boolean {
  const text = itemText.replace(ISO_DATES, ' ');
  const numbers = text.match(/\p{N}+/gu) ?? [];
  const names = [...text.matchAll(/(?<=\S\s+)\p{Lu}\p{Ll}{2,}/gu)].map((m) => m[0].toLowerCase());
  return [...numbers, ...names].some((t) => !userTokens.has(t.normalize('NFKC').toLowerCase()));
}

/** What the guards read about one exchange. */
export interface GuardContext {
  /** The user's message of the exchange, verbatim. */
  userText: string;
  /** Texts of the long-term memories (not episodic rounds) injected into that turn's prompt. */
  injected: readonly string[];
}

/** The guards' verdict on a batch. `kept` keeps the input order. */
export interface GuardResult<T> {
  kept: T[];
  dropped: { text: string; reason: GuardReason }[];
}

/**
 * Applies the three guards (module doc) to `items`, in the order self-statement, injected,
 * grounding (the first that fails names the reason).
 */
export function guardItems<T extends { text: string }>(items: readonly T[], ctx: GuardContext): GuardResult<T> {
  const user = contentTokens(ctx.userText);
  const injected = ctx.injected.map((text) => contentTokens(text.replace(ISO_DATES, ' ')));
  const kept: T[] = [];
  const dropped: GuardResult<T>['dropped'] = [];
  for (const item of items) {
    const tokens = checkedTokens(item.text);
    let reason: GuardReason | null = null;
    if (isAssistantSelfStatement(item.text, ctx.userText)) reason = 'assistant_self';
    else if (tokens.length > 0 && injected.some((pool) => share(tokens, pool) >= INJECTED_SHARE)) reason = 'injected';
    else if (share(tokens, user) < MIN_GROUNDED_SHARE || inventsNameOrNumber(item.text, user)) reason = 'ungrounded';
    if (reason) dropped.push({ text: item.text, reason });
    else kept.push(item);
  }
  return { kept, dropped };
}
