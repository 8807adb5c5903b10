// One file (over ~300 lines): both reply parsers share `ParseOutcome`, the strict JSON step and the
// grounding checks (`groundedShare`, `MIN_GROUNDED_SHARE`) that the entity parser applies too.
/**
 * Strict parsing of the summarizer's and the entity extractor's replies. A reply is accepted
 * only when it is a complete JSON object of the expected shape, within length limits and in the
 * conversation's language; anything else (prose, a children's story, an empty string, a reply
 * cut off by the token limit, text ten times too long) is rejected with a reason, and the caller
 * keeps the previous summary/notes.
 */
import { z } from 'zod';
import type { ChatResult } from '../../engines/types';
import type { TokenCounter } from '../../model/tokens';
import { parseJsonReply, type JsonFailure } from '../../text/json-reply';
import type { EntityNote } from '../../model/context';
import { CJK_CHAR, languageMatches, type DominantLanguage } from '../../text/language';
import { contentTokens } from '../../text/terms';

/**
 * Outcome of parsing one reply. A rejected summary that left out key facts of the previous one
 * lists them in `missingFacts` (the summarizer asks again, naming them).
 */
export type ParseOutcome<T> = { ok: true; value: T } | { ok: false; reason: string; missingFacts?: string[] };

/** Rejection reasons of `parseJsonObject`, by failure of `parseJsonReply`. */
const JSON_FAILURE_REASONS: Record<JsonFailure, string> = {
  empty: 'empty reply',
  no_json: 'no JSON object in the reply',
  truncated: 'truncated JSON object',
  unrepairable: 'malformed JSON object',
  not_object: 'reply is not a JSON object',
};

/**
 * Cuts the first JSON object out of `text` (dropping Markdown fences and prose around it) and
 * parses it with `parseJsonReply` (`src/text/json-reply.ts`): small syntax slips inside a
 * complete object (single quotes, trailing commas) are repaired; an object that never closes is
 * rejected as truncated, never repaired (a repaired truncation would silently lose the end of a
 * summary).
 */
export function parseJsonObject(text: string): ParseOutcome<Record<string, unknown>> {
  const json = parseJsonReply(text, { objectOnly: true });
  return json.ok ? { ok: true, value: json.value } : { ok: false, reason: JSON_FAILURE_REASONS[json.failure] };
}

/** Rejects replies that did not finish normally. */
function finished(result: ChatResult): ParseOutcome<true> {
  if (result.finishReason === 'length') return { ok: false, reason: 'reply cut off at the token limit' };
  if (result.finishReason === 'abort') return { ok: false, reason: 'generation aborted' };
  return { ok: true, value: true };
}

/** Capitalized English words that start sentences or address someone, not names. */
const COMMON_CAPITALIZED = new Set(
  (
    "the a an my mine his her hers their our your its i i'm i've i'd i'll he she they we it you user user's users assistant assistant's " +
    'this that these those there then when while after before since until in on at for and but or so also later now today tonight yesterday tomorrow ' +
    'both each every some no not yes if as by with from to of about what who where which how why hello hi hey thanks thank ok okay sure well please dear ' +
    'however meanwhile recently currently earlier finally first next last one'
  ).split(' '),
);
/** Chinese words of three or more characters that carry no fact. */
const COMMON_CJK = new Set(['为什么', '怎么样', '不知道', '没关系', '一下子', '所以说', '是不是', '有没有', '什么样']);
/** Chinese words ending in a cue after which a two-character word is a place or a name ("住在深圳", "叫安娜", "妹妹安娜"). */
const CJK_NAME_CUE =
  /(?:住在|在|到|去|去了|来自|从|叫|名叫|叫做|姓|加入|嫁给|娶了|妹妹|姐姐|哥哥|弟弟|朋友|同事|老板|女儿|儿子|妈妈|爸爸|老婆|老公|女朋友|男朋友)$/u;
