/**
 * Short-term context strategies: one interface (`ContextStrategy`, in `./types`), seven
 * implementations (one module each, declared with `defineStrategy` and collected in
 * `./registry.ts`), and their background jobs (job descriptors in the strategies' files). The
 * list of strategies with their labels and parameters is `STRATEGIES` in `src/model/strategies.ts`.
 */
import { registerJobs } from '../../jobs/descriptor';
import type { JobQueue } from '../../jobs/queue';
import { normalizeStrategyConfig, type StrategyConfig } from '../../model/strategies';
import type { StrategyDeps } from './deps';
import { SHORT_TERM_JOBS, strategyDefinition } from './registry';
import type { ContextStrategy } from './types';

export type { StrategyDeps } from './deps';
export { STRATEGIES, normalizeStrategyConfig, type StrategyInfo, type StrategyParamSpec } from '../../model/strategies';
export { defineStrategy, type StrategyDefinition } from './define';
export { STRATEGY_REGISTRY, SHORT_TERM_JOBS, strategyDefinition } from './registry';
export { SUMMARY_JOB, summaryJob } from './summary';
export { FOLD_JOB, foldJob } from './summary-buffer';
export { ENTITY_JOB, entityJob } from './entity';
export { readSummaryState, readEntityState, type SummaryState, type EntityState } from './state';
export { SummaryRejectedError } from './summarizer';
export { EntityRejectedError } from './entity';
export { loadContextMessages, groupExchanges, messageTokens } from './messages';
export * from './types';

/**
 * Creates the strategy of `config` (normalized first: unknown kinds fall back to the default,
 * parameters are filled and clamped, see `normalizeStrategyConfig`) from its registry entry.
 * Strategies hold no state in memory, so creating one per turn is cheap.
 */
export function createStrategy(config: StrategyConfig, deps: StrategyDeps): ContextStrategy {
  const c = normalizeStrategyConfig(config);
  return strategyDefinition(c.kind).create(deps, c);
}

/**
 * Registers the background jobs of every strategy in the registry on `jobs` (call once per
 * queue): `short-term.summary` (running summary), `short-term.fold` (summary + buffer) and
 * `short-term.entities` (entity notes). Handlers wait (`JobDeferred`) while no model is loaded,
 * stop when the queue preempts them for a chat turn (`signal`), and are idempotent.
 * @throws Error when one of these types already has a handler on `jobs`.
 */
export function registerShortTermJobs(jobs: JobQueue, deps: StrategyDeps): void {
  registerJobs(jobs, SHORT_TERM_JOBS, deps);
}
