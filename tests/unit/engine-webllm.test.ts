/**
 * WebLLM engine, tested at its boundary. Faked: only WebLLM's `MLCEngine` inside the service
 * worker (it needs WebGPU and downloads weights from model hubs, neither available here) — see
 * tests/helpers/fixture-webllm.ts. Real: our proxy engine, WebLLM's own port client
 * (`WebWorkerMLCEngine`), WebLLM's `ExtensionServiceWorkerMLCEngineHandler`, our service-worker
 * registration, and the message protocol between them (JSON over a fake `chrome.runtime` port).
 */
import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createWebLLMEngine,
  createWebLLMProgressMapper,
  DEFAULT_WEBLLM_MODEL,
  libraryNotPackagedMessage,
  mapWebLLMLoadError,
  shippedWebllmModels,
  webllmLibraryFileName,
  WEBLLM_MODELS,
  webllmVariantFor,
  type WebLLMChatEngine,
} from '../../src/engines/webllm';
import { EngineError } from '../../src/engines/types';
import type { LoadProgress, GpuInfo } from '../../src/model/engine';
import { createPortPair, createWebLLMWorld, FAKE_EXTENSION_ID, WEBLLM_PROGRESS_SCRIPT } from '../helpers/fixture-webllm';
import { registerWebLLMServiceWorker } from '../../src/engines/webllm';

const F16: GpuInfo = { available: true, shaderF16: true, adapter: 'fake f16' };
const NO_F16: GpuInfo = { available: true, shaderF16: false, adapter: 'SwiftShader (software)' };
const NO_GPU: GpuInfo = { available: false, shaderF16: false, adapter: null };

let engines: WebLLMChatEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.map((e) => e.unload()));
  engines = [];
});

/** A package that ships every model library (what `npm run fetch:webllm-libs` + build produce). */
const shipsEveryLib = async (url: string) => `chrome-extension://${FAKE_EXTENSION_ID}/runtime/webllm/${url.split('/').pop()}`;

function setup(gpu: GpuInfo = F16, extra: Parameters<typeof createWebLLMEngine>[0] = {}) {
  const world = createWebLLMWorld();
  const engine = createWebLLMEngine({ connect: world.connect, probeGpu: async () => gpu, resolvePackagedLib: shipsEveryLib, ...extra });
  engines.push(engine);
  return { world, engine };
}

describe('model list and variants', () => {
  it('offers 0.5B–3B prebuilt models whose ids (and q4f32 twins) exist in WebLLM 0.2.86', () => {
    const known = new Map(prebuiltAppConfig.model_list.map((m) => [m.model_id, m]));
    expect(WEBLLM_MODELS.length).toBeGreaterThanOrEqual(3);
    for (const option of WEBLLM_MODELS) {
      expect(option.id).toMatch(/-q4f16_1-MLC$/);
      expect(known.has(option.id)).toBe(true);
      expect(known.has(webllmVariantFor(option.id, NO_F16))).toBe(true);
      expect(option.contextWindow).toBe(known.get(option.id)!.overrides?.context_window_size);
      const billions = Number(/-(\d+(?:\.\d+)?)B-/.exec(option.id)![1]);
      expect(billions).toBeGreaterThanOrEqual(0.5);
      expect(billions).toBeLessThanOrEqual(3);
    }
    expect(DEFAULT_WEBLLM_MODEL).toBe('Qwen2.5-1.5B-Instruct-q4f16_1-MLC');
    expect(WEBLLM_MODELS.find((m) => m.recommended)?.id).toBe(DEFAULT_WEBLLM_MODEL);
  });

  it('estimates q4f16 download size as parameters × 4.5 bits', () => {
    // Qwen2.5-1.5B has 1.54e9 parameters: 1.54e9 × 4.5 / 8 = 866,250,000 bytes.
    expect(WEBLLM_MODELS.find((m) => m.id === DEFAULT_WEBLLM_MODEL)!.sizeBytes).toBe(866_250_000);
  });

  it('swaps f16 for f32 only without shader-f16, and is idempotent', () => {
    expect(webllmVariantFor('Qwen2.5-1.5B-Instruct-q4f16_1-MLC', NO_F16)).toBe('Qwen2.5-1.5B-Instruct-q4f32_1-MLC');
    expect(webllmVariantFor('Qwen2.5-0.5B-Instruct-q0f16-MLC', NO_F16)).toBe('Qwen2.5-0.5B-Instruct-q0f32-MLC');
    expect(webllmVariantFor('Qwen2.5-1.5B-Instruct-q4f16_1-MLC', F16)).toBe('Qwen2.5-1.5B-Instruct-q4f16_1-MLC');
    expect(webllmVariantFor('Qwen2.5-1.5B-Instruct-q4f32_1-MLC', NO_F16)).toBe('Qwen2.5-1.5B-Instruct-q4f32_1-MLC');
    expect(webllmVariantFor('Qwen2.5-1.5B-Instruct-q4f32_1-MLC', F16)).toBe('Qwen2.5-1.5B-Instruct-q4f32_1-MLC');
  });
});

