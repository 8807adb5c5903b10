/**
 * Short-term context strategies: one interface (`ContextStrategy`, in `./types`), seven
 * implementations (one module each), their background jobs, and the metadata the settings UI
 * shows. See `./types` for the interface and `STRATEGIES` for labels and parameters.
 */
import type { JobQueue } from '../../jobs/queue';
import { createBufferWindow } from './buffer-window';
import { normalizeStrategyConfig } from './config';
import type { StrategyDeps } from './deps';
import { createEntity, runEntityJob } from './entity';
import { createFullBuffer } from './full-buffer';
import { ENTITY_JOB, FOLD_JOB, SUMMARY_JOB } from './jobs-types';
import { createSummary, runSummaryJob } from './summary';
import { createSummaryBuffer, runFoldJob } from './summary-buffer';
import { createTokenBuffer } from './token-buffer';
import type { ContextStrategy } from './types';
import type { StrategyConfig } from '../../model/strategies';
import { createVector } from './vector';

export type { StrategyDeps } from './deps';
export { STRATEGIES, normalizeStrategyConfig, type StrategyInfo, type StrategyParamSpec, type Localized } from './config';
export { ENTITY_JOB, FOLD_JOB, SUMMARY_JOB } from './jobs-types';
export { readSummaryState, readEntityState, type SummaryState, type EntityState } from './state';
export { SummaryRejectedError } from './summarizer';
export { EntityRejectedError } from './entity';
export { loadContextMessages, groupExchanges, messageTokens } from './messages';
export * from './types';

/**
 * Creates the strategy of `config` (normalized first: unknown kinds fall back to the default,
 * parameters are filled and clamped, see `normalizeStrategyConfig`). Strategies hold no state in
 * memory, so creating one per turn is cheap.
 */
export function createStrategy(config: StrategyConfig, deps: StrategyDeps): ContextStrategy {
  const c = normalizeStrategyConfig(config);
  switch (c.kind) {
    case 'full-buffer':
      return createFullBuffer(deps);
    case 'buffer-window':
      return createBufferWindow(deps, c.k!);
    case 'token-buffer':
      return createTokenBuffer(deps, c.maxTokens!);
    case 'summary':
      return createSummary(deps);
    case 'summary-buffer':
      return createSummaryBuffer(deps, c.maxTokens!);
    case 'entity':
      return createEntity(deps, c.k!);
    case 'vector':
      return createVector(deps, c.k!, c.topK!);
  }
}

function conversationIdOf(payload: unknown): string {
  const id = (payload as { conversationId?: unknown } | null)?.conversationId;
  if (typeof id !== 'string' || !id) throw new Error('Short-term job payload has no conversationId');
  return id;
}

/**
 * Registers the handlers of the short-term background jobs on `jobs` (call once per queue):
 * `short-term.summary` (running summary), `short-term.fold` (summary + buffer) and
 * `short-term.entities` (entity notes). Handlers wait (`JobDeferred`) while no model is loaded,
 * stop when the queue preempts them for a chat turn (`signal`), and are idempotent.
 */
export function registerShortTermJobs(jobs: JobQueue, deps: StrategyDeps): void {
  jobs.register(SUMMARY_JOB, (payload, { signal }) => runSummaryJob(deps, conversationIdOf(payload), signal));
  jobs.register(FOLD_JOB, (payload, { signal }) => {
    const maxTokens = (payload as { maxTokens?: unknown }).maxTokens;
    return runFoldJob(deps, { conversationId: conversationIdOf(payload), maxTokens: typeof maxTokens === 'number' ? maxTokens : 2000 }, signal);
  });
  jobs.register(ENTITY_JOB, (payload, { signal }) => runEntityJob(deps, conversationIdOf(payload), signal));
}
