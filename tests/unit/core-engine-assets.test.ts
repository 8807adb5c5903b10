/**
 * The packaged manifests are read beside the core's start, not before it (issue 9: 22 ms of the
 * 10k cold start): the engine manager takes its assets as a promise, answers at once, and an
 * embedder load waits for the manifest and then uses the packaged model folder when the manifest
 * names the model (the embedder itself is a stand-in: transformers.js has its own tests).
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngineManager, type EngineAssets } from '../../src/core/engine-manager';
import { RecallDB } from '../../src/db/schema';

let db: RecallDB;
afterEach(async () => db?.delete());

describe('engine manager with assets read later', () => {
  it('is usable before the manifests are read; a load waits for them and uses the packaged folder of a packaged model only', async () => {
    db = new RecallDB(`engine-assets-${crypto.randomUUID()}`);
    let resolveAssets: (a: EngineAssets) => void = () => undefined;
    const asked: Array<string | null> = [];
    const m = createEngineManager({
      db,
      assets: new Promise<EngineAssets>((resolve) => (resolveAssets = resolve)),
      probe: async () => ({ available: false, shaderF16: false, adapter: null }),
      createEmbedder: async ({ modelId, packagedModelsUrl }) => {
        asked.push(packagedModelsUrl ?? null);
        return { modelId, dimension: 3, embed: async () => [], dispose: async () => undefined } as unknown as Awaited<
          ReturnType<NonNullable<Parameters<typeof createEngineManager>[0]['createEmbedder']>>
        >;
      },
    });
    // Answers before the manifests arrive.
    expect(m.status().embedder.state).toBe('idle');
    const packagedLoad = m.loadEmbedder('packaged/model');
    await new Promise((r) => setTimeout(r, 0));
    expect(asked).toEqual([]); // waits for the manifest
    resolveAssets({
      wllamaWasmUrl: '/runtime/wllama/wllama.wasm',
      packagedModelsUrl: '/models/',
      packagedEmbeddingModels: ['packaged/model'],
      packagedWebllmLibs: [],
    });
    expect((await packagedLoad).embedder).toMatchObject({ state: 'ready', modelId: 'packaged/model' });
    await m.loadEmbedder('hub/other-model');
    expect(asked).toEqual(['/models/', null]);
    expect((await m.catalog()).webllm).toEqual([]); // no packaged WebLLM library: no WebLLM model offered
  });
});
