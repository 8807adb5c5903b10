/**
 * Reads the metadata of a GGUF file (llama.cpp's model format; spec: ggml-org/ggml
 * `docs/gguf.md`) from a `Blob` without loading it, using `@huggingface/gguf` over a fetch that
 * serves byte ranges of the Blob. Only the header is read (a few MB at most, the tokenizer
 * vocabulary included), whatever the model size.
 */
import { gguf } from '@huggingface/gguf';
import { EngineError } from '../types';

/** What the engine needs to know before loading a GGUF. */
export interface GgufInfo {
  /** GGUF format version (1–3). */
  version: number;
  /** `general.architecture`, e.g. `llama`, `qwen2`. */
  architecture: string | null;
  /** `general.name`, when set. */
  name: string | null;
  /** `<architecture>.context_length`: the trained context window (tokens), when set. */
  contextLength: number | null;
  /** `tokenizer.chat_template` (Jinja), or `null` when the file has none. */
  chatTemplate: string | null;
}

/** A `fetch` that answers HTTP range requests from `blob` (status 206 with `Content-Range`). */
function blobRangeFetch(blob: Blob): typeof fetch {
  return (async (_input: unknown, init?: { headers?: Record<string, string> }) => {
    const range = /bytes=(\d+)-(\d+)?/.exec(init?.headers?.Range ?? init?.headers?.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const end = range?.[2] !== undefined ? Math.min(Number(range[2]) + 1, blob.size) : blob.size;
    const slice = blob.slice(start, end);
    return new Response(slice, {
      status: 206,
      headers: { 'content-range': `bytes ${start}-${Math.max(start, end - 1)}/${blob.size}`, 'content-length': String(slice.size) },
    });
  }) as typeof fetch;
}

const asNumber = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);
const asString = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/**
 * Parses the header of a GGUF model.
 * @param label file name for error messages.
 * @throws EngineError('load') when the data is not a GGUF file (bad magic, unknown version) or is
 *   truncated/corrupt. Never throws anything else.
 */
export async function inspectGguf(blob: Blob, label = 'The file'): Promise<GgufInfo> {
  if (blob.size < 8) throw new EngineError('load', `${label} is not a GGUF model file (only ${blob.size} bytes).`);
  const magic = new Uint8Array(await blob.slice(0, 4).arrayBuffer());
  if (String.fromCharCode(...magic) !== 'GGUF') {
    throw new EngineError('load', `${label} is not a GGUF model file (it does not start with "GGUF"). Pick a .gguf model for llama.cpp.`);
  }
  try {
    const { metadata, tensorDataOffset, tensorInfos } = await gguf('https://local.invalid/model.gguf', { fetch: blobRangeFetch(blob) });
    // Reads past the end see zeros, so a cut-off header can parse; its data offset gives it away.
    if (Number(tensorDataOffset) > blob.size || tensorInfos.length === 0) {
      throw new Error(`header ends at byte ${tensorDataOffset} of a ${blob.size}-byte file, with ${tensorInfos.length} tensors`);
    }
    // A file cut off after its header (an interrupted copy or download): the last tensor's data
    // would start past the end. (Its length depends on the quantization; its start does not.)
    const lastStart = Number(tensorDataOffset) + Math.max(...tensorInfos.map((t) => Number(t.offset)));
    if (lastStart >= blob.size) {
      throw new Error(`its tensor data stops at byte ${blob.size}, before the last tensor, which starts at byte ${lastStart}`);
    }
    const meta = metadata as unknown as Record<string, unknown>;
    const architecture = asString(meta['general.architecture']);
    return {
      version: asNumber(meta.version) ?? 0,
      architecture,
      name: asString(meta['general.name']),
      contextLength: architecture ? asNumber(meta[`${architecture}.context_length`]) : null,
      chatTemplate: asString(meta['tokenizer.chat_template']),
    };
  } catch (cause) {
    const text = cause instanceof Error ? cause.message : String(cause);
    throw new EngineError('load', `${label} is not a usable GGUF model (truncated or corrupt header: ${text}).`, { cause });
  }
}
