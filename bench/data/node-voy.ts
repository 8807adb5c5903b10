/** Node-side loader of voy-search's WASM (tests, benchmark, evaluation command). */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Reads `node_modules/voy-search/voy_search_bg.wasm`. @throws when the package is not installed. */
export async function nodeVoyWasm(): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = await readFile(require.resolve('voy-search/voy_search_bg.wasm'));
  return new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}
