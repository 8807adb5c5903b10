/**
 * Explicit memory commands, handled without the language model:
 * - "remember that …", "remember: …", "please remember …", "记住…", "请记住…", "帮我记住…" store a
 *   pinned memory at once (importance 0.9; relative dates made absolute against the message time;
 *   the user's wording and language kept as typed).
 *   A polite request keeps its question mark: "can you remember that I work at Acme?".
 * - "forget …", "forget about …", "delete the memory about …", "忘记…", "忘掉…", "请忘记…",
 *   "删除关于…的记忆" remove the memories that match from the store, its indexes and the memory
 *   history (store event `FORGET`), together with the conversation rounds that state a removed fact
 *   (`roundsStating`), and report all of them. A trailing "的事 / 的事情 / 的记忆 / 的内容 / 的信息"
 *   names the kind of thing, not its content, and is not part of the search term.
 *
 * Forget is deliberately conservative (deleting the wrong memory is worse than keeping one): a
 * memory matches when it contains nearly all the content words of the argument, or at least half
 * of them *and* its embedding is close to the argument's (see `FORGET_THRESHOLDS`). A memory in the
 * other script (a Chinese memory for an English argument, or the reverse) shares no words with it
 * by construction, so there the embedding alone decides, at the cross-lingual threshold (this needs
 * a multilingual embedder such as the default paraphrase-multilingual-MiniLM). Candidates come from
 * the store's hybrid search (lexical + vector), including memories whose validity ended.
 */
import { MAX_MEMORY_TEXT_CHARS, type MemoryCommand, type MemoryKind } from '../../model/memory';
import { containsCjk } from '../../text/language';
import { contentTerms, termCoverage } from '../../text/terms';
import { cosineSimilarity } from './retrieval/vector';
import { guessKind, prepareItem } from './extraction/items';
import type { LongTermStore, MemoryCommandResult } from './types';

/** A recognized command. `argument` is the text after the command word, trimmed. */
export interface ParsedMemoryCommand {
  command: MemoryCommand;
  argument: string;
  /** "forget everything" / "忘记所有": a request to erase all memory (`argument` is empty). */
  all?: true;
}

/** Where a command was typed. `now` is the message time (ms epoch), default `Date.now()`. */
export interface MemoryCommandContext {
  namespace: string;
  conversationId: string;
  messageId: string;
  now?: number;
  /**
   * The page attached to the message (issue 15): "remember …" stores what the user said, with the
   * page as the memory's source (`sourceUrl` / `sourceTitle`); the page's own text is not stored.
   */
  page?: { url: string; title: string };
}

/**
 * Match thresholds of "forget". `coverage` is the share (0..1) of the argument's content words
 * found in a memory (`termCoverage`); `cosine` is the cosine similarity of the two embeddings.
 * A memory matches when `coverage >= strongCoverage`, or `coverage >= weakCoverage` and
 * `cosine >= minCosine`, or — only for a memory written in the other script than the argument (one
 * contains CJK, the other none), where no word can be shared — `cosine >= crossLingualCosine`.
 */
export const FORGET_THRESHOLDS = { strongCoverage: 0.75, weakCoverage: 0.5, minCosine: 0.75, crossLingualCosine: 0.75 } as const;

/** Importance given to a memory the user dictated (0..1). */
export const REMEMBERED_IMPORTANCE = 0.9;

/** Most candidates "forget" examines (top-k of the store's search). */
export const FORGET_CANDIDATES = 200;

const REMEMBER_EN =
  /^\s*(?:(?:please|pls|hey|ok|okay)[\s,]+)?(?:(?:can|could|would|will) you\s+(?:please\s+)?)?remember(?:\s+this)?(?:\s*[:：,，]\s*|\s+that\s+|\s+(?=\S))([\s\S]+)$/iu;
/** "Can you remember that …?", "could you please remember: …?": a request phrased as a question. */
const POLITE_REQUEST_EN =
  /^\s*(?:(?:please|pls|hey|ok|okay)[\s,]+)?(?:can|could|would|will) you\s+(?:please\s+)?(?:remember|forget)(?:\s+this)?(?:\s*[:：]|\s+that\s)/iu;
