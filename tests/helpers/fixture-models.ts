/**
 * Embedding-model fixtures generated at test time (never committed as binaries).
 *
 * 1. `writeBertFixtureModel` writes a tiny BERT-shaped model folder that transformers.js loads like
 *    a real `model_type: "bert"` checkpoint: `config.json`, `tokenizer.json` (WordPiece with
 *    `BertNormalizer{handle_chinese_chars}` + `BertPreTokenizer`, vocabulary = a list of English
 *    words, single ASCII characters with `##` continuations, and every CJK Unified Ideograph
 *    U+4E00–U+9FFF), `tokenizer_config.json`, and `onnx/model.onnx` (+ the same bytes as
 *    `onnx/model_quantized.onnx`, the file name the `q8` dtype asks for). The graph is a single
 *    `Gather(word_embeddings, input_ids) -> last_hidden_state` node over seeded random rows, so the
 *    mean-pooled, L2-normalized output is a random projection of the bag of tokens: texts that
 *    share words (English) or characters (Chinese) are close, unrelated texts are near-orthogonal.
 *    The e2e test also ships this folder inside the built extension under `/models/<modelId>/`.
 *
 * 2. `writeModel2VecOnnxModel` converts a real model2vec static embedding (safetensors:
 *    `embeddings` F32[rows, dim], optional `mapping` I32[vocab], optional `weights` F64/F32[vocab];
 *    Unigram `tokenizer.json`) into an equivalent ONNX graph:
 *    `Gather(embeddings, Gather(mapping, input_ids)) * Unsqueeze(Gather(weights, input_ids), -1)`.
 *    With mean pooling + normalize this is exactly model2vec's `pool_ids`
 *    (github.com/MinishLab/model2vec-rs `src/model.rs`: mean over tokens of
 *    `embeddings[mapping[id]] * weights[id]`, then L2 normalization; no special tokens).
 *
 * Everything is written with the `onnx-proto` package (protobuf encoding of the ONNX IR).
 */
import { mkdir, readFile, writeFile, link } from 'node:fs/promises';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { mulberry32 } from '../../bench/data/prng';
export { mulberry32 };

const { onnx } = onnxProto;

/** English words in the fixture vocabulary (whole-word WordPiece entries). */
export const FIXTURE_ENGLISH_WORDS: readonly string[] = (
  'the a an and or but not no yes is are was were be been have has had do does did i you he she it we they me my your ' +
  'his her its our their this that these those what which who where when why how all any some many much more most ' +
  'to of in on at by for with from about as into like through after over between out against during without before ' +
  'under around among up down off again then once here there can will just should now also very too only own same so ' +
  'than cat cats dog dogs sat mat sun moon sky blue red green black white car cars road city town home house room ' +
  'food eat ate apple apples banana tea coffee milk water rice bread fish meat cook cooking dinner lunch breakfast ' +
  'book books read reading write writing music song play playing game games movie film watch run running walk ' +
  'swim swimming travel trip paris london tokyo beijing shanghai china japan france english chinese language ' +
  'learn learning study school university teacher student work job office meeting project deadline email phone ' +
  'computer software code python javascript rust data model memory remember forget name age birthday year month ' +
  'week day today tomorrow yesterday morning evening night time hour minute friend family mother father sister ' +
  'brother wife husband child children baby love hate prefer favorite vegetarian allergic doctor hospital health ' +
  'weather rain snow cold hot warm quantum physics math science history art painting photo camera garden flower ' +
  'tree mountain river sea beach holiday vacation plan plans live lives lived moved move born new old big small ' +
  'good bad best better happy sad tired busy hello hi thanks please sorry okay'
).split(' ');

/** Special tokens, ids 0..4 in this order (BERT convention). */
const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;

/** What `writeBertFixtureModel` wrote. */
export interface BertFixtureModel {
  /** Folder of the model. */
  dir: string;
  /** Embedding dimension (hidden size). */
  dimension: number;
  /** Vocabulary size (rows of `word_embeddings`). */
  vocabSize: number;
  /** Token -> id. */
  vocab: Map<string, number>;
  /** Row-major `word_embeddings`, `vocabSize × dimension`. */
  weights: Float32Array;
}

