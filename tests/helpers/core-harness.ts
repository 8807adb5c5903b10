/**
 * The whole core (`createCore`) in Node for tests: real Dexie (fake-indexeddb), job queue,
 * long-term store (MiniSearch + Voy), strategies and transformers.js embeddings on a generated
 * fixture model. The chat model is scripted (`scripted-engine.ts`: an instruction-following LLM
 * cannot run here) and the browser-only engine manager is replaced by `testEngineManager`, which
 * hands out those engines.
 */
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
export function testEngineManager(engines: { chat: () => ChatEngine | null; embedder: () => Embedder | null }): EngineManager & { notify(): void } {
  const estimator = createTokenEstimator();
  const listeners = new Set<(s: EngineStatus) => void>();
  const status = (): EngineStatus => {
    const chat = engines.chat();
    const embedder = engines.embedder();
    return {
      chat: { kind: chat ? 'scripted' : null, modelId: chat?.modelId ?? null, state: chat ? 'ready' : 'idle', progress: null, contextWindow: chat?.contextWindow() ?? null, error: null, errorCode: null },
      embedder: { modelId: embedder?.modelId ?? FIXTURE_EMBEDDER_ID, dimension: embedder?.dimension ?? null, state: embedder ? 'ready' : 'loading', progress: null, error: null, errorCode: null },
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

/** Starts a core over a fresh database (or `db`, to simulate a restart on the same data). */
export async function startTestCore(options: {
  chat: () => ChatEngine | null;
  embedder: () => Embedder | null;
  db?: RecallDB;
  events?: Partial<CoreDeps['events']>;
  extra?: Partial<CoreDeps>;
}): Promise<{ core: Core; db: RecallDB; engines: EngineManager & { notify(): void } }> {
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
