/**
 * URLs of files shipped inside the extension package (no CDN at run time). The files are copied
 * into the build by `wxt.config.ts` (RUNTIME_ASSETS); this module is the single list of their
 * paths at run time. Browser-only.
 */
import browser from 'webextension-polyfill';

type PublicPath = Parameters<typeof browser.runtime.getURL>[0];
const url = (path: string) => browser.runtime.getURL(path as PublicPath);

/** llama.cpp WASM used by wllama. */
export const wllamaWasmUrl = (): string => url('/runtime/wllama/wllama.wasm');
/** voy-search WASM. */
export const voyWasmUrl = (): string => url('/runtime/voy/voy_search_bg.wasm');
/** pdf.js's worker script (a module worker), for reading PDFs (`src/core/pdf.ts`). */
export const pdfWorkerUrl = (): string => url('/runtime/pdfjs/pdf.worker.min.mjs');
/** Base URL of models shipped in the package (the offline install option): `/models/<model id>/…`. */
export const packagedModelsUrl = (): string => url('/models/');

/** Fetches voy-search's WASM bytes from the package. @throws Error when the file is missing. */
export async function loadVoyWasm(): Promise<ArrayBuffer> {
  const response = await fetch(voyWasmUrl());
  if (!response.ok) throw new Error(`voy-search WASM missing from the package (${response.status})`);
  return response.arrayBuffer();
}

/**
 * The package's model manifest (`/models/packaged.json`). A normal build ships `{}`; an offline
 * install that ships its embedding model under `/models/<id>/` writes
 * `{ "embeddingModelId": "<id>" }`. `null` when it names no model or is invalid.
 */
export async function readPackagedModels(): Promise<{ embeddingModelId: string } | null> {
  try {
    const response = await fetch(url('/models/packaged.json'));
    if (!response.ok) return null;
    const json: unknown = await response.json();
    if (json && typeof json === 'object' && typeof (json as { embeddingModelId?: unknown }).embeddingModelId === 'string') {
      return { embeddingModelId: (json as { embeddingModelId: string }).embeddingModelId };
    }
  } catch {
    // no manifest: a normal install
  }
  return null;
}

/**
 * The WebLLM model libraries this package ships (file names from
 * `/runtime/webllm/packaged.json`, generated at build time). `[]` when the build ships none or the
 * manifest is missing or invalid (then no GPU model is offered).
 */
export async function readPackagedWebllmLibs(): Promise<string[]> {
  try {
    const response = await fetch(url('/runtime/webllm/packaged.json'));
    if (!response.ok) return [];
    const json: unknown = await response.json();
    const libraries = (json as { libraries?: unknown } | null)?.libraries;
    return Array.isArray(libraries) ? libraries.filter((l): l is string => typeof l === 'string') : [];
  } catch {
    return [];
  }
}
