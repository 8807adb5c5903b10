/**
 * Job descriptors: each background job describes itself once, in the module that owns its work —
 * its type (one of `JOB_TYPES`, `src/model/jobs.ts`), its payload schema, its handler and its
 * retry policy — and is registered on the queue from that description (`registerJobs`) and
 * enqueued through it (`enqueueJob`), so type string, payload shape, attempts and dedupe key are
 * written in one place.
 *
 * The policies the queue applies (`./queue.ts`): a failure is retried with exponential backoff
 * (`backoffMs`) until `maxAttempts`, then the job is `failed`; `JobDeferred` waits without
 * counting an attempt; `JobFailedPermanently` fails at once; a job preempted by a chat turn is
 * re-queued without counting an attempt. A persisted job whose type has no registered descriptor
 * (left by another version) is parked, never polled, and runs once its type is registered.
 */
import type { z } from 'zod';
import type { JobType } from '../model/jobs';
import { JobFailedPermanently, type EnqueueOptions, type JobContext, type JobQueue } from './queue';

/**
 * One background job. `P` is the payload after parsing, `D` what the handler needs from the core
 * (the same for every job of one module).
 */
export interface JobDescriptor<P, D> {
  type: JobType;
  /**
   * Parses the persisted payload (`unknown`: it may come from another version). A schema with
   * `.catch(…)` accepts anything; otherwise a payload it rejects is handled by `invalidPayload`.
   */
  payload: z.ZodType<P>;
  /**
   * What a payload the schema rejects does: `'fail'` fails the job at once (`JobFailedPermanently`,
   * `Invalid <type> payload: <first issue>`); `'retry'` throws an `Error` with the first issue's
   * message, which the queue retries like any failure.
   */
  invalidPayload: 'fail' | 'retry';
  /** Attempts before the job is marked failed (default 5, the queue's). */
  maxAttempts?: number;
  /** While a queued job has this key, enqueueing the same work again returns that job (coalescing). */
  dedupeKey?: (payload: P) => string;
  /** Does the work. Throws to fail (retried), `JobDeferred` to wait, `JobFailedPermanently` to give up. */
  run(payload: P, context: JobContext, deps: D): Promise<void>;
}

/** Declares a job (identity, typed): see `JobDescriptor`. */
export function defineJob<P, D>(descriptor: JobDescriptor<P, D>): JobDescriptor<P, D> {
  return descriptor;
}

/**
 * Registers each descriptor's handler on `queue` with `deps`: the payload is parsed with the
 * descriptor's schema before `run` (see `invalidPayload`).
 * @throws Error when a handler for one of the types is already registered.
 */
export function registerJobs<D>(queue: JobQueue, descriptors: readonly JobDescriptor<any, D>[], deps: D): void {
  for (const descriptor of descriptors) {
    queue.register<unknown>(descriptor.type, async (payload, context) => {
      const parsed = descriptor.payload.safeParse(payload);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]?.message ?? 'bad shape';
        if (descriptor.invalidPayload === 'fail') throw new JobFailedPermanently(`Invalid ${descriptor.type} payload: ${issue}`);
        throw new Error(issue);
      }
      await descriptor.run(parsed.data, context, deps);
    });
  }
}

/**
 * Enqueues a job of `descriptor` with its own `maxAttempts` and `dedupeKey` (`options` adds
 * the delay and `advance`). Returns the job id (an existing queued job's id when deduplicated).
 */
export function enqueueJob<P>(
  queue: JobQueue,
  descriptor: JobDescriptor<P, any>,
  payload: P,
  options: Omit<EnqueueOptions, 'maxAttempts' | 'dedupeKey'> = {},
): Promise<string> {
  return queue.enqueue(descriptor.type, payload, {
    ...options,
    ...(descriptor.maxAttempts !== undefined ? { maxAttempts: descriptor.maxAttempts } : {}),
    ...(descriptor.dedupeKey ? { dedupeKey: descriptor.dedupeKey(payload) } : {}),
  });
}
