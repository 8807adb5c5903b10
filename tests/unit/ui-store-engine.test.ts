/**
 * Engine store (src/ui/state/engine.svelte.ts) against a fake messaging api
 * (tests/helpers/fake-api.ts) and a fake OPFS copy (`saveModelFile`; OPFS does not exist in
 * Node). The GGUF header check, the error translation and the notices are the real ones.
 */
import { describe, expect, it } from 'vitest';
import type { EngineStatus } from '../../src/model/engine';
import type { ModelCatalog } from '../../src/model/catalog';
import { createEngineStore } from '../../src/ui/state/engine.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createFakeApi, deferred } from '../helpers/fake-api';
import { ggufBlob } from '../helpers/fixture-gguf';

const status = (chat: Partial<EngineStatus['chat']> = {}): EngineStatus => ({
  chat: { kind: null, modelId: null, state: 'idle', progress: null, contextWindow: null, error: null, errorCode: null, ...chat },
  embedder: { modelId: 'e5', dimension: 384, state: 'ready', progress: null, error: null, errorCode: null },
  gpu: { available: true, shaderF16: true, adapter: null },
});
const catalog: ModelCatalog = { webllm: [], wllama: [], localFiles: [], defaultWebllmModel: '' };
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function setup(saveModelFile?: Parameters<typeof createEngineStore>[0]['saveModelFile']) {
  const api = createFakeApi();
  const notices = createNoticesStore();
  const engine = createEngineStore({ ...api, notices, ...(saveModelFile ? { saveModelFile } : {}) });
  api.on('engine.catalog', () => catalog);
  return { api, notices, engine };
}

describe('engine store', () => {
  it('load progress events update the status while the load runs; busy until it answers', async () => {
    const { api, engine } = setup();
    engine.listen();
    const loaded = deferred<EngineStatus>();
    api.on('engine.loadWebLLM', () => loaded.promise);
    const run = engine.loadWebLLM('Qwen2.5-0.5B');
    expect(engine.busy).toBe(true);
    api.emit('event.engine', status({ state: 'loading', modelId: 'Qwen2.5-0.5B', progress: { stage: 'download', fraction: 0.4, text: '40%' } }));
    expect(engine.status?.chat.progress?.fraction).toBe(0.4);
    api.emit('event.engine', status({ state: 'loading', modelId: 'Qwen2.5-0.5B', progress: { stage: 'download', fraction: 0.9, text: '90%' } }));
    expect(engine.status?.chat.progress?.fraction).toBe(0.9);
    loaded.resolve(status({ state: 'ready', modelId: 'Qwen2.5-0.5B', kind: 'webllm' }));
    expect(await run).toBe(true);
    expect(engine.busy).toBe(false);
    expect(engine.status?.chat.state).toBe('ready');
    expect(api.callsOf('engine.loadWebLLM')).toEqual([{ modelId: 'Qwen2.5-0.5B' }]);
  });

  it('a failed load becomes a notice translated by the code the core reports, and a later load clears it', async () => {
    const { api, engine, notices } = setup();
    api.on('engine.loadWllama', () => {
      throw new Error('fetch failed');
    });
    api.on('engine.status', () => status({ state: 'error', error: 'fetch failed', errorCode: 'download' }));
    expect(await engine.loadWllama({ type: 'catalog', id: 'qwen' })).toBe(false);
    expect(notices.list.map((n) => [n.text, n.detail, n.topic])).toEqual([
      ['The model could not be downloaded (offline?). Models downloaded before, or opened from a file, still work.', 'fetch failed', 'engine'],
    ]);
    expect(engine.status?.chat.errorCode).toBe('download');
    api.on('engine.loadWllama', () => status({ state: 'ready' }));
    expect(await engine.loadWllama({ type: 'catalog', id: 'qwen' })).toBe(true);
    expect(notices.list).toEqual([]);
  });

  it('opening a file that is not GGUF copies nothing and says so', async () => {
    const copies: string[] = [];
    const { api, engine, notices } = setup(async (file) => {
      copies.push((file as File).name);
      return { fileName: 'x', sizeBytes: 0 };
    });
    await engine.openLocalGguf(new File(['PK\x03\x04 not a model'], 'model.gguf'));
    expect(copies).toEqual([]);
    expect(api.callsOf('models.registerLocal')).toEqual([]);
    expect(notices.list.map((n) => n.kind)).toEqual(['error']);
    expect(engine.fileImport).toBeNull();
  });

  it('a GGUF is copied with progress, registered and loaded; a copy llama.cpp cannot load is removed again', async () => {
    const gate = deferred<void>();
    let report: ((bytes: number) => void) | undefined;
    const { api, engine } = setup(async (file, onProgress) => {
      report = onProgress;
      await gate.promise;
      return { fileName: 'tiny.gguf', sizeBytes: file.size };
    });
    const file = new File([ggufBlob({ name: 'tiny' })], 'tiny.gguf');
    api.on('models.registerLocal', (data) => ({ fileName: data.fileName, displayName: data.displayName, sizeBytes: data.sizeBytes, addedAt: 1 }) as never);
    api.on('engine.loadWllama', () => {
      throw new Error('llama_model_load: truncated');
    });
    api.on('engine.status', () => status({ state: 'error', errorCode: 'load' }));
    api.on('models.deleteLocal', () => undefined);
    const run = engine.openLocalGguf(file);
    await flush();
    expect(engine.fileImport?.stage).toBe('copying');
    report!(10);
    expect(engine.fileImport).toMatchObject({ writtenBytes: 10, totalBytes: file.size });
    gate.resolve();
    await run;
    expect(api.callsOf('models.registerLocal')).toEqual([{ fileName: 'tiny.gguf', displayName: 'tiny.gguf', sizeBytes: file.size }]);
    expect(api.callsOf('engine.loadWllama')).toEqual([{ source: { type: 'opfs', fileName: 'tiny.gguf' } }]);
    expect(api.callsOf('models.deleteLocal')).toEqual([{ fileName: 'tiny.gguf' }]);
    expect(engine.fileImport).toBeNull();
  });

  it('cancelling the copy aborts it and says it was cancelled (not an error)', async () => {
    const { engine, notices } = setup(
      (_file, _progress, options) =>
        new Promise((_resolve, reject) => options?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))),
    );
    const run = engine.openLocalGguf(new File([ggufBlob()], 'm.gguf'));
    await flush();
    engine.cancelFileImport();
    await run;
    expect(notices.list.map((n) => [n.kind, n.text])).toEqual([['info', 'Copying “m.gguf” was cancelled.']]);
  });
});
