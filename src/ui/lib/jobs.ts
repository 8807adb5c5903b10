/**
 * Background work as the Memory tab shows it: translated labels of job types and the recent
 * failures of `JobStats` (`src/model/jobs.ts`). Pure; returns translation keys for unit tests.
 *
 * The job types and their label keys come from `JOB_TYPES` (`src/model/jobs.ts`), the list the
 * core's job descriptors are checked against; the side panel bundle does not pull in the memory code.
 */
import { JOB_TYPES, jobTypeLabelKey, type JobStats } from '../../model/jobs';
import type { TranslationKey } from '../i18n/instance';
import { errorView, type ErrorView } from './errors';
import { toPercent } from './format';

/** Label key of each background job type (`jobs.types.<type with "." as "_">`). */
export const JOB_LABELS: Readonly<Record<string, TranslationKey>> = Object.fromEntries(
  JOB_TYPES.map((type) => [type, jobTypeLabelKey(type) satisfies TranslationKey]),
);

/** The label key of a job type; unknown types (a newer core) get the generic `jobs.types.other`. */
export function jobLabelKey(type: string): TranslationKey {
  return Object.hasOwn(JOB_LABELS, type) ? JOB_LABELS[type]! : 'jobs.types.other';
}

/** One failed job as listed next to "Retry failed". */
export interface JobFailureView {
  label: TranslationKey;
  /** The job's last error (core text, English; shown as the reason when it has no code). */
  reason: string;
  /** The translated reason, when the error was coded (`src/ui/lib/errors.ts`); `null` otherwise. */
  reasonView: ErrorView | null;
  /** When it failed (ms since the epoch). */
  at: number;
}

/**
 * The failures to list: `recentFailures` (newest first, at most 5, as the core sends them).
 * Stats from an older core without the field give `[]`. Reasons are trimmed; for an empty
 * one the UI shows only the label.
 */
export function jobFailureViews(stats: Pick<JobStats, 'recentFailures'> | null | undefined): JobFailureView[] {
  const failures = stats?.recentFailures ?? [];
  return failures.map((f) => ({ label: jobLabelKey(f.type), reason: f.lastError.trim(), reasonView: errorView(f.lastErrorInfo), at: f.at }));
}

/**
 * The progress of the job running now as a whole percentage 0..100 (see `toPercent`: rounded
 * down, so 100 only when done), or `null` when nothing runs or the job reports no progress.
 */
export function currentJobPercent(stats: Pick<JobStats, 'current'> | null | undefined): number | null {
  return toPercent(stats?.current?.progress);
}
