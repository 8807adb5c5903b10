/**
 * The whole core (`createCore`) in Node for tests: real Dexie (fake-indexeddb), job queue,
 * long-term store (MiniSearch + Voy), strategies and transformers.js embeddings on a generated
 * fixture model. The chat model is scripted (`scripted-engine.ts`: an instruction-following LLM
 * cannot run here) and the browser-only engine manager is replaced by `testEngineManager`, which
 * hands out those engines.
 *
 * A test file calls `useTestCores()` once: the fixture embedder is loaded before its tests, and
 * every core it starts is stopped and every database it used deleted after each test.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import type { EngineManager } from '../../src/core/engine-manager';
import { createCore, type Core, type CoreDeps } from '../../src/core/index';
import { RecallDB } from '../../src/db/schema';
import { createTransformersEmbedder } from '../../src/engines/transformers';
import type { ChatEngine, Embedder } from '../../src/engines/types';
import type { EngineStatus } from '../../src/model/engine';
import { createTokenEstimator } from '../../src/tokens';
import { writeBertFixtureModel } from './fixture-models';
import { createScriptedEngine, type ScriptedEngine } from './scripted-engine';

/** Model id of the fixture embedder. */
export const FIXTURE_EMBEDDER_ID = 'test/bert-fixture';

/** Writes the fixture embedding model to a temp folder and loads it. Call `dispose` when done. */
export async function loadFixtureEmbedder(): Promise<{ embedder: Embedder; dispose: () => Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'recall-harness-'));
  await writeBertFixtureModel(join(root, FIXTURE_EMBEDDER_ID), FIXTURE_EMBEDDER_ID);
  const embedder = await createTransformersEmbedder({ modelId: FIXTURE_EMBEDDER_ID, allowRemoteModels: false, localModelPath: root, dtype: 'fp32' });
  return { embedder, dispose: () => rm(root, { recursive: true, force: true }) };
}

/**
 * A stand-in engine manager serving `engines.chat()` and `engines.embedder()` (read at each call,
 * so a test can make the embedder "become ready" later). `onChange` listeners are kept and fired
 * by `notify()`.
 */
