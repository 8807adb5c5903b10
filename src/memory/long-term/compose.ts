/**
 * The long-term memory layer put together, once, for every place that runs it: the core
 * (`src/core/index.ts`), the retrieval evaluation (`scripts/eval-retrieval.ts`) and the retrieval
 * bench (`bench/retrieval.bench.ts`). It opens the store, registers the background jobs
 * (`ltm.episodic`; `ltm.extract`, `ltm.reembed`, `ltm.maintenance`) on the caller's queue and
 * creates the facade, so the three cannot drift apart. The store's writes queue the profile
 * rebuild (`ltm.profile`, `queueProfileRebuildsFor`) whatever path wrote them.
 */
import type { RecallDB } from '../../db/schema';
import type { ChatEngine, Embedder } from '../../engines/types';
import type { JobQueue } from '../../jobs/queue';
import { createLongTermMemory, registerEpisodicJobs } from './index';
import { registerExtractionJobs } from './jobs';
import { createMemoryStore, type LongTermStore, type MemoryStoreDeps } from './store';
import { queueProfileRebuildsFor } from './profile-summary';
import type { LongTermMemory } from './types';

/** What `composeLongTermMemory` needs. Clocks in ms epoch. */
export interface LongTermCompositionDeps {
  db: RecallDB;
  /** The queue the jobs are registered on (the caller starts and stops it). */
  jobs: JobQueue;
  /** The current embedder, or `null` while none is loaded. */
  embedder: () => Embedder | null;
  /** The chat engine for extraction, or `null` while none is loaded (default: never one: extraction waits). */
  engine?: () => ChatEngine | null;
  /** See `MemoryStoreDeps.loadVoyWasm`. */
  loadVoyWasm: MemoryStoreDeps['loadVoyWasm'];
  /** See `MemoryStoreDeps.onMissingEmbedding`. */
  onMissingEmbedding?: () => void;
  /** See `MemoryStoreDeps.background`. */
  background?: PromiseLike<unknown>;
  /** Clock of the jobs and the facade, default `Date.now`. */
  now?: () => number;
  /** Clock of the store, default `now` (a replay moves the store's clock along the replayed conversation). */
  storeNow?: () => number;
}

/** The composed layer: the store (search, indexes, re-embedding) and the facade the chat uses. */
export interface LongTermComposition {
  store: LongTermStore;
  longTerm: LongTermMemory & { flush(): Promise<void> };
}

/**
 * Opens the store, registers the long-term jobs on `deps.jobs` and creates the facade (see module doc).
 * @throws what `createMemoryStore` throws (IndexedDB failures); a handler already registered for one of the jobs.
 */
export async function composeLongTermMemory(deps: LongTermCompositionDeps): Promise<LongTermComposition> {
  const { db, jobs, embedder } = deps;
  const clock = deps.now ? { now: deps.now } : {};
  const storeNow = deps.storeNow ?? deps.now;
  const store = await createMemoryStore({
    db,
    embedder,
    loadVoyWasm: deps.loadVoyWasm,
    ...(storeNow ? { now: storeNow } : {}),
    ...(deps.onMissingEmbedding ? { onMissingEmbedding: deps.onMissingEmbedding } : {}),
    ...(deps.background ? { background: deps.background } : {}),
    // The idle lexical snapshot steps aside for chat turns (`runForeground`).
    foreground: { active: () => jobs.foregroundActive(), idle: () => jobs.whenForegroundIdle() },
    // "What Recall knows about me" follows every write of a profile, instruction or preference memory.
    onWrite: (written) => queueProfileRebuildsFor(jobs, written),
  });
  const longTerm = createLongTermMemory({ store, jobs, db, ...clock });
  registerEpisodicJobs(jobs, { store, db, ...clock });
  registerExtractionJobs(jobs, { db, store, engine: deps.engine ?? (() => null), embedder, ...clock });
  return { store, longTerm };
}
