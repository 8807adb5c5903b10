/** Types of voy-search's wasm-bindgen glue module, imported directly so the WASM can be instantiated by hand. */
declare module 'voy-search/voy_search_bg.js' {
  export * from 'voy-search';
  export function __wbg_set_wasm(exports: WebAssembly.Exports): void;
}
