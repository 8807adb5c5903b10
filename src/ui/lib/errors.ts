/**
 * What the side panel says about a failed request. The core throws coded errors
 * (`src/model/errors.ts`: `domain`, `code`, `params`, an English `message`); the messaging
 * rebuilds them here as plain `Error`s with those properties. Each code has a sentence in both
 * locale files — `errorCodes.<domain>.<code>`, and for engine codes the chat engine's sentence
 * `engineErrors.chat.<code>` — interpolated with the error's `params`. An error without a known
 * code (a connection error, a programmer error) is shown by its message.
 *
 * Plain TypeScript over the i18next instance (not the reactive wrapper), so it runs in unit tests.
 */
import type { MessageRecord } from '../../model/records';
import { codedErrorOf, type CodedError, type ErrorDomain } from '../../model/errors';
import { translate, type TranslationKey } from '../i18n/instance';
import { errorMessage } from './connect';

/** The translation key of one code: `engineErrors.chat.<code>` for the engine domain, else `errorCodes.<domain>.<code>`. */
export function errorKey(domain: ErrorDomain, code: string): TranslationKey {
  return (domain === 'engine' ? `engineErrors.chat.${code}` : `errorCodes.${domain}.${code}`) as TranslationKey;
}

/** What to show for a thrown error: the translation key and its interpolation values, or `null` for an uncoded error. */
export interface ErrorView {
  key: TranslationKey;
  params: CodedError['params'];
}

/** The view of `error` (see `ErrorView`); `null` when it carries no known domain and code. */
export function errorView(error: unknown): ErrorView | null {
  const coded = codedErrorOf(error);
  return coded ? { key: errorKey(coded.domain, coded.code), params: coded.params } : null;
}

/**
 * The sentence for `error` in the current UI language: its code's translation, or its own
 * message when it has no known code. Not reactive: call it when the error happens.
 */
export function errorText(error: unknown): string {
  const view = errorView(error);
  return view ? translate(view.key, { ...view.params }) : errorMessage(error);
}

/**
 * The sentence of a stored error reply: its engine `errorCode` (`engineErrors.chat.<code>`), else
 * its `errorInfo` (any domain, e.g. a prompt too long for the model), else the generic
 * `chat.status.error`.
 */
export function replyErrorView(message: Pick<MessageRecord, 'errorCode' | 'errorInfo'>): ErrorView {
  if (message.errorCode) return { key: errorKey('engine', message.errorCode), params: {} };
  return errorView(message.errorInfo) ?? { key: 'chat.status.error', params: {} };
}

/**
 * `true` when `error` is the vault's `locked` refusal (issue 16): the core holds no key now (the
 * lock is on and it was locked, by the user, the auto-lock or a restart). The panel shows its
 * unlock screen for it instead of a notice (`VaultStore.requestFailed`, `NoticesStore.fail`).
 */
export function isVaultLocked(error: unknown): boolean {
  const coded = codedErrorOf(error);
  return coded?.domain === 'vault' && coded.code === 'locked';
}
