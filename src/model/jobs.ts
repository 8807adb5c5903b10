/**
 * Background jobs as vocabulary: the one list of job types (`JOB_TYPES`) and the queue's counts
 * as the UI sees them (`JobStats`). Each type has one descriptor (`defineJob` in
 * `src/jobs/descriptor.ts`) in the module that owns the work; a unit test checks that the
 * descriptors the core registers are exactly this list and that each type has its UI label in
 * both locales (`jobs.types.<type with "." as "_">`). A persisted job whose type is not
 * registered (left by another version) is parked by the queue, never run or polled.
 * A leaf module: imports nothing from `src/` outside `src/model/`.
 */
import type { CodedError } from './errors';

/**
 * Every job type the core registers, with the module that describes it:
 * - `ltm.episodic` (`memory/long-term/index.ts`): store an exchange's round as an episodic memory;
 * - `ltm.extract`, `ltm.reembed`, `ltm.maintenance` (`memory/long-term/jobs.ts`): extraction +
 *   consolidation, re-embedding, periodic maintenance;
 * - `ltm.profile` (`memory/long-term/profile-summary`): rebuild "what Recall knows about me";
 * - `short-term.summary`, `short-term.fold`, `short-term.entities` (`memory/short-term/summary.ts`,
 *   `summary-buffer.ts`, `entity.ts`): running summary, summary + buffer fold, entity notes.
 */
export const JOB_TYPES = [
  'ltm.episodic',
  'ltm.extract',
  'ltm.reembed',
  'ltm.maintenance',
  'ltm.profile',
  'short-term.summary',
  'short-term.fold',
  'short-term.entities',
] as const;

/** One job type of `JOB_TYPES`. */
export type JobType = (typeof JOB_TYPES)[number];

/** `true` when `type` is one of `JOB_TYPES` (a type from another version is not). */
export function isJobType(type: unknown): type is JobType {
  return typeof type === 'string' && (JOB_TYPES as readonly string[]).includes(type);
}

/** `T` with its first `.` replaced by `_` (`ltm.extract` → `ltm_extract`). */
type Underscored<T extends string> = T extends `${infer A}.${infer B}` ? `${A}_${B}` : T;

/** The UI's translation key of a job type's label: `jobs.types.` + the type with `.` replaced by `_`. */
export type JobLabelKey = `jobs.types.${Underscored<JobType>}`;

/** The translation key of `type`'s label (see `JobLabelKey`), e.g. `ltm.extract` → `jobs.types.ltm_extract`. */
export function jobTypeLabelKey<T extends JobType>(type: T): JobLabelKey {
  return `jobs.types.${type.replace('.', '_')}` as JobLabelKey;
}

/**
 * Job error codes that are expected outcomes, not faults: the model's reply could not be used (a
 * small model often cannot write a summary, entity notes or extraction JSON). A job whose attempts
 * end in one of them is `done` with `outcome: 'rejected'` (counted in `JobStats.rejected`, never
 * in `failed`, and not offered for retry): retrying the same model on the same input can only be
 * refused again. Codes of the `jobs` domain (`JOB_ERROR_CODES` in `errors.ts`).
 */
export const JOB_REJECTION_CODES = ['summary_rejected', 'entity_rejected', 'extraction_failed'] as const;

/** `true` when `error` (a job's `lastErrorInfo`) is an expected rejection (`JOB_REJECTION_CODES`). */
export function isJobRejection(error: CodedError | null | undefined): boolean {
  return error?.domain === 'jobs' && (JOB_REJECTION_CODES as readonly string[]).includes(error.code);
}

/** One finished job as the UI lists it: type, last error (English, and coded when it was), when (ms epoch). */
export interface JobOutcomeView {
  type: string;
  lastError: string;
  lastErrorInfo?: CodedError;
  at: number;
}

/**
 * Counts of jobs by status. `queued` counts jobs runnable now; `scheduled` queued jobs that have not
 * failed yet and wait for their time (a delay such as the daily maintenance, or a deferral);
 * `retrying` queued jobs that failed at least once and wait out their backoff. `current` is the running job's type and progress (0..1, `null`
 * when it reports none), or `null` when nothing runs.
 */
export interface JobStats {
  queued: number;
  scheduled: number;
  retrying: number;
  running: number;
  failed: number;
  done: number;
  /** Jobs of a type no handler is registered for (kept, not run, never polled). */
  parked: number;
  /** The parked job types (sorted), for the UI. */
  parkedTypes: string[];
  current: { type: string; progress: number | null } | null;
  /** The latest failed jobs (at most 5, newest first) with their last error. */
  recentFailures: JobOutcomeView[];
  /** Finished jobs whose model replies were unusable (`outcome: 'rejected'`, kept as long as done jobs). */
  rejected: number;
  /** The latest of them (at most 5, newest first) with the reason. */
  recentRejections: JobOutcomeView[];
}