export function testEngineManager(engines: {
  chat: () => ChatEngine | null;
  embedder: () => Embedder | null;
  /** No embedding model configured at all: while `embedder()` is null the status says `idle` with no model id (else `loading` the fixture). */
  noEmbedderModel?: boolean;
}): EngineManager & { notify(): void } {
  const estimator = createTokenEstimator();
  const listeners = new Set<(s: EngineStatus) => void>();
  const status = (): EngineStatus => {
    const chat = engines.chat();
    const embedder = engines.embedder();
    return {
      chat: {
        kind: chat ? 'scripted' : null,
        modelId: chat?.modelId ?? null,
        state: chat ? 'ready' : 'idle',
        progress: null,
        contextWindow: chat?.contextWindow() ?? null,
        error: null,
        errorCode: null,
      },
      embedder: {
        modelId: embedder?.modelId ?? (engines.noEmbedderModel ? null : FIXTURE_EMBEDDER_ID),
        dimension: embedder?.dimension ?? null,
        state: embedder ? 'ready' : engines.noEmbedderModel ? 'idle' : 'loading',
        progress: null,
        error: null,
        errorCode: null,
      },
      gpu: { available: false, shaderF16: false, adapter: null },
    } as EngineStatus;
  };
  const unsupported = () => Promise.reject(new Error('not in this test'));
  return {
    status,
    chatEngine: () => engines.chat(),
    embedder: () => engines.embedder(),
    tokenCounter: () => engines.chat()?.tokenCounter() ?? estimator,
    catalog: unsupported,
    loadWebLLM: unsupported,
    loadWllama: unsupported,
    unloadChat: unsupported,
    loadEmbedder: async () => status(),
    reloadEmbedder: async () => status(),
    onChange: (listener: (s: EngineStatus) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    notify: () => listeners.forEach((l) => l(status())),
  } as EngineManager & { notify(): void };
}

/** What `startTestCore` starts a core with. */
export interface TestCoreOptions {
  chat: () => ChatEngine | null;
  embedder: () => Embedder | null;
  /** See `testEngineManager`. */
  noEmbedderModel?: boolean;
  /** The database (a restart on the same data); a fresh one by default. */
  db?: RecallDB;
  events?: Partial<CoreDeps['events']>;
  extra?: Partial<CoreDeps>;
}

/** A started test core, its database and its engine manager (`notify()` fires its `onChange` listeners). */
export interface TestCore {
  core: Core;
  db: RecallDB;
  engines: EngineManager & { notify(): void };
}

/** Starts a core over a fresh database (or `db`, to simulate a restart on the same data). */
export async function startTestCore(options: TestCoreOptions): Promise<TestCore> {
  const db = options.db ?? new RecallDB(`core-${crypto.randomUUID()}`);
  const engines = testEngineManager(options);
  const core = await createCore({
    db,
    engines,
    loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
    events: { chatDelta: () => undefined, jobs: () => undefined, ...options.events },
    ...options.extra,
  });
  return { core, db, engines };
}

/**
 * A scripted chat model for the memory tests (an instruction-following LLM cannot run here):
 * chat turns answer "Noted."; an extraction request (JSON mode) whose messages mention `trigger`
 * extracts the one fact `fact` (topic "secrets"), any other extracts nothing (decision requests
 * then fall back to ADD).
 */
export function noteTakingEngine(trigger: string, fact: string): ScriptedEngine {
  return createScriptedEngine({
    fallback: (request) =>
      request.responseFormat?.type !== 'json_object'
        ? 'Noted.'
        : JSON.stringify(request.messages).includes(trigger)
          ? JSON.stringify({ topic: 'secrets', facts: [{ kind: 'fact', text: fact }], preferences: [] })
          : '{"topic": "chat", "facts": [], "preferences": []}',
  });
}

/** One test file's cores: see `useTestCores`. */
export interface TestCores {
  /** The fixture embedder (loaded before the file's first test). */
  readonly embedder: Embedder;
  /**
   * Starts a core as `startTestCore` does; by default with no chat model and the fixture embedder.
   * It is stopped (once, also when the test stopped it already) and its database deleted after the test.
   */
  start(options?: Partial<TestCoreOptions>): Promise<TestCore>;
  /** Registers a database the test opened itself, to be deleted after the test. @returns `db`. */
  track(db: RecallDB): RecallDB;
}

/**
 * The core lifecycle of one test file, as Vitest hooks: `beforeAll` loads the fixture embedder
 * (unless `loadEmbedder: false`, for files that run without one; `afterAll` removes its folder); `afterEach` stops every core the test started, in reverse
 * order, then deletes every database it used. Call it once at the top of the file.
 */
export function useTestCores(options: { loadEmbedder?: boolean } = {}): TestCores {
  let fixture: Awaited<ReturnType<typeof loadFixtureEmbedder>> | null = null;
  const running: Core[] = [];
  const databases = new Set<RecallDB>();
  beforeAll(async () => {
    if (options.loadEmbedder !== false) fixture = await loadFixtureEmbedder();
  });
  afterAll(async () => fixture?.dispose());
  afterEach(async () => {
    for (const core of running.splice(0).reverse()) await core.stop();
    for (const db of databases) await db.delete();
    databases.clear();
  });
  const cores: TestCores = {
    get embedder() {
      if (!fixture) throw new Error('no fixture embedder: it loads in beforeAll (use it inside a test), unless loadEmbedder: false');
      return fixture.embedder;
    },
    async start(startOptions = {}) {
      const started = await startTestCore({ chat: () => null, embedder: () => cores.embedder, ...startOptions });
      // A test may stop a core itself (a restart): the cleanup then does not stop it twice.
      const stop = started.core.stop.bind(started.core);
      let stopping: Promise<void> | null = null;
      started.core.stop = () => (stopping ??= stop());
      running.push(started.core);
      databases.add(started.db);
      return started;
    },
    track(db) {
      databases.add(db);
      return db;
    },
  };
  return cores;
}
