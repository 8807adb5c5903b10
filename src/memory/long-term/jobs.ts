// One file (over ~300 lines): the long-term jobs share their deps, payload schemas and extraction stats.
/**
 * Background jobs of long-term memory (LTM-B), on the persisted queue of `src/jobs/queue.ts`:
 *
 * - `ltm.extract` (payload `ExchangeInput`): extraction + consolidation of one exchange. Waits
 *   (`JobDeferred`) while no language model is loaded. When the model's output stays unusable
 *   after the bounded retries of `extractMemories`, the failure is recorded (stats entry
 *   `stats.ltmExtraction` in `db.settings`, shown by the UI) and the job fails at once
 *   (`JobFailedPermanently`, `lastError` set) — nothing was written; the exchange itself is
 *   already stored as an episodic memory by LTM-A's `ltm.episodic` job. A preempted job (foreground
 *   chat turn) is aborted and re-queued by the queue; re-running is harmless (repeats are exact
 *   duplicates). Items whose text the user deleted or forgot (tombstoned) are dropped before
 *   consolidation. With review on for the namespace (`./review`), the items go to the Suggested
 *   list instead of consolidation.
 * - `ltm.reembed` (payload `{ modelId?: string }`): re-embeds memories without a vector or whose
 *   vector comes from another model (`store.reembed`, in bounded pages, resumable; each batch
 *   updates its rows and vector block slots in one transaction, so no index rebuild follows). The core queues it after a model change or an import, on start and when
 *   the embedder becomes ready if some memory lacks a vector, and whenever a memory is stored
 *   without one (see `createCore`).
 *   Waits (`JobDeferred`) while no embedder is loaded or it is not yet the requested model.
 * - `ltm.maintenance` (payload `MaintenancePayload`, usually `{}`): expiry, retention, merging
 *   (see `./maintenance.ts`); the retention comes from the `episodicRetentionDays` setting unless
 *   the payload gives it; then schedules the next run (default every 24 h).
 */
import { z } from 'zod';
import type { RecallDB } from '../../db/schema';
import { readSettings } from '../../db/settings';
import { MAINTENANCE_STATE_KEY } from '../../model/settings';
import type { ChatEngine, Embedder } from '../../engines/types';
import { defineJob, enqueueJob, registerJobs } from '../../jobs/descriptor';
import { JobDeferred, JobFailedPermanently, type JobQueue } from '../../jobs/queue';
import { parseMemoryCommand } from './commands';
import { consolidate, type ConsolidationOptions } from './consolidation';
import { GUARD_REASONS } from './extraction/guards';
import { reviewEnabled, suggestItems } from './review';
import { profileJob } from './profile-summary';
import { ExtractionError, extractMemories, type ExtractionAttemptFailure, type ExtractionOptions, type ExtractionResult } from './extraction';
import { runMaintenance, type MaintenanceReport } from './maintenance';
import type { LongTermStore } from './types';
import { tombstonedHashes } from './store';
import { memoryHash, rememberedReply } from './text';
import { JobError } from '../../model/errors';

/** Job type of extraction + consolidation (`extractJob`). */
export const EXTRACT_JOB = 'ltm.extract';
/** Job type that embeds memories lacking a vector from the current embedding model (`reembedJob`). */
export const REEMBED_JOB = 'ltm.reembed';
/** Job type of the periodic maintenance (`maintenanceJob`: merge near-duplicates, expire events, retention). */
export const MAINTENANCE_JOB = 'ltm.maintenance';

/** `db.settings` key of the extraction stats (`ExtractionStats`). */
export const EXTRACTION_STATS_KEY = 'stats.ltmExtraction';
/** `db.settings` key of the last maintenance report (`MaintenanceReport & { at }`). */
export const MAINTENANCE_STATS_KEY = 'stats.ltmMaintenance';

/**
 * One recorded extraction failure. Only why each attempt failed (`reason`, our own `message`) is
 * kept, never the model's reply: a sample of it (`replySample`) would copy the user's words (e.g.
 * "…locker code is 4711…") into the settings table, where nothing needs it (no UI shows it).
 */