const factSegmenter = new Intl.Segmenter(undefined, { granularity: 'word' });
/** "Ana's" → "Ana": the segmenter keeps the possessive in the word. */
const withoutPossessive = (word: string) => word.replace(/['’]s$/iu, '');

/**
 * Key facts of a summary, the words a fold must never lose: capitalized words (names, places,
 * months and weekdays — sentence starters and pronouns such as "The", "She" excluded), numbers and
 * dates as written ("3", "2024-05-10", "14:30"), and Chinese proper nouns and long terms: words of
 * three or more CJK characters ("里斯本", "乌龙茶"), and two-character words right after a place or
 * name cue ("住在深圳", "叫安娜", "妹妹安娜"). Words come from `Intl.Segmenter`; NFKC-normalized,
 * de-duplicated in order of appearance; Latin words keep their case and lose a possessive "'s".
 * @example keyFacts('The user said: My sister Ana lives in Lisbon.') // ['Ana', 'Lisbon']
 */
export function keyFacts(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const push = (fact: string) => {
    const key = fact.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    out.push(fact);
  };
  const normalized = text.normalize('NFKC');
  let previous = '';
  for (const { segment, isWordLike } of factSegmenter.segment(normalized)) {
    if (!isWordLike) continue;
    const word = withoutPossessive(segment.trim());
    if (CJK_CHAR.test(word)) {
      const length = Array.from(word).length;
      if ((length >= 3 && !COMMON_CJK.has(word)) || (length === 2 && CJK_NAME_CUE.test(previous))) push(word);
    } else if (/^\p{Lu}/u.test(word) && /^\p{Script=Latin}/u.test(word) && word.length >= 2 && !COMMON_CAPITALIZED.has(word.toLowerCase())) {
      push(word);
    }
    previous = word;
  }
  for (const n of normalized.match(/(?<![\p{Script=Latin}\p{N}])\p{N}+(?:[-/.:]\p{N}+)*(?![\p{Script=Latin}\p{N}])/gu) ?? []) push(n);
  return out;
}

/**
 * The key facts of `previous` (see `keyFacts`) that `summary` does not contain: Latin words and
 * numbers must appear as whole words (case-insensitive, NFKC), CJK words as substrings.
 * @returns the missing facts, in the order of `keyFacts(previous)` (empty when all survive).
 */
export function missingKeyFacts(previous: string, summary: string): string[] {
  const normalized = summary.normalize('NFKC').toLowerCase();
  const words = new Set<string>();
  for (const { segment, isWordLike } of factSegmenter.segment(normalized)) if (isWordLike) words.add(withoutPossessive(segment));
  const numbers = new Set(normalized.match(/(?<![\p{Script=Latin}\p{N}])\p{N}+(?:[-/.:]\p{N}+)*(?![\p{Script=Latin}\p{N}])/gu) ?? []);
  return keyFacts(previous).filter((fact) => {
    const key = fact.toLowerCase();
    if (CJK_CHAR.test(key)) return !normalized.includes(key);
    if (/^\p{N}/u.test(key)) return !numbers.has(key) && !words.has(key);
    return !words.has(key);
  });
}

/** Start of the rejection reason of a summary that left out key facts of the previous one. */
const KEY_FACTS_DROPPED = 'summary drops key facts of the previous summary:';

/** Below this share of grounded content tokens a reply is not a summary of its source. */
export const MIN_GROUNDED_SHARE = 0.2;
/** Below this share of the previous summary's content tokens kept, a new summary wiped the old one. */
export const MIN_RETAINED_SHARE = 0.25;
/**
 * A previous summary at least this share of the accepted maximum (`maxTokens`; the prompt asks
 * for half of it, so 0.4 = 80 % of the requested length) is *full*: the fold must compress, and
 * may then drop up to `MAX_DROPPED_KEY_FACTS_WHEN_FULL` of its key facts. Without this a summary
 * that reached its length could never fold again and every later turn stayed verbatim.
 */
export const FULL_SUMMARY_SHARE = 0.4;
/** Largest share of the previous summary's key facts a fold of a full summary may drop. */
export const MAX_DROPPED_KEY_FACTS_WHEN_FULL = 0.5;
/** Share of the user's own content tokens (from the folded user messages) a summary must keep; at least 1, at most 8 tokens are required. */
export const MIN_USER_COVERAGE = 0.15;

/**
 * Share (0..1) of the content tokens of `output` (see `contentTokens`) that also occur in
 * `source`: a summary reuses the names, places, numbers and key words of what it summarizes,
 * while a hallucinated reply (a children's story from a model that cannot follow instructions)
 * does not. `null` when `output` has no content tokens.
 */
export function groundedShare(output: string, source: string): number | null {
  const out = contentTokens(output);
  if (out.size === 0) return null;
  const src = contentTokens(source);
  let hit = 0;
  for (const t of out) if (src.has(t)) hit += 1;
  return hit / out.size;
}

/**
 * Checks that `summary` is a summary of `previous` + `lines` (see `groundedShare`): it has content
 * (unless its source has almost none), at least `MIN_GROUNDED_SHARE` of its key words occur in
 * the source, and, when the previous summary had at least 8 key words, it keeps at least
 * `MIN_RETAINED_SHARE` of them (a progressive summary adds onto the previous one; a reply that
 * drops it would wipe the memory of everything already folded). Whatever its length, every key
 * fact of the previous summary (`keyFacts`: names, places, dates, numbers, Chinese proper nouns)
 * must survive (`missingKeyFacts` empty) — unless `full` (the previous summary has reached its
 * length, see `FULL_SUMMARY_SHARE`): then at most `MAX_DROPPED_KEY_FACTS_WHEN_FULL` of them may go.
 * When `userLines` (the folded user messages) is given, the summary must also keep some of the
 * user's own words — names, places, preferences come from the user: `ceil(MIN_USER_COVERAGE · n)`
 * of the n user content tokens, at least 1 and at most 8. This stops a model that only echoes its
 * own replies (a story-writing model summarizing its stories) from folding the user's facts away.
 * @returns a rejection reason, or `null` when the summary passes.
 */
export function summaryGroundingProblem(summary: string, previous: string, lines: string, userLines?: string, full = false): string | null {
  const source = `${previous}\n${lines}`;
  const share = groundedShare(summary, source);
  if (share === null) return contentTokens(source).size >= 4 ? 'summary has no content words' : null;
  if (share < MIN_GROUNDED_SHARE) return `summary does not reflect the conversation (${Math.round(share * 100)}% of its key words occur in it)`;
  const before = contentTokens(previous);
  if (before.size >= 8) {
    const after = contentTokens(summary);
    let kept = 0;
    for (const t of before) if (after.has(t)) kept += 1;
    if (kept / before.size < MIN_RETAINED_SHARE) return `summary drops the previous summary (${Math.round((kept / before.size) * 100)}% of its key words kept)`;
  }
  const missing = missingKeyFacts(previous, summary);
  const allowed = full ? Math.floor(keyFacts(previous).length * MAX_DROPPED_KEY_FACTS_WHEN_FULL) : 0;
  if (missing.length > allowed) return `${KEY_FACTS_DROPPED} ${missing.join(', ')}`;
  if (userLines !== undefined) {
    const user = contentTokens(userLines);
    if (user.size > 0) {
      const after = contentTokens(summary);
      let kept = 0;
      for (const t of user) if (after.has(t)) kept += 1;
      const required = Math.min(8, Math.max(1, Math.ceil(MIN_USER_COVERAGE * user.size)));
      if (kept < required) return `summary keeps too few of the user's own words (${kept} of ${user.size}, needs ${required})`;
    }
  }
  return null;
}

const SummaryReply = z.object({ summary: z.string() });

/**
 * Parses a summarizer reply `{"summary": "…"}`.
 * @param options.maxTokens longest accepted summary (tokens of `counter`); the prompt asks for
 *   half of it, so a longer reply ignored the instruction (or is runaway text).
 * @param options.language language of the summarized lines; the summary must match.
 * @param options.grounding the previous summary, the folded lines and (optionally) the folded
 *   user messages: when given, the summary must pass `summaryGroundingProblem` (a previous summary
 *   of at least `FULL_SUMMARY_SHARE · maxTokens` tokens counts as full).
 * @returns the trimmed summary, or a rejection reason (with `missingFacts` when the reply failed
 *   the grounding check and left out key facts of the previous summary).
 */
export function parseSummaryReply(
  result: ChatResult,
  options: { counter: TokenCounter; maxTokens: number; language: DominantLanguage; grounding?: { previous: string; lines: string; userLines?: string } },
): ParseOutcome<string> {
  const done = finished(result);
  if (!done.ok) return done;
  const json = parseJsonObject(result.content);
  if (!json.ok) return json;
  const parsed = SummaryReply.safeParse(json.value);
  if (!parsed.success) return { ok: false, reason: 'JSON object has no "summary" string' };
  const summary = parsed.data.summary.trim();
  if (!summary) return { ok: false, reason: 'empty summary' };
  const tokens = options.counter.count(summary);
  if (tokens > options.maxTokens) return { ok: false, reason: `summary too long (${tokens} tokens, at most ${options.maxTokens})` };
  if (!languageMatches(summary, options.language)) return { ok: false, reason: `summary not written in the conversation's language (${options.language})` };
  if (options.grounding) {
    const { previous, lines, userLines } = options.grounding;
    const full = previous !== '' && options.counter.count(previous) >= FULL_SUMMARY_SHARE * options.maxTokens;
    const problem = summaryGroundingProblem(summary, previous, lines, userLines, full);
    if (problem) {
      // Whatever check failed, name the previous summary's key facts the reply lost (the summarizer asks again with them).
      const missing = missingKeyFacts(options.grounding.previous, summary);
      return missing.length > 0 ? { ok: false, reason: problem, missingFacts: missing } : { ok: false, reason: problem };
    }
  }
  return { ok: true, value: summary };
}

const EntityReply = z.object({ entities: z.array(z.unknown()) });
const EntityEntry = z.object({ name: z.string(), summary: z.string() });

/** Normalized lookup key of an entity name: NFKC, lower-case, inner whitespace collapsed, trimmed. */
export function entityKey(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/**
 * `true` when entity `name` occurs in `text`: case-insensitive after NFKC; names in Latin script
 * must stand as whole words (so "Max" is not found in "maximum"); CJK names match as substrings
 * (Chinese has no spaces between words).
 */
export function mentions(text: string, name: string): boolean {
  const key = entityKey(name);
  if (!key) return false;
  const hay = entityKey(text);
  const latin = (ch: string | undefined) => ch !== undefined && /[\p{Script=Latin}\p{N}]/u.test(ch);
  const checkStart = latin(key[0]);
  const checkEnd = latin(key[key.length - 1]);
  for (let at = hay.indexOf(key); at >= 0; at = hay.indexOf(key, at + 1)) {
    const okStart = !checkStart || !latin(hay[at - 1]);
    const okEnd = !checkEnd || !latin(hay[at + key.length]);
    if (okStart && okEnd) return true;
  }
  return false;
}

/** Names that stand for the two speakers, never tracked as entities. */
const SPEAKERS = new Set(['user', 'the user', 'assistant', 'the assistant', 'ai', 'i', 'me', 'you', '用户', '助手', '我', '你', '您']);

/**
 * Parses an entity-extractor reply `{"entities": [{"name", "summary"}]}`. Entries are checked one
 * by one: an entry whose name does not occur in `exchangeText` (a hallucinated or story
 * character), whose name is longer than 60 characters, whose summary is empty, longer than
 * `maxSummaryTokens`, in the wrong language, or not grounded in the exchange and the known notes
 * (`groundedShare` < `MIN_GROUNDED_SHARE`) is dropped, and so are the speakers themselves
 * ("user", "assistant", "我", …); duplicates keep the first. A reply that
 * is not such an object is rejected as a whole.
 * @returns valid notes (possibly none), at most `maxEntities`.
 */
export function parseEntityReply(
  result: ChatResult,
  options: { counter: TokenCounter; exchangeText: string; knownNotes?: string; maxSummaryTokens: number; maxEntities: number; language: DominantLanguage },
): ParseOutcome<{ notes: EntityNote[]; dropped: number }> {
  const done = finished(result);
  if (!done.ok) return done;
  const json = parseJsonObject(result.content);
  if (!json.ok) return json;
  const parsed = EntityReply.safeParse(json.value);
  if (!parsed.success) return { ok: false, reason: 'JSON object has no "entities" list' };
  const notes: EntityNote[] = [];
  const seen = new Set<string>();
  let dropped = 0;
  for (const raw of parsed.data.entities) {
    const entry = EntityEntry.safeParse(raw);
    const name = entry.success ? entry.data.name.trim() : '';
    const summary = entry.success ? entry.data.summary.trim() : '';
    const key = entityKey(name);
    const valid =
      entry.success &&
      key.length > 0 &&
      !SPEAKERS.has(key) &&
      name.length <= 60 &&
      summary.length > 0 &&
      !seen.has(key) &&
      mentions(options.exchangeText, name) &&
      options.counter.count(summary) <= options.maxSummaryTokens &&
      languageMatches(summary, options.language) &&
      (groundedShare(summary, `${options.exchangeText}\n${options.knownNotes ?? ''}`) ?? 0) >= MIN_GROUNDED_SHARE &&
      notes.length < options.maxEntities;
    if (!valid) {
      dropped += 1;
      continue;
    }
    seen.add(key);
    notes.push({ name, summary });
  }
  return { ok: true, value: { notes, dropped } };
}
