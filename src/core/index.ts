/**
 * The memory core: everything that runs in the offscreen document (see ARCHITECTURE.md) —
 * Dexie, the job queue, long-term memory (store, Voy + MiniSearch indexes, extraction and
 * consolidation jobs), short-term strategies, the engines and the chat service.
 *
 * `createCore` takes its platform pieces as arguments (engine manager, WASM loader, event sink),
 * so the same wiring runs in the extension and in integration tests.
 */
import type { RecallDB } from '../db/schema';
import { createJobQueue, type JobQueue } from '../jobs/queue';
import { exportAll, importAll } from '../memory/export';
import { createLongTermMemory, registerEpisodicJobs } from '../memory/long-term';
import { MAINTENANCE_JOB, REEMBED_JOB, registerExtractionJobs } from '../memory/long-term/jobs';
import { createMemoryStore } from '../memory/long-term/store';
import type { LongTermMemory } from '../memory/long-term/types';
import { createStrategy, registerShortTermJobs, type StrategyDeps } from '../memory/short-term';
import type { RetrievedExchange, StrategyConfig } from '../memory/short-term/types';
import type { ImportReport, Settings } from '../messaging/protocol';
import { createChatService, type ChatService } from './chat-service';
import { createConversationStore, withChangeEvents, type ConversationStore } from './conversations';
import type { EngineManager } from './engine-manager';
import { createMemoryAdmin, type MemoryAdmin, type SearchableMemoryStore } from './memory-admin';
import { createSettingsStore, type SettingsStore } from './settings';

/** Platform pieces the core needs. */
export interface CoreDeps {
  db: RecallDB;
  engines: EngineManager;
  /** Bytes of voy-search's WASM module. */
  loadVoyWasm: () => Promise<BufferSource>;
  /** Sinks for events the UI listens to. */
  events: {
    chatDelta: (event: { requestId: string; conversationId: string; messageId: string; delta: string }) => void;
    jobs: (stats: Awaited<ReturnType<JobQueue['stats']>>) => void;
    /** A conversation changed (id), or many did (`null`: import, erase). Optional. */
    conversations?: (event: { conversationId: string | null }) => void;
    /** The settings changed (every open panel shows the new values). Optional. */
    settings?: (settings: Settings) => void;
  };
  /** Deletes a model file from OPFS (the platform's file store). */
  deleteModelFile?: (fileName: string) => Promise<void>;
  now?: () => number;
}

/** The running core. */
export interface Core {
  db: RecallDB;
  settings: SettingsStore;
  conversations: ConversationStore;
  engines: EngineManager;
  jobs: JobQueue;
  store: SearchableMemoryStore;
  longTerm: LongTermMemory;
  memoryAdmin: MemoryAdmin;
  chat: ChatService;
  /** Applies a settings patch; switching the embedding model reloads it and re-embeds memories. */
  updateSettings(patch: Partial<Settings>): Promise<Settings>;
  exportAll(): Promise<{ fileName: string; json: string }>;
  importAll(json: string): Promise<ImportReport>;
  /** Erases memories, history, conversations, messages, traces, strategy state and jobs (settings and model files stay). */
  eraseAll(): Promise<void>;
  deleteLocalModel(fileName: string): Promise<void>;
  stop(): Promise<void>;
}