/** Builds the fixture vocabulary: special tokens, ASCII characters (+ `##` forms), words, CJK. */
function buildBertVocab(): string[] {
  const tokens: string[] = [...SPECIAL_TOKENS];
  const seen = new Set(tokens);
  const add = (t: string) => {
    if (!seen.has(t)) {
      seen.add(t);
      tokens.push(t);
    }
  };
  for (let c = 0x21; c <= 0x7e; c++) {
    const ch = String.fromCharCode(c);
    if (ch >= 'A' && ch <= 'Z') continue; // BertNormalizer lowercases
    add(ch);
    add(`##${ch}`);
  }
  for (const w of FIXTURE_ENGLISH_WORDS) add(w);
  for (let cp = 0x4e00; cp <= 0x9fff; cp++) add(String.fromCodePoint(cp));
  return tokens;
}

/** A float tensor initializer. */
function floatTensor(name: string, dims: number[], data: Float32Array): InstanceType<typeof onnx.TensorProto> {
  return onnx.TensorProto.create({
    name,
    dims,
    dataType: onnx.TensorProto.DataType.FLOAT,
    rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  });
}

/** An int64 tensor initializer (little-endian raw data). */
function int64Tensor(name: string, dims: number[], data: ArrayLike<number>): InstanceType<typeof onnx.TensorProto> {
  const raw = new BigInt64Array(data.length);
  for (let i = 0; i < data.length; i++) raw[i] = BigInt(data[i]!);
  return onnx.TensorProto.create({
    name,
    dims,
    dataType: onnx.TensorProto.DataType.INT64,
    rawData: new Uint8Array(raw.buffer),
  });
}

/** A graph input/output: tensor of `elemType` with symbolic or fixed dims. */
function valueInfo(name: string, elemType: number, dims: (string | number)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  });
}

/** Serializes a graph into ONNX model bytes (IR version 8, opset 13). */
function encodeModel(graph: ReturnType<typeof onnx.GraphProto.create>): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'recall-test-fixture',
    opsetImport: [{ domain: '', version: 13 }],
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Writes `bytes` to `onnx/model.onnx` and hard-links `onnx/model_quantized.onnx` to it. */
async function writeOnnxFiles(dir: string, bytes: Uint8Array): Promise<void> {
  await mkdir(join(dir, 'onnx'), { recursive: true });
  await writeFile(join(dir, 'onnx', 'model.onnx'), bytes);
  await link(join(dir, 'onnx', 'model.onnx'), join(dir, 'onnx', 'model_quantized.onnx')).catch(async () =>
    writeFile(join(dir, 'onnx', 'model_quantized.onnx'), bytes),
  );
}

/**
 * Writes the tiny BERT-shaped fixture model into the folder `dir` (created if needed). To serve it
 * to transformers.js as model `<id>`, write it to `<base>/<id>` and use `<base>` as the local (or
 * packaged) models path.
 * @param modelId recorded in `config.json` (`_name_or_path`).
 * @param options.dimension hidden size (default 64).
 * @param options.seed PRNG seed of the embedding rows (default 42).
 * Rows are uniform in [-1, 1); `[CLS]`/`[SEP]` rows are scaled by 0.1 so that the fixed special
 * tokens barely move the pooled vector; `[PAD]` is all zeros. Takes a few hundred ms (≈21k rows).
 */
