/**
 * The model files the engines downloaded, as one list with sizes, deletable one model at a time
 * ("Erase → downloaded models"). Where each engine keeps them:
 * - WebLLM: Cache Storage `webllm/model`, `webllm/config`, `webllm/wasm` (and, with its
 *   IndexedDB cache option, which Recall does not set, IndexedDB databases of those names);
 * - transformers.js: Cache Storage `transformers-cache`;
 * both keyed by the file's Hugging Face URL (`https://huggingface.co/<owner>/<repo>/resolve/…`),
 * so a model is the `<owner>/<repo>` of its URLs;
 * - wllama (catalog GGUFs): OPFS `cache/` (`WLLAMA_CACHE_DIR`), one file `<sha1 of URL>_<name>`
 *   plus its `__metadata__<that>` file;
 * - GGUF files the user opened: OPFS `models/` (with their `localModels` rows, which the core deletes).
 * Sizes: a cached response's `Content-Length`, else its body's size (a Blob, not read into
 * memory); OPFS files' sizes. A model that is loaded keeps running from memory after its files are
 * deleted; the next load downloads it again.
 */
import type { DownloadedModel } from '../model/engine';
import { MODELS_DIR, opfsRoot, type DirectoryHandleLike, type FileHandleLike, type StorageRoot } from './model-files';

/** OPFS folder of wllama's download cache (its `CacheManager`'s OPFS backend). */
export const WLLAMA_CACHE_DIR = 'cache';
/** Prefix of wllama's metadata files in `WLLAMA_CACHE_DIR`. */
const WLLAMA_METADATA_PREFIX = '__metadata__';

/** Cache Storage names of the engines, and which engine each belongs to. */
export const MODEL_CACHES: Readonly<Record<string, DownloadedModel['engine']>> = {
  'webllm/model': 'webllm',
  'webllm/config': 'webllm',
  'webllm/wasm': 'webllm',
  'transformers-cache': 'transformers',
};

/** Where the lists read from (the browser's by default; tests pass fakes). */
export interface ModelStorage {
  caches?: Pick<CacheStorage, 'keys' | 'open'> | null;
  root?: StorageRoot;
}

/** The model a cached URL belongs to: `<owner>/<repo>` of a Hugging Face URL, else the URL's host and first path segment. */
export function modelOfUrl(url: string): string {
  const u = new URL(url);
  const parts = u.pathname.split('/').filter(Boolean);
  if (/(^|\.)(huggingface\.co|hf\.co)$/.test(u.hostname)) return parts.slice(0, 2).join('/');
  return [u.hostname, parts[0] ?? ''].filter(Boolean).join('/');
}

/** The display name of a wllama cache file `<40 hex>_<name>` (the name), else the file name. */
const wllamaName = (fileName: string) => fileName.replace(/^[0-9a-f]{40}_/, '');

async function folder(root: DirectoryHandleLike, name: string): Promise<DirectoryHandleLike | null> {
  try {
    return await root.getDirectoryHandle(name);
  } catch {
    return null;
  }
}

async function filesOf(dir: DirectoryHandleLike): Promise<{ name: string; size: number }[]> {
  const out: { name: string; size: number }[] = [];
  for await (const [name, handle] of dir.entries()) if (handle.kind === 'file') out.push({ name, size: (await (handle as FileHandleLike).getFile()).size });
  return out;
}

/** The size in bytes of a cached response: its `Content-Length`, else its body as a Blob. */
async function responseBytes(response: Response): Promise<number> {
  const length = Number(response.headers.get('content-length'));
  if (Number.isFinite(length) && length > 0) return length;
  return (await response.blob()).size;
}

/**
 * Lists every downloaded model (see module doc), biggest first.
 * @returns one entry per model and place: `id` (pass it to `deleteDownloadedModel`), engine, name, bytes, files.
 * @throws nothing for a missing store (no Cache Storage, no OPFS: that part lists nothing).
 */
