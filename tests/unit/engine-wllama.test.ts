/**
 * The CPU engine (wllama). Faked: only the `Wllama` object — it runs llama.cpp in a browser Web
 * Worker, which Node cannot start (the real thing runs in the e2e test with the fixture GGUF).
 * The fake behaves like wllama 3.13: OpenAI-shaped stream chunks, `WllamaAbortError` when the
 * abort signal fires, `WllamaError('inference_error')` for refused requests, a plain error for
 * a crashed worker, an OPFS download cache. Real: GGUF header parsing (on generated GGUF files
 * and the real stories260K fixture), parameter choice, streaming, errors and state handling.
 */
import { WllamaAbortError, WllamaError } from '@wllama/wllama';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHATML_TEMPLATE, createWllamaEngine, inspectGguf, supportsMemory64, WLLAMA_MODELS, type WllamaChunk, type WllamaLike } from '../../src/engines/wllama';
import { EngineError } from '../../src/engines/types';
import type { LoadProgress } from '../../src/model/engine';
import type { TokenCounter } from '../../src/model/tokens';
import type { GgufHeader } from '../../src/gguf/header';
import { createGgufTokenCounter } from '../../src/tokens';
import { buildGguf, ggufBlob } from '../helpers/fixture-gguf';

const STORIES = resolve(__dirname, '../../../shared/fixtures/models/stories260K/stories260K.gguf');
const HAS_SHARED = existsSync(STORIES);
if (!HAS_SHARED) console.warn('[engine-wllama] ../shared/fixtures is absent: skipping the stories260K header test.');

const chunk = (content: string | null, finish: string | null = null, extra: Partial<WllamaChunk> = {}): WllamaChunk => ({
  choices: content === null && finish === null ? [] : [{ delta: content === null ? {} : { content }, finish_reason: finish }],
  ...extra,
});

/** Fake `Wllama` (see module doc). */
class FakeWllama implements WllamaLike {
  loads: { blobs: Blob[]; params: Record<string, unknown> }[] = [];
  requests: Record<string, unknown>[] = [];
  exits = 0;
  loadError: unknown = null;
  /** What `getLoadedContextInfo` reports instead of the requested `n_ctx` (a broken load reports 0). */
  loadedCtx: number | null = null;
  /** Chunks of the next reply; `'hang'` waits until aborted; an Error is thrown at that point. */
  script: (WllamaChunk | 'hang' | Error)[] = [
    chunk('Once'),
    chunk(' upon'),
    chunk(' a time'),
    chunk('', 'stop', { usage: { prompt_tokens: 20, completion_tokens: 3 } }),
  ];
  constructor(
    readonly hub: Map<string, Blob>,
    readonly cache: Map<string, Blob>,
    readonly downloads: string[],
  ) {}
  async loadModel(blobs: Blob[], params: Record<string, unknown>) {
    this.loads.push({ blobs, params });
    if (this.loadError) throw this.loadError;
  }
  getLoadedContextInfo() {
    return { n_ctx: this.loadedCtx ?? (this.loads.at(-1)!.params.n_ctx as number) };
  }
  async exit() {
    this.exits += 1;
  }
  async createChatCompletion(options: Record<string, unknown> & { stream: true }) {
    this.requests.push(options);
    const script = [...this.script];
    const signal = options.abortSignal as AbortSignal;
    return (async function* () {
      for (const step of script) {
        if (signal.aborted) throw new WllamaAbortError();
        if (step === 'hang') {
          while (!signal.aborted) await new Promise((r) => setTimeout(r, 5));
          throw new WllamaAbortError();
        }
        if (step instanceof Error) throw step;
        yield step;
      }
    })();
  }
  modelManager = {
    getModels: async () => [...this.cache.keys()].map((url) => ({ url })),
    getModelOrDownload: async (source: { url: string }, options: { progressCallback?: (p: { loaded: number; total: number }) => void }) => {
      let blob = this.cache.get(source.url);
      if (!blob) {
        const remote = this.hub.get(source.url);
        if (!remote) throw new WllamaError(`Failed to download ${source.url}`, 'download_error');
        this.downloads.push(source.url);
        options.progressCallback?.({ loaded: Math.floor(remote.size / 2), total: remote.size });
        this.cache.set(source.url, remote);
        blob = remote;
      }
      options.progressCallback?.({ loaded: blob.size, total: blob.size });
      return { open: async () => [blob!] };
    },
  };
}