/** Builds and starts the core. Resolves once handlers can be served (models keep loading in the background). */
export async function createCore(deps: CoreDeps): Promise<Core> {
  const { db, engines } = deps;
  const now = deps.now ?? Date.now;
  const settings = createSettingsStore(db);
  const conversationsChanged = (conversationId: string | null) => deps.events.conversations?.({ conversationId });
  const conversations = withChangeEvents(createConversationStore(db, now), conversationsChanged);
  const jobs = createJobQueue(db, { now, onError: (error, job) => console.warn(`[jobs] ${job.type} failed:`, error) });
  let statsTimer: ReturnType<typeof setTimeout> | null = null;
  const stopJobEvents = jobs.onChange(() => {
    // Coalesce bursts of changes into one event per 250 ms.
    statsTimer ??= setTimeout(() => {
      statsTimer = null;
      void jobs.stats().then(deps.events.jobs);
    }, 250);
  });

  const store = (await createMemoryStore({ db, embedder: () => engines.embedder(), now, loadVoyWasm: deps.loadVoyWasm })) as SearchableMemoryStore;
  const opened = store.indexStats().open;
  console.info(`[core] long-term memory searchable in ${Math.round(opened.ms)} ms (${opened.via}, ${store.indexStats().memories} memories)`);
  const longTerm = createLongTermMemory({ store, jobs, db, now });
  registerEpisodicJobs(jobs, { store, db, now });
  registerExtractionJobs(jobs, { db, store, engine: () => engines.chatEngine(), embedder: () => engines.embedder(), now });

  /** Past exchanges (episodic memories) most similar to `text`: by embedding, or by keywords while no embedder is loaded. */
  const searchExchanges = async (text: string, k: number): Promise<RetrievedExchange[]> => {
    const vector = await store.embed(text);
    const hits = vector
      ? (await store.nearest(vector, { namespace: 'default', k: k * 3 })).map((h) => ({ memory: h.memory, similarity: h.similarity as number | null }))
      : (await store.search({ text, namespace: 'default', k: k * 3 })).map((h) => ({ memory: h.memory, similarity: null }));
    return hits
      .filter((h) => h.memory.kind === 'episodic' && h.memory.sourceConversationId)
      .slice(0, k)
      .map((h) => ({ text: h.memory.text, conversationId: h.memory.sourceConversationId!, messageIds: h.memory.sourceMessageIds, similarity: h.similarity }));
  };
  const strategyDeps: StrategyDeps = {
    db,
    tokens: () => engines.tokenCounter(),
    engine: () => engines.chatEngine(),
    jobs,
    now,
    searchExchanges,
  };
  registerShortTermJobs(jobs, strategyDeps);
  const strategyFor = (config: StrategyConfig) => createStrategy(config, strategyDeps);

  const chat = createChatService({
    db,
    conversations,
    engines,
    settings,
    jobs,
    longTerm,
    strategyFor,
    onDelta: deps.events.chatDelta,
    now,
  });

  await jobs.start();
  await jobs.enqueue(MAINTENANCE_JOB, {}, { dedupeKey: MAINTENANCE_JOB, delayMs: 60_000 });

  const core: Core = {
    db,
    settings,
    conversations,
    engines,
    jobs,
    store,
    longTerm,
    memoryAdmin: createMemoryAdmin(db, store),
    chat,
    async updateSettings(patch) {
      const before = await settings.get();
      const after = await settings.set(patch);
      if (after.embeddingModelId !== before.embeddingModelId) {
        void engines.loadEmbedder(after.embeddingModelId); // the job waits until this model is loaded
        await jobs.enqueue(REEMBED_JOB, { modelId: after.embeddingModelId }, { dedupeKey: REEMBED_JOB });
      }
      deps.events.settings?.(after);
      return after;
    },
    exportAll: () => exportAll(db),
    async importAll(json) {
      const report = await importAll(db, store, json);
      // Imported memories without a vector (or from another embedding model) are embedded in the background.
      if (report.needsEmbedding > 0) {
        await jobs.enqueue(REEMBED_JOB, { modelId: engines.status().embedder.modelId }, { dedupeKey: REEMBED_JOB });
      }
      conversationsChanged(null);
      return report;
    },
    async eraseAll() {
      await jobs.stop();
      const tables = [db.memories, db.memoryHistory, db.conversations, db.messages, db.promptTraces, db.strategyState, db.entities, db.jobs];
      await db.transaction('rw', tables, async () => {
        await Promise.all(tables.map((t) => t.clear()));
      });
      await store.rebuildIndexes();
      await jobs.start();
      conversationsChanged(null);
    },
    async deleteLocalModel(fileName) {
      await deps.deleteModelFile?.(fileName);
      await db.localModels.delete(fileName);
    },
    async stop() {
      stopJobEvents();
      if (statsTimer) clearTimeout(statsTimer);
      await jobs.stop();
      await store.flushSnapshot();
    },
  };
  return core;
}

/**
 * Restores the engines the user had loaded (failures show in the engine status, nothing throws).
 * @param packaged the package's model manifest: an offline install ships its embedding model and
 *   uses it until the user picks another one.
 */
export async function restoreEngines(core: Core, packaged: { embeddingModelId: string } | null): Promise<void> {
  const s = await core.settings.get();
  const chosen = await core.db.settings.get('embeddingModelId');
  const embeddingModelId = !chosen && packaged ? packaged.embeddingModelId : s.embeddingModelId;
  const embedder = core.engines.loadEmbedder(embeddingModelId);
  const chat =
    s.preferredEngine === 'wllama' && s.wllamaSource
      ? core.engines.loadWllama(s.wllamaSource)
      : s.preferredEngine === 'webllm' && s.webllmModelId
        ? core.engines.loadWebLLM(s.webllmModelId)
        : Promise.resolve();
  await Promise.allSettled([embedder, chat]);
}

