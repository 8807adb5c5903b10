/**
 * What the CPU engine needs to know from a GGUF file before loading it, from its parsed header
 * (`src/gguf/header.ts`, read once per load), and the checks that make a file usable: a GGUF
 * whose header parses, with tensors, not cut off before its last tensor.
 */
import { readGgufHeader, GgufReadError, type GgufHeader } from '../../gguf/header';
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

const asNumber = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);
const asString = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/**
 * Reads the header of a GGUF model once and checks that the file is usable (see module doc).
 * @param label file name for error messages.
 * @throws EngineError('load') when the data is not a GGUF file (bad magic, unknown version) or is
 *   truncated/corrupt. Never throws anything else.
 */
export async function readModelHeader(blob: Blob, label = 'The file'): Promise<GgufHeader> {
  let header: GgufHeader;
  try {
    header = await readGgufHeader(blob);
  } catch (cause) {
    const reason = cause instanceof GgufReadError ? cause.reason : 'corrupt';
    if (reason === 'too_short') throw new EngineError('load', `${label} is not a GGUF model file (only ${blob.size} bytes).`, { cause });
    if (reason === 'bad_magic') {
      throw new EngineError('load', `${label} is not a GGUF model file (it does not start with "GGUF"). Pick a .gguf model for llama.cpp.`, { cause });
    }
    const inner = cause instanceof GgufReadError && cause.cause instanceof Error ? cause.cause : cause;
    const text = inner instanceof Error ? inner.message : String(inner);
    throw new EngineError('load', `${label} is not a usable GGUF model (truncated or corrupt header: ${text}).`, { cause });
  }
  // A file cut off after its header (an interrupted copy or download): the last tensor's data
  // would start past the end. (Its length depends on the quantization; its start does not.)
  const problem =
    header.lastTensorStart === null
      ? `header ends at byte ${header.tensorDataOffset} of a ${header.fileSize}-byte file, with 0 tensors`
      : header.lastTensorStart >= header.fileSize
        ? `its tensor data stops at byte ${header.fileSize}, before the last tensor, which starts at byte ${header.lastTensorStart}`
        : null;
  if (problem) throw new EngineError('load', `${label} is not a usable GGUF model (truncated or corrupt header: ${problem}).`);
  return header;
}

/** The engine's view of a parsed header (see `GgufInfo`). */
export function ggufInfo(header: GgufHeader): GgufInfo {
  const meta = header.metadata;
  const architecture = asString(meta['general.architecture']);
  return {
    version: asNumber(meta.version) ?? header.version,
    architecture,
    name: asString(meta['general.name']),
    contextLength: architecture ? asNumber(meta[`${architecture}.context_length`]) : null,
    chatTemplate: asString(meta['tokenizer.chat_template']),
  };
}

/**
 * Reads and checks the header of a GGUF model (`readModelHeader`) and returns what the engine
 * needs from it (`ggufInfo`).
 * @param label file name for error messages.
 * @throws EngineError('load') as `readModelHeader`.
 */
export async function inspectGguf(blob: Blob, label = 'The file'): Promise<GgufInfo> {
  return ggufInfo(await readModelHeader(blob, label));
}
