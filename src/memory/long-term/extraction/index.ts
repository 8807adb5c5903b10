/**
 * Extraction: one exchange → structured memory items, with the language model.
 *
 * Flow (Mem0's extraction step, made robust for small local models):
 * 1. Ask with `responseFormat: { type: 'json_object', schema }` — engines with grammar-constrained
 *    decoding (WebLLM, llama.cpp grammars) enforce the schema; others just get the instruction.
 * 2. Cut out and parse the JSON, repairing common breakage and refusing cut-off output (`src/text/json-reply.ts`); validate the shape with
 *    zod, leniently (`./schema.ts`).
 * 3. Check the language: when the user wrote Chinese, items without any Chinese character are
 *    translations and are refused (a failure Mem0's users reported).
 * 4. On any problem, retry with the (shortened) bad reply and what was wrong — only the latest
 *    one, so the prompt does not grow — at most `maxAttempts` calls in all; then give up with `ExtractionError` (the caller keeps the exchange as an episodic memory
 *    and records the failure). Nothing is written here: extraction only computes.
 * 5. Guard against junk (`./guards.ts`): items not grounded in the user's own words, repeats of
 *    memories injected into that turn's prompt, and the assistant's statements about itself are
 *    dropped (no retry: the reply was usable, those items are not).
 * 6. Prepare each item: relative dates → absolute, kind, importance, validity (`./items.ts`).
 */
import type { ChatEngine, ChatRequest } from '../../../engines/types';
import { prepareItem, type PreparedItem, type RawItem } from './items';
import { parseJsonReply } from '../../../text/json-reply';
import { containsCjk, writesChinese } from '../../../text/language';
import { truncateMiddle } from '../../../text/terms';
import { buildExtractionMessages, retryMessages, type ExtractionExchange } from './prompt';
import { EXTRACTION_JSON_SCHEMA, normalizeExtractionReply } from './schema';
import { JobError } from '../../../model/errors';
import { guardItems, type GuardReason } from './guards';

export type { ExtractionExchange } from './prompt';

/** Default number of model calls per extraction (1 + 2 retries). */
export const DEFAULT_EXTRACTION_ATTEMPTS = 3;
/** Default answer budget of an extraction call (tokens). */
export const DEFAULT_EXTRACTION_MAX_TOKENS = 512;

/** Tokens kept free in the prompt for the retry turn (bad reply ≤ 200 characters + correction). */
const RETRY_RESERVE_TOKENS = 320;

/** What one failed attempt looked like (for the failure record shown in the UI). */
export interface ExtractionAttemptFailure {
  /** `empty`, `no_json`, `truncated`, `unrepairable`, `not_object` (see `JsonFailure`), `shape` or `language`. */
  reason: string;
  message: string;
  /** The start of the reply (at most 200 characters). */
  replySample: string;
}

/** Extraction gave up after its bounded retries. Nothing was written. */
export class ExtractionError extends JobError {
  constructor(readonly failures: ExtractionAttemptFailure[]) {
    super(
      'extraction_failed',
      `Memory extraction failed after ${failures.length} attempt${failures.length === 1 ? '' : 's'}: ${failures.at(-1)?.message ?? 'no reply'}`,
      { params: { attempts: failures.length } },
    );
    this.name = 'ExtractionError';
  }
}

/** Result of a successful extraction. */
export interface ExtractionResult {
  topic: string;
  items: PreparedItem[];
  /** Model calls made (1 = first reply was usable). */
  attempts: number;
  /** `true` when a reply needed JSON repair. */
  repaired: boolean;
  /**
   * Items refused on the last attempt, with the reason: translated out of the user's language,
   * or refused by a junk guard (`reason` is then a `GuardReason`: `ungrounded`, `injected`, `assistant_self`).
   */
  dropped: { text: string; reason: string | GuardReason }[];
  /** The model's raw reply of each attempt, in order (for diagnostics and spot checks). */
  replies: string[];
}

