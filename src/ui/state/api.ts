/**
 * The side panel's only door to the core: typed requests over `src/messaging/protocol.ts`
 * and one fan-out listener per event type.
 *
 * - `connect()` sends `core.ensure` (the service worker creates the offscreen engine host)
 *   and retries politely with backoff until it answers; nothing else is sent before that.
 * - `request()` sends one request. When the core is unreachable (host restarted) and the
 *   request is safe to repeat (`retry: true`, used for reads), it reconnects and retries once.
 *   Requests that change state are never repeated automatically.
 * - `subscribe()` adds a handler for an `event.*` broadcast. `@webext-core/messaging` allows
 *   one listener per type and context, so the first subscription registers it and fans out.
 *   Events from anything but this extension's offscreen document or service worker are ignored.
 */
import browser from 'webextension-polyfill';
import { assertSender, onMessage, sendMessage, type ProtocolMap } from '../../messaging/protocol';
import { ensureCore, isConnectionError } from '../lib/connect';

/** Request types (everything but `event.*`). */
export type RequestType = Exclude<keyof ProtocolMap, `event.${string}`>;
/** Event types broadcast by the core. */
export type EventType = Extract<keyof ProtocolMap, `event.${string}`>;
/** The data argument of a message type (`undefined` when it takes none). */
export type DataOf<K extends keyof ProtocolMap> = Parameters<ProtocolMap[K]>[0];
/** The reply of a request type. */
export type ReplyOf<K extends keyof ProtocolMap> = ReturnType<ProtocolMap[K]>;

/** Connection progress, for the "starting…" screen. */
export interface ConnectionProgress {
  /** Failed attempts so far. */
  attempts: number;
  /** Message of the last failure. */
  lastError: string | null;
}

type Untyped = (type: string, data?: unknown) => Promise<unknown>;
const untypedSend = sendMessage as unknown as Untyped;

/**
 * Sends a message with its data copied to plain JSON first: protocol data is JSON by
 * definition, and Svelte's reactive proxies must not reach the messaging layer.
 */
const send: Untyped = (type, data) => untypedSend(type, data === undefined ? undefined : JSON.parse(JSON.stringify(data)));

let connecting: Promise<void> | null = null;
const progressListeners = new Set<(progress: ConnectionProgress) => void>();

/**
 * Makes sure the core is running: sends `core.ensure` until it answers (250 ms doubling to 4 s
 * between tries, forever). Concurrent callers share one attempt.
 * @param onProgress told after each failed attempt.
 */
export function connect(onProgress?: (progress: ConnectionProgress) => void): Promise<void> {
  if (onProgress) progressListeners.add(onProgress);
  connecting ??= ensureCore(() => send('core.ensure'), {
    onRetry: (attempts, error) => {
      const lastError = error instanceof Error ? error.message : String(error);
      for (const listener of progressListeners) listener({ attempts, lastError });
    },
  })
    .then(() => undefined)
    .finally(() => {
      connecting = null;
    });
  return connecting;
}

/** Options of `request`. */
export interface RequestOptions {
  /** Repeat once after reconnecting when the core was unreachable (only for requests safe to repeat). */
  retry?: boolean;
}

/**
 * Sends one request to the core and returns its reply.
 * @throws the handler's error (deserialized, with its message), or a connection error.
 */
export async function request<K extends RequestType>(type: K, data?: DataOf<K>, options: RequestOptions = {}): Promise<ReplyOf<K>> {
  try {
    return (await send(type, data)) as ReplyOf<K>;
  } catch (error) {
    if (!options.retry || !isConnectionError(error)) throw error;
    await connect();
    return (await send(type, data)) as ReplyOf<K>;
  }
}

/**
 * The typed request call the UI stores get injected (the real one is `request` below): the
 * message type, its data and reply as `ProtocolMap` declares them.
 * @throws the handler's error, or a connection error.
 */
export type Request = <K extends RequestType>(type: K, data?: DataOf<K>, options?: RequestOptions) => Promise<ReplyOf<K>>;
/**
 * Wraps `request` so that every failed request is shown to `onFailure` before its caller gets the
 * error (rethrown unchanged): the panel's one place that sees every failure, whichever store sent
 * it. The composition root uses it to switch to the unlock screen on the vault's `locked` error
 * (issue 16), so no store checks for it per call.
 * @param onFailure called synchronously with the error; it must not throw.
 */
export function observeFailures(request: Request, onFailure: (error: unknown) => void): Request {
  return (async (type, data, options) => {
    try {
      return await request(type, data, options);
    } catch (error) {
      onFailure(error);
      throw error;
    }
  }) as Request;
}
/** Registers a handler for one `event.*` type and returns the function that removes it (the real one is `subscribe` below). */
export type Subscribe = <K extends EventType>(type: K, handler: (data: DataOf<K>) => void) => () => void;
/** What every UI store is created with: the typed protocol call and the event subscription. */
export interface StoreApi {
  request: Request;
  subscribe: Subscribe;
}

type Handler<K extends EventType> = (data: DataOf<K>) => void;
const handlers = new Map<EventType, Set<(data: never) => void>>();

/**
 * Calls `handler` with the data of every `type` event from the core.
 * @returns a function that removes the handler.
 */
export function subscribe<K extends EventType>(type: K, handler: Handler<K>): () => void {
  let set = handlers.get(type);
  if (!set) {
    const created = new Set<(data: never) => void>();
    handlers.set(type, created);
    set = created;
    const register = onMessage as unknown as (type: string, listener: (message: { data: unknown; sender: Parameters<typeof assertSender>[0] }) => void) => void;
    register(type, (message) => {
      try {
        assertSender(message.sender, ['offscreen', 'background'], browser.runtime.id);
      } catch {
        return;
      }
      for (const listener of created) (listener as (data: unknown) => void)(message.data);
    });
  }
  set.add(handler as (data: never) => void);
  return () => set.delete(handler as (data: never) => void);
}
