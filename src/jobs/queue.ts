// One file (over ~300 lines): `createJobQueue` is one closure; every method shares the handler map,
// the running job, the loop, its wake timer, the pause count and the change listeners.
/**
 * A background job queue persisted in Dexie (`jobs` table). Jobs survive a killed context:
 * on `start()` any job left `running` is put back to `queued` and runs again, so handlers must
 * be idempotent. Failures are retried with exponential backoff; after `maxAttempts` a job is
 * `failed` and kept for the UI — unless its last error is an expected rejection (the model's reply
 * was unusable, `JOB_REJECTION_CODES`): then it is `done` with `outcome: 'rejected'`, counted apart
 * and never retried. One job runs at a time.
 *
 * Foreground work (a chat turn) calls `runForeground(fn)`: the queue pauses, the running job is
 * aborted and re-queued without counting an attempt, `fn` runs, then the queue resumes. This is
 * how summaries and extraction never block the user's next message on a single-model engine.
 */
import type { RecallDB } from '../db/schema';
import { codedErrorOf, JobError, RecallError } from '../model/errors';
import { isJobRejection, type JobStats } from '../model/jobs';
import type { JobRecord } from '../model/records';

/** Passed to a handler while its job runs. */
export interface JobContext {
  job: JobRecord;
  /** Aborted when the queue stops or foreground work preempts the job. */
  signal: AbortSignal;
  /** Reports progress 0..1 (stored on the job, shown in the UI). */
  reportProgress(fraction: number): void;
}

/** Runs one job. Throw to fail (retried with backoff); throw `JobDeferred` to wait without failing; `JobFailedPermanently` to fail without retries. */
export type JobHandler<P = unknown> = (payload: P, context: JobContext) => Promise<void>;

/**
 * Thrown by a handler that cannot run yet (e.g. no language model is loaded). The job is
 * re-queued after `delayMs` and the attempt is not counted.
 */
export class JobDeferred extends JobError {
  constructor(
    reason: string,
    readonly delayMs = 30_000,
  ) {
    super('deferred', reason);
    this.name = 'JobDeferred';
  }
}

/**
 * Thrown by a handler whose failure retrying cannot fix (e.g. the model's output stayed unusable
 * after the handler's own bounded retries): the job is marked `failed` at once with this message
 * as `lastError` (the user can still retry it with `retryFailed`).
 */
export class JobFailedPermanently extends RecallError {
  /** Carries the domain, code and params of `options.cause` when that is a coded error (so the user reads why), else `jobs/failed_permanently`. */
  constructor(message: string, options?: { cause?: unknown }) {
    const cause = codedErrorOf(options?.cause);
    super(cause?.domain ?? 'jobs', (cause?.code ?? 'failed_permanently') as never, message, { ...options, ...(cause ? { params: cause.params } : {}) });
    this.name = 'JobFailedPermanently';
  }
}

/** Options of `enqueue`. */
export interface EnqueueOptions {
  /** While a queued job has this key, enqueueing again returns the existing job id. */
  dedupeKey?: string;
  /** Run no earlier than this many ms from now. */
  delayMs?: number;
  /** Attempts before the job is marked failed (default 5). */
  maxAttempts?: number;
  /**
   * With `dedupeKey`: when a queued job with that key waits longer (a deferral or a backoff), move
   * its time up to this request's (`now + delayMs`), so work that can run now (e.g. the embedder
   * just became ready) does not wait out an old deferral. Default false (the existing job keeps its time).
   */
  advance?: boolean;
}

