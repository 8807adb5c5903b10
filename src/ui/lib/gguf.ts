/**
 * Checks that a file the user picked is a GGUF model before it is copied into OPFS (which can
 * take minutes for a multi-gigabyte file), with the one GGUF header check (`checkGgufHeader`,
 * `src/gguf/header.ts`: the magic `GGUF` and the format version in the first 8 bytes).
 */

import { checkGgufHeader, type GgufCheck } from '../../gguf/header';

export { checkGgufHeader, GGUF_MAGIC, GGUF_MAX_VERSION, type GgufCheck } from '../../gguf/header';

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