export interface ExtractionFailureRecord {
  at: number;
  conversationId: string;
  userMessageId: string;
  error: string;
  attempts: Omit<ExtractionAttemptFailure, 'replySample'>[];
}

/** Running totals of extraction, for the UI (memory panel / diagnostics). */
export interface ExtractionStats {
  /** Exchanges extracted successfully. */
  succeeded: number;
  /** Exchanges whose extraction gave up. */
  failed: number;
  /** Items the model extracted (before consolidation). */
  itemsExtracted: number;
  /** Items the junk guards refused (`extraction/guards.ts`: ungrounded, injected, the assistant about itself). Absent in older stats. */
  itemsGuarded?: number;
  /** Replies that needed JSON repair. */
  repairedReplies: number;
  /** Consolidation decisions that fell back to ADD because the model's reply was unusable. */
  decisionFailures: number;
  lastRunAt: number | null;
  /** The 20 most recent failures, newest first. */
  recentFailures: ExtractionFailureRecord[];
}

const EMPTY_STATS: ExtractionStats = {
  succeeded: 0,
  failed: 0,
  itemsExtracted: 0,
  repairedReplies: 0,
  decisionFailures: 0,
  lastRunAt: null,
  recentFailures: [],
};

/** Reads the extraction stats (zeros when none were recorded). */
export async function readExtractionStats(db: RecallDB): Promise<ExtractionStats> {
  const row = await db.settings.get(EXTRACTION_STATS_KEY);
  return { ...EMPTY_STATS, ...((row?.value as Partial<ExtractionStats> | undefined) ?? {}) };
}

async function updateStats(db: RecallDB, change: (s: ExtractionStats) => void): Promise<void> {
  await db.transaction('rw', db.settings, async () => {
    const stats = await readExtractionStats(db);
    change(stats);
    await db.settings.put({ key: EXTRACTION_STATS_KEY, value: stats });
  });
}

/** Counts one successful extraction (`decisionFailures`: consolidation decisions that fell back to ADD). */
function recordSuccess(db: RecallDB, extraction: ExtractionResult, decisionFailures: number, at: number): Promise<void> {
  return updateStats(db, (s) => {
    s.succeeded += 1;
    s.itemsExtracted += extraction.items.length;
    s.itemsGuarded = (s.itemsGuarded ?? 0) + extraction.dropped.filter((d) => GUARD_REASONS.has(d.reason)).length;
    s.repairedReplies += extraction.repaired ? 1 : 0;
    s.decisionFailures += decisionFailures;
    s.lastRunAt = at;
  });
}

const exchangeSchema = z.object({
  conversationId: z.string().min(1),
  namespace: z.string().min(1),
  userMessageId: z.string().min(1),
  assistantMessageId: z.string().min(1),
});

/** Payload of `ltm.maintenance`; absent fields take the settings / defaults. */
export interface MaintenancePayload {
  episodicRetentionDays?: number | null;
  staleEventDays?: number | null;
  namespace?: string;
  /** Schedule the next run after this one (default `true`). */
  reschedule?: boolean;
}

const maintenanceSchema = z
  .object({
    episodicRetentionDays: z.number().int().min(1).nullable().optional(),
    staleEventDays: z.number().int().min(1).nullable().optional(),
    namespace: z.string().min(1).optional(),
    reschedule: z.boolean().optional(),
  })
  .default({});

/** Dependencies of the LTM-B jobs. */
export interface ExtractionJobDeps {
  db: RecallDB;
  /** The store (`createMemoryStore`). */
  store: LongTermStore;
  /** The chat engine, or `null` while none is loaded. */
  engine: () => ChatEngine | null;
  /**
   * The current embedder (`null` while none is loaded). Optional; when given, `ltm.reembed` waits
   * until it is the model named in the payload.
   */
  embedder?: () => Embedder | null;
  now?: () => number;
  /** Time between maintenance runs (ms), default 24 h. */
  maintenanceIntervalMs?: number;
  extraction?: Omit<ExtractionOptions, 'signal'>;
  consolidation?: Partial<ConsolidationOptions>;
}

/** What the LTM-B job handlers get: the registration's deps plus the queue (maintenance reschedules itself). */
export type LongTermJobDeps = ExtractionJobDeps & { jobs: JobQueue };

