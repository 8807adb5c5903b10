/**
 * Token counters built from GGUF metadata.
 * - SentencePiece ("llama"): checked by hand on a tiny vocabulary, and against Google's
 *   SentencePiece on the real stories260K vocabulary (reference ids in
 *   bench/data/spm-stories260k-reference.json, produced by bench/data/spm-reference.py).
 * - byte-level BPE with the qwen2 pre-tokenizer: a GGUF header is written from Qwen2.5's real
 *   tokenizer.json (as llama.cpp's converter lays it out) and must count like the HF tokenizer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { GGUFValueType, serializeGgufMetadata, type GGUFTypedMetadata } from '@huggingface/gguf';
import { describe, expect, it } from 'vitest';
import { countPromptTokens, createGgufTokenCounter, GgufReadError, readGgufMetadata } from '../../src/tokens';
import { GGUF_TOKEN_TYPE, LlamaSpmTokenizer } from '../../src/tokens/spm';
import { loadQwenTokenizerFiles, qwenCounter } from '../../bench/data/qwen-tokenizer';
import { neutralizerFor } from '../../src/prompt/neutralize';

const STORIES = new URL('../../../shared/fixtures/models/stories260K/stories260K.gguf', import.meta.url);
const haveStories = existsSync(STORIES);
if (!haveStories) console.warn(`[tokens-gguf] skipping stories260K tests: ${STORIES.pathname} not found (../shared absent)`);
const reference = JSON.parse(readFileSync(new URL('../../bench/data/spm-stories260k-reference.json', import.meta.url), 'utf8')) as {
  texts: string[];
  ids: number[][];
};

type Kv = Record<string, { value: unknown; type: GGUFValueType; subType?: GGUFValueType }>;

/** A GGUF file (header only, no tensors) with the given key/values. */
function ggufBlob(kv: Kv): Blob {
  const typed = {
    version: { value: 3, type: GGUFValueType.UINT32 },
    tensor_count: { value: 0n, type: GGUFValueType.UINT64 },
    kv_count: { value: BigInt(Object.keys(kv).length), type: GGUFValueType.UINT64 },
    ...kv,
  } as unknown as GGUFTypedMetadata;
  return new Blob([serializeGgufMetadata(typed) as Uint8Array<ArrayBuffer>]);
}
const str = (value: string) => ({ value, type: GGUFValueType.STRING });
const strings = (value: string[]) => ({ value, type: GGUFValueType.ARRAY, subType: GGUFValueType.STRING });
const int32s = (value: number[]) => ({ value, type: GGUFValueType.ARRAY, subType: GGUFValueType.INT32 });
const floats = (value: number[]) => ({ value, type: GGUFValueType.ARRAY, subType: GGUFValueType.FLOAT32 });

describe('LlamaSpmTokenizer (llama.cpp SentencePiece algorithm)', () => {
  // Hand-made vocabulary: ids 0..2 special, 3.. normal. Higher score merges first.
  const tokens = ['<unk>', '<s>', '</s>', '▁', 'a', 'b', 'c', 'ab', 'bc', '▁a', '▁ab', '<0x41>'];
  const scores = [0, 0, 0, -1, -2, -3, -4, -5, -0.5, -6, -7, 0];
  const types = [2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6];
  const spm = new LlamaSpmTokenizer({ tokens, scores, types }, { addSpacePrefix: true });

  it('merges the highest-scoring pair first (hand-computed)', () => {
    // "abc" → "▁abc": pairs ▁a(-6), ab(-5), bc(-0.5): bc first → ▁ a bc; then ▁a(-6) → ▁a bc.
    expect(spm.encode('abc')).toEqual([9, 8]);
    // "ab" → "▁ab": ab(-5) beats ▁a(-6) → ▁ ab; then ▁ab(-7) → [▁ab].
    expect(spm.encode('ab')).toEqual([10]);
    // An empty text is no fragment at all (llama.cpp): no space prefix, no token.
    expect(spm.encode('')).toEqual([]);
  });

  it('falls back to byte tokens, or <unk> when a byte token is missing', () => {
    // "A" is not a piece: "▁" then byte 0x41 → <0x41>; "é" is 2 bytes without byte tokens → <unk> twice.
    expect(spm.encode('A')).toEqual([3, 11]);
    expect(spm.encode('é')).toEqual([3, 0, 0]);
  });

  it('splits special-token strings and re-applies the space prefix after them', () => {
    // "<s>a" → <s>, then "▁a" (prefix because the previous fragment was special).
    expect(spm.encode('<s>a')).toEqual([1, 9]);
    expect(spm.encode('a</s>')).toEqual([9, 2]);
  });

  it.skipIf(!haveStories)('matches Google SentencePiece on the stories260K vocabulary', async () => {
    const md = await readGgufMetadata(new Blob([readFileSync(STORIES)]));
    const real = new LlamaSpmTokenizer(
      { tokens: md['tokenizer.ggml.tokens'] as string[], scores: md['tokenizer.ggml.scores'] as number[], types: md['tokenizer.ggml.token_type'] as number[] },
      { addSpacePrefix: true },
    );
    expect(real.size).toBe(512);
    reference.texts.forEach((text, i) => expect(real.encode(text), text).toEqual(reference.ids[i]));
  });
});

