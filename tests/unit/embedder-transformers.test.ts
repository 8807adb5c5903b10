/**
 * The transformers.js embedder, for real: transformers.js 4.3 + onnxruntime-node run offline on
 * model folders generated at test time (tests/helpers/fixture-models.ts). Nothing is faked:
 * "packaged" and "hub" models are served by a local HTTP server, so the same fetch/cache code
 * paths run as in the extension. Expected vectors are computed by hand from the fixture weights
 * (BERT fixture) or come from model2vec's own reference output (model2vec fixture).
 */
import { env, AutoTokenizer } from '@huggingface/transformers';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransformersEmbedder, DEFAULT_EMBEDDING_MODEL } from '../../src/engines/transformers';
import { EngineError } from '../../src/engines/types';
import type { LoadProgress } from '../../src/model/engine';
import { writeBertFixtureModel, writeModel2VecOnnxModel, type BertFixtureModel } from '../helpers/fixture-models';

const MODEL_ID = 'test/bert-fixture';
const SHARED_M2V = resolve(__dirname, '../../../shared/fixtures/models/model2vec-bge-base-test');
const HAS_SHARED = existsSync(join(SHARED_M2V, 'model.safetensors'));
if (!HAS_SHARED) console.warn('[embedder-transformers] ../shared/fixtures is absent: skipping the model2vec reference test.');

