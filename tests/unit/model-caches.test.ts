/**
 * "Erase → downloaded models" (issue 13, item 4): every engine's downloaded files are listed per
 * model with their sizes and deleted one model at a time, through the core. Cache Storage is a
 * small in-memory stand-in (Node has none) keyed by URL like the browser's; OPFS is the in-memory
 * one of tests/helpers/fixture-opfs.ts. The sizes are the bytes written below, summed by hand.
 */
import { describe, expect, it } from 'vitest';
import { deleteDownloadedModel, eraseUserCaches, listDownloadedModels, modelOfUrl } from '../../src/platform/model-caches';
import { useTestCores } from '../helpers/core-harness';
import { createFakeOpfs, type FakeOpfs } from '../helpers/fixture-opfs';

const cores = useTestCores({ loadEmbedder: false });

/** An in-memory `CacheStorage` (the parts the list uses: keys, open, and a cache's keys/match/delete/put). */
function fakeCaches(): Pick<CacheStorage, 'keys' | 'open'> {
  const stores = new Map<string, Map<string, Response>>();
  const cacheOf = (name: string) => {
    const entries = stores.get(name) ?? new Map<string, Response>();
    stores.set(name, entries);
    return {
      keys: async () => [...entries.keys()].map((url) => new Request(url)),
      match: async (request: Request) => entries.get(request.url)?.clone(),
      delete: async (request: Request) => entries.delete(request.url),
      put: async (url: string, response: Response) => void entries.set(url, response),
    };
  };
  return { keys: async () => [...stores.keys()], open: async (name: string) => cacheOf(name) as unknown as Cache };
}

async function put(caches: Pick<CacheStorage, 'open'>, cache: string, url: string, bytes: number, withLength = true) {
  const headers = withLength ? { 'content-length': String(bytes) } : undefined;
  await ((await caches.open(cache)) as unknown as { put: (u: string, r: Response) => Promise<void> }).put(
    url,
    new Response(new Uint8Array(bytes), { headers }),
  );
}

async function writeOpfs(opfs: FakeOpfs, dir: string, name: string, bytes: number) {
  const folder = await (await opfs.root()).getDirectoryHandle(dir, { create: true });
  const writable = await (await folder.getFileHandle(name, { create: true })).createWritable();
  await writable.write(new Uint8Array(bytes));
  await writable.close();
}

const HF = 'https://huggingface.co';
const QWEN = 'mlc-ai/Qwen2.5-0.5B-Instruct-q4f32_1-MLC';
const MINILM = 'Xenova/paraphrase-multilingual-MiniLM-L12-v2';
const SHA = 'b'.repeat(40);

describe('downloaded models', () => {
  it('are listed per model with their sizes and deleted one by one; nothing else is touched', async () => {
    const caches = fakeCaches();
    const opfs = createFakeOpfs();
    await put(caches, 'webllm/model', `${HF}/${QWEN}/resolve/main/params_shard_0.bin`, 3000);
    await put(caches, 'webllm/model', `${HF}/${QWEN}/resolve/main/params_shard_1.bin`, 2000, false); // no Content-Length: the body's size
    await put(caches, 'webllm/config', `${HF}/${QWEN}/resolve/main/mlc-chat-config.json`, 10);
    await put(caches, 'transformers-cache', `${HF}/${MINILM}/resolve/main/onnx/model_quantized.onnx`, 700);
    await put(caches, 'transformers-cache', `${HF}/${MINILM}/resolve/main/tokenizer.json`, 50);
    await put(caches, 'some-other-cache', `${HF}/${QWEN}/x`, 99); // not an engine's cache: neither listed nor deleted
    await writeOpfs(opfs, 'cache', `${SHA}_stories.gguf`, 400);
    await writeOpfs(opfs, 'cache', `__metadata__${SHA}_stories.gguf`, 5);
    await writeOpfs(opfs, 'models', 'mine.gguf', 120);
    await writeOpfs(opfs, 'backups', 'export.json', 77); // not a model
    const { core, db } = await cores.start({ embedder: () => null, noEmbedderModel: true, extra: { modelStorage: { caches, root: opfs.root } } });
    await db.localModels.put({ fileName: 'mine.gguf', displayName: 'mine.gguf', sizeBytes: 120, source: 'file', addedAt: 1 });

    expect(await core.downloadedModels()).toEqual([
      { id: `webllm:${QWEN}`, engine: 'webllm', name: QWEN, sizeBytes: 3000 + 2000 + 10, files: 3 },
      { id: `transformers:${MINILM}`, engine: 'transformers', name: MINILM, sizeBytes: 750, files: 2 },
      { id: `wllama:${SHA}_stories.gguf`, engine: 'wllama', name: 'stories.gguf', sizeBytes: 400, files: 1 },
      { id: 'local:mine.gguf', engine: 'local', name: 'mine.gguf', sizeBytes: 120, files: 1 },
    ]);

    expect(await core.deleteDownloadedModel(`webllm:${QWEN}`)).toEqual({ deleted: 3 });
    expect(await core.deleteDownloadedModel(`wllama:${SHA}_stories.gguf`)).toEqual({ deleted: 2 }); // the file and its metadata
    expect(await core.deleteDownloadedModel('local:mine.gguf')).toEqual({ deleted: 1 });
    expect(await db.localModels.count()).toBe(0);
    expect((await core.downloadedModels()).map((m) => m.id)).toEqual([`transformers:${MINILM}`]);
    expect(opfs.list(['cache'])).toEqual([]);
    expect(opfs.list(['backups'])).toEqual(['export.json']);
    expect((await (await caches.open('some-other-cache')).keys()).length).toBe(1);
    // Deleting again finds nothing; an unknown kind of id is an error.
    expect(await deleteDownloadedModel(`webllm:${QWEN}`, { caches, root: opfs.root })).toBe(0);
    await expect(deleteDownloadedModel('nope:x', { caches, root: opfs.root })).rejects.toThrow(/Unknown downloaded model id/);
  });

  it('names a model by the owner/repo of its Hugging Face URL', () => {
    expect(modelOfUrl(`${HF}/${MINILM}/resolve/main/onnx/model.onnx`)).toBe(MINILM);
    expect(modelOfUrl('https://cdn-lfs.hf.co/repos/ab/cd/file')).toBe('repos/ab');
    expect(modelOfUrl('https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/main/x.wasm')).toBe('raw.githubusercontent.com/mlc-ai');
  });

  it('"erase all data" deletes every cache but the engines\' model caches', async () => {
    const caches = fakeCaches();
    const deleted: string[] = [];
    await put(caches, 'webllm/model', `${HF}/${QWEN}/resolve/main/params_shard_0.bin`, 1);
    await put(caches, 'transformers-cache', `${HF}/${MINILM}/resolve/main/tokenizer.json`, 1);
    await put(caches, 'page-cache', 'https://example.com/notes', 1);
    const withDelete = { keys: () => caches.keys(), delete: async (name: string) => (deleted.push(name), true) };
    expect(await eraseUserCaches(withDelete)).toEqual(['page-cache']);
    expect(deleted).toEqual(['page-cache']);
    expect(await eraseUserCaches(null)).toEqual([]);
  });

  it('lists nothing where there is no Cache Storage and no OPFS', async () => {
    expect(await listDownloadedModels({ caches: null, root: () => Promise.reject(new Error('no OPFS')) })).toEqual([]);
  });
});