function setup(extra: { stallTimeoutMs?: number; tokenCounterFor?: (b: Blob, header: GgufHeader) => Promise<TokenCounter | null> } = {}) {
  const hub = new Map<string, Blob>();
  const cache = new Map<string, Blob>();
  const downloads: string[] = [];
  const created: FakeWllama[] = [];
  const engine = createWllamaEngine({
    wasmUrl: 'chrome-extension://x/runtime/wllama/wllama.wasm',
    createWllama: (wasmUrl) => {
      expect(wasmUrl).toBe('chrome-extension://x/runtime/wllama/wllama.wasm');
      const fake = new FakeWllama(hub, cache, downloads);
      created.push(fake);
      return fake;
    },
    ...extra,
  });
  return {
    engine,
    created,
    hub,
    cache,
    downloads,
    get wllama() {
      return created.at(-1)!;
    },
  };
}

const fakeCounter: TokenCounter = { id: 'test', exact: true, count: (t) => t.length, perMessageOverhead: 4, replyPrimerTokens: 3 };

describe('catalog', () => {
  it('lists small instruct GGUFs with real Hugging Face download URLs, each under the 2 GB file limit', () => {
    expect(WLLAMA_MODELS.length).toBeGreaterThanOrEqual(3);
    for (const m of WLLAMA_MODELS) {
      expect(m.url).toMatch(/^https:\/\/huggingface\.co\/[\w.-]+\/[\w.-]+-GGUF\/resolve\/main\/[\w.-]+\.gguf$/);
      expect(m.sizeBytes).toBeLessThan(2 ** 31);
    }
    expect(WLLAMA_MODELS.map((m) => m.id)).toEqual(
      expect.arrayContaining(['qwen2.5-0.5b-instruct-q4_k_m', 'qwen2.5-1.5b-instruct-q4_k_m', 'llama-3.2-1b-instruct-q4_k_m']),
    );
  });
});

describe('GGUF header', () => {
  it('reads context length and chat template from a generated GGUF', async () => {
    expect(await inspectGguf(ggufBlob({ contextLength: 32768, chatTemplate: '{{ x }}', name: '通义' }))).toEqual({
      version: 3,
      architecture: 'llama',
      name: '通义',
      contextLength: 32768,
      chatTemplate: '{{ x }}',
    });
  });

  it('rejects non-GGUF, tiny and truncated files with EngineError(load)', async () => {
    await expect(inspectGguf(new Blob(['{"not": "a model"}']), '"x.json"')).rejects.toMatchObject({
      code: 'load',
      message: /"x.json" is not a GGUF model file/,
    });
    await expect(inspectGguf(new Blob(['GGUF']))).rejects.toMatchObject({ code: 'load' });
    const whole = ggufBlob();
    await expect(inspectGguf(whole.slice(0, 100))).rejects.toMatchObject({ code: 'load', message: /truncated or corrupt/ });
  });

  it('rejects a file cut off after its header, before its last tensor starts', async () => {
    // Two F32 tensors of 4 × 8 = 128 bytes each, the second at data offset 128: the file ends with them.
    const bytes = buildGguf({ 'general.architecture': 'llama' }, [
      { name: 'a', dims: [4, 8] },
      { name: 'b', dims: [4, 8] },
    ]);
    await expect(inspectGguf(new Blob([bytes]))).resolves.toMatchObject({ architecture: 'llama' });
    await expect(inspectGguf(new Blob([bytes.slice(0, bytes.length - 128)]))).rejects.toMatchObject({ code: 'load', message: /before the last tensor/ });
  });

  it.skipIf(!HAS_SHARED)('rejects the first 100 KB of the real stories260K file', async () => {
    const real = await readFile(STORIES);
    await expect(inspectGguf(new Blob([real.subarray(0, 102_400)]))).rejects.toMatchObject({ code: 'load', message: /truncated or corrupt/ });
  });

  it.skipIf(!HAS_SHARED)('reads the real stories260K fixture: llama, 2048 context, no chat template', async () => {
    const info = await inspectGguf(new Blob([await readFile(STORIES)]));
    expect(info).toMatchObject({ version: 3, architecture: 'llama', contextLength: 2048, chatTemplate: null });
  });
});