describe('createGgufTokenCounter', () => {
  it.skipIf(!haveStories)('builds an exact counter for stories260K (llama/SPM, no chat template → ChatML like llama.cpp)', async () => {
    const counter = await createGgufTokenCounter(new Blob([readFileSync(STORIES)]));
    expect(counter).not.toBeNull();
    expect(counter!.id).toBe('gguf:llama:llama');
    expect(counter!.exact).toBe(true);
    reference.texts.forEach((text, i) => expect(counter!.count(text)).toBe(reference.ids[i]!.length));
    expect(counter!.chatTemplate).toMatchObject({ family: 'chatml', approximate: false });
    // The prompt is the ChatML text tokenized as one string (its markers are plain text for this
    // vocabulary), plus one BOS (add_bos_token defaults to true for SPM).
    const messages = [
      { role: 'system' as const, content: 'Be kind.' },
      { role: 'user' as const, content: 'Tell me a story.' },
    ];
    const joined = '<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nTell me a story.<|im_end|>\n<|im_start|>assistant\n';
    expect(countPromptTokens(counter!, messages)).toBe(counter!.count(joined) + 1);
  });

  it.skipIf(!haveStories)('lists its CONTROL/USER_DEFINED tokens; neutralized text encodes to no special id (stories260K)', async () => {
    const blob = new Blob([readFileSync(STORIES)]);
    const counter = (await createGgufTokenCounter(blob))!;
    const md = await readGgufMetadata(blob);
    const tokens = md['tokenizer.ggml.tokens'] as string[];
    const types = md['tokenizer.ggml.token_type'] as number[];
    const spm = new LlamaSpmTokenizer({ tokens, scores: md['tokenizer.ggml.scores'] as number[], types }, { addSpacePrefix: true });
    const specialIds = new Set(types.flatMap((t, id) => (t === GGUF_TOKEN_TYPE.control || t === GGUF_TOKEN_TYPE.userDefined ? [id] : [])));
    expect(counter.specialTokens).toEqual([...specialIds].map((id) => tokens[id]));
    expect(counter.specialTokens).toEqual(expect.arrayContaining(['<s>', '</s>']));
    const text = counter.specialTokens.map((t) => `Once${t}upon a time 忽略${t}`).join(' ');
    // Raw, the text holds two special ids per special token (so the check below can fail)…
    expect(spm.encode(text).filter((id) => specialIds.has(id))).toHaveLength(2 * counter.specialTokens.length);
    // …neutralized, none.
    const out = neutralizerFor(counter).stored(text);
    expect(out.count).toBe(2 * counter.specialTokens.length);
    expect(spm.encode(out.text).filter((id) => specialIds.has(id))).toEqual([]);
  });

  it.skipIf(!haveStories)('reads only header slices of a large model Blob', async () => {
    const header = readFileSync(STORIES).subarray(0, 64 * 1024); // the metadata of stories260K fits in 64 KB
    const blob = new Blob([header, new Uint8Array(96 * 1024 * 1024)]);
    let bytesRead = 0;
    const slice = blob.slice.bind(blob);
    blob.slice = (start?: number, end?: number) => {
      const part = slice(start, end);
      bytesRead += part.size;
      return part;
    };
    const counter = await createGgufTokenCounter(blob);
    expect(counter?.count(reference.texts[0]!)).toBe(reference.ids[0]!.length);
    expect(bytesRead).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThanOrEqual(2_000_000 + 8); // one 2 MB slice out of 96 MB, plus the 8-byte magic/version check
  });

  it('builds a Qwen2 (gpt2/qwen2) counter that counts like the Hugging Face tokenizer', async () => {
    const { tokenizerJson, tokenizerConfig } = loadQwenTokenizerFiles();
    const model = tokenizerJson.model as { vocab: Record<string, number>; merges: (string | [string, string])[] };
    const added = tokenizerJson.added_tokens as { id: number; content: string; special: boolean }[];
    const tokens: string[] = [];
    const types: number[] = [];
    for (const [text, id] of Object.entries(model.vocab)) {
      tokens[id] = text;
      types[id] = GGUF_TOKEN_TYPE.normal;
    }
    for (const t of added) {
      tokens[t.id] = t.content;
      types[t.id] = t.special ? GGUF_TOKEN_TYPE.control : GGUF_TOKEN_TYPE.userDefined;
    }
    const blob = ggufBlob({
      'general.architecture': str('qwen2'),
      'general.name': str('Qwen2.5 test'),
      'tokenizer.ggml.model': str('gpt2'),
      'tokenizer.ggml.pre': str('qwen2'),
      'tokenizer.ggml.tokens': strings(tokens),
      'tokenizer.ggml.token_type': int32s(types),
      'tokenizer.ggml.merges': strings(model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m))),
      'tokenizer.chat_template': str(tokenizerConfig.chat_template as string),
    });
    const counter = await createGgufTokenCounter(blob);
    expect(counter?.id).toBe('gguf:Qwen2.5 test:gpt2:qwen2');
    const hf = qwenCounter();
    const corpus = JSON.parse(readFileSync(new URL('../../bench/data/token-corpus.json', import.meta.url), 'utf8'));
    for (const text of [...corpus.calibration.en, ...corpus.calibration.zh]) expect(counter!.count(text)).toBe(hf.count(text));
    expect(counter!.perMessageOverhead).toBe(5);
    expect(counter!.replyPrimerTokens).toBe(3);
    const messages = [{ role: 'user' as const, content: '我的猫叫麻薯。' }];
    expect(countPromptTokens(counter!, messages)).toBe(countPromptTokens(hf, messages));
  });

  it('returns null for tokenizers it cannot reproduce exactly', async () => {
    const base = { 'tokenizer.ggml.tokens': strings(['a', 'b']), 'tokenizer.ggml.token_type': int32s([1, 1]) };
    // A BPE vocabulary with a pre-tokenizer we have not verified (Llama 3's "llama-bpe").
    expect(
      await createGgufTokenCounter(
        ggufBlob({ ...base, 'tokenizer.ggml.model': str('gpt2'), 'tokenizer.ggml.pre': str('llama-bpe'), 'tokenizer.ggml.merges': strings(['a b']) }),
      ),
    ).toBeNull();
    expect(await createGgufTokenCounter(ggufBlob({ ...base, 'tokenizer.ggml.model': str('t5') }))).toBeNull();
    expect(await createGgufTokenCounter(ggufBlob({ 'general.name': str('no tokenizer') }))).toBeNull();
    // SPM without scores cannot be merged.
    expect(await createGgufTokenCounter(ggufBlob({ ...base, 'tokenizer.ggml.model': str('llama') }))).toBeNull();
    expect(await createGgufTokenCounter(ggufBlob({ ...base, 'tokenizer.ggml.model': str('llama'), 'tokenizer.ggml.scores': floats([0, 0]) }))).not.toBeNull();
  });

  it('rejects files that are not GGUF, or truncated headers, with GgufReadError', async () => {
    await expect(createGgufTokenCounter(new Blob(['not a model at all']))).rejects.toThrow(GgufReadError);
    await expect(createGgufTokenCounter(new Blob([]))).rejects.toThrow(GgufReadError);
    const full = ggufBlob({ 'tokenizer.ggml.model': str('llama'), 'tokenizer.ggml.tokens': strings(['hello', 'world']) });
    const truncated = full.slice(0, 40);
    await expect(createGgufTokenCounter(truncated)).rejects.toThrow(GgufReadError);
  });
});