export async function writeBertFixtureModel(dir: string, modelId: string, options: { dimension?: number; seed?: number } = {}): Promise<BertFixtureModel> {
  const dimension = options.dimension ?? 64;
  const random = mulberry32(options.seed ?? 42);
  const tokens = buildBertVocab();
  const vocab = new Map(tokens.map((t, i) => [t, i]));
  const weights = new Float32Array(tokens.length * dimension);
  for (let row = 0; row < tokens.length; row++) {
    const scale = row === 0 ? 0 : row === 2 || row === 3 ? 0.1 : 1;
    for (let j = 0; j < dimension; j++) weights[row * dimension + j] = (random() * 2 - 1) * scale;
  }

  await mkdir(dir, { recursive: true });

  const graph = onnx.GraphProto.create({
    name: 'bert-fixture',
    node: [
      {
        opType: 'Gather',
        input: ['word_embeddings', 'input_ids'],
        output: ['last_hidden_state'],
        attribute: [{ name: 'axis', i: 0, type: onnx.AttributeProto.AttributeType.INT }],
      },
    ],
    initializer: [floatTensor('word_embeddings', [tokens.length, dimension], weights)],
    input: [
      valueInfo('input_ids', onnx.TensorProto.DataType.INT64, ['batch_size', 'sequence_length']),
      valueInfo('attention_mask', onnx.TensorProto.DataType.INT64, ['batch_size', 'sequence_length']),
      valueInfo('token_type_ids', onnx.TensorProto.DataType.INT64, ['batch_size', 'sequence_length']),
    ],
    output: [valueInfo('last_hidden_state', onnx.TensorProto.DataType.FLOAT, ['batch_size', 'sequence_length', dimension])],
  });
  await writeOnnxFiles(dir, encodeModel(graph));

  const special = (content: string, id: number) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((t, i) => special(t, i)),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab),
    },
  };
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  await writeFile(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: 512,
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      mask_token: '[MASK]',
    }),
  );
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({
      _name_or_path: modelId,
      model_type: 'bert',
      architectures: ['BertModel'],
      hidden_size: dimension,
      vocab_size: tokens.length,
      max_position_embeddings: 512,
      num_attention_heads: 1,
      num_hidden_layers: 1,
      pad_token_id: 0,
    }),
  );
  return { dir, dimension, vocabSize: tokens.length, vocab, weights };
}

/** One tensor read from a safetensors file. */
export interface SafetensorsTensor {
  dtype: string;
  shape: number[];
  /** The values as float64 (F32/F64/I32/I64 supported). */
  values: Float64Array;
}

/**
 * Reads a `.safetensors` file (format: u64 little-endian header length, JSON header with
 * `dtype`/`shape`/`data_offsets`, then the raw little-endian data — huggingface/safetensors).
 * @throws Error on a truncated file or an unsupported dtype.
 */
