/**
 * Staging files the core writes while the lock is on (OPFS `backups/`: the decrypted copy of an
 * age backup during its import) are sealed as a chunk stream, so no plaintext lands in a file.
 *
 * Layout: `RCLSEAL1` (8 bytes), a random 16-byte file id, then per chunk a `u32 LE` length and the
 * chunk sealed (`cipher.ts`) under the file key, bound to the file id, its index and whether it is
 * the last one — so chunks cannot be reordered, moved to another file or cut off unnoticed.
 */
import { VaultError } from '../model/errors';
import { fixedPieces, startsWithMagic } from '../model/sealed-chunks';
import { open, seal } from './cipher';

const MAGIC = new TextEncoder().encode('RCLSEAL1');
const ID_BYTES = 16;
/** Plaintext bytes per sealed chunk (the last one may be shorter). */
export const SEALED_CHUNK_BYTES = 1 << 20;

const chunkAad = (id: Uint8Array, index: number, last: boolean) => {
  const aad = new Uint8Array(ID_BYTES + 5);
  aad.set(id);
  new DataView(aad.buffer).setUint32(ID_BYTES, index, true);
  aad[ID_BYTES + 4] = last ? 1 : 0;
  return aad;
};

/** `chunks` re-cut into `SEALED_CHUNK_BYTES` pieces and sealed under `fileKey` (see module doc). */
export async function* sealChunks(chunks: AsyncIterable<Uint8Array>, fileKey: Uint8Array): AsyncGenerator<Uint8Array> {
  const id = crypto.getRandomValues(new Uint8Array(ID_BYTES));
  const head = new Uint8Array(MAGIC.length + ID_BYTES);
  head.set(MAGIC);
  head.set(id, MAGIC.length);
  yield head;
  let index = 0;
  const emit = (piece: Uint8Array, last: boolean) => {
    const sealed = seal(fileKey, piece, chunkAad(id, index++, last));
    const out = new Uint8Array(4 + sealed.byteLength);
    new DataView(out.buffer).setUint32(0, sealed.byteLength, true);
    out.set(sealed, 4);
    return out;
  };
  for await (const piece of fixedPieces(chunks, SEALED_CHUNK_BYTES)) yield emit(piece.bytes, piece.last);
}

/** Whether `file` starts with the sealed-file header. */
export function isSealedFile(file: Blob): Promise<boolean> {
  return startsWithMagic(file, MAGIC);
}

/**
 * The plaintext of a file `sealChunks` wrote, as a stream (read on demand, chunk by chunk).
 * @throws VaultError('damaged') (from the stream) when a chunk was changed, reordered or the file was cut.
 */
export function openSealedStream(file: Blob, fileKey: Uint8Array): ReadableStream<Uint8Array> {
  let offset = MAGIC.length + ID_BYTES;
  let index = 0;
  let id: Uint8Array | null = null;
  let ended = false;
  const read = async (from: number, bytes: number) => new Uint8Array(await file.slice(from, from + bytes).arrayBuffer());
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      id ??= (await read(MAGIC.length, ID_BYTES)).slice();
      if (ended) {
        if (offset !== file.size) controller.error(new VaultError('damaged', 'A sealed file has bytes after its last chunk.'));
        else controller.close();
        return;
      }
      const lengthBytes = await read(offset, 4);
      if (lengthBytes.byteLength < 4) return controller.error(new VaultError('damaged', 'A sealed file was cut off.'));
      const length = new DataView(lengthBytes.buffer).getUint32(0, true);
      const sealed = await read(offset + 4, length);
      if (sealed.byteLength < length) return controller.error(new VaultError('damaged', 'A sealed file was cut off.'));
      offset += 4 + length;
      const last = offset === file.size;
      try {
        controller.enqueue(open(fileKey, sealed, chunkAad(id, index++, last)));
      } catch (error) {
        return controller.error(error);
      }
      if (last) ended = true;
    },
  });
}

/**
 * A `Blob`-shaped view of a sealed file for readers that only call `stream()` (the backup reader):
 * its `stream()` opens the file chunk by chunk; `size` is the sealed file's size (an upper bound).
 */
export function sealedFileReader(file: Blob, fileKey: Uint8Array): Blob {
  return { size: file.size, type: '', stream: () => openSealedStream(file, fileKey) } as unknown as Blob;
}
