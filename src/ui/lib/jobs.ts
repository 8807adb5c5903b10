/**
 * Background work as the Memory tab shows it: translated labels of job types and the recent
 * failures of `JobStats` (`src/model/jobs.ts`). Pure; returns translation keys for unit tests.
 *
 * The job types and their label keys come from `JOB_TYPES` (`src/model/jobs.ts`), the list the
 * core's job descriptors are checked against; the side panel bundle does not pull in the memory code.
 */
import { JOB_TYPES, jobTypeLabelKey, type JobOutcomeView, type JobStats } from '../../model/jobs';
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

/** `JobOutcomeView`s as listed: translated label, trimmed reason, the reason's translation key when coded. */
const outcomeViews = (list: readonly JobOutcomeView[] | undefined): JobFailureView[] =>
  (list ?? []).map((f) => ({ label: jobLabelKey(f.type), reason: f.lastError.trim(), reasonView: errorView(f.lastErrorInfo), at: f.at }));

/**
 * The failures to list: `recentFailures` (newest first, at most 5, as the core sends them).
 * Stats from an older core without the field give `[]`. Reasons are trimmed; for an empty
 * one the UI shows only the label.
 */
export function jobFailureViews(stats: Pick<JobStats, 'recentFailures'> | null | undefined): JobFailureView[] {
  return outcomeViews(stats?.recentFailures);
}

/** The jobs whose model replies were unusable (`recentRejections`, newest first, at most 5), as `jobFailureViews` lists failures. */
export function jobRejectionViews(stats: Pick<JobStats, 'recentRejections'> | null | undefined): JobFailureView[] {
  return outcomeViews(stats?.recentRejections);
}

/** What the Memory tab says about finished background work that did not succeed. */
export interface JobNotes {
  /** Real failures not dismissed: how many, and the latest of them. `count` 0: nothing to say. */
  failed: { count: number; items: JobFailureView[] };
  /** Jobs whose model replies were unusable (expected with small models; nothing to retry), not dismissed. */
  rejected: { count: number; items: JobFailureView[] };
  /** Time of the newest entry shown (ms epoch): what "Dismiss" hides up to; `null` when nothing is shown. */
  newestAt: number | null;
}

/**
 * The failures and rejections to show, leaving out those the user dismissed (`at <= dismissedAt`,
 * ms epoch; `null`: none dismissed). Before any dismissal the counts are the core's totals; after
 * one, only newer jobs count (of the latest 5 of each kind the core sends).
 */
export function jobNotes(
  stats: Pick<JobStats, 'failed' | 'recentFailures' | 'rejected' | 'recentRejections'> | null | undefined,
  dismissedAt: number | null,
): JobNotes {
  const pick = (total: number | undefined, items: JobFailureView[]) => {
    if (dismissedAt === null) return { count: total ?? items.length, items };
    const newer = items.filter((f) => f.at > dismissedAt);
    return { count: newer.length, items: newer };
  };
  const failed = pick(stats?.failed, jobFailureViews(stats));
  const rejected = pick(stats?.rejected, jobRejectionViews(stats));
  const shown = [...(failed.count > 0 ? failed.items : []), ...(rejected.count > 0 ? rejected.items : [])];
  return { failed, rejected, newestAt: shown.length > 0 ? Math.max(...shown.map((f) => f.at)) : null };
}

/**
 * The progress of the job running now as a whole percentage 0..100 (see `toPercent`: rounded
 * down, so 100 only when done), or `null` when nothing runs or the job reports no progress.
 */
export function currentJobPercent(stats: Pick<JobStats, 'current'> | null | undefined): number | null {
  return toPercent(stats?.current?.progress);
}