/**
 * `ltm.extract`: extraction + consolidation of one exchange (see module doc). Payload
 * `ExchangeInput`; a malformed payload fails at once; 2 attempts (extraction retries inside the
 * job already, so two job attempts, e.g. after a crash or an engine error, are enough);
 * coalesced per assistant message while queued.
 */
export const extractJob = defineJob<z.infer<typeof exchangeSchema>, LongTermJobDeps>({
  type: EXTRACT_JOB,
  payload: exchangeSchema,
  invalidPayload: 'fail',
  maxAttempts: 2,
  dedupeKey: (input) => `${EXTRACT_JOB}:${input.assistantMessageId}`,
  async run(input, { signal, reportProgress }, deps) {
    const { db, store } = deps;
    const now = deps.now ?? Date.now;
    const engine = deps.engine();
    if (!engine || !engine.isLoaded()) throw new JobDeferred('No language model is loaded; memory extraction waits for one.', 60_000);
    const [user, assistant] = await db.messages.bulkGet([input.userMessageId, input.assistantMessageId]);
    // The conversation was deleted meanwhile, or there is nothing to read: nothing to extract.
    if (!user || !user.content.trim()) return;
    // An explicit memory command was handled as such; extracting it could re-store what "forget" just removed.
    if (parseMemoryCommand(user.content)) return;
    reportProgress(0.05);
    // What that turn's prompt injected from memory is known already, not a new fact (`extraction/guards.ts`).
    const injected = await injectedMemoryTexts(db, input.assistantMessageId);

    let extraction;
    try {
      extraction = await extractMemories(
        engine,
        { userText: user.content, assistantText: rememberedReply(assistant), messageTime: user.createdAt, injected },
        { ...deps.extraction, signal },
      );
    } catch (error) {
      if (!(error instanceof ExtractionError)) throw error;
      await updateStats(db, (s) => {
        s.failed += 1;
        s.lastRunAt = now();
        s.recentFailures = [
          {
            at: now(),
            conversationId: input.conversationId,
            userMessageId: input.userMessageId,
            error: error.message,
            attempts: error.failures.map(({ reason, message }) => ({ reason, message })),
          },
          ...s.recentFailures,
        ].slice(0, 20);
      });
      throw new JobFailedPermanently(error.message, { cause: error });
    }
    reportProgress(0.5);

    // What the user deleted or forgot is not learned again (e.g. a re-run after a killed context).
    const tombstoned = await tombstonedHashes(
      db,
      input.namespace,
      extraction.items.map((item) => memoryHash(item.text)),
    );
    const items = extraction.items.filter((item) => !tombstoned.has(memoryHash(item.text)));
    // Review before saving (per namespace): the items wait in the Suggested list instead.
    if (await reviewEnabled(db, input.namespace)) {
      await suggestItems(db, items, {
        namespace: input.namespace,
        conversationId: input.conversationId,
        sourceMessageIds: [input.userMessageId],
        messageTime: user.createdAt,
        now: now(),
      });
      await recordSuccess(db, extraction, 0, now());
      reportProgress(1);
      return;
    }
    const result = await consolidate(items, {
      store,
      namespace: input.namespace,
      engine,
      conversationId: input.conversationId,
      sourceMessageIds: [input.userMessageId],
      messageTime: user.createdAt,
      signal,
      ...(deps.consolidation ? { options: deps.consolidation } : {}),
    });
    // "What Recall knows about me" follows these writes: the store reports them (`composeLongTermMemory`).
    await recordSuccess(db, extraction, result.llmFailures.length, now());
    reportProgress(1);
  },
});

/**
 * Texts of the long-term memories (extracted kinds, not episodic rounds) that the prompt of
 * `assistantMessageId` injected, from its stored trace; `[]` when there is no trace.
 */
export async function injectedMemoryTexts(db: RecallDB, assistantMessageId: string): Promise<string[]> {
  const trace = await db.promptTraces.get(assistantMessageId);
  return (trace?.trace.memories ?? []).filter((m) => m.kind !== 'episodic').map((m) => m.text);
}

/**
 * `ltm.reembed`: embeds memories without a vector from the current model (see module doc).
 * Payload `{ modelId? }` (anything else reads as `{}`); 5 attempts; one queued at a time.
 */
