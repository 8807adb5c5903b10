/** What the short-term strategies need from the memory core. */
import type { ChatEngine } from '../../engines/types';
import type { TokenCounter } from '../../model/tokens';
import type { RecallDB } from '../../db/schema';
import type { JobQueue } from '../../jobs/queue';
import type { RetrievedExchange } from '../../model/context';

/** Dependencies of every strategy and of the short-term background jobs. */
export interface StrategyDeps {
  db: RecallDB;
  /** Counter of the active model (or the estimator); read at each use, so a model switch takes effect at once. */
  tokens: () => TokenCounter;
  /** The loaded chat engine, or `null` (background LLM jobs then wait: `JobDeferred`). */
  engine: () => ChatEngine | null;
  jobs: JobQueue;
  /** Clock (ms epoch), default `Date.now`. */
  now?: () => number;
  /**
   * vector strategy: at most `k` past exchanges most similar to `text`, across the conversations
   * of `namespace` only (wired by the core to long-term memory; `namespace` is required so a
   * profile never receives another profile's exchanges).
   */
  searchExchanges: (query: { text: string; k: number; namespace: string }) => Promise<RetrievedExchange[]>;
}
