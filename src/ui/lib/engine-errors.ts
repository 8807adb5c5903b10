/**
 * What the side panel says about an engine failure. The core reports failures with a stable
 * code (`EngineErrorCode`, see `src/engines/types.ts`) and an English message; the UI shows a
 * translated sentence chosen by the code and keeps the core's message only as a detail line,
 * so a Chinese user never sees English as the only explanation.
 *
 * Pure (no Svelte, no i18n instance): returns translation keys, so it runs in unit tests.
 */
import { ENGINE_ERROR_CODES, isErrorCode, type EngineErrorCode } from '../../model/errors';
import type { TranslationKey } from '../i18n/instance';

/** Every code the core may report: the one list in `src/model/errors.ts` (a test checks both locales cover it). */
export { ENGINE_ERROR_CODES };

/** Which engine failed: the chat model (WebLLM / wllama) or the embedding model (transformers.js). */
export type EngineSlot = 'chat' | 'embedder';

/** What to show for one engine failure. */
export interface EngineErrorView {
  /** Translated sentence: what went wrong, by code (`engineErrors.<slot>.<code>`, or `.unknown`). */
  key: TranslationKey;
  /** The core's own message (English), shown as a detail line under the sentence; `null` when there is none. */
  detail: string | null;
  /**
   * Embedder only: `true` when the user should learn that memory search falls back to keywords
   * (`engineErrors.embedderImpact`). Always `false` for the chat slot.
   */
  keywordFallback: boolean;
  /**
   * `true` when the user should read that the embedding model is downloaded once (connect and
   * retry): embedder download or load failures, or an uncoded one. (A packager can avoid it with
   * the README's offline install option; the panel never sends users to the README.)
   */
  offlineHint: boolean;
}

/** `true` when `value` is one of the codes in `ENGINE_ERROR_CODES`. */
export function isEngineErrorCode(value: unknown): value is EngineErrorCode {
  return isErrorCode('engine', value);
}

/**
 * The code of a thrown error, when it has one. `@webext-core/messaging` rebuilds a handler's
 * error on the receiving side with its own properties (`EngineError.code` survives the trip), so
 * a rejected `engine.load*` request carries the code.
 * @returns the code, or `null` for errors without a known code (connection errors, plain `Error`s).
 */
export function errorCodeOf(error: unknown): EngineErrorCode | null {
  if (typeof error !== 'object' || error === null || !('code' in error)) return null;
  return isEngineErrorCode(error.code) ? error.code : null;
}

/**
 * Maps one engine failure to what the UI shows.
 * @param slot the engine that failed.
 * @param code the status's `errorCode` (or `errorCodeOf(thrown)`); `null` or an unknown string
 *   selects the generic `unknown` sentence.
 * @param message the core's message; blank messages give `detail: null`.
 */
export function engineErrorView(slot: EngineSlot, code: EngineErrorCode | string | null, message: string | null): EngineErrorView {
  const known = isEngineErrorCode(code) ? code : null;
  const key = `engineErrors.${slot}.${known ?? 'unknown'}` as TranslationKey;
  const detail = message && message.trim() ? message.trim() : null;
  const embedder = slot === 'embedder';
  return {
    key,
    detail,
    keywordFallback: embedder,
    offlineHint: embedder && (known === null || known === 'download' || known === 'load'),
  };
}
