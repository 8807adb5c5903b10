/**
 * Loads the vector scan's WebAssembly SIMD kernel (`./scan.wat`, compiled bytes in `./scan-wasm.ts`).
 * Compiled synchronously once per realm (about 1.2 KB: far below the 4 KB a browser's main thread
 * allows for synchronous compilation); extension pages need `'wasm-unsafe-eval'` in their CSP
 * (`wxt.config.ts`). Where WebAssembly or its SIMD proposal is missing, or the CSP forbids
 * compiling, `scanKernelModule()` is `null` and the index scans in plain JS (`../scan.ts`).
 */
import { SCAN_WASM_BASE64 } from './scan-wasm';

/** The kernel's exports (see `./scan.wat` for the memory layout each reads and writes). */
export interface ScanKernelExports {
  /** Bounds of int8 codes against an i16 query: `(codes, meta, out, n, stride, q, qscale, qnorm, qerr, slack)`; pointers are byte offsets. */
  bounds(codes: number, meta: number, out: number, n: number, stride: number, q: number, qscale: number, qnorm: number, qerr: number, slack: number): void;
  /** Int8 codes and constants of `n` f32 vectors: `(src, n, dim, codes, stride, meta)`, `dim` a multiple of 16. */
  encode(src: number, n: number, dim: number, codes: number, stride: number, meta: number): void;
  /** Exact f32 dot products `(data, n, dim, q, out)`, `dim` a multiple of 16 (bench only). */
  dotsF32(data: number, n: number, dim: number, q: number, out: number): void;
}

let compiled: WebAssembly.Module | null | undefined;
let failure: string | null = null;

/** The compiled kernel module, or `null` when this realm cannot compile it (see `scanKernelFailure`). */
export function scanKernelModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  try {
    if (typeof WebAssembly !== 'object') throw new Error('no WebAssembly');
    const bin = atob(SCAN_WASM_BASE64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i += 1) bytes[i] = bin.charCodeAt(i);
    compiled = new WebAssembly.Module(bytes);
  } catch (e) {
    failure = e instanceof Error ? e.message : String(e);
    compiled = null;
  }
  return compiled;
}

/** Why the kernel could not be compiled (`null` when it was, or was not tried yet). */
export const scanKernelFailure = (): string | null => failure;

/** A kernel instance over `memory` (synchronous: the module is tiny). @throws Error when `scanKernelModule()` is null. */
export function instantiateScanKernel(memory: WebAssembly.Memory): ScanKernelExports {
  const mod = scanKernelModule();
  if (!mod) throw new Error(`instantiateScanKernel: the kernel is unavailable (${failure ?? 'unknown'})`);
  return new WebAssembly.Instance(mod, { env: { memory } }).exports as unknown as ScanKernelExports;
}
