/**
 * The memory core: everything that runs in the offscreen document (see ARCHITECTURE.md) —
 * Dexie, the job queue, long-term memory (store, Voy + MiniSearch indexes, extraction and
 * consolidation jobs), short-term strategies, the engines and the chat service.
 *
 * `createCore` takes its platform pieces as arguments (engine manager, WASM loader, event sink),
 * so the same wiring runs in the extension and in integration tests.
 *
 * Over 300 lines: the start-up order (recovery, store open, jobs, engines) and the handlers'
 * dependencies are one composition root; each part it wires lives in its own module.
 */
import type { RecallDB } from '../db/schema';
import { createJobQueue, type JobQueue } from '../jobs/queue';
// Backup, its age encryption and the importers are loaded at first use (`lazyModules`): not evaluated at start-up.
import { IMPORT_NOTICE_KEY, recoverInterruptedImport } from '../backup/journal';
import { loadBackup, loadBackupEncryption, loadHistoryImport, loadImporters } from './lazy-modules';
import { sealChunks, sealedFileReader } from '../vault/files';
import { createStagingKeys } from './staging-keys';
import { BackupError } from '../model/errors';
import { BACKUPS_DIR, deleteModelFile, listStoredFiles, ModelFileError, openModelFile, writeFileChunks, type StorageRoot } from '../platform/model-files';
import { composeLongTermMemory } from '../memory/long-term/compose';
import { MAINTENANCE_JOB, REEMBED_JOB } from '../memory/long-term/jobs';
import type { HistoryImportReport, SavedMemoriesReport } from '../model/history-import';
import type { LongTermMemory, LongTermStore } from '../memory/long-term/types';
import { createStrategy, registerShortTermJobs, type StrategyDeps } from '../memory/short-term';
import type { RetrievedExchange } from '../model/context';
import type { StrategyConfig } from '../model/strategies';
import type { ImportReport, InterruptedImport, TransferProgress } from '../model/backup';
import type { Settings } from '../model/settings';
import { createChatService, type ChatService } from './chat-service';
import { createAnswerFeedback, type AnswerFeedback } from './answer-feedback';
import { createTemporaryChatKeeper, type TemporaryChatKeeper } from './temporary-chats';
import { createConversationStore, withChangeEvents, type ConversationStore } from './conversations';
import type { EngineManager } from './engine-manager';
import { createMemoryAdmin, type MemoryAdmin } from './memory-admin';
import { createSettingsStore, type SettingsStore } from './settings';
import { eraseMemories, eraseUserData } from '../db/erase';
import { deleteDownloadedModel, listDownloadedModels, type ModelStorage } from '../platform/model-caches';
import type { DownloadedModel } from '../model/engine';
import { createProfileService, eraseNamespaceMemories, type ProfileService } from './profiles';
import type { ProfilesState } from '../model/profiles';

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
    /** Progress of an export or import (at most about one event per 1 % or 250 ms). Optional. */
    transfer?: (progress: TransferProgress) => void;
    /** The profiles or the active one changed (every open panel follows). Optional. */
    profiles?: (state: ProfilesState) => void;
  };
  /** Root of the file store that holds `backups/` staging files (default: OPFS; tests pass an in-memory one). */
  fileRoot?: StorageRoot;
  /** Deletes a model file from OPFS (the platform's file store). */
  deleteModelFile?: (fileName: string) => Promise<void>;
  /** Removes the user's files from OPFS on "Erase everything" (all but `models/`: `eraseUserFiles`). */
  eraseUserFiles?: () => Promise<unknown>;
  /** Where downloaded models are listed and deleted (default: the browser's Cache Storage and OPFS; tests pass fakes). */
  modelStorage?: ModelStorage;
  /** scrypt work factor (log2 N) of encrypted exports (default `AGE_SCRYPT_WORK_FACTOR`, 18; tests pass less). */
  scryptWorkFactor?: number;
  now?: () => number;
  /** Monotonic clock (ms) of the chat turns' timings (`TurnTimings` in their traces); default `performance.now`. */
  clock?: () => number;
}

