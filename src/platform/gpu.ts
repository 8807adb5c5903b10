/**
 * WebGPU probe: is there an adapter, and does it support `shader-f16` (else WebLLM must use the
 * q4f32 model variants)? Runs in the engine host (offscreen document); the service worker that
 * runs WebLLM sees the same physical adapter.
 */
import type { GpuInfo } from '../model/engine';

/** The part of a `GPUAdapter` the probe reads (WebGPU spec, `GPUAdapter.features` / `.info`). */
export interface GpuAdapterLike {
  readonly features: { has(feature: string): boolean };
  /** `GPUAdapterInfo` (Chrome 127+); older Chrome only has `requestAdapterInfo()`. */
  readonly info?: { vendor?: string; architecture?: string; description?: string; device?: string };
  requestAdapterInfo?: () => Promise<{ vendor?: string; architecture?: string; description?: string; device?: string }>;
  /** `true` for a software adapter (e.g. SwiftShader). */
  readonly isFallbackAdapter?: boolean;
}

/** The part of `navigator.gpu` the probe calls. */
export interface GpuLike {
  requestAdapter(options?: { powerPreference?: 'low-power' | 'high-performance' }): Promise<GpuAdapterLike | null>;
}

/** What `probeGpu` returns when there is no usable adapter. */
const NO_GPU: GpuInfo = { available: false, shaderF16: false, adapter: null };

/** Milliseconds after which a `requestAdapter()` that never settles counts as "no adapter". */
export const GPU_PROBE_TIMEOUT_MS = 5_000;

/**
 * Probes WebGPU. Never throws and never hangs: a missing `navigator.gpu`, a `null` adapter, an
 * exception or a `requestAdapter()` slower than `timeoutMs` all give `{ available: false }`.
 * @param gpu the WebGPU entry point (default `navigator.gpu`; tests pass a fake).
 * @param timeoutMs upper bound on the probe (ms).
 * @returns `adapter` is a readable label: the adapter's description, else "vendor architecture",
 *   with " (software)" appended for a fallback adapter; `null` when the browser reports nothing.
 */
export async function probeGpu(
  gpu: GpuLike | null | undefined = (globalThis.navigator as { gpu?: GpuLike } | undefined)?.gpu,
  timeoutMs: number = GPU_PROBE_TIMEOUT_MS,
): Promise<GpuInfo> {
  if (!gpu || typeof gpu.requestAdapter !== 'function') return NO_GPU;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    const adapter = await Promise.race([gpu.requestAdapter({ powerPreference: 'high-performance' }), timeout]);
    if (!adapter) return NO_GPU;
    let shaderF16 = false;
    try {
      shaderF16 = adapter.features.has('shader-f16');
    } catch {
      shaderF16 = false;
    }
    return { available: true, shaderF16, adapter: await describeAdapter(adapter) };
  } catch {
    return NO_GPU;
  } finally {
    clearTimeout(timer);
  }
}

/** Builds the adapter label (see `probeGpu`). Never throws. */
async function describeAdapter(adapter: GpuAdapterLike): Promise<string | null> {
  let info = adapter.info;
  if (!info && typeof adapter.requestAdapterInfo === 'function') {
    try {
      info = await adapter.requestAdapterInfo();
    } catch {
      info = undefined;
    }
  }
  const description = info?.description?.trim();
  const label =
    description ||
    [info?.vendor, info?.architecture]
      .map((s) => s?.trim())
      .filter(Boolean)
      .join(' ') ||
    null;
  if (adapter.isFallbackAdapter) return `${label ?? 'WebGPU'} (software)`;
  return label;
}
