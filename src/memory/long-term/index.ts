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
import type { RecallDB } from '../../db/schema';
import type { MemoryRecord, MemoryView, MessageRecord, SpeakerNames } from '../../model/records';
import { CitingReads, expandNeighbours } from './retrieval/neighbours';
import { z } from 'zod';
import { defineJob, enqueueJob, registerJobs } from '../../jobs/descriptor';
import type { JobQueue } from '../../jobs/queue';
import { runMemoryCommand } from './commands';
import { EXTRACT_JOB, extractJob } from './jobs';
import { capChars } from '../../prompt/neutralize';
import { memoryHash, rememberedReply } from './text';
import { ROUND_LABELS } from '../../text/speakers';
import { MAX_MEMORY_TEXT_CHARS } from '../../model/memory';
import { recordAccesses, tombstonedHashes } from './store';
import { supersedeEarlierRounds } from './consolidation/supersede';
import type { ExchangeInput, LongTermMemory, LongTermStore, NewMemory } from './types';
import type { RetrievedMemory } from '../../model/context';

/** Job type of the episodic-memory job. */
export const EPISODIC_JOB = 'ltm.episodic';
/** Job type of extraction + consolidation (handler registered by `registerExtractionJobs` of `./jobs`). */
export { EXTRACT_JOB };
/** Importance (0..1) of an episodic memory: below extracted facts (LTM-B uses 0.5–0.9). */
export const EPISODIC_IMPORTANCE = 0.3;

/** What the facade needs. `store` is `createMemoryStore`'s result. */
export interface LongTermMemoryDeps {
  store: LongTermStore;
  jobs: JobQueue;
  db: RecallDB;
  /** Clock (ms epoch), default `Date.now`. */
  now?: () => number;
}

/**
 * How long (ms) retrieval accesses are collected before they are written in one batch; when a
 * turn is running then (`JobQueue.foregroundActive`: the chat turn's retrieval, whose turn then
 * streams its reply), once that turn has ended. So the write is never on a turn's critical path,
 * and lands while the user reads the reply. It was 1,500 ms, a guess at how long a user takes to
 * type, before the write waited for the turn: a turn's retrieval is now written right after it.
 */
export const ACCESS_WRITE_DELAY_MS = 250;

/**
 * Creates the facade.
 * - `retrieve`: the store's hybrid search, each episodic round with its adjacent rounds
 *   (`expandNeighbours`: one unit, never two entries), episodic rounds of superseded facts marked
 *   (`markPastRounds`, neighbours included); records an access (`lastAccessedAt`, `accessCount`) on what it returns,
 *   in the background: accesses are collected for `ACCESS_WRITE_DELAY_MS` and written in one
 *   transaction (`recordAccesses`); `flush()` writes what is collected now and resolves when
 *   every access write is done (a failed write is logged and never fails the retrieval).
 * - `onExchange`: enqueues `ltm.episodic` and `ltm.extract` (`episodicJob`, `extractJob`) for the
 *   exchange, deduplicated per assistant message while queued. Returns once both are persisted.
 * - `runCommand`: "remember …" / "forget …" / "记住…" / "忘记…" (see `./commands.ts`).
 */
export function createLongTermMemory(deps: LongTermMemoryDeps): LongTermMemory & { flush(): Promise<void> } {
  const now = deps.now ?? Date.now;
  let accessWrites: Promise<void> = Promise.resolve();
  /** Accesses not written yet: memory id → how many retrievals returned it, and the latest time. */
  let pending = new Map<string, { count: number; at: number }>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const writePending = (): Promise<void> => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const batch = pending;
    pending = new Map();
    accessWrites = accessWrites
      .then(() => recordAccesses(deps.db, batch))
      .catch((error: unknown) => console.warn('[ltm] could not record memory accesses:', error));
    return accessWrites;
  };
  return {
    async retrieve(query) {
      const t = query.now ?? now();
      // Neighbour expansion before marking: the adjacent rounds get their "past" marks too.
      // One set of citing reads for both steps: the marks reuse what the expansion read (`CitingReads`).
      const citing = new CitingReads(deps.db);
      const ranked = await deps.store.search({ ...query, now: t });
      query.onRanked?.(ranked);
      const found = await expandNeighbours(deps.db, ranked, { now: t, citing });
      const results = await markPastRounds(deps.db, found, t, citing);
      // Written later, in one batch: the prompt does not wait for the bookkeeping.
      const at = now();
      for (const id of new Set(results.map((r) => r.memory.id))) {
        const seen = pending.get(id);
        pending.set(id, { count: (seen?.count ?? 0) + 1, at: Math.max(seen?.at ?? at, at) });
      }
      if (pending.size > 0 && timer === null) {
        // A turn running when it is due (a quick follow-up, a regenerate) goes first: written once it has ended.
        timer = setTimeout(() => void deps.jobs.whenForegroundIdle().then(writePending), ACCESS_WRITE_DELAY_MS);
        (timer as { unref?: () => void }).unref?.(); // Node: a pending write does not keep the process alive
      }
      return results;
    },
    flush: writePending,
    async onExchange(input) {
      checkExchange(input);
      await enqueueJob(deps.jobs, episodicJob, input);
      await enqueueJob(deps.jobs, extractJob, input);
    },
    runCommand(text, context) {
      return runMemoryCommand(deps.store, text, { ...context, now: now() });
    },
  };
}

