/**
 * Checks that a file the user picked is a GGUF model before it is copied into OPFS (which can
 * take minutes for a multi-gigabyte file). Header layout from the GGUF specification
 * (ggml-org/ggml `docs/gguf.md`): bytes 0–3 are the magic `GGUF` (0x47 0x47 0x55 0x46), bytes
 * 4–7 the format version as a little-endian uint32 (1, 2 or 3 today).
 */

/** The four magic bytes every GGUF file starts with: ASCII `GGUF`. */
export const GGUF_MAGIC = [0x47, 0x47, 0x55, 0x46] as const;

/** Highest GGUF version this check accepts (v3 is current; newer ones are rejected as unknown). */
export const GGUF_MAX_VERSION = 3;

/** Result of a header check. `reason` is stable, for translated messages. */
export type GgufCheck = { ok: true; version: number } | { ok: false; reason: 'too_short' | 'bad_magic' | 'bad_version'; version?: number };

/**
 * Checks the first 8 bytes of a file.
 * @param header at least the first 8 bytes of the file (more is fine).
 */
export function checkGgufHeader(header: Uint8Array): GgufCheck {
  if (header.length < 8) return { ok: false, reason: 'too_short' };
  if (!GGUF_MAGIC.every((byte, i) => header[i] === byte)) return { ok: false, reason: 'bad_magic' };
  const version = new DataView(header.buffer, header.byteOffset, 8).getUint32(4, true);
  if (version < 1 || version > GGUF_MAX_VERSION) return { ok: false, reason: 'bad_version', version };
  return { ok: true, version };
}

/**
 * Reads the header of a picked file (`File` or any `Blob`) and checks it. Reads 8 bytes only.
 * @throws whatever `Blob.arrayBuffer()` throws when the file cannot be read (e.g. removed).
 */
export async function inspectGgufFile(file: Blob): Promise<GgufCheck> {
  return checkGgufHeader(new Uint8Array(await file.slice(0, 8).arrayBuffer()));
}

/** `true` when the file name ends with `.gguf` (any case). */
export function hasGgufExtension(fileName: string): boolean {
  return /\.gguf$/i.test(fileName.trim());
}