const REMEMBER_ZH = /^\s*(?:请你?|麻烦你?|你要|你)?(?:帮我)?(?:记住|记一下|记下来|记下)(?:这件事|这个|这点|一下)?[:：,，\s]*([\s\S]+)$/u;
const FORGET_EN = /^\s*(?:(?:please|pls)[\s,]+)?forget(?:\s+(?:all|everything)\s+about|\s+about|\s+that)?(?:\s*[:：,，]\s*|\s+)([\s\S]+)$/iu;
const FORGET_ZH = /^\s*(?:请你?|麻烦你?|你)?(?:帮我)?(?:忘记|忘掉|删除关于|删掉关于)(?:(?:所有|全部|一切)(?:的)?关于|关于)?[:：,，\s]*([\s\S]+)$/u;
/** "Delete the memory about …", "remove my memories of …", "can you forget the memory that …". */
const DELETE_MEMORY_EN =
  /^\s*(?:(?:please|pls)[\s,]+)?(?:(?:can|could|would|will) you\s+(?:please\s+)?)?(?:delete|remove|erase|forget)\s+(?:the\s+|my\s+|your\s+|any\s+|all\s+(?:the\s+|my\s+|your\s+)?)?(?:memory|memories)\s+(?:about|of|on|that)\s+([\s\S]+)$/iu;
/** "删除我生日的记忆", "删掉生日的记忆": an explicit "…的记忆" after delete. */
const DELETE_MEMORY_ZH = /^\s*(?:请你?|麻烦你?|你)?(?:帮我)?(?:删除|删掉|清除)(?:所有|全部)?(?:关于)?([\s\S]+?的记忆)[。.!！]*\s*$/u;
/** "生日的事 / 的事情 / 的记忆 …": the kind of thing, not its content (stripped from a forget argument). */
const ZH_THING_SUFFIX = /的(?:事情|事|记忆|内容|信息|东西)\s*[。.!！]*\s*$/u;

/**
 * Questions are chat, not commands: "remember when we met?", "忘记密码怎么办". English questions
 * are recognized by their question mark; Chinese ones also by question particles and words.
 */
const QUESTION = /[?？]\s*$|[吗呢]\s*[。.!！]?\s*$|怎么|如何|为什么|为啥|是什么|什么时候|哪里|哪儿|几点|是否|能不能|可不可以/u;
/** "remember me", "forget it", "忘了吧": no content to act on. */
const VAGUE = /^(?:it|this|that|me|him|her|them|everything|all|吧|它|这个|那个|这件事|那件事|一切|所有)$/iu;
/** "Forget everything (you know about me)", "forget all my memories". */
const FORGET_ALL_EN =
  /^\s*(?:(?:please|pls)[\s,]+)?forget\s+(?:everything|all|all\s+(?:of\s+)?(?:my\s+|your\s+|the\s+)?memories)(?:\s+(?:you\s+know\s+)?about\s+me)?\s*[.!]*\s*$/iu;
/** "忘记所有", "忘掉一切", "删除全部记忆", "请忘记关于我的所有事情". */
const FORGET_ALL_ZH =
  /^\s*(?:请你?|麻烦你?|你)?(?:帮我)?(?:忘记|忘掉|删除|删掉)(?:关于我的)?(?:所有|全部|一切)(?:的)?(?:记忆|内容|事情|东西|事)?[。.!！~～]*\s*$/u;
/** "Forget everything else, …", "忘记所有的烦恼吧": "everything/all" that is not the whole memory is a turn of phrase. */
const ALL_LEAD = /^(?:everything|all)\b|^(?:所有|一切|全部)/iu;
/** "Forget it, let's …" is a turn of phrase, not a command. */
const IDIOM_EN = /^it\b/iu;
/** "忘记带钥匙了" narrates ("I forgot the keys"); a command does not end in 了. */
const NARRATION_ZH = /了\s*[。.!！~～]*\s*$/u;
/** English "remember to …" is a reminder request in chat, still worth storing; "remember when …" is reminiscing. */
const REMINISCING_EN = /^\s*(?:do you\s+|you\s+)?remember\s+(?:when|how|the time|what)\b/iu;

