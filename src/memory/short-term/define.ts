/**
 * How a short-term strategy describes itself: `defineStrategy({ kind, create, jobs? })` in the
 * strategy's own file. Its label and description keys, parameters and whether it uses the
 * chat model come from its entry in `STRATEGIES` (`src/model/strategies.ts`, the leaf list the
 * UI and the schemas read), attached here as `info`; `./registry.ts` collects the definitions.
 */
import type { JobDescriptor } from '../../jobs/descriptor';
import { strategyInfo, type StrategyConfig, type StrategyInfo, type StrategyKind } from '../../model/strategies';
import type { StrategyDeps } from './deps';
import type { ContextStrategy } from './types';

/** One strategy implementation of kind `K`. */
export interface StrategyDefinition<K extends StrategyKind = StrategyKind> {
  kind: K;
  /** Its entry in `STRATEGIES`: translation keys, parameters with ranges and defaults, `usesLlm`. */
  info: StrategyInfo<StrategyKind>;
  /**
   * Creates the strategy from a normalized configuration of this kind (every parameter of
   * `info.params` present and within range, see `normalizeStrategyConfig`).
   */
  create(deps: StrategyDeps, config: StrategyConfig & { kind: K }): ContextStrategy;
  /** Its background jobs, registered once per queue by `registerShortTermJobs` (`[]`: none). */
  jobs: readonly JobDescriptor<any, StrategyDeps>[];
}

/**
 * Declares a strategy implementation.
 * @throws Error `Unknown context strategy: <kind>` when `kind` has no entry in `STRATEGIES`.
 */
export function defineStrategy<const K extends StrategyKind>(definition: {
  kind: K;
  create: StrategyDefinition<K>['create'];
  jobs?: readonly JobDescriptor<any, StrategyDeps>[];
}): StrategyDefinition<K> {
  return { kind: definition.kind, info: strategyInfo(definition.kind), create: definition.create, jobs: definition.jobs ?? [] };
}