export async function readSafetensors(path: string): Promise<Map<string, SafetensorsTensor>> {
  const bytes = await readFile(path);
  if (bytes.byteLength < 8) throw new Error(`${path}: not a safetensors file (too short)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > bytes.byteLength) throw new Error(`${path}: truncated safetensors header`);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const base = 8 + headerLength;
  const out = new Map<string, SafetensorsTensor>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [start, end] = info.data_offsets;
    const count = info.shape.reduce((a, b) => a * b, 1);
    const values = new Float64Array(count);
    const width = { F32: 4, F64: 8, I32: 4, I64: 8 }[info.dtype];
    if (!width) throw new Error(`${path}: unsupported dtype ${info.dtype} for ${name}`);
    if (end - start !== count * width || base + end > bytes.byteLength) throw new Error(`${path}: bad data range for ${name}`);
    for (let i = 0; i < count; i++) {
      const at = base + start + i * width;
      values[i] =
        info.dtype === 'F32'
          ? view.getFloat32(at, true)
          : info.dtype === 'F64'
            ? view.getFloat64(at, true)
            : info.dtype === 'I32'
              ? view.getInt32(at, true)
              : Number(view.getBigInt64(at, true));
    }
    out.set(name, { dtype: info.dtype, shape: info.shape, values });
  }
  return out;
}

/** What `writeModel2VecOnnxModel` wrote. */
export interface Model2VecOnnxModel {
  dir: string;
  dimension: number;
  /** `embeddings` rows (after `mapping`), row-major float32. */
  embeddings: Float32Array;
  /** token id -> row of `embeddings` (identity when the model has no `mapping`). */
  mapping: Int32Array;
  /** token id -> weight (all 1 when the model has no `weights`), as float32 like model2vec-rs. */
  weights: Float32Array;
}

/**
 * Converts a model2vec folder (`model.safetensors` + `tokenizer.json`) into a transformers.js
 * model folder `dir` (config.json with `model_type: "bert"` so transformers.js
 * runs it as an encoder whose `last_hidden_state` is mean-pooled by the feature-extraction pipeline).
 * @throws Error when the safetensors file lacks `embeddings`.
 */
export async function writeModel2VecOnnxModel(sourceDir: string, dir: string): Promise<Model2VecOnnxModel> {
  const tensors = await readSafetensors(join(sourceDir, 'model.safetensors'));
  const emb = tensors.get('embeddings');
  if (!emb || emb.shape.length !== 2) throw new Error(`${sourceDir}: no 2-D 'embeddings' tensor`);
  const [rows, dimension] = emb.shape as [number, number];
  const tokenizerText = await readFile(join(sourceDir, 'tokenizer.json'), 'utf8');
  const tokenizerJson = JSON.parse(tokenizerText) as { model: { vocab: unknown[] | Record<string, number> } };
  const vocabSize = Array.isArray(tokenizerJson.model.vocab) ? tokenizerJson.model.vocab.length : Object.keys(tokenizerJson.model.vocab).length;

  const embeddings = Float32Array.from(emb.values);
  const mappingTensor = tensors.get('mapping');
  const mapping = mappingTensor ? Int32Array.from(mappingTensor.values) : Int32Array.from({ length: rows }, (_, i) => i);
  const weightsTensor = tensors.get('weights');
  const weights = weightsTensor ? Float32Array.from(weightsTensor.values) : new Float32Array(mapping.length).fill(1);
  if (mapping.length < vocabSize) throw new Error(`${sourceDir}: mapping covers ${mapping.length} of ${vocabSize} tokens`);

  await mkdir(dir, { recursive: true });
  const I64 = onnx.TensorProto.DataType.INT64;
  const F32 = onnx.TensorProto.DataType.FLOAT;
  const axis0 = [{ name: 'axis', i: 0, type: onnx.AttributeProto.AttributeType.INT }];
  const graph = onnx.GraphProto.create({
    name: 'model2vec',
    node: [
      { opType: 'Gather', input: ['mapping', 'input_ids'], output: ['rows'], attribute: axis0 },
      { opType: 'Gather', input: ['embeddings', 'rows'], output: ['token_vectors'], attribute: axis0 },
      { opType: 'Gather', input: ['weights', 'input_ids'], output: ['token_weights'], attribute: axis0 },
      { opType: 'Unsqueeze', input: ['token_weights', 'last_axis'], output: ['token_weights_3d'] },
      { opType: 'Mul', input: ['token_vectors', 'token_weights_3d'], output: ['last_hidden_state'] },
    ],
    initializer: [
      floatTensor('embeddings', [rows, dimension], embeddings),
      int64Tensor('mapping', [mapping.length], mapping),
      floatTensor('weights', [weights.length], weights),
      int64Tensor('last_axis', [1], [-1]),
    ],
    input: [valueInfo('input_ids', I64, ['batch_size', 'sequence_length']), valueInfo('attention_mask', I64, ['batch_size', 'sequence_length'])],
    output: [valueInfo('last_hidden_state', F32, ['batch_size', 'sequence_length', dimension])],
  });
  await writeOnnxFiles(dir, encodeModel(graph));
  await writeFile(join(dir, 'tokenizer.json'), tokenizerText);
  await writeFile(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'PreTrainedTokenizer', model_max_length: 512, pad_token: '[PAD]', unk_token: '[UNK]' }),
  );
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({ model_type: 'bert', architectures: ['BertModel'], hidden_size: dimension, vocab_size: vocabSize, pad_token_id: 0 }),
  );
  return { dir, dimension, embeddings, mapping, weights };
}
