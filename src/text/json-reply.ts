/**
 * Getting one JSON value out of a language model's reply, however it was wrapped or broken: the
 * one slicer and parser for every model reply that must be JSON (extraction, consolidation
 * decisions, summaries, entity notes).
 *
 * Small local models asked for JSON often wrap it in prose or Markdown code fences, leave
 * trailing commas, use single or typographic quotes, or stop mid-value when they hit the token
 * limit. This module cuts out the first JSON value (string-aware bracket matching), parses it
 * strictly, and only if that fails repairs it with `jsonrepair` (josdejong/jsonrepair: fences,
 * comments, quotes, trailing commas).
 *
 * Cut-off output is refused (`truncated`), never repaired: `jsonrepair` would close the brackets
 * and turn the unfinished last string into a well-formed but wrong value ("bought a c" stored as
 * a fact, half a merged memory text, a summary that silently loses its end). The callers ask
 * again or keep what they had (extraction retries and keeps the exchange as an episodic memory;
 * a decision falls back to ADD; a summary keeps the previous one). Schema validation is the
 * caller's job (zod).
 */
import { jsonrepair } from 'jsonrepair';

/** Longest reply examined (characters, UTF-16 code units); a value still open there counts as cut off. */
export const MAX_REPLY_CHARS = 32_000;

/** Why a reply yielded no JSON value. */
export type JsonFailure = 'empty' | 'no_json' | 'truncated' | 'unrepairable' | 'not_object';

/** Outcome of `parseJsonReply`. `message` is English, meant as retry feedback for the model. */
export type JsonReply<T = Record<string, unknown> | unknown[]> =
  { ok: true; value: T; repaired: boolean } | { ok: false; failure: JsonFailure; message: string };

/** A JSON value cut out of a reply: its text, and whether its brackets closed. */
export interface JsonSlice {
  text: string;
  /** `false` when the value never closes (cut-off output): `text` then runs to the end of the reply. */
  complete: boolean;
}

/**
 * Cuts the first JSON value out of `text`: from the first `{` (or, unless `objectOnly`, `[`) to
 * its matching closing bracket, string-aware (brackets inside strings and escaped quotes are
 * skipped). Markdown fences and prose around it are dropped.
 * @returns the slice, `complete: false` when the value never closes (a trailing code fence is
 *   then dropped); `null` when there is no opening bracket.
 * @example sliceFirstJson('x {"a": "}"} {"b": 1}') // { text: '{"a": "}"}', complete: true }
 * @example sliceFirstJson('{"a": "cut') // { text: '{"a": "cut', complete: false }
 */
export function sliceFirstJson(text: string, objectOnly = false): JsonSlice | null {
  const start = objectOnly ? text.indexOf('{') : text.search(/[{[]/);
  if (start < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) return { text: text.slice(start, i + 1), complete: true };
    }
  }
  return { text: text.slice(start).replace(/\s*`{3,}\s*$/u, ''), complete: false };
}

/**
 * Parses the first JSON value of a model reply, repairing syntax slips when needed (see module
 * doc). Never throws.
 * @param options.objectOnly look for an object only (`{`), and refuse an array (`not_object`).
 * @returns the value with `repaired: true` when strict `JSON.parse` failed and `jsonrepair` was
 *   needed; or a failure: `empty` (blank reply), `no_json` (no opening bracket), `truncated` (the
 *   value never closes within `MAX_REPLY_CHARS`), `unrepairable`, `not_object`.
 */
export function parseJsonReply(reply: string, options: { objectOnly: true }): JsonReply<Record<string, unknown>>;
/** See the first signature: any JSON value (object or array) unless `options.objectOnly`. */
export function parseJsonReply(reply: string, options?: { objectOnly?: boolean }): JsonReply;
export function parseJsonReply(reply: string, options: { objectOnly?: boolean } = {}): JsonReply {
  const text = reply.length > MAX_REPLY_CHARS ? reply.slice(0, MAX_REPLY_CHARS) : reply;
  if (!text.trim()) return { ok: false, failure: 'empty', message: 'The reply was empty.' };
  const slice = sliceFirstJson(text, options.objectOnly ?? false);
  if (slice === null) return { ok: false, failure: 'no_json', message: 'The reply contained no JSON object.' };
  if (!slice.complete) {
    return { ok: false, failure: 'truncated', message: 'The reply was cut off before its JSON closed. Reply with a shorter JSON object.' };
  }
  let value: unknown;
  let repaired = false;
  try {
    value = JSON.parse(slice.text);
  } catch {
    try {
      value = JSON.parse(jsonrepair(slice.text));
      repaired = true;
    } catch (error) {
      return { ok: false, failure: 'unrepairable', message: `The reply was not valid JSON and could not be repaired (${(error as Error).message}).` };
    }
  }
  if (typeof value !== 'object' || value === null || (options.objectOnly && Array.isArray(value))) {
    return { ok: false, failure: 'not_object', message: 'The reply was not a JSON object.' };
  }
  return { ok: true, value: value as Record<string, unknown> | unknown[], repaired };
}
