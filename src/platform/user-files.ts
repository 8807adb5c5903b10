/**
 * Files of the user's data in the Origin Private File System, for "Erase everything": every
 * top-level OPFS entry except `models/` is user data (staging files of exports and imports, and
 * any folder a later version adds), so all of it is removed. `models/` holds GGUF model files the
 * user opened or downloaded: weights, not anything the user said, so they stay (delete them one by
 * one in the Models panel).
 */
import { MODELS_DIR, opfsRoot, type StorageRoot } from './model-files';

/**
 * Removes every top-level OPFS entry except `models/` (folders recursively).
 * @param options.root the OPFS root (tests pass an in-memory one).
 * @returns the names removed, sorted.
 * @throws ModelFileError('unsupported') where there is no OPFS; the browser's DOMException when an
 *   entry cannot be removed (the others are still tried first).
 */
export async function eraseUserFiles(options: { root?: StorageRoot } = {}): Promise<string[]> {
  const root = await (options.root ?? opfsRoot)();
  const names: string[] = [];
  for await (const [name] of root.entries()) if (name !== MODELS_DIR) names.push(name);
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
