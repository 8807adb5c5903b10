/**
 * The long-term memory facade the chat core uses (`LongTermMemory`), and the episodic-memory job.
 *
 * After each exchange `onExchange` enqueues two persisted background jobs (src/jobs/queue.ts), so
 * the reply is never blocked and work survives a killed context:
 * - `ltm.episodic` (here): stores the round — the user message and the assistant reply — as one
 *   `episodic` memory with its source ids. Rounds are the retrieval unit that works best on
 *   LongMemEval (Wu et al., 2024: index rounds, not whole sessions), and they are what remains
 *   when no language model is available to extract facts.
 * - `ltm.extract` (`./jobs.ts`): LLM extraction of facts and consolidation.
 */
import type { MessageRecord, RecallDB } from '../../db/schema';
import type { JobQueue } from '../../jobs/queue';
import { runMemoryCommand } from './commands';
import { EXTRACT_JOB, EXTRACT_JOB_OPTIONS } from './jobs';
import { capChars } from '../../prompt/neutralize';
import { MAX_MEMORY_TEXT_CHARS, memoryHash, rememberedReply } from './text';
import { isTombstoned, recordAccess } from './store';
import type { ExchangeInput, LongTermMemory, MemoryStore, MemoryView, RetrievalQuery, RetrievedMemory } from './types';

/** The store as the facade needs it: `createMemoryStore`'s result satisfies it. */
export type SearchableStore = MemoryStore & {
  search(query: RetrievalQuery): Promise<RetrievedMemory[]>;
  /** See `LongTermStore.roundsStating`. */
  roundsStating(fact: Pick<MemoryView, 'id' | 'namespace' | 'kind' | 'text' | 'sourceMessageIds'>): Promise<MemoryView[]>;
};

/** Job type of the episodic-memory job. */
export const EPISODIC_JOB = 'ltm.episodic';
/** Job type of extraction + consolidation (handler registered by `registerExtractionJobs` of `./jobs`). */
export { EXTRACT_JOB };
/** Importance (0..1) of an episodic memory: below extracted facts (LTM-B uses 0.5–0.9). */
export const EPISODIC_IMPORTANCE = 0.3;

/** What the facade needs. `store` is `createMemoryStore`'s result. */
export interface LongTermMemoryDeps {
  store: SearchableStore;
  jobs: JobQueue;
  db: RecallDB;
  /** Clock (ms epoch), default `Date.now`. */
  now?: () => number;
}

/**
 * Creates the facade.
 * - `retrieve`: the store's hybrid search, episodic rounds of superseded facts marked
 *   (`markPastRounds`); records an access (`lastAccessedAt`, `accessCount`)
 *   on what it returns, in the background (`flush()` resolves when those writes are done; a
 *   failed write is logged and never fails the retrieval).
 * - `onExchange`: enqueues `ltm.episodic` and `ltm.extract` (with `EXTRACT_JOB_OPTIONS`) for the
 *   exchange, deduplicated per assistant message while queued. Returns once both are persisted.
 * - `runCommand`: "remember …" / "forget …" / "记住…" / "忘记…" (see `./commands.ts`).
 */
export function createLongTermMemory(deps: LongTermMemoryDeps): LongTermMemory & { flush(): Promise<void> } {
  const now = deps.now ?? Date.now;
  let accessWrites: Promise<void> = Promise.resolve();
  return {
    async retrieve(query) {
      const t = query.now ?? now();
      const results = await markPastRounds(deps.db, await deps.store.search({ ...query, now: t }), t);
      // Written in the background: the prompt does not wait for the bookkeeping.
      const ids = results.map((r) => r.memory.id);
      const at = now();
      accessWrites = accessWrites
        .then(() => recordAccess(deps.db, ids, at))
        .catch((error: unknown) => console.warn('[ltm] could not record memory accesses:', error));
      return results;
    },
    flush: () => accessWrites,
    async onExchange(input) {
      checkExchange(input);
      await deps.jobs.enqueue(EPISODIC_JOB, input, { dedupeKey: `${EPISODIC_JOB}:${input.assistantMessageId}` });
      await deps.jobs.enqueue(EXTRACT_JOB, input, { ...EXTRACT_JOB_OPTIONS, dedupeKey: `${EXTRACT_JOB}:${input.assistantMessageId}` });
    },
    runCommand(text, context) {
      return runMemoryCommand(deps.store, text, { ...context, now: now() });
    },
  };
}

/**
 * Sets `pastSince` on each episodic round of `results` from which a fact was extracted that a
 * contradiction has closed by `at` (`supersededBy` set, `validUntil <= at`): the earliest such
 * `validUntil`. One indexed read over the rounds' source message ids. Returns new objects.
 */
