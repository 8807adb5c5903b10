/**
 * A small harness around the real short-term strategies for tests and the benchmark: a Dexie
 * database (fake-indexeddb in Node), the real persisted job queue, `StrategyDeps`, and helpers to
 * store exchanges the way the chat core does (user message, then reply, consecutive seqs).
 */
import { RecallDB } from '../../src/db/schema';
import type { ChatEngine } from '../../src/engines/types';
import type { TokenCounter } from '../../src/model/tokens';
import { createJobQueue, type JobQueue } from '../../src/jobs/queue';
import type { StrategyConfig } from '../../src/model/strategies';
import type { StrategyDeps } from '../../src/memory/short-term';

/**
 * A counter whose tokens are `tokensPerWord` × whitespace-separated words, so expected contexts
 * can be computed by hand (100 per word lets limits respect the UI minimum of 200 tokens).
 * `perMessageOverhead` and `replyPrimerTokens` as given (default 0).
 */
export function wordCounter(perMessageOverhead = 0, replyPrimerTokens = 0, tokensPerWord = 1): TokenCounter {
  return {
    id: 'test:words',
    exact: true,
    count: (text) => (text.trim() ? text.trim().split(/\s+/u).length * tokensPerWord : 0),
    perMessageOverhead,
    replyPrimerTokens,
  };
}

/** Everything a strategy test needs. */
export interface Harness {
  db: RecallDB;
  jobs: JobQueue;
  deps: StrategyDeps;
  /** Replaces the engine returned by `deps.engine()` (`null`: no model loaded). */
  setEngine(engine: ChatEngine | null): void;
  /** Replaces the counter returned by `deps.tokens()`. */
  setCounter(counter: TokenCounter): void;
  /** Stores a conversation row (namespace default `'default'`). */
  addConversation(id: string, strategy: StrategyConfig, namespace?: string): Promise<void>;
  /** Stores one exchange (user message + reply) after the last message; returns their ids. */
  addExchange(conversationId: string, user: string, assistant: string): Promise<{ userMessageId: string; assistantMessageId: string }>;
  /** Stores a single message (e.g. a failed reply). */
  addMessage(conversationId: string, role: 'user' | 'assistant', content: string, status?: 'complete' | 'aborted' | 'error'): Promise<string>;
  close(): Promise<void>;
}

/**
 * Creates a harness on a fresh database.
 * @param options.counter initial token counter (default `wordCounter()`).
 * @param options.searchExchanges the vector strategy's search (default: returns nothing).
 * @param options.now clock (default `Date.now`).
 */
export function createHarness(
  options: { counter?: TokenCounter; engine?: ChatEngine | null; searchExchanges?: StrategyDeps['searchExchanges']; now?: () => number; dbName?: string } = {},
): Harness {
  const db = new RecallDB(options.dbName ?? `short-term-${crypto.randomUUID()}`);
  const now = options.now ?? Date.now;
  const jobs = createJobQueue(db, { now });
  let engine: ChatEngine | null = options.engine ?? null;
  let counter = options.counter ?? wordCounter();
  const deps: StrategyDeps = {
    db,
    jobs,
    now,
    tokens: () => counter,
    engine: () => engine,
    searchExchanges: options.searchExchanges ?? (async () => []),
  };
  const nextSeq = async (conversationId: string) => {
    const last = await db.messages.where('[conversationId+seq]').between([conversationId, -Infinity], [conversationId, Infinity]).last();
    return last ? last.seq + 1 : 0;
  };
  const addMessage: Harness['addMessage'] = async (conversationId, role, content, status = 'complete') => {
    const id = crypto.randomUUID();
    await db.messages.add({ id, conversationId, seq: await nextSeq(conversationId), role, content, createdAt: now(), status });
    return id;
  };
  return {
    db,
    jobs,
    deps,
    setEngine: (e) => void (engine = e),
    setCounter: (c) => void (counter = c),
    async addConversation(id, strategy, namespace = 'default') {
      await db.conversations.put({ id, title: id, namespace, strategy, createdAt: now(), updatedAt: now() });
    },
    async addExchange(conversationId, user, assistant) {
      const userMessageId = await addMessage(conversationId, 'user', user);
      const assistantMessageId = await addMessage(conversationId, 'assistant', assistant);
      return { userMessageId, assistantMessageId };
    },
    addMessage,
    async close() {
      await jobs.stop();
      db.close();
      await db.delete();
    },
  };
}