/**
 * A word every command pattern above contains (same flags, so the same case folding): a message
 * without one is no command, and the patterns are not run (in the Chromium turn profile
 * they took ~0.4 ms a turn, several times what the same calls take warm in Node: probably
 * recompiled after V8 dropped their code between turns).
 */
const COMMAND_WORD = /remember|forget|delete|remove|erase|记|忘|删|清除/iu;

/**
 * Recognizes an explicit memory command at the start of a message, in English or Chinese.
 * Returns `null` for anything else, including questions ("do you remember …?", "忘记密码怎么办")
 * and arguments without content ("forget it", "记住了吗").
 * @example parseMemoryCommand('Remember that my sister is called Ana') // { command: 'remember', argument: 'my sister is called Ana' }
 * @example parseMemoryCommand('请记住：我对花生过敏') // { command: 'remember', argument: '我对花生过敏' }
 */
export function parseMemoryCommand(text: string): ParsedMemoryCommand | null {
  const trimmed = text.trim();
  if (!trimmed || !COMMAND_WORD.test(trimmed) || REMINISCING_EN.test(trimmed)) return null;
  if (FORGET_ALL_EN.test(trimmed) || FORGET_ALL_ZH.test(trimmed)) return { command: 'forget', argument: '', all: true };
  // The question mark of a polite request ("can you remember that …?") belongs to the request.
  const line = POLITE_REQUEST_EN.test(trimmed) ? trimmed.replace(/\s*[?？]+\s*$/u, '') : trimmed;
  for (const [command, re] of [
    ['forget', DELETE_MEMORY_EN],
    ['forget', DELETE_MEMORY_ZH],
    ['remember', REMEMBER_EN],
    ['remember', REMEMBER_ZH],
    ['forget', FORGET_EN],
    ['forget', FORGET_ZH],
  ] as const) {
    const m = re.exec(line);
    if (!m) continue;
    let argument = m[1]!
      .trim()
      .replace(/^(?:that|about)\s+/iu, '')
      .replace(/^(?:关于)/u, '')
      .trim();
    if (command === 'forget' && containsCjk(argument)) argument = argument.replace(ZH_THING_SUFFIX, '').trim();
    if (!argument || QUESTION.test(argument) || VAGUE.test(argument.replace(/[。.!！]+$/u, ''))) return null;
    if (command === 'forget' && (IDIOM_EN.test(argument) || ALL_LEAD.test(argument) || (re === FORGET_ZH && NARRATION_ZH.test(argument)))) return null;
    if (contentTerms(argument).length === 0) return null;
    return { command, argument };
  }
  return null;
}

/**
 * Runs an explicit memory command if `text` is one (see `parseMemoryCommand`), else returns `null`.
 * - remember: stores the argument as a pinned memory (an exact duplicate is pinned instead of
 *   added twice); source `user`.
 * - forget: removes every matching memory of `context.namespace` with event `FORGET` (history
 *   erased too); `affected` lists what was removed (empty when nothing matched; nothing else changes).
 * - forget everything: removes nothing and returns `refused: 'forget_all'` (see below).
 * @throws whatever the store throws (the store writes each change in one Dexie transaction).
 */
export async function runMemoryCommand(store: LongTermStore, text: string, context: MemoryCommandContext): Promise<MemoryCommandResult | null> {
  const parsed = parseMemoryCommand(text);
  if (!parsed) return null;
  // Erasing everything is not done from a chat line (one mistyped sentence would lose it all):
  // the reply points to Memory → Erase everything…, which asks first.
  if (parsed.all) return { command: 'forget', affected: [], refused: 'forget_all' };
  return parsed.command === 'remember' ? remember(store, parsed.argument, context) : forget(store, parsed.argument, context);
}

