/**
 * Exact token counting for GGUF models (wllama / llama.cpp) from the tokenizer stored in the
 * GGUF header (`tokenizer.ggml.*`): the header a load already parsed (`src/gguf/header.ts`), or
 * read from slices of the model Blob (the tensor data is never read).
 *
 * Supported vocabularies (anything else returns `null`, never a wrong "exact" counter):
 * - `tokenizer.ggml.model = "llama"` (SentencePiece): `LlamaSpmTokenizer`, a port of llama.cpp's
 *   SPM tokenizer (e.g. Llama 2, Mistral 7B v0.1, TinyLlama, Karpathy's tinyllamas). Whole
 *   prompts are counted joined (ChatML markers are plain text there), line by line with cached
 *   line counts when no token contains a newline (`newlineIsolated`), a new line as the sum of
 *   cached word counts when no token has an inner "▁" (`wordIsolated`); either makes the counter
 *   `incremental`.
 * - `tokenizer.ggml.model = "gpt2"` (byte-level BPE) with `tokenizer.ggml.pre = "qwen2"` (Qwen2,
 *   Qwen2.5): rebuilt as a Hugging Face `tokenizer.json` (BPE vocab + merges, the qwen2 split
 *   regex of llama.cpp's `LLAMA_VOCAB_PRE_TYPE_QWEN2`, byte-level) and run by
 *   `@huggingface/tokenizers`. llama.cpp applies no Unicode normalization here, so neither do we.
 *   Other pre-tokenizers (llama-bpe, deepseek, …) use other split rules we have not verified
 *   against a reference, so they return `null`.
 *
 * The chat template comes from `tokenizer.chat_template`; when absent, llama.cpp (and wllama)
 * use ChatML, and so do we. `tokenizer.ggml.add_bos_token` (default `true` for SPM, `false` for
 * BPE) adds one BOS token per prompt unless the template prints it.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { readGgufHeader, type GgufHeader, type GgufMetadata } from '../gguf/header';
import { detectChatTemplate } from './chat-template';
import { cachedCount, makeChatCounter, splitsAtLineStarts, type ChatTokenCounter } from './counter';
import { GGUF_TOKEN_TYPE, LlamaSpmTokenizer } from './spm';

/** Split regex of llama.cpp's `qwen2` pre-tokenizer (same as Qwen2's `tokenizer.json`). */
const QWEN2_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/**
 * Reads the metadata key/values of a GGUF file from `model` (`readGgufHeader`: only the header's
 * slices are read; for a multi-GB model only the first few MB).
 * @throws GgufReadError when the Blob is not a GGUF file or its header is corrupt/truncated.
 */
export async function readGgufMetadata(model: Blob): Promise<GgufMetadata> {
  return (await readGgufHeader(model)).metadata;
}

function num(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return undefined;
}

