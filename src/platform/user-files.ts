/**
 * Files of the user's data in the Origin Private File System, for "Erase all data": every
 * top-level OPFS entry except the model folders is user data (staging files of exports and
 * imports, and any folder a later version adds), so all of it is removed. `models/` holds GGUF
 * model files the user opened and `cache/` wllama's downloaded GGUFs: weights, not anything the
 * user said, so they stay (delete them one by one under "Erase → downloaded models").
 */
import { WLLAMA_CACHE_DIR } from './model-caches';
import { MODELS_DIR, opfsRoot, type StorageRoot } from './model-files';

/** Top-level OPFS folders of model files, kept by `eraseUserFiles`. */
export const MODEL_FOLDERS: readonly string[] = [MODELS_DIR, WLLAMA_CACHE_DIR];

/**
 * Removes every top-level OPFS entry except `MODEL_FOLDERS` (folders recursively).
 * @param options.root the OPFS root (tests pass an in-memory one).
 * @returns the names removed, sorted.
 * @throws ModelFileError('unsupported') where there is no OPFS; the browser's DOMException when an
 *   entry cannot be removed (the others are still tried first).
 */
export async function eraseUserFiles(options: { root?: StorageRoot } = {}): Promise<string[]> {
  const root = await (options.root ?? opfsRoot)();
  const names: string[] = [];
  for await (const [name] of root.entries()) if (!MODEL_FOLDERS.includes(name)) names.push(name);
  const failures: unknown[] = [];
  for (const name of names) {
    try {
      await root.removeEntry(name, { recursive: true });
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
  return names.sort();
}
