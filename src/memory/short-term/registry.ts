/**
 * The registry of short-term strategy implementations: one line per strategy file. The
 * compiler checks it against the kinds of `STRATEGIES` (`src/model/strategies.ts`): a kind
 * without an implementation, or an implementation of a kind not in the list, does not compile;
 * `tests/unit/registries.test.ts` checks the same at run time, with every kind's locale strings.
 */
import type { StrategyKind } from '../../model/strategies';
import { bufferWindowStrategy } from './buffer-window';
import type { StrategyDefinition } from './define';
import { entityStrategy } from './entity';
import { fullBufferStrategy } from './full-buffer';
import { summaryStrategy } from './summary';
import { summaryBufferStrategy } from './summary-buffer';
import { tokenBufferStrategy } from './token-buffer';
import { vectorStrategy } from './vector';

/** Every strategy implementation (order does not matter: the picker follows `STRATEGIES`). */
export const STRATEGY_REGISTRY = [
  fullBufferStrategy,
  bufferWindowStrategy,
  tokenBufferStrategy,
  summaryStrategy,
  summaryBufferStrategy,
  entityStrategy,
  vectorStrategy,
] as const;

/** Kinds of `STRATEGIES` with no implementation above (must stay `never`). */
type Unimplemented = Exclude<StrategyKind, (typeof STRATEGY_REGISTRY)[number]['kind']>;
/** Fails to compile, naming the kind, when a strategy of `STRATEGIES` has no implementation. */
const everyKindImplemented: [Unimplemented] extends [never] ? true : Unimplemented = true;
void everyKindImplemented;

const BY_KIND: ReadonlyMap<StrategyKind, StrategyDefinition> = new Map(STRATEGY_REGISTRY.map((d) => [d.kind, d as StrategyDefinition]));

/** The implementation of `kind`. @throws Error `No implementation of context strategy: <kind>`. */
export function strategyDefinition(kind: StrategyKind): StrategyDefinition {
  const definition = BY_KIND.get(kind);
  if (!definition) throw new Error(`No implementation of context strategy: ${kind}`);
  return definition;
}

/** The background jobs of every strategy, each once. */
export const SHORT_TERM_JOBS = [...new Set(STRATEGY_REGISTRY.flatMap((d) => d.jobs))];