describe('loadFromBlob', () => {
  it.skipIf(!HAS_SHARED)('parses the GGUF header once per load: the engine checks and the token counter share it', async () => {
    /** Counts header parses: every parse reads a range from byte 0 longer than the 8-byte magic check. */
    class CountingBlob extends Blob {
      parses = 0;
      override slice(start?: number, end?: number, type?: string): Blob {
        if ((start ?? 0) === 0 && (end ?? this.size) > 8) this.parses += 1;
        return super.slice(start, end, type);
      }
    }
    const blob = new CountingBlob([await readFile(STORIES)]);
    // Wired as the core's engine manager wires it.
    const t = setup({ tokenCounterFor: (_model, header) => createGgufTokenCounter(header) });
    await t.engine.loadFromBlob('stories260K.gguf', blob);
    expect(blob.parses).toBe(1);
    expect(t.engine.tokenCounter()).toMatchObject({ exact: true, id: expect.stringMatching(/^gguf:.*:llama$/) });
    // The counter built from the parsed header equals the one read from the file.
    const fromFile = (await createGgufTokenCounter(new Blob([await readFile(STORIES)])))!;
    expect(t.engine.tokenCounter()!.count('Once upon a time, Lily saw a big dog.')).toBe(fromFile.count('Once upon a time, Lily saw a big dog.'));
  });

  it('adds a ChatML template when the GGUF has none, caps n_ctx at the trained window, runs on one CPU thread', async () => {
    const t = setup({ tokenCounterFor: async () => fakeCounter });
    const blob = ggufBlob({ contextLength: 2048 });
    const progress: LoadProgress[] = [];
    await t.engine.loadFromBlob('stories.gguf', blob, { onProgress: (p) => progress.push(p) });
    const { params, blobs } = t.wllama.loads[0]!;
    expect(blobs).toEqual([blob]);
    expect(params).toMatchObject({ n_ctx: 2048, n_threads: 1, n_gpu_layers: 0, chat_template: CHATML_TEMPLATE });
    expect(t.engine.isLoaded()).toBe(true);
    expect(t.engine.modelId).toBe('stories.gguf');
    expect(t.engine.kind).toBe('wllama');
    expect(t.engine.contextWindow()).toBe(2048);
    expect(t.engine.tokenCounter()).toBe(fakeCounter);
    expect(progress.map((p) => p.stage)).toEqual(['init', 'ready']);
  });

  it("keeps the model's own chat template and honours contextSize", async () => {
    const t = setup();
    await t.engine.loadFromBlob('qwen.gguf', ggufBlob({ contextLength: 32768, chatTemplate: '{% for m in messages %}{{ m.content }}{% endfor %}' }), {
      contextSize: 1024,
    });
    expect(t.wllama.loads[0]!.params.chat_template).toBeUndefined();
    expect(t.engine.contextWindow()).toBe(1024);
    expect(t.engine.tokenCounter()).toBeNull();
  });

  it('rejects a file that is not a GGUF before starting a worker, and leaves nothing loaded', async () => {
    const t = setup();
    await t.engine.loadFromBlob('a.gguf', ggufBlob());
    const error = await t.engine.loadFromBlob('photo.jpg', new Blob([new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5])])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe('load');
    expect((error as EngineError).message).toMatch(/"photo.jpg" is not a GGUF model file/);
    expect(t.created).toHaveLength(1); // no second worker
    expect(t.created[0]!.exits).toBe(1); // the previous model was released
    expect(t.engine.isLoaded()).toBe(false);
    await expect(t.engine.loadFromBlob('empty.gguf', new Blob([]))).rejects.toMatchObject({ code: 'load', message: /empty/ });
  });

  it('turns a llama.cpp load failure into EngineError(load) and stops the worker', async () => {
    const t2 = setup();
    const blob = ggufBlob();
    const failing = t2.engine.loadFromBlob('bad.gguf', blob, {
      onProgress: (p) => {
        if (p.stage === 'init') t2.wllama.loadError = new WllamaError('llama_model_load: error loading model', 'load_error');
      },
    });
    await expect(failing).rejects.toMatchObject({ code: 'load', message: /llama.cpp could not load "bad.gguf": llama_model_load/ });
    expect(t2.wllama.exits).toBe(1);
    expect(t2.engine.isLoaded()).toBe(false);
  });

  it('refuses a model llama.cpp loads without a usable context (n_ctx 0), and stops the worker', async () => {
    const t = setup();
    const loading = t.engine.loadFromBlob('cut.gguf', ggufBlob(), {
      onProgress: (p) => {
        if (p.stage === 'init') t.wllama.loadedCtx = 0;
      },
    });
    await expect(loading).rejects.toMatchObject({ code: 'load', message: /"cut.gguf" \(a context of 0 tokens\): the file is probably truncated or corrupt/ });
    expect(t.wllama.exits).toBe(1);
    expect(t.engine.isLoaded()).toBe(false);
    expect(t.engine.contextWindow()).toBeNull();
  });

  it('cancels through the signal', async () => {
    const t = setup();
    const controller = new AbortController();
    controller.abort();
    await expect(t.engine.loadFromBlob('a.gguf', ggufBlob(), { signal: controller.signal })).rejects.toMatchObject({ code: 'load', message: /cancelled/ });
    expect(t.created).toHaveLength(0);
  });

  it('fails clearly without WebAssembly Memory64 (the real factory, in Node)', async () => {
    if (supportsMemory64()) return; // this Node has Memory64: nothing to check here
    const engine = createWllamaEngine({ wasmUrl: 'x' });
    await expect(engine.loadFromBlob('a.gguf', ggufBlob())).rejects.toMatchObject({ code: 'unsupported', message: /Memory64/ });
    expect(engine.isLoaded()).toBe(false);
  });
});

