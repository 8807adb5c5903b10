/**
 * Strict parsing of the summarizer's and the entity extractor's replies. A reply is accepted
 * only when it is a complete JSON object of the expected shape, within length limits and in the
 * conversation's language; anything else (prose, a children's story, an empty string, a reply
 * cut off by the token limit, text ten times too long) is rejected with a reason, and the caller
 * keeps the previous summary/notes.
 */
import { jsonrepair } from 'jsonrepair';
import { z } from 'zod';
import type { ChatResult, TokenCounter } from '../../engines/types';
import type { EntityNote } from './types';
import { languageMatches, type DominantLanguage } from './language';

/** Outcome of parsing one reply. */
export type ParseOutcome<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * Cuts the first complete JSON object out of `text` (dropping Markdown fences and prose around
 * it) and parses it. Small syntax slips inside a complete object (single quotes, trailing commas)
 * are repaired with `jsonrepair`; an object that never closes is rejected as truncated, never
 * repaired (a repaired truncation would silently lose the end of a summary).
 */
export function parseJsonObject(text: string): ParseOutcome<Record<string, unknown>> {
  if (!text.trim()) return { ok: false, reason: 'empty reply' };
  const start = text.indexOf('{');
  if (start < 0) return { ok: false, reason: 'no JSON object in the reply' };
  let depth = 0;
  let quote = false;
  let end = -1;
  for (let i = start; i < text.length && end < 0; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === '"') quote = false;
    } else if (c === '"') quote = true;
    else if (c === '{') depth += 1;
    else if (c === '}' && --depth === 0) end = i;
  }
  if (end < 0) return { ok: false, reason: 'truncated JSON object' };
  const slice = text.slice(start, end + 1);
  let value: unknown;
  try {
    value = JSON.parse(slice);
  } catch {
    try {
      value = JSON.parse(jsonrepair(slice));
    } catch {
      return { ok: false, reason: 'malformed JSON object' };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'reply is not a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Rejects replies that did not finish normally. */
function finished(result: ChatResult): ParseOutcome<true> {
  if (result.finishReason === 'length') return { ok: false, reason: 'reply cut off at the token limit' };
  if (result.finishReason === 'abort') return { ok: false, reason: 'generation aborted' };
  return { ok: true, value: true };
}

const SummaryReply = z.object({ summary: z.string() });

/**
 * Parses a summarizer reply `{"summary": "…"}`.
 * @param options.maxTokens longest accepted summary (tokens of `counter`); the prompt asks for
 *   half of it, so a longer reply ignored the instruction (or is runaway text).
 * @param options.language language of the summarized lines; the summary must match.
 * @returns the trimmed summary, or a rejection reason.
 */
export function parseSummaryReply(
  result: ChatResult,
  options: { counter: TokenCounter; maxTokens: number; language: DominantLanguage },
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
 * `maxSummaryTokens`, or in the wrong language is dropped, and so are the speakers themselves
 * ("user", "assistant", "我", …); duplicates keep the first. A reply that
 * is not such an object is rejected as a whole.
 * @returns valid notes (possibly none), at most `maxEntities`.
 */
export function parseEntityReply(
  result: ChatResult,
  options: { counter: TokenCounter; exchangeText: string; maxSummaryTokens: number; maxEntities: number; language: DominantLanguage },
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