/**
 * Sets `pastSince` on each episodic round of `results` (and of their `neighbours`) from which a fact was extracted that a
 * contradiction has closed by `at` (`supersededBy` set, `validUntil <= at`): the earliest such
 * `validUntil`. One keyed index read per source message id of the rounds, in one transaction,
 * except those `citing` already holds (the retrieval's neighbour expansion read them; no transaction when it holds them all). Returns new objects.
 */
export async function markPastRounds(db: RecallDB, results: RetrievedMemory[], at: number, citing = new CitingReads(db)): Promise<RetrievedMemory[]> {
  const views = results.flatMap((r) => [
    r.memory,
    ...(r.neighbours?.before ? [r.neighbours.before] : []),
    ...(r.neighbours?.after ? [r.neighbours.after] : []),
  ]);
  const rounds = views.filter((m) => m.kind === 'episodic' && m.sourceMessageIds.length > 0);
  if (rounds.length === 0) return results;
  // Keyed index reads in one transaction (on the turn's path: `anyOf` would walk a key cursor).
  const ids = [...new Set(rounds.flatMap((m) => m.sourceMessageIds))];
  // No transaction when `citing` holds every read already (a retrieval whose neighbours are hits).
  const readAll = () => Promise.all(ids.map((id) => citing.of(id)));
  const found = ids.every((id) => citing.has(id)) ? await readAll() : await db.transaction('r', db.memories, readAll);
  const unique = new Map(found.flat().map((m) => [m.id, m]));
  const facts = [...unique.values()].filter((m) => m.kind !== 'episodic' && m.supersededBy !== undefined && m.validUntil !== null && m.validUntil <= at);
  if (facts.length === 0) return results;
  const mark = <M extends MemoryView>(m: M): M => {
    if (m.kind !== 'episodic') return m;
    const ids = new Set(m.sourceMessageIds);
    const closed = facts.filter((f) => f.namespace === m.namespace && f.sourceMessageIds.some((id) => ids.has(id))).map((f) => f.validUntil!);
    return closed.length > 0 ? { ...m, pastSince: Math.min(...closed) } : m;
  };
  return results.map((r) => {
    const memory = mark(r.memory);
    const before = r.neighbours?.before ? mark(r.neighbours.before) : undefined;
    const after = r.neighbours?.after ? mark(r.neighbours.after) : undefined;
    if (memory === r.memory && before === r.neighbours?.before && after === r.neighbours?.after) return r;
    return { ...r, memory, ...(r.neighbours ? { neighbours: { ...(before ? { before } : {}), ...(after ? { after } : {}) } } : {}) };
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
  const parts = [`${ROUND_LABELS.user}: ${capChars(user.content.trim(), half)}`];
  const reply = rememberedReply(assistant);
  if (reply) parts.push(`${ROUND_LABELS.assistant}: ${capChars(reply, half)}`);
  return parts.join('\n');
}

/** The named speakers of a round's messages (`MessageRecord.speaker`), as the memory's `speakers` field; `{}` when none is named. */
function speakersOf(user: MessageRecord, assistant: MessageRecord | undefined): { speakers?: SpeakerNames } {
  const speakers: SpeakerNames = {};
  if (user.speaker) speakers.user = user.speaker;
  if (assistant?.speaker) speakers.assistant = assistant.speaker;
  return speakers.user || speakers.assistant ? { speakers } : {};
}

/**
 * Registers the `ltm.episodic` handler: stores the exchange's round as an `episodic` memory
 * (kind `episodic`, importance `EPISODIC_IMPORTANCE`, `createdAt` = `validFrom` = the user
 * message's time, source conversation and both message ids, the messages' named speakers as
 * `speakers`). When the same text is already
 * stored (an exact duplicate, e.g. "Good morning" / "Good morning!"), the existing memory gains
 * the new message ids (history event `MERGE`) instead of a second copy.
 * Idempotent (a resumed job finds the memory it already stored, by source message id); a round
 * whose text the user deleted is not stored again (tombstone). An
 * exchange whose user message no longer exists (conversation deleted meanwhile) stores nothing.
 * @throws Error for a malformed payload (the queue marks the job failed after its retries).
 */
export function registerEpisodicJobs(jobs: JobQueue, deps: { store: LongTermStore; db: RecallDB; now?: () => number }): void {
  registerJobs(jobs, [episodicJob], deps);
}

const missing = (key: keyof ExchangeInput) => `Exchange is missing "${key}"`;
const exchangeField = (key: keyof ExchangeInput) => z.string({ error: missing(key) }).min(1, { error: missing(key) });

/**
 * The `ltm.episodic` job (see `registerEpisodicJobs`). Payload `ExchangeInput` (a missing field
 * fails with `Exchange is missing "<field>"`, retried like any failure); 5 attempts; coalesced
 * per assistant message while queued (`onExchange` enqueues it with the same key).
 */
export const episodicJob = defineJob<ExchangeInput, { store: LongTermStore; db: RecallDB }>({
  type: EPISODIC_JOB,
  payload: z.object(
    {
      conversationId: exchangeField('conversationId'),
      namespace: exchangeField('namespace'),
      userMessageId: exchangeField('userMessageId'),
      assistantMessageId: exchangeField('assistantMessageId'),
    },
    { error: missing('conversationId') },
  ),
  invalidPayload: 'retry',
  dedupeKey: (input) => `${EPISODIC_JOB}:${input.assistantMessageId}`,
  run: (input, { signal }, deps) => storeEpisodes(deps, [input], signal),
});

/**
 * The work of the `ltm.episodic` job for many exchanges at once (same rules, same results as one
 * job per exchange, in order): the messages are read in one `bulkGet`, memories already stored
 * for them in one read transaction (keyed index reads), and the new rounds stored with one `addMany` (one embedding
 * call, one transaction) when the store has it. Exact duplicates — of a stored memory or of an
 * earlier exchange of the batch — add their message ids to the memory they repeat (`MERGE`).
 * Rounds whose text the user deleted or forgot (tombstoned) are not stored again.
 * @throws Error for a malformed exchange (nothing is written), or what the store throws.
 */
export async function storeEpisodes(deps: { store: LongTermStore; db: RecallDB }, inputs: readonly ExchangeInput[], signal?: AbortSignal): Promise<void> {
  inputs.forEach(checkExchange);
  if (inputs.length === 0) return;
  const rows = await deps.db.messages.bulkGet(inputs.flatMap((i) => [i.userMessageId, i.assistantMessageId]));
  const userIds = inputs.map((i) => i.userMessageId);
  const existing = (
    await deps.db.transaction('r', deps.db.memories, () => Promise.all(userIds.map((id) => deps.db.memories.where('sourceMessageIds').equals(id).toArray())))
  ).flat();
  const done = new Set(existing.filter((m) => m.kind === 'episodic').flatMap((m) => m.sourceMessageIds.map((id) => `${m.namespace}\u0000${id}`)));
  let rounds: { input: ExchangeInput; memory: NewMemory }[] = [];
  inputs.forEach((input, i) => {
    const user = rows[2 * i];
    const assistant = rows[2 * i + 1];
    if (!user || !user.content.trim()) return;
    const key = `${input.namespace}\u0000${user.id}`;
    if (done.has(key)) return; // already stored (a resumed job)
    done.add(key);
    rounds.push({
      input,
      memory: {
        namespace: input.namespace,
        kind: 'episodic',
        text: episodicText(user, assistant),
        importance: EPISODIC_IMPORTANCE,
        validFrom: user.createdAt,
        createdAt: user.createdAt,
        sourceConversationId: input.conversationId,
        sourceMessageIds: assistant ? [user.id, assistant.id] : [user.id],
        ...speakersOf(user, assistant),
      },
    });
  });
  signal?.throwIfAborted();
  // The user deleted a round (or forgot what it says): a re-run must not bring it back.
  const tombstoned = new Set<string>();
  for (const namespace of new Set(rounds.map((r) => r.input.namespace))) {
    const hashes = rounds.filter((r) => r.input.namespace === namespace).map((r) => memoryHash(r.memory.text));
    for (const hash of await tombstonedHashes(deps.db, namespace, hashes)) tombstoned.add(`${namespace}\u0000${hash}`);
  }
  if (tombstoned.size > 0) rounds = rounds.filter((r) => !tombstoned.has(`${r.input.namespace}\u0000${memoryHash(r.memory.text)}`));
  if (rounds.length === 0) return;
  const source = (r: (typeof rounds)[number]) => `conversation:${r.input.conversationId}`;
  // One batch per source (the history records it); rounds of one conversation usually share it.
  const results: { memory: MemoryRecord; created: boolean }[] = [];
  if (rounds.every((r) => source(r) === source(rounds[0]!))) {
    results.push(
      ...(await deps.store.addMany(
        rounds.map((r) => r.memory),
        source(rounds[0]!),
      )),
    );
  } else {
    for (const r of rounds) results.push(await deps.store.add(r.memory, source(r)));
  }
  // Rounds that restate an earlier one with another value supersede it (`consolidation/supersede.ts`), in the order they were said.
  for (const [i, { memory, created }] of results.entries()) if (created) await supersedeEarlierRounds(deps.store, memory, source(rounds[i]!));
  // The same exchange text again (an exact duplicate): keep one memory that cites every occurrence.
  const cited = new Map<string, string[]>();
  for (const [i, { memory, created }] of results.entries()) {
    const ids = rounds[i]!.memory.sourceMessageIds!;
    if (created) {
      cited.set(memory.id, memory.sourceMessageIds);
      continue;
    }
    const current = cited.get(memory.id) ?? memory.sourceMessageIds;
    if (ids.every((id) => current.includes(id))) continue;
    const merged = [...new Set([...current, ...ids])];
    cited.set(memory.id, merged);
    await deps.store.update(memory.id, { sourceMessageIds: merged }, source(rounds[i]!), 'MERGE');
  }
}