function bool(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

function stringArray(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : null;
}

function numberArray(value: unknown): number[] | null {
  return Array.isArray(value) && value.every((v) => typeof v === 'number' || typeof v === 'bigint') ? value.map(Number) : null;
}

/**
 * Builds an exact counter from a GGUF model's own tokenizer metadata (see module doc).
 * @param source the GGUF file (a `File` from a picker or an OPFS file; only header slices are
 *   read), or its header as a load already parsed it (nothing is read again).
 * @returns a `ChatTokenCounter` with id `gguf:<general.name>:<model>[:<pre>]` (its
 *   `specialTokens`: the CONTROL and USER_DEFINED tokens of the vocabulary), or `null` for an
 *   unsupported tokenizer type or pre-tokenizer, or a GGUF without tokenizer metadata.
 * @throws GgufReadError when the Blob is not a GGUF file or its header is corrupt/truncated.
 */
export async function createGgufTokenCounter(source: Blob | GgufHeader): Promise<ChatTokenCounter | null> {
  const md = source instanceof Blob ? await readGgufMetadata(source) : source.metadata;
  const kind = md['tokenizer.ggml.model'];
  const tokens = stringArray(md['tokenizer.ggml.tokens']);
  if (typeof kind !== 'string' || !tokens || tokens.length === 0) return null;
  const types = numberArray(md['tokenizer.ggml.token_type']) ?? [];
  const name = typeof md['general.name'] === 'string' ? md['general.name'] : 'model';
  const templateSource = typeof md['tokenizer.chat_template'] === 'string' ? md['tokenizer.chat_template'] : null;
  const template = detectChatTemplate(templateSource, true);
  const bosId = num(md['tokenizer.ggml.bos_token_id']);
  // Strings llama.cpp parses as special tokens in text (`parse_special`): CONTROL and USER_DEFINED.
  const specialTokens = tokens.filter((text, id) => text.length > 0 && (types[id] === GGUF_TOKEN_TYPE.control || types[id] === GGUF_TOKEN_TYPE.userDefined));
  const bosText = bosId !== undefined ? tokens[bosId] : undefined;
  // llama.cpp prepends BOS when add_bos_token is set, unless the rendered prompt already starts with it.
  const bosExtra = (addBos: boolean) => {
    if (!addBos || bosText === undefined) return 0;
    const printsBos = (template.family === 'llama3' || template.family === 'gemma') && templateSource?.includes('bos_token');
    return printsBos ? 0 : 1;
  };

  if (kind === 'llama') {
    const scores = numberArray(md['tokenizer.ggml.scores']);
    if (!scores || scores.length !== tokens.length) return null;
    const unknownId = num(md['tokenizer.ggml.unknown_token_id']);
    const spm = new LlamaSpmTokenizer(
      { tokens, scores, types },
      { addSpacePrefix: bool(md['tokenizer.ggml.add_space_prefix'], true), ...(unknownId !== undefined ? { unknownId } : {}) },
    );
    // Each line is counted once and cached, so the joined prompt of the next turn costs only its
    // changed lines; a new line is the sum of its cached words when `wordIsolated`, so only words
    // never seen are encoded. Without `newlineIsolated` the pieces are whole fragments (a whole
    // prompt, for ChatML on this vocabulary): not cached, so prompts do not fill the line cache.
    const word = cachedCount((text) => spm.countPiece(text));
    const stretch = (text: string) => spm.countStretch(text, word);
    const line = cachedCount(stretch);
    return makeChatCounter({
      id: `gguf:${name}:llama`,
      countText: (text) => spm.countTokens(text, spm.newlineIsolated ? line : stretch),
      template,
      extraFixedTokens: bosExtra(bool(md['tokenizer.ggml.add_bos_token'], true)),
      joined: true,
      incrementalCountText: spm.newlineIsolated || spm.wordIsolated,
      specialTokens,
      ...(bosText !== undefined ? { bos: bosText } : {}),
    });
  }

  if (kind === 'gpt2') {
    const pre = md['tokenizer.ggml.pre'];
    const merges = stringArray(md['tokenizer.ggml.merges']);
    if (pre !== 'qwen2' || !merges) return null;
    const vocab: Record<string, number> = {};
    const added: Record<string, unknown>[] = [];
    tokens.forEach((text, id) => {
      if (!(text in vocab)) vocab[text] = id;
      const type = types[id] ?? GGUF_TOKEN_TYPE.normal;
      if (type === GGUF_TOKEN_TYPE.control || type === GGUF_TOKEN_TYPE.userDefined) {
        added.push({ id, content: text, single_word: false, lstrip: false, rstrip: false, normalized: false, special: type === GGUF_TOKEN_TYPE.control });
      }
    });
    const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
    const definition = {
      version: '1.0',
      added_tokens: added,
      normalizer: null,
      pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [{ type: 'Split', pattern: { Regex: QWEN2_SPLIT }, behavior: 'Isolated', invert: false }, byteLevel],
      },
      post_processor: null,
      decoder: byteLevel,
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: '',
        end_of_word_suffix: '',
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab,
        merges,
      },
    };
    const tokenizer = new Tokenizer(definition, {});
    return makeChatCounter({
      id: `gguf:${name}:gpt2:${pre}`,
      countText: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids.length,
      template,
      extraFixedTokens: bosExtra(bool(md['tokenizer.ggml.add_bos_token'], false)),
      specialTokens,
      ...(bosText !== undefined ? { bos: bosText } : {}),
      incremental: splitsAtLineStarts(definition),
    });
  }
  return null;
}