let root: string;
let fixture: BertFixtureModel;
let server: Server;
let baseUrl: string;
const served: string[] = [];
let failWith: number | null = null;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'recall-embedder-'));
  fixture = await writeBertFixtureModel(join(root, 'models', MODEL_ID), MODEL_ID);
  // One server plays both the extension package (`/models/…`) and the model hub (`/hub/<id>/resolve/main/…`).
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    served.push(path);
    if (failWith) return void res.writeHead(failWith).end();
    const file = path.startsWith('/hub/') ? join(root, 'models', path.slice('/hub/'.length).replace('/resolve/main/', '/')) : join(root, path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-length': String(body.byteLength) }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  };
  // Node ignores a handler's promise: answer 500 on a rejection rather than leave the request open.
  server = createServer((req, res) => {
    serve(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  env.cacheDir = join(root, 'cache'); // never write into node_modules
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await rm(root, { recursive: true, force: true });
});

/** Expected embedding by hand: mean of the fixture rows of `[CLS] tokens [SEP]`, L2-normalized. */
function expectedVector(tokens: string[]): Float32Array {
  const ids = [2, ...tokens.map((t) => fixture.vocab.get(t)!), 3];
  const d = fixture.dimension;
  const v = new Float64Array(d);
  for (const id of ids) for (let j = 0; j < d; j++) v[j]! += fixture.weights[id * d + j]!;
  const norm = Math.hypot(...v);
  return Float32Array.from(v, (x) => x / norm);
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('createTransformersEmbedder on the BERT fixture (local folder)', () => {
  it('loads offline, reports 64 dimensions and progress ending in ready', async () => {
    const progress: LoadProgress[] = [];
    const embedder = await createTransformersEmbedder({
      modelId: MODEL_ID,
      allowRemoteModels: false,
      localModelPath: join(root, 'models'),
      onProgress: (p) => progress.push(p),
    });
    expect(embedder.modelId).toBe(MODEL_ID);
    expect(embedder.dimension).toBe(64);
    expect(progress.at(-1)).toMatchObject({ stage: 'ready', fraction: 1 });
    await embedder.dispose();
  });

  it('matches the hand-computed mean-pooled vectors in English and Chinese', async () => {
    const embedder = await createTransformersEmbedder({ modelId: MODEL_ID, allowRemoteModels: false, localModelPath: join(root, 'models') });
    const [en, zh, mixed] = await embedder.embed(['The CAT sat', '我喜欢喝茶', 'I like 茶!']);
    const cases: [Float32Array, string[]][] = [
      [en!, ['the', 'cat', 'sat']], // lower-cased by BertNormalizer
      [zh!, ['我', '喜', '欢', '喝', '茶']], // one token per CJK character (handle_chinese_chars)
      [mixed!, ['i', 'like', '茶', '!']],
    ];
    for (const [got, tokens] of cases) {
      const want = expectedVector(tokens);
      expect(got).toBeInstanceOf(Float32Array);
      expect(got.length).toBe(64);
      for (let j = 0; j < 64; j++) expect(got[j]).toBeCloseTo(want[j]!, 5);
      expect(dot(got, got)).toBeCloseTo(1, 5);
    }
    await embedder.dispose();
  });

  it('gives lexically meaningful similarities (shared words or characters score higher)', async () => {
    const embedder = await createTransformersEmbedder({ modelId: MODEL_ID, allowRemoteModels: false, localModelPath: join(root, 'models') });
    const [a, b, c, d, e, f] = await embedder.embed([
      '我喜欢喝茶',
      '我很喜欢喝茶',
      '今天天气很好',
      'my cat likes milk',
      'the cat likes milk',
      'quantum physics',
    ]);
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!) + 0.3);
    expect(dot(d!, e!)).toBeGreaterThan(dot(d!, f!) + 0.3);
    await embedder.dispose();
  });

  it('batches with padding without changing vectors, keeps order, handles empty input', async () => {
    const embedder = await createTransformersEmbedder({ modelId: MODEL_ID, allowRemoteModels: false, localModelPath: join(root, 'models'), batchSize: 4 });
    const texts = Array.from({ length: 10 }, (_, i) => (i % 2 ? `cat ${'sat '.repeat(i)}` : `我喜欢${'茶'.repeat(i + 1)}`));
    const batched = await embedder.embed(texts);
    expect(batched).toHaveLength(10);
    for (let i = 0; i < texts.length; i++) {
      const [single] = await embedder.embed([texts[i]!]);
      for (let j = 0; j < 64; j++) expect(batched[i]![j]).toBeCloseTo(single![j]!, 5);
    }
    expect(await embedder.embed([])).toEqual([]);
    const [empty] = await embedder.embed(['']); // [CLS][SEP] only: still a unit vector
    expect(dot(empty!, empty!)).toBeCloseTo(1, 5);
    await embedder.dispose();
  });

  it('rejects bad input and cancelled calls with EngineError(embedding)', async () => {
    const embedder = await createTransformersEmbedder({ modelId: MODEL_ID, allowRemoteModels: false, localModelPath: join(root, 'models') });
    await expect(embedder.embed(['ok', 42 as unknown as string])).rejects.toMatchObject({ code: 'embedding', message: /#1 is not a string/ });
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(['x'], controller.signal)).rejects.toMatchObject({ code: 'embedding', message: /cancelled/ });
    await embedder.dispose();
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'embedding', message: /disposed/ });
  });

  it('fails with EngineError(load) on a missing model, corrupt ONNX file or a cancelled load, and stays usable for the next', async () => {
    await expect(createTransformersEmbedder({ modelId: 'test/absent', allowRemoteModels: false, localModelPath: join(root, 'models') })).rejects.toMatchObject({
      code: 'load',
      message: /not available offline/,
    });

    const broken = join(root, 'models', 'test', 'broken');
    await writeBertFixtureModel(broken, 'test/broken', { dimension: 8 });
    await rm(join(broken, 'onnx', 'model_quantized.onnx'));
    await writeFile(join(broken, 'onnx', 'model_quantized.onnx'), 'this is not a protobuf');
    const error = await createTransformersEmbedder({ modelId: 'test/broken', allowRemoteModels: false, localModelPath: join(root, 'models') }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe('load');
    expect((error as EngineError).message).toMatch(/test\/broken/);

    const controller = new AbortController();
    controller.abort();
    await expect(
      createTransformersEmbedder({ modelId: MODEL_ID, allowRemoteModels: false, localModelPath: join(root, 'models'), signal: controller.signal }),
    ).rejects.toMatchObject({
      code: 'load',
      message: /cancelled/,
    });

    const ok = await createTransformersEmbedder({ modelId: MODEL_ID, allowRemoteModels: false, localModelPath: join(root, 'models') });
    expect((await ok.embed(['cat']))[0]!.length).toBe(64);
    await ok.dispose();
  });
});

describe('packaged models and the hub (served over HTTP)', () => {
  it('uses a model shipped in the package first, with no hub request', async () => {
    const saved = env.remoteHost;
    env.remoteHost = `${baseUrl}/hub/`;
    served.length = 0;
    try {
      const embedder = await createTransformersEmbedder({ modelId: MODEL_ID, allowRemoteModels: true, packagedModelsUrl: `${baseUrl}/models/` });
      expect(embedder.dimension).toBe(64);
      expect(served.some((p) => p.startsWith('/models/test/bert-fixture/onnx/'))).toBe(true);
      expect(served.filter((p) => p.startsWith('/hub/'))).toEqual([]);
      await embedder.dispose();
    } finally {
      env.remoteHost = saved;
    }
  });

  it('downloads from the hub once, then loads from the cache with downloads off', async () => {
    const saved = env.remoteHost;
    env.remoteHost = `${baseUrl}/hub/`;
    served.length = 0;
    try {
      // A model id of its own: the previous test's packaged files are in the (Node) file cache.
      await writeBertFixtureModel(join(root, 'models', 'test', 'hub-fixture'), 'test/hub-fixture', { seed: 7 });
      const progress: LoadProgress[] = [];
      const first = await createTransformersEmbedder({
        modelId: 'test/hub-fixture',
        allowRemoteModels: true,
        packagedModelsUrl: `${baseUrl}/not-packaged/`,
        onProgress: (p) => progress.push(p),
      });
      expect(served.some((p) => p === '/hub/test/hub-fixture/resolve/main/onnx/model_quantized.onnx')).toBe(true);
      const downloads = progress.filter((p) => p.stage === 'download' && p.totalBytes);
      expect(downloads.length).toBeGreaterThan(0);
      expect(downloads.at(-1)!.fraction).toBe(1);
      const [v1] = await first.embed(['cat']);
      await first.dispose();

      served.length = 0;
      failWith = 503; // the network is gone
      const second = await createTransformersEmbedder({ modelId: 'test/hub-fixture', allowRemoteModels: false });
      const [v2] = await second.embed(['cat']);
      expect(Array.from(v2!)).toEqual(Array.from(v1!));
      await second.dispose();
    } finally {
      failWith = null;
      env.remoteHost = saved;
    }
  });

  it('reports a failing hub as EngineError(download)', async () => {
    const saved = env.remoteHost;
    env.remoteHost = `${baseUrl}/hub/`;
    failWith = 500;
    try {
      await expect(createTransformersEmbedder({ modelId: 'test/never-downloaded', allowRemoteModels: true })).rejects.toMatchObject({ code: 'download' });
    } finally {
      failWith = null;
      env.remoteHost = saved;
    }
  });

  it('names the multilingual MiniLM as the default model', () => {
    expect(DEFAULT_EMBEDDING_MODEL).toBe('Xenova/paraphrase-multilingual-MiniLM-L12-v2');
  });
});

describe.skipIf(!HAS_SHARED)('real reference: model2vec (bge-base distilled) converted to ONNX', () => {
  it('reproduces model2vec-rs expected-embeddings.json for "hello" × 1000', async () => {
    await writeModel2VecOnnxModel(SHARED_M2V, join(root, 'models', 'test', 'model2vec'));
    const embedder = await createTransformersEmbedder({ modelId: 'test/model2vec', allowRemoteModels: false, localModelPath: join(root, 'models') });
    expect(embedder.dimension).toBe(64);
    const expected = (JSON.parse(await readFile(join(SHARED_M2V, 'expected-embeddings.json'), 'utf8')) as number[][])[0]!;
    const [got] = await embedder.embed([Array(1000).fill('hello').join(' ')]);
    for (let j = 0; j < 64; j++) expect(got![j]).toBeCloseTo(expected[j]!, 6);
    await embedder.dispose();
  });

  it('matches model2vec pooling (mean of embeddings[mapping[id]] × weights[id]) on mixed text', async () => {
    const model = await writeModel2VecOnnxModel(SHARED_M2V, join(root, 'models', 'test', 'model2vec'));
    const embedder = await createTransformersEmbedder({ modelId: 'test/model2vec', allowRemoteModels: false, localModelPath: join(root, 'models') });
    const text = 'Where did I park my car yesterday evening?';
    const tokenizer = await AutoTokenizer.from_pretrained('test/model2vec');
    const ids = tokenizer.encode(text, { add_special_tokens: false }) as number[];
    expect(ids.length).toBeGreaterThan(5);
    const d = model.dimension;
    const sum = new Float64Array(d);
    for (const id of ids) for (let j = 0; j < d; j++) sum[j]! += model.embeddings[model.mapping[id]! * d + j]! * model.weights[id]!;
    const norm = Math.hypot(...sum);
    const [got] = await embedder.embed([text]);
    for (let j = 0; j < d; j++) expect(got![j]).toBeCloseTo(sum[j]! / norm, 5);
    await embedder.dispose();
  });
});

const SHARED_GLOVE = resolve(__dirname, '../../../shared/fixtures/models/glove-100k-en');
const HAS_GLOVE = existsSync(join(SHARED_GLOVE, 'model.safetensors'));
if (!HAS_GLOVE) console.warn('[embedder-transformers] ../shared/fixtures/models/glove-100k-en is absent: skipping the GloVe reference test.');

describe.skipIf(!HAS_GLOVE)('real reference: GloVe 100k (static embedding) converted to ONNX', () => {
  it('reproduces expected-embeddings.json (whole-word lookup, SIF-weighted mean, L2 norm) through transformers.js', async () => {
    await writeModel2VecOnnxModel(SHARED_GLOVE, join(root, 'models', 'test', 'glove'));
    const embedder = await createTransformersEmbedder({ modelId: 'test/glove', allowRemoteModels: false, localModelPath: join(root, 'models') });
    expect(embedder.dimension).toBe(100);
    const expected = JSON.parse(await readFile(join(SHARED_GLOVE, 'expected-embeddings.json'), 'utf8')) as { text: string; embedding: number[] }[];
    expect(expected.length).toBe(3);
    const got = await embedder.embed(expected.map((e) => e.text));
    expected.forEach((e, i) => {
      for (let j = 0; j < 100; j++) expect(got[i]![j]).toBeCloseTo(e.embedding[j]!, 5);
    });
    // Semantic, if weakly: the two basketball sentences are closer to each other than to the train.
    const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, j) => s + x * b[j]!, 0);
    expect(cos(got[0]!, got[1]!)).toBeGreaterThan(cos(got[0]!, got[2]!));
    await embedder.dispose();
  });
});