/** The running core. */
export interface Core {
  db: RecallDB;
  settings: SettingsStore;
  conversations: ConversationStore;
  engines: EngineManager;
  jobs: JobQueue;
  store: LongTermStore;
  longTerm: LongTermMemory;
  memoryAdmin: MemoryAdmin;
  chat: ChatService;
  /** "Not relevant here" under a reply (`./answer-feedback.ts`). */
  feedback: AnswerFeedback;
  /** Deletes a temporary chat once no open panel shows it (`./temporary-chats.ts`). */
  temporaryChats: TemporaryChatKeeper;
  /** Profiles: list, create, rename, switch, delete (`./profiles.ts`). */
  profiles: ProfileService;
  /** Applies a settings patch; switching the embedding model reloads it and re-embeds memories. */
  updateSettings(patch: Partial<Settings>): Promise<Settings>;
  /**
   * Writes the export file into `backups/` of the file store, in pages (see `exportBytes`); with a
   * non-empty `passphrase`, streamed through age encryption (`encryptChunks`) into the same file
   * (progress phase `encrypt` instead of `export`). `options.includeEmbeddings: false` leaves the
   * vectors out (a smaller file; the importing side re-embeds); `options.namespace` exports that
   * profile only (`exportChunks`).
   * @returns the staging `fileName`, the name to download it as (`.json`, or `.json.age` when
   *   encrypted), and its size in bytes.
   * @throws ModelFileError when the file cannot be written (e.g. `quota`).
   */
  exportToFile(
    passphrase?: string,
    options?: { includeEmbeddings?: boolean; namespace?: string },
  ): Promise<{ fileName: string; downloadName: string; sizeBytes: number }>;
  /**
   * Imports `backups/<fileName>` (see `importAll`) and deletes it afterwards, whatever the outcome.
   * An age file is first decrypted with `passphrase` into a second staging file (deleted too).
   * @throws ImportError (refused, nothing written: also `passphrase_required`, `wrong_passphrase`,
   *   `encrypted_damaged`) or ModelFileError (`not_found`).
   */
  importFile(fileName: string, passphrase?: string): Promise<ImportReport>;
  /** The import undone at start-up (see `recoverInterruptedImport`), returned once, then `null`. */
  importNotice(): Promise<InterruptedImport | null>;
  /**
   * Imports `backups/<fileName>` as history from another assistant (format detected by
   * `parseHistoryFile`, written by `importHistory`) into `namespace`, and deletes it afterwards,
   * whatever the outcome. `displayName` is the picked file's name (named in errors; `.md`/`.txt`
   * allow notes); `modifiedAt` its last-modified time (ms epoch).
   * @throws HistoryImportError (refused or busy, nothing written) or ModelFileError (`not_found`).
   */
  importHistoryFile(input: { fileName: string; displayName: string; namespace: string; modifiedAt?: number }): Promise<HistoryImportReport>;
  /** Stores a pasted list of saved memories as pinned memories (see `importSavedMemories`). */
  importSavedMemories(input: { namespace: string; text: string }): Promise<SavedMemoriesReport>;
  /**
   * With the vault lock on, a one-time key (base64 of 32 raw bytes) for the panel to seal the
   * import staging file `fileName` with (`src/platform/staging-seal.ts`; see `./staging-keys.ts`);
   * `null` with the lock off (the file is staged plain).
   */
  stagingKey(fileName: string): Promise<{ key: string | null }>;
  /**
   * Erases all data (`eraseUserData`: every table holding user data — conversations, messages,
   * memories, history, tombstones, jobs, traces, strategy state, entities, settings), the user's
   * OPFS files (`eraseUserFiles`: all but the model folders), and the in-memory indexes; then
   * schedules the daily maintenance again. Only model files stay (and `localModels`, their
   * list). Tombstones go too, so a re-import of an old export afterwards brings its memories back
   * (by design: nothing about the erased data remains to refuse them).
   */
  eraseAll(): Promise<void>;
  /**
   * Erases every long-term memory (`eraseMemories`: memories, history, index, tombstones, queued
   * `ltm.*` jobs) and empties the in-memory indexes; conversations, messages and settings stay.
   * Then schedules the daily maintenance again. With `namespace`, only that profile's long-term
   * memory goes (`eraseNamespaceMemories`); the other profiles keep theirs.
   */
  eraseMemories(namespace?: string): Promise<void>;
  deleteLocalModel(fileName: string): Promise<void>;
  /** Every downloaded or opened model with its size (`listDownloadedModels`). */
  downloadedModels(): Promise<DownloadedModel[]>;
  /**
   * Deletes one model's files (`deleteDownloadedModel`); an opened GGUF (`local:`) loses its
   * `localModels` row too. @returns the files removed.
   */
  deleteDownloadedModel(id: string): Promise<{ deleted: number }>;
  stop(): Promise<void>;
}

