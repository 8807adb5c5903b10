/**
 * Background jobs store: the queue's counts (`event.jobs`), "retry failed", and the failures and
 * expected rejections the Memory tab shows until the user dismisses them (`jobNotes`; the time
 * dismissed up to is a panel preference, `ui-prefs.ts`).
 */
import type { JobStats } from '../../model/jobs';
import { t } from '../i18n/index.svelte';
import { jobNotes, type JobNotes } from '../lib/jobs';
import { readUiPref, writeUiPref, type PrefStorage } from '../lib/ui-prefs';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/** What the jobs store needs. */
export interface JobsStoreDeps extends StoreApi {
  notices: NoticesStore;
  /** Where the dismissal is kept (default: the panel's `localStorage`; tests pass their own). */
  prefs?: PrefStorage | null;
}

const DISMISSED_KEY = 'recall.ui.v1.jobNotesDismissedAt';

/** See module doc. Created by `createJobsStore`. */
export class JobsStore {
  /** `null` until first read. */
  stats = $state<JobStats | null>(null);
  readonly #deps: JobsStoreDeps;

  /** Failures and rejections up to this time (ms epoch) were dismissed; `null`: none. */
  dismissedAt = $state<number | null>(null);

  constructor(deps: JobsStoreDeps) {
    this.#deps = deps;
    const stored = readUiPref(DISMISSED_KEY, deps.prefs);
    this.dismissedAt = stored !== null && Number.isFinite(Number(stored)) ? Number(stored) : null;
  }

  /** What to show about failed and rejected jobs now (see `jobNotes`). */
  get notes(): JobNotes {
    return jobNotes(this.stats, this.dismissedAt);
  }

  /** Hides the failures and rejections shown now (newer ones appear again); remembered by this browser. */
  dismissNotes(): void {
    const newest = this.notes.newestAt;
    if (newest === null) return;
    this.dismissedAt = newest;
    writeUiPref(DISMISSED_KEY, String(newest), this.#deps.prefs);
  }

  /** Follows `event.jobs`. @returns the unsubscribe. */
  listen(): () => void {
    return this.#deps.subscribe('event.jobs', (stats) => {
      this.stats = stats;
    });
  }

  /** Re-reads the counts; a failed read keeps the last ones. */
  async refresh(): Promise<void> {
    this.stats = await this.#deps.request('jobs.stats', undefined, { retry: true }).catch(() => this.stats);
  }

  /** Re-queues failed background jobs and tells how many (info notice); failures become an error notice. */
  async retryFailed(): Promise<void> {
    try {
      const count = await this.#deps.request('jobs.retryFailed');
      this.#deps.notices.notify('info', t('jobs.retried', { count }));
      this.stats = await this.#deps.request('jobs.stats', undefined, { retry: true });
    } catch (error) {
      this.#deps.notices.fail('errors.jobsFailed', error);
    }
  }
}

/** Creates the jobs store. */
export function createJobsStore(deps: JobsStoreDeps): JobsStore {
  return new JobsStore(deps);
}