/** Options of `extractMemories`. */
export interface ExtractionOptions {
  /** Model calls in all, default 3. */
  maxAttempts?: number;
  /** Answer budget per call in tokens, default 512. */
  maxTokens?: number;
  /** Aborts the model call; extraction then throws the abort reason (a `DOMException` named `AbortError`). */
  signal?: AbortSignal;
}

function abortError(signal?: AbortSignal): unknown {
  return signal?.reason ?? new DOMException('Extraction aborted', 'AbortError');
}

/**
 * Extracts memory items from one exchange with `engine` (see module doc).
 * @returns the prepared items (possibly none: "nothing to remember" is a valid answer).
 * @throws ExtractionError when every attempt gave an unusable reply; the engine's own errors
 *   (EngineError) unchanged; an AbortError when `signal` aborts.
 */
export async function extractMemories(engine: ChatEngine, exchange: ExtractionExchange, options: ExtractionOptions = {}): Promise<ExtractionResult> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_EXTRACTION_ATTEMPTS);
  const maxTokens = options.maxTokens ?? DEFAULT_EXTRACTION_MAX_TOKENS;
  // Room is kept for one retry turn (a shortened bad reply + the correction, see `retryMessages`).
  const base = buildExtractionMessages(exchange, {
    contextWindow: engine.contextWindow() ?? 4096,
    maxAnswerTokens: maxTokens + (maxAttempts > 1 ? RETRY_RESERVE_TOKENS : 0),
    tokens: engine.tokenCounter(),
  });
  let messages = base;
  const userWritesChinese = writesChinese(exchange.userText);
  const failures: ExtractionAttemptFailure[] = [];
  const replies: string[] = [];
  let repairedAny = false;

  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (options.signal?.aborted) throw abortError(options.signal);
    const request: ChatRequest = {
      messages,
      maxTokens,
      temperature: attempt === 1 ? 0 : 0.3,
      responseFormat: { type: 'json_object', schema: EXTRACTION_JSON_SCHEMA },
      ...(options.signal ? { signal: options.signal } : {}),
    };
    const result = await engine.complete(request);
    if (result.finishReason === 'abort' || options.signal?.aborted) throw abortError(options.signal);
    const reply = result.content;
    replies.push(reply);
    const sample = truncateMiddle(reply.trim(), 200);

    const json = parseJsonReply(reply);
    if (!json.ok) {
      failures.push({ reason: json.failure, message: json.message, replySample: sample });
      messages = [...base, ...retryMessages(reply, json.message)];
      continue;
    }
    repairedAny ||= json.repaired;
    const normalized = normalizeExtractionReply(json.value);
    if (!normalized.ok) {
      failures.push({ reason: 'shape', message: normalized.message, replySample: sample });
      messages = [...base, ...retryMessages(reply, normalized.message)];
      continue;
    }
    const { kept, dropped } = checkLanguage(normalized.reply.items, userWritesChinese);
    if (dropped.length > 0 && attempt < maxAttempts) {
      const message = 'Some items were not in Chinese although the user wrote Chinese; write them in Chinese (中文), never translate.';
      failures.push({ reason: 'language', message, replySample: sample });
      messages = [...base, ...retryMessages(reply, message)];
      continue;
    }
    const guarded = guardItems(kept, { userText: exchange.userText, injected: exchange.injected ?? [] });
    return {
      topic: normalized.reply.topic,
      items: guarded.kept.map((item) => prepareItem(item, exchange.messageTime)),
      attempts: attempt,
      repaired: repairedAny,
      dropped: [...dropped, ...guarded.dropped],
      replies,
    };
  }
  throw new ExtractionError(failures);
}

/** Splits items into those in the user's language and translations (only checked for Chinese users). */
function checkLanguage(items: RawItem[], userWritesChinese: boolean): { kept: RawItem[]; dropped: { text: string; reason: string }[] } {
  if (!userWritesChinese) return { kept: items, dropped: [] };
  const kept: RawItem[] = [];
  const dropped: { text: string; reason: string }[] = [];
  for (const item of items) {
    if (containsCjk(item.text)) kept.push(item);
    else dropped.push({ text: item.text, reason: 'not in the user language (Chinese)' });
  }
  return { kept, dropped };
}
