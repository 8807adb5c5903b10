/** Background jobs store: the queue's counts (`event.jobs`) and "retry failed". */
import type { JobStats } from '../../model/jobs';
import { t } from '../i18n/index.svelte';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/** What the jobs store needs. */
export interface JobsStoreDeps extends StoreApi {
  notices: NoticesStore;
}

/** See module doc. Created by `createJobsStore`. */
export class JobsStore {
  /** `null` until first read. */
  stats = $state<JobStats | null>(null);
  readonly #deps: JobsStoreDeps;

  constructor(deps: JobsStoreDeps) {
    this.#deps = deps;
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