/** The queue's public interface. */
export interface JobQueue {
  /** Registers the handler of a job type (one per type). */
  register<P>(type: string, handler: JobHandler<P>): void;
  /** Persists a job and wakes the queue. Returns the job id. */
  enqueue<P>(type: string, payload: P, options?: EnqueueOptions): Promise<string>;
  /** Resumes persisted work and starts processing. */
  start(): Promise<void>;
  /** Stops processing; the running job is aborted and re-queued. */
  stop(): Promise<void>;
  /** Runs `fn` with the queue paused (see module doc). */
  runForeground<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Whether foreground work (`runForeground`) is running now. Background work outside the queue
   * (the store's lexical snapshot) checks it to step aside for a chat turn.
   */
  foregroundActive(): boolean;
  /** Resolves once no foreground work runs (at once when none does). */
  whenForegroundIdle(): Promise<void>;
  /** Resolves when no job is runnable now (queued jobs waiting for backoff do not count). For tests and maintenance. */
  drain(): Promise<void>;
  stats(): Promise<JobStats>;
  /** Puts failed jobs back in the queue with fresh attempts. Returns how many. */
  retryFailed(): Promise<number>;
  /** Called whenever a job changes status or progress. Returns an unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** Backoff before attempt `n + 1` after `n` failed attempts: 2 s · 2^(n−1), capped at 10 min. */
export function backoffMs(failedAttempts: number): number {
  return Math.min(2_000 * 2 ** Math.max(0, failedAttempts - 1), 600_000);
}

/**
 * Creates the queue over `db.jobs`.
 * @param options.now clock (ms), injectable for tests.
 * @param options.keepDoneMs how long finished jobs are kept before cleanup (default 1 h).
 */
export function createJobQueue(
  db: RecallDB,
  options: { now?: () => number; keepDoneMs?: number; onError?: (error: unknown, job: JobRecord) => void } = {},
): JobQueue {
  const now = options.now ?? Date.now;
  const keepDoneMs = options.keepDoneMs ?? 3_600_000;
  const handlers = new Map<string, JobHandler<any>>();
  const listeners = new Set<() => void>();
  let running = false;
  let paused = 0;
  /** Resolved when the last foreground work ends (`whenForegroundIdle`). */
  let foregroundWaiters: (() => void)[] = [];
  let loop: Promise<void> | null = null;
  let current: { job: JobRecord; controller: AbortController; preempted: boolean } | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let wake: (() => void) | null = null;
  const idleWaiters: (() => void)[] = [];
  /**
   * Counts `kick` calls. The loop notes it before looking for work and, when it finds none, sleeps
   * only if no kick came meanwhile: a kick that arrives while the loop is between "no job" and
   * setting its wake timer (an enqueue, a `drain` waiting for idle) finds neither a timer nor a
   * `wake` to call, and was lost until the timer fired (up to the next job's delay, e.g. 60 s).
   */
  let kicks = 0;
  /** `kicks` when the loop last ended for want of work (see `kick`). */
  let endedAt = 0;

  const emit = () => listeners.forEach((l) => l());

  function kick() {
    kicks += 1;
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    wake?.();
    if (running && paused === 0 && !loop) {
      loop = runLoop().finally(() => {
        loop = null;
        idleWaiters.splice(0).forEach((r) => r());
        // Kicked after the loop decided to end (it still looked running): start it again.
        if (kicks !== endedAt) kick();
      });
    }
  }

  /**
   * The next job to run now. Runnable jobs of a type without a handler are parked on the way
   * (status `parked`), so they neither block nor wake the loop again (a wake time in the past
   * made the loop poll IndexedDB about 1,000 times a second).
   */
  async function nextRunnable(): Promise<JobRecord | undefined> {
    const t = now();
    const ready = await db.jobs.where('[status+runAfter]').between(['queued', -Infinity], ['queued', t], true, true).toArray();
    ready.sort((a, b) => a.runAfter - b.runAfter || a.createdAt - b.createdAt);
    const orphans = ready.filter((j) => !handlers.has(j.type));
    if (orphans.length > 0) {
      await db.jobs.bulkUpdate(
        orphans.map((j) => ({
          key: j.id,
          changes: { status: 'parked' as const, lastError: `No handler is registered for job type "${j.type}"`, updatedAt: t },
        })),
      );
      emit();
    }
    return ready.find((j) => handlers.has(j.type));
  }

  /** Puts parked jobs of the given types (default: every type with a handler now) back in the queue. */
  async function unpark(types?: string[]): Promise<number> {
    const wanted = (types ?? [...handlers.keys()]).filter((type) => handlers.has(type));
    if (wanted.length === 0) return 0;
    const n = await db.jobs
      .where('status')
      .equals('parked')
      .and((j) => wanted.includes(j.type))
      .modify((j) => {
        j.status = 'queued';
        delete j.lastError;
        j.updatedAt = now();
      });
    if (n > 0) emit();
    return n;
  }

  async function nextWakeTime(): Promise<number | undefined> {
    const first = await db.jobs.where('[status+runAfter]').between(['queued', -Infinity], ['queued', Infinity]).first();
    return first?.runAfter;
  }

  async function runLoop(): Promise<void> {
    while (running && paused === 0) {
      const job = await nextRunnable();
      if (!job) {
        idleWaiters.splice(0).forEach((r) => r());
        const seen = kicks;
        const at = await nextWakeTime();
        if (kicks !== seen) continue; // kicked while reading the wake time: look again (see `kicks`)
        if (at !== undefined && running) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, Math.max(0, at - now()));
          });
          wake = null;
          continue;
        }
        endedAt = kicks;
        return;
      }
      await runOne(job);
    }
  }

  async function runOne(job: JobRecord): Promise<void> {
    const handler = handlers.get(job.type)!;
    const controller = new AbortController();
    current = { job, controller, preempted: false };
    job.status = 'running';
    job.attempts += 1;
    job.updatedAt = now();
    await db.jobs.put(job);
    emit();
    try {
      await handler(job.payload, {
        job,
        signal: controller.signal,
        reportProgress: (fraction) => {
          job.progress = Math.max(0, Math.min(1, fraction));
          // Progress is advisory: a failed write is logged and the job runs on (its final write sets progress 1).
          db.jobs
            .update(job.id, { progress: job.progress })
            .catch((error: unknown) => console.warn(`[jobs] could not save the progress of ${job.type} job ${job.id}:`, error));
          emit();
        },
      });
      await db.jobs.update(job.id, { status: 'done', updatedAt: now(), progress: 1 });
    } catch (error) {
      const preempted = current?.preempted || controller.signal.aborted;
      if (preempted || error instanceof JobDeferred) {
        const delay = error instanceof JobDeferred ? error.delayMs : 0;
        await db.jobs.update(job.id, { status: 'queued', attempts: job.attempts - 1, runAfter: now() + delay, updatedAt: now() });
      } else {
        options.onError?.(error, job);
        const message = error instanceof Error ? error.message : String(error);
        const failed = job.attempts >= job.maxAttempts || error instanceof JobFailedPermanently;
        const coded = codedErrorOf(error);
        // The model's reply was unusable to the end: an expected outcome, done — not a failure to retry.
        const rejected = failed && isJobRejection(coded);
        await db.jobs.update(job.id, {
          status: rejected ? 'done' : failed ? 'failed' : 'queued',
          ...(rejected ? { outcome: 'rejected' as const } : {}),
          runAfter: now() + backoffMs(job.attempts),
          lastError: message,
          // `undefined` removes an earlier attempt's code (Dexie's `update` deletes the key).
          lastErrorInfo: coded ?? undefined,
          updatedAt: now(),
        });
      }
    } finally {
      current = null;
      emit();
    }
  }

  async function cleanup() {
    const cutoff = now() - keepDoneMs;
    await db.jobs
      .where('status')
      .equals('done')
      .and((j) => j.updatedAt < cutoff)
      .delete();
  }

  return {
    register(type, handler) {
      if (handlers.has(type)) throw new Error(`Job handler already registered for "${type}"`);
      handlers.set(type, handler);
      // Jobs parked because nobody handled this type can run now.
      void unpark([type]).then(
        () => running && kick(),
        (error: unknown) => console.warn(`[jobs] could not resume parked "${type}" jobs:`, error),
      );
    },

    async enqueue(type, payload, opts = {}) {
      const t = now();
      if (opts.dedupeKey) {
        const existing = await db.jobs
          .where('dedupeKey')
          .equals(opts.dedupeKey)
          .and((j) => j.status === 'queued')
          .first();
        if (existing) {
          const wanted = t + (opts.delayMs ?? 0);
          if (opts.advance) {
            // Every queued job with the key (one may have been added while another was running).
            const moved = await db.jobs
              .where('dedupeKey')
              .equals(opts.dedupeKey)
              .and((j) => j.status === 'queued' && j.runAfter > wanted)
              .modify({ runAfter: wanted, updatedAt: t });
            if (moved > 0) {
              emit();
              kick();
            }
          }
          return existing.id;
        }
      }
      const job: JobRecord = {
        id: crypto.randomUUID(),
        type,
        payload,
        status: 'queued',
        attempts: 0,
        maxAttempts: opts.maxAttempts ?? 5,
        runAfter: t + (opts.delayMs ?? 0),
        createdAt: t,
        updatedAt: t,
        ...(opts.dedupeKey ? { dedupeKey: opts.dedupeKey } : {}),
      };
      await db.jobs.add(job);
      emit();
      kick();
      return job.id;
    },

    async start() {
      if (running) return;
      // A context killed mid-job leaves it `running`: resume it (handlers are idempotent).
      await db.jobs.where('status').equals('running').modify({ status: 'queued' });
      await unpark();
      await cleanup();
      running = true;
      kick();
    },

    async stop() {
      running = false;
      if (current) {
        current.preempted = true;
        current.controller.abort();
      }
      kick();
      await loop;
    },

    async runForeground(fn) {
      paused += 1;
      if (current) {
        current.preempted = true;
        current.controller.abort();
      }
      kick(); // wakes a loop sleeping on a backoff timer so it can see the pause and exit
      try {
        await loop;
        return await fn();
      } finally {
        paused -= 1;
        if (paused === 0) {
          const waiters = foregroundWaiters;
          foregroundWaiters = [];
          waiters.forEach((resolve) => resolve());
        }
        kick();
      }
    },

    foregroundActive() {
      return paused > 0;
    },

    whenForegroundIdle() {
      if (paused === 0) return Promise.resolve();
      return new Promise<void>((resolve) => foregroundWaiters.push(resolve));
    },

    async drain() {
      if (!running) throw new Error('Job queue is not started');
      for (;;) {
        await new Promise<void>((resolve) => {
          idleWaiters.push(resolve);
          kick();
          if (!loop) resolve();
        });
        if (!current && !(await nextRunnable())) return;
      }
    },

    async stats() {
      const all = await db.jobs.toArray();
      const t = now();
      const s: JobStats = {
        queued: 0,
        scheduled: 0,
        retrying: 0,
        running: 0,
        failed: 0,
        done: 0,
        parked: 0,
        parkedTypes: [],
        current: null,
        recentFailures: [],
        rejected: 0,
        recentRejections: [],
      };
      for (const j of all) {
        const waiting = j.status === 'queued' && j.runAfter > t;
        s[waiting ? (j.attempts > 0 ? 'retrying' : 'scheduled') : j.outcome === 'rejected' ? 'rejected' : j.status] += 1;
      }
      s.parkedTypes = [...new Set(all.filter((j) => j.status === 'parked').map((j) => j.type))].sort();
      const latest = (keep: (j: JobRecord) => boolean) =>
        all
          .filter(keep)
          .sort((a, b) => b.updatedAt - a.updatedAt)
          .slice(0, 5)
          .map((j) => ({ type: j.type, lastError: j.lastError ?? '', ...(j.lastErrorInfo ? { lastErrorInfo: j.lastErrorInfo } : {}), at: j.updatedAt }));
      s.recentFailures = latest((j) => j.status === 'failed');
      s.recentRejections = latest((j) => j.outcome === 'rejected');
      if (current) s.current = { type: current.job.type, progress: current.job.progress ?? null };
      return s;
    },

    async retryFailed() {
      const n = await db.jobs.where('status').equals('failed').modify({ status: 'queued', attempts: 0, runAfter: now() });
      emit();
      kick();
      return n;
    },

    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