describe('progress mapping', () => {
  it('maps WebLLM reports to stages, a monotonic fraction and bytes', () => {
    const map = createWebLLMProgressMapper();
    const out = WEBLLM_PROGRESS_SCRIPT.map(([progress, text]) => map({ progress, timeElapsed: 1, text }));
    expect(out.map((p) => p.stage)).toEqual(['download', 'download', 'download', 'cache', 'compile', 'ready']);
    // download spans 0–0.85, cache 0.85–0.95, compile 0.95–1 (see progress.ts).
    const expected = [0, 0.2125, 0.85, 0.9, 0.975, 1];
    out.forEach((p, i) => expect(p.fraction).toBeCloseTo(expected[i]!, 10));
    expect(out[1]!.loadedBytes).toBe(100 * 1024 * 1024);
    expect(out[1]!.totalBytes).toBe(400 * 1024 * 1024);
    expect(out[3]!.loadedBytes).toBe(200 * 1024 * 1024);
    expect(out[4]!.loadedBytes).toBeUndefined();
  });

  it('uses the cached spans when nothing is downloaded, and null for unknown texts', () => {
    const map = createWebLLMProgressMapper();
    expect(map({ progress: 0.5, timeElapsed: 0, text: 'Loading model from cache[1/2]: 10MB loaded. 50% completed, 0 secs elapsed.' }).fraction).toBe(0.4);
    expect(map({ progress: 0.5, timeElapsed: 0, text: 'Loading GPU shader modules[1/2]: 50% completed, 0 secs elapsed.' }).fraction).toBe(0.9);
    expect(map({ progress: NaN, timeElapsed: 0, text: 'something new' })).toEqual({ stage: 'init', fraction: null, text: 'something new' });
  });
});

