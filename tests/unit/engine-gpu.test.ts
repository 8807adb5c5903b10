/**
 * WebGPU probe. Faked: `navigator.gpu` (Node has no WebGPU); the fakes return what Chrome's
 * adapters expose (`features`, `info`, `isFallbackAdapter`).
 */
import { describe, expect, it } from 'vitest';
import { probeGpu, type GpuAdapterLike, type GpuLike } from '../../src/platform/gpu';

const gpuWith = (adapter: GpuAdapterLike | null): GpuLike => ({ requestAdapter: async () => adapter });
const features = (...names: string[]) => new Set(names);

describe('probeGpu', () => {
  it('reports shader-f16 and the adapter description', async () => {
    const info = await probeGpu(
      gpuWith({
        features: features('shader-f16', 'timestamp-query'),
        info: { vendor: 'nvidia', architecture: 'ampere', description: 'NVIDIA GeForce RTX 3060' },
      }),
    );
    expect(info).toEqual({ available: true, shaderF16: true, adapter: 'NVIDIA GeForce RTX 3060' });
  });

  it('reports a software adapter without shader-f16 (SwiftShader)', async () => {
    const info = await probeGpu(
      gpuWith({ features: features(), info: { vendor: 'google', architecture: 'swiftshader', description: '' }, isFallbackAdapter: true }),
    );
    expect(info).toEqual({ available: true, shaderF16: false, adapter: 'google swiftshader (software)' });
  });

  it('uses requestAdapterInfo() on older Chrome', async () => {
    const info = await probeGpu(gpuWith({ features: features('shader-f16'), requestAdapterInfo: async () => ({ vendor: 'intel', architecture: 'gen-12lp' }) }));
    expect(info).toEqual({ available: true, shaderF16: true, adapter: 'intel gen-12lp' });
  });

  it('says unavailable without navigator.gpu, with a null adapter, on errors and on a hung request', async () => {
    const none = { available: false, shaderF16: false, adapter: null };
    expect(await probeGpu(undefined)).toEqual(none);
    expect(await probeGpu(null)).toEqual(none);
    expect(await probeGpu(gpuWith(null))).toEqual(none);
    expect(await probeGpu({ requestAdapter: async () => Promise.reject(new Error('GPU process crashed')) })).toEqual(none);
    expect(await probeGpu({ requestAdapter: () => new Promise(() => undefined) }, 20)).toEqual(none);
  });

  it('still reports the adapter when reading its info fails', async () => {
    const info = await probeGpu(gpuWith({ features: features(), requestAdapterInfo: async () => Promise.reject(new Error('nope')) }));
    expect(info).toEqual({ available: true, shaderF16: false, adapter: null });
  });

  it('uses navigator.gpu by default (absent in Node)', async () => {
    expect((await probeGpu()).available).toBe(false);
  });
});