export const reembedJob = defineJob<{ modelId?: string | undefined }, LongTermJobDeps>({
  type: REEMBED_JOB,
  payload: z.object({ modelId: z.string().min(1).optional() }).catch({}),
  invalidPayload: 'fail',
  dedupeKey: () => REEMBED_JOB,
  async run({ modelId: wanted }, { signal, reportProgress }, deps) {
    const { store } = deps;
    const embedder = deps.embedder?.() ?? null;
    if (deps.embedder && !embedder) throw new JobDeferred('No embedding model is loaded; re-embedding waits for one.', 60_000);
    if (embedder && wanted && embedder.modelId !== wanted) throw new JobDeferred(`Waiting for the embedding model ${wanted} to load.`, 30_000);
    const { embedded, remaining } = await store.reembed({ signal, onProgress: (done, total) => reportProgress(total > 0 ? (0.95 * done) / total : 0.95) });
    if (remaining > 0) {
      // The store embeds nothing without an embedder: wait for one rather than fail.
      if (embedded === 0) throw new JobDeferred('No embedding model is loaded; re-embedding waits for one.', 60_000);
      throw new JobError('reembed_incomplete', `${remaining} memories still lack a vector from the current model; retrying.`, { params: { remaining } });
    }
    reportProgress(1);
  },
});

/**
 * `ltm.maintenance`: expiry, retention, merging (see module doc). Payload `MaintenancePayload`
 * (anything else reads as `{}`); 5 attempts; one queued at a time; reschedules itself.
 */
export const maintenanceJob = defineJob<MaintenancePayload, LongTermJobDeps>({
  type: MAINTENANCE_JOB,
  payload: maintenanceSchema.catch({}),
  invalidPayload: 'fail',
  dedupeKey: () => MAINTENANCE_JOB,
  async run(p, { signal, reportProgress }, deps) {
    const { db, store, jobs } = deps;
    const now = deps.now ?? Date.now;
    const retention = p.episodicRetentionDays !== undefined ? p.episodicRetentionDays : (await readSettings(db)).settings.episodicRetentionDays;
    // Memories unchanged since the last completed (or checkpointed) merge were already compared.
    const startedAt = now();
    const state = z.object({ mergedThrough: z.number() }).safeParse((await db.settings.get(MAINTENANCE_STATE_KEY))?.value);
    const report: MaintenanceReport = await runMaintenance(db, store, {
      now: startedAt,
      // The resume point is for whole-store runs; a run scoped to one namespace compares everything in it.
      ...(state.success && !p.namespace ? { mergeSince: state.data.mergedThrough } : {}),
      ...(!p.namespace
        ? { onMergeProgress: (through: number) => db.settings.put({ key: MAINTENANCE_STATE_KEY, value: { mergedThrough: through } }).then(() => undefined) }
        : {}),
      episodicRetentionDays: retention,
      ...(p.staleEventDays !== undefined ? { staleEventDays: p.staleEventDays } : {}),
      ...(p.namespace ? { namespace: p.namespace } : {}),
      signal,
      onProgress: reportProgress,
    });
    if (!p.namespace) await db.settings.put({ key: MAINTENANCE_STATE_KEY, value: { mergedThrough: startedAt } });
    await db.settings.put({ key: MAINTENANCE_STATS_KEY, value: { at: now(), ...report } });
    if (p.reschedule !== false) await enqueueJob(jobs, maintenanceJob, {}, { delayMs: deps.maintenanceIntervalMs ?? 86_400_000 });
  },
});

/** The LTM-B jobs, in registration order (`ltm.profile`: `./profile-summary`). */
export const LONG_TERM_JOBS = [extractJob, reembedJob, maintenanceJob, profileJob] as const;

/**
 * Registers `ltm.extract`, `ltm.reembed`, `ltm.maintenance` and `ltm.profile` on `jobs` (see module doc).
 * @throws when a handler for one of these types is already registered.
 */
export function registerExtractionJobs(jobs: JobQueue, deps: ExtractionJobDeps): void {
  registerJobs<LongTermJobDeps>(jobs, LONG_TERM_JOBS, { ...deps, jobs });
}
