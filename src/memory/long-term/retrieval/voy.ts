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