describe('loadFromUrl', () => {
  it('downloads once with progress, then loads from the cache', async () => {
    const t = setup();
    const url = WLLAMA_MODELS[1]!.url;
    const blob = ggufBlob({ chatTemplate: '{{ qwen }}' });
    t.hub.set(url, blob);
    const first: LoadProgress[] = [];
    await t.engine.loadFromUrl('qwen', url, { onProgress: (p) => first.push(p) });
    expect(t.downloads).toEqual([url]);
    expect(first[0]).toMatchObject({ stage: 'download', loadedBytes: Math.floor(blob.size / 2), totalBytes: blob.size });
    expect(first.at(-1)).toMatchObject({ stage: 'ready' });
    expect(t.wllama.loads[0]!.blobs).toEqual([blob]);

    t.hub.clear(); // offline now
    const second: LoadProgress[] = [];
    await t.engine.loadFromUrl('qwen', url, { onProgress: (p) => second.push(p) });
    expect(t.downloads).toEqual([url]);
    expect(second[0]).toMatchObject({ stage: 'cache', fraction: 1 });
    expect(t.engine.isLoaded()).toBe(true);
  });

  it('reports a failed download as EngineError(download) and stays unloaded', async () => {
    const t = setup();
    await expect(t.engine.loadFromUrl('qwen', 'https://huggingface.co/x/y-GGUF/resolve/main/z.gguf')).rejects.toMatchObject({ code: 'download' });
    expect(t.engine.isLoaded()).toBe(false);
    expect(t.wllama.exits).toBe(1);
  });

  it('rejects a downloaded file that is not a GGUF', async () => {
    const t = setup();
    t.hub.set('https://h/x.gguf', new Blob(['<html>rate limited</html>']));
    await expect(t.engine.loadFromUrl('x', 'https://h/x.gguf')).rejects.toMatchObject({ code: 'load', message: /not a GGUF/ });
    expect(t.engine.isLoaded()).toBe(false);
  });
});

