/**
 * Getting one JSON object out of a language model's reply, however it was wrapped or broken.
 *
 * Small local models asked for JSON often wrap it in prose or Markdown code fences, leave
 * trailing commas, use single or typographic quotes, or stop mid-array when they hit the token
 * limit. This module cuts out the first JSON value, then parses it strictly, and only if that
 * fails repairs it with `jsonrepair` (josdejong/jsonrepair: fences, comments, quotes, trailing
 * commas, missing closing brackets). Schema validation is the caller's job (zod).
 */
import { jsonrepair } from 'jsonrepair';

/** Longest reply examined (characters); anything past it is treated as a truncated reply. */
export const MAX_REPLY_CHARS = 32_000;

/** Why a reply yielded no JSON object. */
export type JsonFailure = 'empty' | 'no_json' | 'unrepairable' | 'not_object';

/** Outcome of `parseJsonReply`. */
export type JsonReply =
  | { ok: true; value: Record<string, unknown> | unknown[]; repaired: boolean }
  | { ok: false; failure: JsonFailure; message: string };

/**
 * Cuts the first JSON object or array out of `text`: from the first `{` or `[` to its matching
 * closing bracket (string-aware), or to the end of the text when it never closes (truncated
 * output). Markdown fences and surrounding prose are dropped. Returns `null` when there is no
 * opening bracket.
 */
export function sliceFirstJson(text: string): string | null {
  const start = text.search(/[{[]/);
  if (start < 0) return null;
  let depth = 0;
  let inString: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === inString) inString = null;
      continue;
    }
    if (c === '"') inString = c;
    else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return text.slice(start).replace(/\s*`{3,}\s*$/u, '');
}

/**
 * Parses the first JSON object/array of a model reply, repairing it when needed (see module doc).
 * Never throws.
 * @returns `repaired: true` when strict `JSON.parse` failed and `jsonrepair` was needed.
 */
export function parseJsonReply(reply: string): JsonReply {
  const text = reply.length > MAX_REPLY_CHARS ? reply.slice(0, MAX_REPLY_CHARS) : reply;
  if (!text.trim()) return { ok: false, failure: 'empty', message: 'The reply was empty.' };
  const slice = sliceFirstJson(text);
  if (slice === null) return { ok: false, failure: 'no_json', message: 'The reply contained no JSON object.' };
  let value: unknown;
  let repaired = false;
  try {
    value = JSON.parse(slice);
  } catch {
    try {
      value = JSON.parse(jsonrepair(slice));
      repaired = true;
    } catch (error) {
      return { ok: false, failure: 'unrepairable', message: `The reply was not valid JSON and could not be repaired (${(error as Error).message}).` };
    }
  }
  if (typeof value !== 'object' || value === null) {
    return { ok: false, failure: 'not_object', message: 'The reply was not a JSON object.' };
  }
  return { ok: true, value: value as Record<string, unknown> | unknown[], repaired };
}