export async function listDownloadedModels(storage: ModelStorage = {}): Promise<DownloadedModel[]> {
  const out = new Map<string, DownloadedModel>();
  const add = (id: string, engine: DownloadedModel['engine'], name: string, bytes: number) => {
    const entry = out.get(id) ?? { id, engine, name, sizeBytes: 0, files: 0 };
    entry.sizeBytes += bytes;
    entry.files += 1;
    out.set(id, entry);
  };
  const caches = storage.caches === undefined ? (globalThis.caches ?? null) : storage.caches;
  if (caches) {
    for (const cacheName of await caches.keys()) {
      const engine = MODEL_CACHES[cacheName];
      if (!engine) continue;
      const cache = await caches.open(cacheName);
      for (const request of await cache.keys()) {
        const response = await cache.match(request);
        const model = modelOfUrl(request.url);
        add(`${engine}:${model}`, engine, model, response ? await responseBytes(response) : 0);
      }
    }
  }
  const root = await (storage.root ?? opfsRoot)().catch(() => null);
  if (root) {
    const wllama = await folder(root, WLLAMA_CACHE_DIR);
    for (const f of wllama ? await filesOf(wllama) : []) {
      if (!f.name.startsWith(WLLAMA_METADATA_PREFIX)) add(`wllama:${f.name}`, 'wllama', wllamaName(f.name), f.size);
    }
    const local = await folder(root, MODELS_DIR);
    for (const f of local ? await filesOf(local) : []) add(`local:${f.name}`, 'local', f.name, f.size);
  }
  return [...out.values()].sort((a, b) => b.sizeBytes - a.sizeBytes || a.id.localeCompare(b.id));
}

/**
 * Deletes one downloaded model's files (an `id` of `listDownloadedModels`): every cached URL of
 * that model in its engine's caches, or the wllama file and its metadata, or the opened GGUF file
 * (`local:`; the core also deletes its `localModels` row).
 * @returns the number of files deleted (0 when none was left).
 * @throws Error for an id of no known kind.
 */
export async function deleteDownloadedModel(id: string, storage: ModelStorage = {}): Promise<number> {
  const colon = id.indexOf(':');
  const kind = id.slice(0, colon);
  const rest = id.slice(colon + 1);
  let deleted = 0;
  if (kind === 'webllm' || kind === 'transformers') {
    const caches = storage.caches === undefined ? (globalThis.caches ?? null) : storage.caches;
    if (!caches) return 0;
    for (const cacheName of await caches.keys()) {
      if (MODEL_CACHES[cacheName] !== kind) continue;
      const cache = await caches.open(cacheName);
      for (const request of await cache.keys()) if (modelOfUrl(request.url) === rest && (await cache.delete(request))) deleted += 1;
    }
    return deleted;
  }
  if (kind !== 'wllama' && kind !== 'local') throw new Error(`Unknown downloaded model id "${id}"`);
  const root = await (storage.root ?? opfsRoot)().catch(() => null);
  const dir = root ? await folder(root, kind === 'wllama' ? WLLAMA_CACHE_DIR : MODELS_DIR) : null;
  if (!dir) return 0;
  for (const name of kind === 'wllama' ? [rest, `${WLLAMA_METADATA_PREFIX}${rest}`] : [rest]) {
    try {
      await dir.removeEntry(name);
      deleted += 1;
    } catch (error) {
      if ((error as { name?: string }).name !== 'NotFoundError') throw error;
    }
  }
  return deleted;
}

/**
 * Deletes every Cache Storage cache that is not an engine's model cache (`MODEL_CACHES`), for
 * "Erase all data": Recall writes no user data there, but nothing the extension's pages put in a
 * cache of another name may outlive the erase.
 * @returns the names deleted, sorted (none where there is no Cache Storage).
 */
export async function eraseUserCaches(caches: Pick<CacheStorage, 'keys' | 'delete'> | null = globalThis.caches ?? null): Promise<string[]> {
  if (!caches) return [];
  const doomed = (await caches.keys()).filter((name) => !Object.hasOwn(MODEL_CACHES, name)).sort();
  for (const name of doomed) await caches.delete(name);
  return doomed;
}