/** Builds and starts the core. Resolves once handlers can be served (models keep loading in the background). */
export async function createCore(deps: CoreDeps): Promise<Core> {
  const { db, engines } = deps;
  performance.mark('recall:core.start');
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
      jobs
        .stats()
        .then(deps.events.jobs)
        .catch((error: unknown) => console.warn('[jobs] could not send the job stats event:', error));
    }, 250);
  });

  // An import cut short by a killed context or a closed browser is undone before the indexes are built.
  await recoverInterruptedImport(db, now);
  performance.mark('recall:core.recovered');
  const files = { folder: BACKUPS_DIR, ...(deps.fileRoot ? { root: deps.fileRoot } : {}) };
  // Stale staging files (OPFS) are removed while the store opens (neither reads the other); done before any request.
  const staging = removeStagingFiles(files, now());
  const transfer = throttledProgress(deps.events.transfer);
  const stagingKeys = createStagingKeys();

  /**
   * Queues `ltm.reembed` (deduplicated; an old deferral is moved up to now) when some memory lacks
   * a vector from the loaded embedder — or any vector while none is loaded. Runs on start, when the
   * embedder becomes ready and whenever a memory was stored without a vector, so every memory
   * eventually gets one (memories saved before the embedder was ready used to stay lexical-only).
   */
  let embedCheck: Promise<void> = Promise.resolve();
  const ensureEmbedded = (): Promise<void> =>
    (embedCheck = embedCheck
      .then(async () => {
        // After a cold start the vectors load in the background: count them once they are in.
        await store.whenVectorsLoaded();
        const model = engines.embedder()?.modelId ?? null;
        // The store's index answers without reading a row (this runs on every start); it counts the
        // vectors made from an older indexed-text format too. (A read of the first row lacking a vector
        // used to precede the enqueue: without it core-embedding.test.ts hung, which was the job queue
        // losing a `drain`'s wake-up — fixed in `jobs/queue.ts`, `kicks`.)
        if (store.missingVectors(model) === 0) return;
        await jobs.enqueue(REEMBED_JOB, {}, { dedupeKey: REEMBED_JOB, advance: engines.embedder() !== null });
      })
      .catch((error: unknown) => console.warn('[ltm] could not queue re-embedding:', error)));
  let startedUp = (): void => undefined;
  const composed = await composeLongTermMemory({
    db,
    jobs,
    embedder: () => engines.embedder(),
    engine: () => engines.chatEngine(),
    now,
    loadVoyWasm: deps.loadVoyWasm,
    onMissingEmbedding: () => void ensureEmbedded(),
    // The store's background load (vector blocks, lexical snapshot, row check) starts once the core
    // is started, so it does not compete with the rest of the start-up for the thread and IndexedDB.
    background: new Promise<void>((resolve) => (startedUp = resolve)),
  });
  performance.mark('recall:core.store');
  await staging;
  performance.mark('recall:core.staging');
  const store = composed.store;
  const longTerm = composed.longTerm;
  const opened = store.indexStats().open;
  console.info(`[core] long-term memory searchable in ${Math.round(opened.ms)} ms (${opened.via}, ${store.indexStats().memories} memories)`);
  let embedderModel: string | null = null;
  const stopEmbedderWatch = engines.onChange((status) => {
    const ready = status.embedder.state === 'ready' ? status.embedder.modelId : null;
    if (ready !== embedderModel) {
      embedderModel = ready;
      if (ready) void ensureEmbedded();
    }
  });

  /** Past exchanges (episodic memories) of `namespace` most similar to `text`: by embedding, or by keywords while no embedder is loaded. */
  const searchExchanges: StrategyDeps['searchExchanges'] = async ({ text, k, namespace }): Promise<RetrievedExchange[]> => {
    const vector = await store.embed(text);
    const hits = vector
      ? (await store.nearest(vector, { namespace, k: k * 3 })).map((h) => ({ memory: h.memory, similarity: h.similarity as number | null }))
      : (await store.search({ text, namespace, k: k * 3 })).map((h) => ({ memory: h.memory, similarity: null }));
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
    store,
    strategyFor,
    onDelta: deps.events.chatDelta,
    now,
    ...(deps.clock ? { clock: deps.clock } : {}),
  });

  // Before any request is served: temporary chats do not outlive the core that held them, and a
  // turn the previous core was killed in gets its error reply.
  await conversations.deleteTemporary();
  await chat.recoverInterruptedTurns();
  performance.mark('recall:core.turns');
  /** The periodic maintenance, first run a minute after start (or after an erase); it reschedules itself. */
  const scheduleMaintenance = () => jobs.enqueue(MAINTENANCE_JOB, {}, { dedupeKey: MAINTENANCE_JOB, delayMs: 60_000 });
  await jobs.start();
  performance.mark('recall:core.jobs');
  await scheduleMaintenance();
  performance.mark('recall:core.maintenance');
  performance.mark('recall:core.ready');
  startedUp();
  // Opened from the persisted blocks, the vectors are still loading: the check runs once they are in,
  // without holding up the first request. Otherwise (empty, rebuilt) it is done before serving.
  const embeddedChecked = ensureEmbedded();
  if (opened.via !== 'blocks') await embeddedChecked;

  /**
   * The frame of every erase: the job queue stopped and the batched retrieval accesses written first
   * (no write of the core's own is pending behind the erase), then `erase`; whatever its outcome the
   * in-memory indexes are rebuilt from what is left, the jobs start again and `after` runs (events);
   * once it succeeded, the maintenance is scheduled again.
   * @throws what `erase` threw (then the store and the jobs run on as before).
   */
  const erasing = async (erase: () => Promise<void>, after?: () => Promise<void>): Promise<void> => {
    await jobs.stop();
    try {
      await longTerm.flush();
      await erase();
    } finally {
      await store.rebuildIndexes();
      await jobs.start();
      await after?.();
    }
    await scheduleMaintenance();
  };

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
    feedback: createAnswerFeedback(db, store),
    temporaryChats: createTemporaryChatKeeper(conversations),
    profiles: createProfileService({ db, store, jobs, now, onDeleted: () => conversationsChanged(null), onChanged: deps.events.profiles }),
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
    async exportToFile(passphrase, options = {}) {
      // With the vault lock on, no plaintext file is staged (nor downloaded): an export is always age-encrypted.
      if (db.keyring.sealing && !passphrase) throw new BackupError('passphrase_required', 'With the lock on, an export needs a passphrase.');
      await store.whenVectorsLoaded(); // rows are read with their vectors (the store's reading hook)
      const [{ exportBytes, exportFileName }, { encryptChunks }] = await Promise.all([loadBackup(), loadBackupEncryption()]);
      const exportedAt = now();
      const downloadName = `${exportFileName(exportedAt)}${passphrase ? '.age' : ''}`;
      const onProgress = (p: TransferProgress) => transfer(passphrase ? { ...p, phase: 'encrypt' } : p);
      const plain = exportBytes(db, {
        exportedAt,
        onProgress,
        ...(options.includeEmbeddings === false ? { includeEmbeddings: false } : {}),
        ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      });
      const chunks = passphrase ? encryptChunks(plain, passphrase, { workFactor: deps.scryptWorkFactor }) : plain;
      const { fileName, sizeBytes } = await writeFileChunks(`export-${exportedAt}-${downloadName}`, chunks, files);
      return { fileName, downloadName, sizeBytes };
    },
    async importFile(fileName, passphrase) {
      await store.whenVectorsLoaded(); // an import compares with the stored rows, read with their vectors
      let decrypted: string | null = null;
      try {
        const [{ importAll, ImportError }, { decryptChunks, isAgeFile }] = await Promise.all([loadBackup(), loadBackupEncryption()]);
        let file = await openModelFile(fileName, files);
        // A plain file the panel sealed while staging it (lock on) is read through its one-time key.
        if (!(await isAgeFile(file))) file = (await stagingKeys.reader(file, fileName)) as File;
        else {
          const size = file.size;
          const chunks = await decryptChunks(file, passphrase ?? '', { onBytes: (done) => transfer({ phase: 'decrypt', done, total: size }) });
          // With the vault lock on, the decrypted copy is sealed with the vault's file key (no plaintext file).
          const keys = db.keyring.sealing ? db.keyring.keys : null;
          // writeFileChunks wraps an error of its source as ModelFileError('io'): unwrap the refusal.
          const plain = await writeFileChunks(`${fileName}.plain`, keys ? sealChunks(chunks, keys.fileKey) : chunks, files).catch((error: unknown) => {
            throw error instanceof ModelFileError && error.cause instanceof ImportError ? error.cause : error;
          });
          decrypted = plain.fileName;
          file = await openModelFile(decrypted, files);
          if (keys) file = sealedFileReader(file, keys.fileKey) as File;
        }
        const embeddingModelBefore = (await settings.get()).embeddingModelId;
        const report = await importAll(db, store, file, { now, embedder: engines.status().embedder, fileName, onProgress: transfer });
        const after = await settings.get();
        if (after.embeddingModelId !== embeddingModelBefore) {
          // The backup chose another embedding model: load it; every memory is re-embedded for it (as a settings change does).
          void engines.loadEmbedder(after.embeddingModelId);
          await jobs.enqueue(REEMBED_JOB, { modelId: after.embeddingModelId }, { dedupeKey: REEMBED_JOB });
        } else if (report.needsEmbedding > 0) {
          // Imported memories without a vector are embedded in the background.
          await jobs.enqueue(REEMBED_JOB, { modelId: engines.status().embedder.modelId }, { dedupeKey: REEMBED_JOB });
        } else {
          // Vectors of another embedding model than the loaded one: the same re-embed path as at start-up.
          await ensureEmbedded();
        }
        if (report.settingsRestored) deps.events.settings?.(after);
        conversationsChanged(null);
        const { needsEmbedding: _n, restoredSettings: _r, ...rest } = report;
        return rest;
      } finally {
        stagingKeys.forget(fileName);
        for (const name of decrypted ? [fileName, decrypted] : [fileName])
          await deleteModelFile(name, files).catch((error: unknown) => console.warn('[import] could not delete the staging file', error));
      }
    },
    async importHistoryFile({ fileName, displayName, namespace, modifiedAt }) {
      try {
        const [{ parseHistoryFile }, { importHistory }] = await Promise.all([loadImporters(), loadHistoryImport()]);
        const file = await stagingKeys.reader(await openModelFile(fileName, files), fileName);
        const parsed = parseHistoryFile(new Uint8Array(await file.arrayBuffer()), { fileName: displayName, now: now() }, modifiedAt);
        const strategy = (await settings.get()).defaultStrategy;
        const report = await importHistory({ db, jobs, store, now }, parsed, { namespace, strategy, fileName: displayName });
        conversationsChanged(null);
        return report;
      } finally {
        stagingKeys.forget(fileName);
        await deleteModelFile(fileName, files).catch((error: unknown) => console.warn('[import] could not delete the staging file', error));
      }
    },
    stagingKey: async (fileName) => ({ key: db.keyring.sealing && db.keyring.keys ? stagingKeys.issue(fileName) : null }),
    importSavedMemories: async (input) => (await loadHistoryImport()).importSavedMemories({ store }, input),
    async importNotice() {
      const row = await db.settings.get(IMPORT_NOTICE_KEY);
      if (!row) return null;
      await db.settings.delete(IMPORT_NOTICE_KEY);
      return row.value as InterruptedImport;
    },
    eraseAll: () =>
      erasing(
        async () => {
          await eraseUserData(db);
          await deps.eraseUserFiles?.();
        },
        async () => {
          conversationsChanged(null);
          // The settings are the defaults again: every open panel shows them.
          deps.events.settings?.(await settings.get());
        },
      ),
    eraseMemories: (namespace) =>
      erasing(async () => {
        if (namespace === undefined) await eraseMemories(db);
        else await eraseNamespaceMemories(db, store, namespace);
      }),
    downloadedModels: () => listDownloadedModels(deps.modelStorage),
    async deleteDownloadedModel(id) {
      const deleted = await deleteDownloadedModel(id, deps.modelStorage);
      if (id.startsWith('local:')) await db.localModels.delete(id.slice('local:'.length));
      return { deleted };
    },
    async deleteLocalModel(fileName) {
      await deps.deleteModelFile?.(fileName);
      await db.localModels.delete(fileName);
    },
    async stop() {
      stagingKeys.clear();
      stopJobEvents();
      stopEmbedderWatch();
      await embedCheck;
      if (statsTimer) clearTimeout(statsTimer);
      await jobs.stop();
      await longTerm.flush(); // retrieval accesses collected for the next batch write
      await store.flushSnapshot();
    },
  };
  return core;
}