async function remember(store: LongTermStore, argument: string, context: MemoryCommandContext): Promise<MemoryCommandResult> {
  const now = context.now ?? Date.now();
  const text = argument.replace(/[。.!！]+$/u, '').trim();
  if (text.length > MAX_MEMORY_TEXT_CHARS) return { command: 'remember', affected: [], refused: 'too_long' };
  const item = prepareItem({ kind: guessKind(text, now), text }, now);
  const { memory, created } = await store.add(
    {
      namespace: context.namespace,
      kind: item.kind,
      text: item.text,
      importance: REMEMBERED_IMPORTANCE,
      validFrom: item.validFrom,
      validUntil: item.validUntil,
      pinned: true,
      sourceConversationId: context.conversationId,
      sourceMessageIds: [context.messageId],
      createdAt: now,
      ...(context.page ? { sourceUrl: context.page.url, sourceTitle: context.page.title } : {}),
    },
    'user',
  );
  let stored = memory;
  if (!created && !memory.pinned) {
    stored = await store.update(memory.id, { pinned: true, importance: Math.max(memory.importance, REMEMBERED_IMPORTANCE) }, 'user', 'PIN');
  }
  return { command: 'remember', affected: [{ id: stored.id, kind: stored.kind, text: stored.text }] };
}

/** One memory "forget" would remove, with why it matched. */
export interface ForgetMatch {
  id: string;
  kind: MemoryKind;
  text: string;
  /** Share of the argument's content words in the memory (0..1). */
  coverage: number;
  /** Cosine similarity of the embeddings, `null` when either has none. */
  cosine: number | null;
}

/**
 * The memories of `namespace` that "forget <argument>" would remove (see module doc), without
 * removing anything. Exposed so the UI can preview a forget.
 */
export async function findForgetMatches(store: LongTermStore, argument: string, namespace: string): Promise<ForgetMatch[]> {
  const terms = contentTerms(argument);
  if (terms.length === 0) return [];
  const hits = await store.search({ text: argument, namespace, k: FORGET_CANDIDATES, includeInvalid: true }, { timeFilters: false });
  const vector = hits.length > 0 ? await store.embed(argument) : null;
  const argumentCjk = containsCjk(argument);
  const matches: ForgetMatch[] = [];
  for (const hit of hits) {
    const coverage = termCoverage(terms, hit.memory.text);
    const otherScript = containsCjk(hit.memory.text) !== argumentCjk;
    if (coverage < FORGET_THRESHOLDS.weakCoverage && !otherScript) continue;
    let cosine: number | null = null;
    if (vector) {
      const record = await store.get(hit.memory.id);
      if (record?.embedding && record.embedding.length === vector.length) cosine = cosineSimilarity(vector, record.embedding);
    }
    const strong = coverage >= FORGET_THRESHOLDS.strongCoverage;
    const weak = coverage >= FORGET_THRESHOLDS.weakCoverage && cosine !== null && cosine >= FORGET_THRESHOLDS.minCosine;
    const crossLingual = otherScript && cosine !== null && cosine >= FORGET_THRESHOLDS.crossLingualCosine;
    if (strong || weak || crossLingual) matches.push({ id: hit.memory.id, kind: hit.memory.kind, text: hit.memory.text, coverage, cosine });
  }
  return matches;
}

async function forget(store: LongTermStore, argument: string, context: MemoryCommandContext): Promise<MemoryCommandResult> {
  const matches = await findForgetMatches(store, argument, context.namespace);
  const affected = new Map(matches.map(({ id, kind, text }) => [id, { id, kind, text }]));
  // The conversation rounds that state a forgotten fact would bring it back into prompts: they go too.
  for (const match of matches) {
    const fact = await store.get(match.id);
    if (!fact) continue;
    for (const round of await store.roundsStating(fact))
      if (!affected.has(round.id)) affected.set(round.id, { id: round.id, kind: round.kind, text: round.text });
  }
  if (affected.size > 0) await store.remove([...affected.keys()], 'FORGET', 'user');
  return { command: 'forget', affected: [...affected.values()] };
}
