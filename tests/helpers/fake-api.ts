/**
 * A fake of the side panel's messaging (`src/ui/state/api.ts`) for the UI store tests: `request`
 * records every call and answers from per-type handlers (a handler may throw, or return a promise
 * the test resolves later); `subscribe` registers listeners that `emit` replays. The core itself
 * cannot run behind the panel's messaging in Node, so this is the boundary faked.
 */
import { DEFAULT_STRATEGY } from '../../src/model/strategies';
import type { Settings } from '../../src/model/settings';
import type { DataOf, EventType, ReplyOf, Request, RequestType, StoreApi, Subscribe } from '../../src/ui/state/api';

/** Answers one request type: its data → the reply (or a promise of it); throw to fail. */
export type FakeHandler<K extends RequestType> = (data: DataOf<K>) => ReplyOf<K> | Promise<ReplyOf<K>>;

/** The fake api and its records. */
export interface FakeApi extends StoreApi {
  /** Every request in order: type and a copy of its data. */
  calls: { type: RequestType; data: unknown }[];
  /** Sets the handler of a request type (requests without one reject with "no handler"). */
  on<K extends RequestType>(type: K, handler: FakeHandler<K>): void;
  /** Delivers an event to its current listeners. */
  emit<K extends EventType>(type: K, data: DataOf<K>): void;
  /** Number of listeners registered now for `type`. */
  listeners(type: EventType): number;
  /** The requests of one type (their data). */
  callsOf<K extends RequestType>(type: K): DataOf<K>[];
}

/** Creates a fake api with no handlers. */
export function createFakeApi(): FakeApi {
  const handlers = new Map<RequestType, (data: unknown) => unknown>();
  const listeners = new Map<EventType, Set<(data: unknown) => void>>();
  const calls: FakeApi['calls'] = [];
  const request = (async (type: RequestType, data?: unknown) => {
    calls.push({ type, data: data === undefined ? undefined : structuredClone(data) });
    const handler = handlers.get(type);
    if (!handler) throw new Error(`no handler for ${type}`);
    return handler(data);
  }) as Request;
  const subscribe = ((type: EventType, handler: (data: unknown) => void) => {
    const set = listeners.get(type) ?? new Set();
    listeners.set(type, set);
    set.add(handler);
    return () => set.delete(handler);
  }) as Subscribe;
  return {
    request,
    subscribe,
    calls,
    on(type, handler) {
      handlers.set(type, handler as (data: unknown) => unknown);
    },
    emit(type, data) {
      for (const listener of listeners.get(type) ?? []) listener(data);
    },
    listeners: (type) => listeners.get(type)?.size ?? 0,
    callsOf: <K extends RequestType>(type: K) => calls.filter((c) => c.type === type).map((c) => c.data as DataOf<K>),
  };
}

/** A promise with its resolve/reject outside, for replies the test releases later. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Settings as the core would answer `settings.get` (CPU engine, keep forever, English), with `over` applied. */
export function settingsFixture(over: Partial<Settings> = {}): Settings {
  return {
    preferredEngine: 'wllama',
    webllmModelId: null,
    wllamaSource: null,
    embeddingModelId: 'e5',
    defaultStrategy: DEFAULT_STRATEGY,
    maxAnswerTokens: 512,
    memoryTopK: 5,
    episodicRetentionDays: null,
    locale: 'en',
    blockedSites: [],
    ...over,
  };
}