describe('load', () => {
  it('loads the q4f32 variant without shader-f16 and reports progress', async () => {
    const { world, engine } = setup(NO_F16);
    const progress: LoadProgress[] = [];
    await engine.load(DEFAULT_WEBLLM_MODEL, { onProgress: (p) => progress.push(p) });
    expect(world.engine.reloads.map((r) => r.modelId)).toEqual([['Qwen2.5-1.5B-Instruct-q4f32_1-MLC']]);
    expect(engine.isLoaded()).toBe(true);
    expect(engine.modelId).toBe('Qwen2.5-1.5B-Instruct-q4f32_1-MLC');
    expect(engine.contextWindow()).toBe(4096);
    expect(engine.kind).toBe('webllm');
    const stages = progress.map((p) => p.stage);
    expect(stages.slice(0, 6)).toEqual(['download', 'download', 'download', 'cache', 'compile', 'ready']);
    expect(progress.at(-1)).toMatchObject({ stage: 'ready', fraction: 1 });
  });

  it('keeps the f16 model on an adapter with shader-f16', async () => {
    const { world, engine } = setup(F16);
    await engine.load(DEFAULT_WEBLLM_MODEL);
    expect(world.engine.reloads[0]!.modelId).toEqual([DEFAULT_WEBLLM_MODEL]);
  });

  it('does not reload a model that is already loaded', async () => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    await engine.load(DEFAULT_WEBLLM_MODEL);
    expect(world.engine.reloads).toHaveLength(1);
  });

  it('without WebGPU fails with no_webgpu and a message offering the CPU engine, without connecting', async () => {
    const { world, engine } = setup(NO_GPU);
    const error = await engine.load(DEFAULT_WEBLLM_MODEL).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe('no_webgpu');
    expect((error as EngineError).message).toMatch(/CPU engine/);
    expect(world.pairs).toHaveLength(0);
    expect(engine.isLoaded()).toBe(false);
  });

  it('rejects an unknown model id with unsupported', async () => {
    const { world, engine } = setup();
    await expect(engine.load('Not-A-Model-q4f16_1-MLC')).rejects.toMatchObject({ code: 'unsupported' });
    expect(world.pairs).toHaveLength(0);
  });

  it.each([
    [Object.assign(new Error('Failed to fetch'), { name: 'TypeError' }), 'download'],
    [
      Object.assign(new Error('The WebGPU device was lost while loading the model. This issue often occurs due to running out of memory (OOM).'), {
        name: 'DeviceLostError',
      }),
      'load',
    ],
    [
      Object.assign(new Error('This model requires WebGPU extension shader-f16, which is not enabled in this browser.'), { name: 'ShaderF16SupportError' }),
      'unsupported',
    ],
    [Object.assign(new Error('Cannot find WebGPU in the environment'), { name: 'WebGPUNotFoundError' }), 'no_webgpu'],
    [new Error('something else broke'), 'load'],
  ])('maps a worker-side failure (%s) to an EngineError code and stays unloaded', async (failure, code) => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL).catch(() => undefined); // start the worker's engine
    await engine.unload();
    world.engine.reloadError = failure;
    const error = await engine.load('Qwen2.5-0.5B-Instruct-q4f16_1-MLC').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe(code);
    expect(engine.isLoaded()).toBe(false);
    expect(engine.modelId).toBeNull();
    world.engine.reloadError = null;
    await engine.load('Qwen2.5-0.5B-Instruct-q4f16_1-MLC');
    expect(engine.isLoaded()).toBe(true);
  });

  it('mapWebLLMLoadError keeps EngineErrors and reads string errors', () => {
    const original = new EngineError('disconnected', 'gone');
    expect(mapWebLLMLoadError(original, 'm')).toBe(original);
    expect(mapWebLLMLoadError('ModelNotFoundError: Cannot find model record in appConfig for m.', 'm').code).toBe('unsupported');
  });

  it('cancels a load through its signal (the worker is told to unload)', async () => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    world.engine.hangReload = true;
    const controller = new AbortController();
    const pending = engine.load('Qwen2.5-0.5B-Instruct-q4f16_1-MLC', { signal: controller.signal });
    await world.settle();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'load', message: /cancelled/ });
    await world.settle();
    expect(world.engine.unloads).toBe(1); // the worker was told to stop loading
    expect(engine.isLoaded()).toBe(false);
    world.engine.hangReload = false;
    await engine.load('Qwen2.5-0.5B-Instruct-q4f16_1-MLC');
    expect(engine.modelId).toBe('Qwen2.5-0.5B-Instruct-q4f16_1-MLC');
  });

  it('uses a WebLLM model library shipped in the package when there is one', async () => {
    const packaged = `chrome-extension://${FAKE_EXTENSION_ID}/runtime/webllm/Qwen2-1.5B-Instruct-q4f16_1_cs1k-webgpu.wasm`;
    const { world, engine } = setup(F16, {
      resolvePackagedLib: async (url) => (url.endsWith('/Qwen2-1.5B-Instruct-q4f16_1_cs1k-webgpu.wasm') ? packaged : null),
    });
    await engine.load(DEFAULT_WEBLLM_MODEL);
    const config = world.engine.appConfigs.at(-1)!;
    // The worker gets the loaded model's record only, pointing at the packaged file: no remote library URL reaches it.
    expect(config.model_list.map((m) => [m.model_id, m.model_lib])).toEqual([[DEFAULT_WEBLLM_MODEL, packaged]]);
  });

  it('refuses a model whose library the package does not ship, and never hands the worker a remote library URL', async () => {
    const asked: string[] = [];
    const { world, engine } = setup(F16, {
      resolvePackagedLib: async (url) => {
        asked.push(url);
        return null;
      },
    });
    const error = await engine.load(DEFAULT_WEBLLM_MODEL).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code: 'unsupported', message: libraryNotPackagedMessage(DEFAULT_WEBLLM_MODEL) });
    expect((error as Error).message).toMatch(/not included in this build.*npm run fetch:webllm-libs/);
    // It looked up the library WebLLM would have fetched from GitHub, and sent the worker nothing.
    expect(asked).toEqual([prebuiltAppConfig.model_list.find((m) => m.model_id === DEFAULT_WEBLLM_MODEL)!.model_lib]);
    expect(asked[0]).toMatch(/^https:\/\/raw\.githubusercontent\.com\/.*-webgpu\.wasm$/);
    expect(world.engine.reloads).toEqual([]);
    expect(world.engine.appConfigs).toEqual([]);
    expect(engine.isLoaded()).toBe(false);
  });

  it('hands the worker no raw.githubusercontent URL in any load of any picker model (f16 and f32)', async () => {
    for (const gpu of [F16, NO_F16]) {
      const { world, engine } = setup(gpu);
      for (const m of WEBLLM_MODELS) await engine.load(m.id);
      const sent = JSON.stringify(world.engine.appConfigs);
      expect(world.engine.appConfigs.length).toBe(WEBLLM_MODELS.length);
      expect(sent).not.toContain('raw.githubusercontent.com');
      expect(sent).not.toMatch(/https?:\/\/[^"]*\.wasm/);
    }
  });
});

