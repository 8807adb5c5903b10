/** What the short-term strategies need from the memory core. */
import type { ChatEngine, TokenCounter } from '../../engines/types';
import type { RecallDB } from '../../db/schema';
import type { JobQueue } from '../../jobs/queue';
import type { RetrievedExchange } from './types';

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
  /** vector strategy: past exchanges most similar to `text` across conversations (wired by the core to long-term memory) */
  searchExchanges: (text: string, k: number) => Promise<RetrievedExchange[]>;
}