export async function markPastRounds(db: RecallDB, results: RetrievedMemory[], at: number): Promise<RetrievedMemory[]> {
  const rounds = results.filter((r) => r.memory.kind === 'episodic' && r.memory.sourceMessageIds.length > 0);
  if (rounds.length === 0) return results;
  const facts = await db.memories
    .where('sourceMessageIds')
    .anyOf([...new Set(rounds.flatMap((r) => r.memory.sourceMessageIds))])
    .filter((m) => m.kind !== 'episodic' && m.supersededBy !== undefined && m.validUntil !== null && m.validUntil <= at)
    .toArray();
  if (facts.length === 0) return results;
  return results.map((r) => {
    if (r.memory.kind !== 'episodic') return r;
    const ids = new Set(r.memory.sourceMessageIds);
    const closed = facts.filter((f) => f.namespace === r.memory.namespace && f.sourceMessageIds.some((id) => ids.has(id))).map((f) => f.validUntil!);
    return closed.length > 0 ? { ...r, memory: { ...r.memory, pastSince: Math.min(...closed) } } : r;
  });
}

function checkExchange(input: ExchangeInput): void {
  for (const key of ['conversationId', 'namespace', 'userMessageId', 'assistantMessageId'] as const) {
    if (typeof input?.[key] !== 'string' || !input[key]) throw new Error(`Exchange is missing "${key}"`);
  }
}

/**
 * Text of an episodic memory: `User: …\nAssistant: …` (English role labels: they are stop words
 * for the lexical index and the prompt assembler shows memories to the model, not to the user;
 * the messages themselves are kept verbatim, never translated). The assistant part is left out
 * when the reply is missing, failed, stopped by the user or empty (`rememberedReply`).
 */
export function episodicText(user: MessageRecord, assistant: MessageRecord | undefined): string {
  // Each side gets half of MAX_MEMORY_TEXT_CHARS (minus its label and "…"), so the round always fits the store.
  const half = Math.floor(MAX_MEMORY_TEXT_CHARS / 2) - 16;
  const parts = [`User: ${capChars(user.content.trim(), half)}`];
  const reply = rememberedReply(assistant);
  if (reply) parts.push(`Assistant: ${capChars(reply, half)}`);
  return parts.join('\n');
}

/**
 * Registers the `ltm.episodic` handler: stores the exchange's round as an `episodic` memory
 * (kind `episodic`, importance `EPISODIC_IMPORTANCE`, `createdAt` = `validFrom` = the user
 * message's time, source conversation and both message ids). When the same text is already
 * stored (an exact duplicate, e.g. "Good morning" / "Good morning!"), the existing memory gains
 * the new message ids (history event `MERGE`) instead of a second copy.
 * Idempotent (a resumed job finds the memory it already stored, by source message id); a round
 * whose text the user deleted is not stored again (tombstone). An
 * exchange whose user message no longer exists (conversation deleted meanwhile) stores nothing.
 * @throws Error for a malformed payload (the queue marks the job failed after its retries).
 */
export function registerEpisodicJobs(jobs: JobQueue, deps: { store: MemoryStore; db: RecallDB; now?: () => number }): void {
  jobs.register<ExchangeInput>(EPISODIC_JOB, async (input, { signal }) => {
    checkExchange(input);
    const [user, assistant] = await deps.db.messages.bulkGet([input.userMessageId, input.assistantMessageId]);
    if (!user || !user.content.trim()) return;
    const existing = await deps.db.memories
      .where('sourceMessageIds')
      .equals(user.id)
      .filter((m) => m.kind === 'episodic' && m.namespace === input.namespace)
      .first();
    if (existing) return;
    signal.throwIfAborted();
    const text = episodicText(user, assistant);
    // The user deleted this round (or forgot what it says): a re-run must not bring it back.
    if (await isTombstoned(deps.db, input.namespace, memoryHash(text))) return;
    const source = `conversation:${input.conversationId}`;
    const sourceMessageIds = assistant ? [user.id, assistant.id] : [user.id];
    const { memory, created } = await deps.store.add(
      {
        namespace: input.namespace,
        kind: 'episodic',
        text,
        importance: EPISODIC_IMPORTANCE,
        validFrom: user.createdAt,
        createdAt: user.createdAt,
        sourceConversationId: input.conversationId,
        sourceMessageIds,
      },
      source,
    );
    // The same exchange text again (an exact duplicate): keep one memory that cites every occurrence.
    if (!created && sourceMessageIds.some((id) => !memory.sourceMessageIds.includes(id))) {
      await deps.store.update(memory.id, { sourceMessageIds: [...new Set([...memory.sourceMessageIds, ...sourceMessageIds])] }, source, 'MERGE');
    }
  });
}