describe('complete', () => {
  it('streams deltas and reports usage', async () => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    const deltas: string[] = [];
    const result = await engine.complete(
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: '你好' },
        ],
        maxTokens: 64,
        temperature: 0,
      },
      (d) => deltas.push(d),
    );
    expect(deltas).toEqual(['Hello', ', ', 'world', '.']);
    expect(result).toEqual({ content: 'Hello, world.', finishReason: 'stop', usage: { promptTokens: 12, completionTokens: 4 } });
    const sent = world.engine.requests[0]!;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: '你好' },
    ]);
    expect(sent).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_tokens: 64, temperature: 0 });
    expect(sent.response_format).toBeUndefined();
  });

  it('asks for JSON with the schema as a string (WebLLM response_format)', async () => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    world.engine.reply = ['{"facts":', '[]}'];
    const schema = { type: 'object', properties: { facts: { type: 'array', items: { type: 'string' } } }, required: ['facts'] };
    const result = await engine.complete({ messages: [{ role: 'user', content: 'x' }], responseFormat: { type: 'json_object', schema } });
    expect(JSON.parse(result.content)).toEqual({ facts: [] });
    const format = world.engine.requests[0]!.response_format as { type: string; schema: string };
    expect(format.type).toBe('json_object');
    expect(JSON.parse(format.schema)).toEqual(schema);
    await engine.complete({ messages: [{ role: 'user', content: 'x' }], responseFormat: { type: 'json_object' } });
    expect(world.engine.requests[1]!.response_format).toEqual({ type: 'json_object' });
  });

  it('stops on abort through interruptGenerate and keeps the text so far', async () => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    world.engine.hangAfterFirst = true;
    const controller = new AbortController();
    const deltas: string[] = [];
    const result = await engine.complete({ messages: [{ role: 'user', content: 'tell me a story' }], signal: controller.signal }, (d) => {
      deltas.push(d);
      controller.abort();
    });
    expect(world.engine.interrupts).toBe(1);
    expect(result.finishReason).toBe('abort');
    expect(result.content).toBe('Hello');
    expect(deltas).toEqual(['Hello']);
    expect(engine.isLoaded()).toBe(true);
  });

  it('returns at once for an already aborted signal', async () => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    const controller = new AbortController();
    controller.abort();
    expect(await engine.complete({ messages: [{ role: 'user', content: 'x' }], signal: controller.signal })).toEqual({
      content: '',
      finishReason: 'abort',
      usage: null,
    });
    expect(world.engine.requests).toHaveLength(0);
  });

  it('runs concurrent requests one after the other', async () => {
    const { engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    const order: string[] = [];
    await Promise.all([
      engine.complete({ messages: [{ role: 'user', content: 'a' }] }, (d) => order.push(`a:${d}`)),
      engine.complete({ messages: [{ role: 'user', content: 'b' }] }, (d) => order.push(`b:${d}`)),
    ]);
    expect(order).toEqual(['a:Hello', 'a:, ', 'a:world', 'a:.', 'b:Hello', 'b:, ', 'b:world', 'b:.']);
  });

  it('wraps a worker-side generation failure in EngineError(generation) and stays loaded', async () => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    world.engine.completionError = Object.assign(
      new Error('Prompt tokens exceed context window size: number of prompt tokens: 5000; context window size: 4096'),
      {
        name: 'ContextWindowSizeExceededError',
      },
    );
    await expect(engine.complete({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ code: 'generation', message: /context window/ });
    expect(engine.isLoaded()).toBe(true);
  });

  it('throws not_loaded before load and after unload', async () => {
    const { world, engine } = setup();
    await expect(engine.complete({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ code: 'not_loaded' });
    await engine.load(DEFAULT_WEBLLM_MODEL);
    await engine.unload();
    expect(world.engine.unloads).toBe(1);
    expect(world.pairs[0]!.closed).toBe(true);
    expect(engine.isLoaded()).toBe(false);
    expect(engine.contextWindow()).toBeNull();
    await expect(engine.complete({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ code: 'not_loaded' });
    await engine.unload(); // safe when nothing is loaded
  });
});

describe('a stopped service worker', () => {
  it('fails a pending completion with disconnected instead of hanging, then reloads on the next load', async () => {
    const { world, engine } = setup(NO_F16);
    await engine.load(DEFAULT_WEBLLM_MODEL);
    world.engine.hangAfterFirst = true;
    const pending = engine.complete({ messages: [{ role: 'user', content: 'x' }] });
    await world.settle();
    world.stopServiceWorker();
    await expect(pending).rejects.toMatchObject({ code: 'disconnected' });
    expect(engine.isLoaded()).toBe(false);
    expect(engine.modelId).toBeNull();
    await expect(engine.complete({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ code: 'not_loaded' });

    await engine.load(DEFAULT_WEBLLM_MODEL);
    expect(world.pairs).toHaveLength(2);
    expect(world.engines).toHaveLength(2); // a fresh worker, a fresh engine
    expect(world.engine.reloads.map((r) => r.modelId)).toEqual([['Qwen2.5-1.5B-Instruct-q4f32_1-MLC']]);
    const result = await engine.complete({ messages: [{ role: 'user', content: 'x' }] });
    expect(result.content).toBe('Hello, world.');
  });

  it('fails a pending load with disconnected', async () => {
    const { world, engine } = setup();
    await engine.load(DEFAULT_WEBLLM_MODEL);
    world.engine.hangReload = true;
    const pending = engine.load('Qwen2.5-3B-Instruct-q4f16_1-MLC');
    await world.settle();
    world.stopServiceWorker();
    await expect(pending).rejects.toMatchObject({ code: 'disconnected' });
    expect(engine.isLoaded()).toBe(false);
  });

  it('sends keep-alive messages while connected', async () => {
    const { world, engine } = setup(F16, { keepAliveMs: 10 });
    await engine.load(DEFAULT_WEBLLM_MODEL);
    await world.settle(60);
    const keepAlives = world.pairs[0]!.received.filter((m) => (m as { kind?: string }).kind === 'keepAlive');
    expect(keepAlives.length).toBeGreaterThanOrEqual(2);
    await engine.unload();
    const after = world.pairs[0]!.received.length;
    await world.settle(40);
    expect(world.pairs[0]!.received.length).toBe(after);
  });
});

describe('service worker registration', () => {
  it('refuses ports from content scripts and other extensions', async () => {
    const listeners: ((port: never) => void)[] = [];
    registerWebLLMServiceWorker({ onConnect: { addListener: (l) => void listeners.push(l as never) }, extensionId: FAKE_EXTENSION_ID });
    const fromTab = createPortPair('web_llm_service_worker', { id: FAKE_EXTENSION_ID, url: 'https://example.com/', tab: { id: 1 } });
    const fromOther = createPortPair('web_llm_service_worker', { id: 'otherextension', url: 'chrome-extension://otherextension/x.html' });
    const unrelated = createPortPair('something-else', { id: FAKE_EXTENSION_ID, url: `chrome-extension://${FAKE_EXTENSION_ID}/offscreen.html` });
    for (const pair of [fromTab, fromOther, unrelated]) listeners.forEach((l) => l(pair.server as never));
    expect(fromTab.closed).toBe(true);
    expect(fromOther.closed).toBe(true);
    expect(unrelated.closed).toBe(false); // not ours to judge: other listeners may own that port name
  });
});

describe('models offered by a package (only those whose library ships)', () => {
  const lib = (id: string) => webllmLibraryFileName(prebuiltAppConfig.model_list.find((m) => m.model_id === id)!.model_lib);

  it('offers nothing when the package ships no library', () => {
    expect(shippedWebllmModels(WEBLLM_MODELS, F16, prebuiltAppConfig.model_list, [])).toEqual([]);
    expect(shippedWebllmModels(WEBLLM_MODELS, NO_F16, prebuiltAppConfig.model_list, [])).toEqual([]);
  });

  it('offers exactly the models whose variant library ships, in picker order, by variant id', () => {
    // Ships the f16 library of Qwen2.5 0.5B and the f32 library of Llama 3.2 1B.
    const libs = [lib('Qwen2.5-0.5B-Instruct-q4f16_1-MLC'), lib('Llama-3.2-1B-Instruct-q4f32_1-MLC')];
    expect(libs).toEqual(['Qwen2-0.5B-Instruct-q4f16_1_cs1k-webgpu.wasm', 'Llama-3.2-1B-Instruct-q4f32_1_cs1k-webgpu.wasm']);
    expect(shippedWebllmModels(WEBLLM_MODELS, F16, prebuiltAppConfig.model_list, libs).map((m) => m.id)).toEqual(['Qwen2.5-0.5B-Instruct-q4f16_1-MLC']);
    expect(shippedWebllmModels(WEBLLM_MODELS, NO_F16, prebuiltAppConfig.model_list, libs).map((m) => m.id)).toEqual(['Llama-3.2-1B-Instruct-q4f32_1-MLC']);
  });

  it('offers every picker model when every library ships (what fetch:webllm-libs downloads)', () => {
    const all = prebuiltAppConfig.model_list.map((m) => webllmLibraryFileName(m.model_lib));
    expect(shippedWebllmModels(WEBLLM_MODELS, F16, prebuiltAppConfig.model_list, all).map((m) => m.label)).toEqual(WEBLLM_MODELS.map((m) => m.label));
  });
});
