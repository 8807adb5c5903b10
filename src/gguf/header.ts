/**
 * The one GGUF header reader (llama.cpp's model format; spec: ggml-org/ggml `docs/gguf.md`):
 * the 8-byte magic/version check and the full header (metadata key/values and tensor infos),
 * read with `@huggingface/gguf` over a fetch that answers byte ranges from a `Blob`, so only the
 * header is read (a few MB at most, the tokenizer vocabulary included), whatever the model size.
 *
 * A load parses the header once (`readGgufHeader`) and hands the result to everything that
 * needs it: the engine's checks and parameters (`src/engines/wllama/gguf.ts`) and the exact
 * token counter (`src/tokens/gguf.ts`). The panel checks the first 8 bytes of a picked file
 * (`checkGgufHeader`) before copying it.
 */
import { gguf } from '@huggingface/gguf';
import { PromptError } from '../model/errors';

/** The four magic bytes every GGUF file starts with: ASCII `GGUF`. */
export const GGUF_MAGIC = [0x47, 0x47, 0x55, 0x46] as const;

/** Highest GGUF version accepted (v3 is current; newer ones are rejected as unknown). */
export const GGUF_MAX_VERSION = 3;

/** Result of the 8-byte check. `reason` is stable, for translated messages. */
export type GgufCheck = { ok: true; version: number } | { ok: false; reason: 'too_short' | 'bad_magic' | 'bad_version'; version?: number };

/**
 * Checks the first 8 bytes of a file: bytes 0–3 the magic `GGUF`, bytes 4–7 the format version
 * as a little-endian uint32 (1 to `GGUF_MAX_VERSION`).
 * @param header at least the first 8 bytes of the file (more is fine).
 */
export function checkGgufHeader(header: Uint8Array): GgufCheck {
  if (header.length < 8) return { ok: false, reason: 'too_short' };
  if (!GGUF_MAGIC.every((byte, i) => header[i] === byte)) return { ok: false, reason: 'bad_magic' };
  const version = new DataView(header.buffer, header.byteOffset, 8).getUint32(4, true);
  if (version < 1 || version > GGUF_MAX_VERSION) return { ok: false, reason: 'bad_version', version };
  return { ok: true, version };
}

/** Metadata values as `@huggingface/gguf` returns them (numbers, bigints, strings, booleans, arrays), by key. */
export type GgufMetadata = Record<string, unknown>;

/** A parsed GGUF header. Offsets in bytes from the start of the file. */
export interface GgufHeader {
  /** GGUF format version (1 to `GGUF_MAX_VERSION`). */
  version: number;
  /** Metadata key/values (`general.architecture`, `tokenizer.ggml.tokens`, …). */
  metadata: GgufMetadata;
  /** Where the tensor data starts: the end of the header. */
  tensorDataOffset: number;
  /** Number of tensors the header describes. */
  tensorCount: number;
  /** Where the last tensor's data starts (`tensorDataOffset` + its offset); `null` without tensors. */
  lastTensorStart: number | null;
  /** Size of the file (bytes). */
  fileSize: number;
}

/** Why a Blob is not a readable GGUF file: the 8-byte check's reasons, or `corrupt` (the header does not parse or is cut off). */
export type GgufReadFailure = Extract<GgufCheck, { ok: false }>['reason'] | 'corrupt';

/** Thrown for a Blob that is not a readable GGUF file; `reason` says which check failed. */
export class GgufReadError extends PromptError {
  constructor(
    message: string,
    readonly reason: GgufReadFailure,
    options?: { cause?: unknown },
  ) {
    super('gguf_read', message, { ...options, params: { reason } });
    this.name = 'GgufReadError';
  }
}

/** A `fetch` that answers HTTP range requests from `blob` (status 206 with `Content-Range`). */
function blobRangeFetch(blob: Blob): typeof fetch {
  return (async (_input: unknown, init?: { headers?: Record<string, string> }) => {
    const range = /bytes=(\d+)-(\d+)?/.exec(init?.headers?.Range ?? init?.headers?.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const end = range?.[2] !== undefined ? Math.min(Number(range[2]) + 1, blob.size) : blob.size;
    const slice = start < end ? blob.slice(start, end) : new Blob([]);
    return new Response(slice, {
      status: 206,
      headers: { 'content-range': `bytes ${start}-${Math.max(start, end - 1)}/${blob.size}`, 'content-length': String(slice.size) },
    });
  }) as typeof fetch;
}

/**
 * Reads and parses the header of a GGUF file from `blob` (see module doc): the 8-byte check,
 * then the metadata and tensor infos. Reads past the end of the file see zeros, so a header
 * longer than the file is reported as cut off.
 * @throws GgufReadError with `reason` `too_short`, `bad_magic` or `bad_version` (the 8-byte
 *   check), or `corrupt` (the header does not parse, or ends past the end of the file).
 */
export async function readGgufHeader(blob: Blob): Promise<GgufHeader> {
  const check = checkGgufHeader(new Uint8Array(await blob.slice(0, 8).arrayBuffer()));
  if (!check.ok) {
    const what = {
      too_short: `it has only ${blob.size} bytes`,
      bad_magic: 'it does not start with "GGUF"',
      bad_version: `its GGUF version ${check.version} is unknown`,
    }[check.reason];
    throw new GgufReadError(`Not a GGUF file: ${what}.`, check.reason);
  }
  try {
    const { metadata, tensorDataOffset, tensorInfos } = await gguf('https://gguf.invalid/model.gguf', { fetch: blobRangeFetch(blob) });
    const dataOffset = Number(tensorDataOffset);
    if (dataOffset > blob.size) throw new Error(`header ends at byte ${dataOffset} of a ${blob.size}-byte file, with ${tensorInfos.length} tensors`);
    return {
      version: check.version,
      metadata: metadata as unknown as GgufMetadata,
      tensorDataOffset: dataOffset,
      tensorCount: tensorInfos.length,
      lastTensorStart: tensorInfos.length > 0 ? dataOffset + Math.max(...tensorInfos.map((t) => Number(t.offset))) : null,
      fileSize: blob.size,
    };
  } catch (cause) {
    throw new GgufReadError(`Not a readable GGUF header: ${cause instanceof Error ? cause.message : String(cause)}`, 'corrupt', { cause });
  }
}
