/**
 * Loads voy-search (a k-d tree nearest-neighbour index compiled to WASM, https://github.com/tantaraio/voy).
 *
 * voy-search 0.6.3 ships a wasm-pack "bundler" build, so the WASM is instantiated by hand: the
 * glue module `voy-search/voy_search_bg.js` is the import object and `__wbg_set_wasm` installs
 * the instance. The glue module keeps that instance in a module-level variable, so there must be
 * exactly one instance per JS context: every user of Voy in a context must go through `loadVoy`.
 */
import * as voyGlue from 'voy-search/voy_search_bg.js';

/** The Voy class of the loaded module. */
export type VoyClass = typeof voyGlue.Voy;
/** One Voy index object. */
export type VoyInstance = InstanceType<VoyClass>;

let loaded: Promise<VoyClass> | null = null;

/**
 * Instantiates voy-search's WASM once per JS context and returns its `Voy` class. Later calls
 * return the same class whatever loader they pass.
 * @param loadWasm returns the bytes of `voy_search_bg.wasm` (browser: fetched from the package,
 *   see `src/platform/assets.ts`; Node: read from `node_modules/voy-search/`).
 * @throws Error when the bytes are missing or not a valid module; a failed load is not cached,
 *   so a later call retries.
 */
export function loadVoy(loadWasm: () => Promise<BufferSource>): Promise<VoyClass> {
  loaded ??= (async () => {
    const bytes = await loadWasm();
    const { instance } = await WebAssembly.instantiate(bytes, {
      './voy_search_bg.js': voyGlue as unknown as WebAssembly.ModuleImports,
    });
    voyGlue.__wbg_set_wasm(instance.exports);
    return voyGlue.Voy;
  })().catch((error: unknown) => {
    loaded = null;
    throw new Error(`Could not load the voy-search WASM module: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  });
  return loaded;
}

/** Amplitude of the per-component jitter added to vectors given to Voy. */
const JITTER = 1e-6;

/** 32-bit FNV-1a of a string, seed of the per-id jitter. */
function seedOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i += 1) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0 || 1;
}

/** The vector Voy stores for `id`: `v` plus deterministic xorshift32 jitter in [−JITTER, JITTER). */
function jittered(id: string, v: Float32Array): number[] {
  let x = seedOf(id);
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = v[i]! + ((x >>> 0) / 4294967296 - 0.5) * 2 * JITTER;
  }
  return out;
}

/** The Voy resource of one vector: id `id`, embedding `jittered(id, v)` (see `./vector.ts` on why). */
export const voyResource = (id: string, v: Float32Array) => ({ embeddings: [{ id, title: '', url: '', embeddings: jittered(id, v) }] });