describe('complete', () => {
  it('streams deltas and maps usage, messages and sampling options', async () => {
    const t = setup();
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    const deltas: string[] = [];
    const result = await t.engine.complete(
      {
        messages: [
          { role: 'system', content: '用中文回答' },
          { role: 'user', content: '讲个故事' },
        ],
        maxTokens: 32,
        temperature: 0,
      },
      (d) => deltas.push(d),
    );
    expect(deltas).toEqual(['Once', ' upon', ' a time']);
    expect(result).toEqual({ content: 'Once upon a time', finishReason: 'stop', usage: { promptTokens: 20, completionTokens: 3 } });
    const sent = t.wllama.requests[0]!;
    expect(sent).toMatchObject({ stream: true, max_tokens: 32, temperature: 0, stream_options: { include_usage: true } });
    expect(sent.messages).toEqual([
      { role: 'system', content: '用中文回答' },
      { role: 'user', content: '讲个故事' },
    ]);
  });

  it('falls back to llama.cpp timings for usage and reports length stops', async () => {
    const t = setup();
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    t.wllama.script = [chunk('x'), chunk('', 'length', { timings: { prompt_n: 7, predicted_n: 1 } })];
    expect(await t.engine.complete({ messages: [{ role: 'user', content: 'x' }] })).toEqual({
      content: 'x',
      finishReason: 'length',
      usage: { promptTokens: 7, completionTokens: 1 },
    });
  });

  it('asks llama.cpp for JSON, with the schema when given', async () => {
    const t = setup();
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } } };
    await t.engine.complete({ messages: [{ role: 'user', content: 'x' }], responseFormat: { type: 'json_object', schema } });
    await t.engine.complete({ messages: [{ role: 'user', content: 'x' }], responseFormat: { type: 'json_object' } });
    await t.engine.complete({ messages: [{ role: 'user', content: 'x' }], responseFormat: { type: 'text' } });
    expect(t.wllama.requests.map((r) => r.response_format)).toEqual([
      { type: 'json_schema', json_schema: { name: 'response', schema, strict: true } },
      { type: 'json_object' },
      undefined,
    ]);
  });

  it('stops on abort and keeps the text so far', async () => {
    const t = setup();
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    t.wllama.script = [chunk('Once'), 'hang'];
    const controller = new AbortController();
    const result = await t.engine.complete({ messages: [{ role: 'user', content: 'x' }], signal: controller.signal }, () => controller.abort());
    expect(result).toEqual({ content: 'Once', finishReason: 'abort', usage: null });
    expect(t.engine.isLoaded()).toBe(true);
  });

  it('keeps the model loaded after a refused request (inference_error)', async () => {
    const t = setup();
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    t.wllama.script = [new WllamaError('the request exceeds the available context size', 'inference_error')];
    await expect(t.engine.complete({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      code: 'generation',
      message: /exceeds the available context size/,
    });
    expect(t.engine.isLoaded()).toBe(true);
  });

  it('marks the engine unloaded when the worker crashes, and loads again afterwards', async () => {
    const t = setup();
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    t.wllama.script = [chunk('Once'), new Error('wllama has crashed, please reload the module')];
    await expect(t.engine.complete({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      code: 'generation',
      message: /stopped unexpectedly/,
    });
    expect(t.engine.isLoaded()).toBe(false);
    expect(t.engine.modelId).toBeNull();
    expect(t.wllama.exits).toBe(1);
    await expect(t.engine.complete({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ code: 'not_loaded' });
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    expect((await t.engine.complete({ messages: [{ role: 'user', content: 'x' }] })).content).toBe('Once upon a time');
  });

  it('treats a silent worker as dead after the stall timeout instead of hanging', async () => {
    const t = setup({ stallTimeoutMs: 30 });
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    t.wllama.createChatCompletion = () => new Promise(() => undefined);
    await expect(t.engine.complete({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      code: 'generation',
      message: /no output for 30 ms/,
    });
    expect(t.engine.isLoaded()).toBe(false);
  });

  it('fails a running answer when the model is unloaded, and serializes requests', async () => {
    const t = setup();
    await t.engine.loadFromBlob('m.gguf', ggufBlob());
    const order: string[] = [];
    await Promise.all([
      t.engine.complete({ messages: [{ role: 'user', content: 'a' }] }, (d) => order.push(`a${d}`)),
      t.engine.complete({ messages: [{ role: 'user', content: 'b' }] }, (d) => order.push(`b${d}`)),
    ]);
    expect(order).toEqual(['aOnce', 'a upon', 'a a time', 'bOnce', 'b upon', 'b a time']);

    t.wllama.script = [chunk('Once'), 'hang'];
    const pending = t.engine.complete({ messages: [{ role: 'user', content: 'x' }] });
    await new Promise((r) => setTimeout(r, 10));
    await t.engine.unload();
    await expect(pending).rejects.toMatchObject({ code: 'generation', message: /unloaded while answering/ });
    expect(t.engine.isLoaded()).toBe(false);
    expect(t.engine.contextWindow()).toBeNull();
    await t.engine.unload();
  });
});
