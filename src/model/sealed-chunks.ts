/**
 * The framing shared by the two sealed-file codecs (`src/vault/files.ts`, the core's sealed staging
 * files; `src/platform/staging-seal.ts`, the panel's sealed import staging files): a byte stream re-cut
 * into fixed-size pieces with the last one flagged, and the magic-header check. Pure (no crypto, no
 * I/O beyond `Blob.slice`); here because `model` is the one layer both codecs may import.
 */

/** One piece of `fixedPieces`: `bytes` (a view, copy it to keep it past the next piece) and whether it is the last. */
export interface Piece {
  bytes: Uint8Array;
  last: boolean;
}

/**
 * `chunks` re-cut into pieces of exactly `size` bytes, the last one shorter (1 … `size` bytes, or
 * 0 bytes when the source is empty) and the only one with `last: true`. At least one byte is kept
 * back until the source ends, so the last piece is known without looking ahead: a source of exactly
 * `k · size` bytes gives `k` pieces, the `k`-th flagged last.
 * @param size piece length in bytes (a positive integer).
 */
export async function* fixedPieces(chunks: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Piece> {
  let pending = new Uint8Array(0);
  for await (const chunk of chunks) {
    const joined = new Uint8Array(pending.byteLength + chunk.byteLength);
    joined.set(pending);
    joined.set(chunk, pending.byteLength);
    let at = 0;
    while (joined.byteLength - at > size) {
      yield { bytes: joined.subarray(at, at + size), last: false };
      at += size;
    }
    pending = joined.slice(at);
  }
  yield { bytes: pending, last: true };
}

/** Whether `file` starts with the bytes of `magic` (reads `magic.length` bytes). */
export async function startsWithMagic(file: Blob, magic: Uint8Array): Promise<boolean> {
  const head = new Uint8Array(await file.slice(0, magic.length).arrayBuffer());
  return head.byteLength === magic.length && head.every((b, i) => b === magic[i]);
}
