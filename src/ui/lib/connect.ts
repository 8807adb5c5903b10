/**
 * Reaching the core politely. The side panel can open before the service worker has created
 * the offscreen engine host, and the host can be gone later (extension update, killed
 * context). `ensureCore` repeats `core.ensure` with capped exponential backoff until it
 * answers; `isConnectionError` tells "nobody is listening" apart from real handler errors.
 */
import { STORAGE_FULL_CODE } from '../../db/errors';

/** Delay before retry number `attempt` (1-based): 250 ms · 2^(attempt−1), capped at 4 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(250 * 2 ** Math.max(0, attempt - 1), 4_000);
}

/** Options of `ensureCore`. */
export interface EnsureOptions {
  /** Waits `ms` milliseconds (injectable for tests). Default: `setTimeout`. */
  sleep?: (ms: number) => Promise<void>;
  /** Called before each wait with the failed attempt number (1-based), its error and the delay (ms). */
  onRetry?: (attempt: number, error: unknown, delayMs: number) => void;
  /** Stops retrying; `ensureCore` then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Give up after this many attempts (default: never). */
  maxAttempts?: number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `send` (which should send `core.ensure`) until it resolves.
 * @returns the number of attempts it took (1 = first try).
 * @throws the last error after `maxAttempts`; the abort reason when `signal` aborts.
 */
export async function ensureCore(send: () => Promise<unknown>, options: EnsureOptions = {}): Promise<number> {
  const sleep = options.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt += 1) {
    options.signal?.throwIfAborted();
    try {
      await send();
      return attempt;
    } catch (error) {
      if (options.maxAttempts !== undefined && attempt >= options.maxAttempts) throw error;
      const delay = retryDelayMs(attempt);
      options.onRetry?.(attempt, error, delay);
      await sleep(delay);
    }
  }
}

/**
 * `true` when an error from `sendMessage` means the receiving context does not exist or went
 * away before answering (Chrome's runtime messaging errors, and `@webext-core/messaging`'s
 * "No response"), as opposed to an error thrown by the handler itself.
 */
export function isConnectionError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /Could not establish connection|Receiving end does not exist|message port closed|No response|Extension context invalidated/i.test(message);
}

/** The readable message of anything thrown (an `Error`'s message, else its string form). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') return error.message;
  return String(error);
}

/**
 * `true` when a rejected request failed because browser storage is full: the core throws
 * `StorageFullError` (`src/db/errors.ts`), whose `code` (`storage_full`) survives the runtime
 * messaging; the panel then shows `errorCodes.storage.storage_full` (`src/ui/lib/errors.ts`) instead of the raw English message.
 */
export function isStorageFull(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === STORAGE_FULL_CODE;
}