/** Age (ms) under which a `.partial` staging file may still be written by an open panel and is kept at start-up. */
const STAGING_GRACE_MS = 60_000;

/**
 * Deletes the staging files of `backups/` left by an earlier run (an export never downloaded, an
 * import whose context died, an upload cut short). A `.partial` file changed in the last minute may
 * be an upload in progress and is kept. Failures (no OPFS) are logged, never thrown.
 */
async function removeStagingFiles(files: { folder: string; root?: StorageRoot }, at: number): Promise<void> {
  try {
    for (const f of await listStoredFiles({ ...files, includePartial: true })) {
      if (f.fileName.endsWith('.partial') && at - f.lastModified < STAGING_GRACE_MS) continue;
      await deleteModelFile(f.fileName, files);
    }
  } catch (error) {
    // No file store in this context (unit tests in Node): nothing can have been staged.
    if (error instanceof ModelFileError && error.code === 'unsupported') return;
    console.warn('[core] could not clean the backup staging folder', error);
  }
}

/** Forwards progress at most once per 1 % of `total` or 250 ms (and always the last step). */
function throttledProgress(sink: ((progress: TransferProgress) => void) | undefined): (progress: TransferProgress) => void {
  let last = { phase: '', done: -1, at: 0 };
  return (progress) => {
    if (!sink) return;
    const t = Date.now();
    const step = Math.max(1, progress.total / 100);
    if (progress.phase === last.phase && progress.done < progress.total && progress.done - last.done < step && t - last.at < 250) return;
    last = { phase: progress.phase, done: progress.done, at: t };
    sink(progress);
  };
}

/**
 * Restores the engines the user had loaded (failures show in the engine status, nothing throws).
 * @param packaged the package's model manifest: an offline install ships its embedding model and
 *   uses it until the user picks another one.
 */
export async function restoreEngines(core: Core, packaged: { embeddingModelId: string } | null): Promise<void> {
  const s = await core.settings.get();
  const chosen = await core.settings.isStored('embeddingModelId');
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
