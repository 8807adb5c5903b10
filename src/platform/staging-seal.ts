/**
 * Sealed import staging files (vault lock on): the side panel encrypts a picked plain file as it
 * copies it into OPFS `backups/`, with a one-time 256-bit key the core handed out for that one
 * file (`memory.stagingKey`), and the core decrypts it while reading. WebCrypto AES-GCM, so the
 * panel and the core share this pure codec (no vault key ever leaves the core).
 *
 * Layout: `RCLSTG01` (8 bytes), then per chunk: 1 byte `last` flag (1 on the final chunk, else 0),
 * a `u32 LE` ciphertext length, the AES-GCM ciphertext + 16-byte tag. The 12-byte nonce is the
 * chunk index as a counter (`u32 LE` in bytes 8–11; safe: the key seals this one file only); the
 * additional data is the UTF-8 file name, the `u32 LE` index and the `last` flag — so a chunk cannot
 * be reordered, moved to another file, flagged last early or cut off unnoticed.
 */
import { VaultError } from '../model/errors';
import { fixedPieces, startsWithMagic } from '../model/sealed-chunks';

const MAGIC = new TextEncoder().encode('RCLSTG01');
/** Plaintext bytes per sealed staging chunk (the last one may be shorter). */
export const STAGING_CHUNK_BYTES = 1 << 20;
/** Bytes of a staging key (AES-256). */
export const STAGING_KEY_BYTES = 32;

const nonceOf = (index: number) => {
  const nonce = new Uint8Array(12);
  new DataView(nonce.buffer).setUint32(8, index, true);
  return nonce;
};

const aadOf = (fileName: string, index: number, last: boolean) => {
  const name = new TextEncoder().encode(fileName);
  const aad = new Uint8Array(name.byteLength + 5);
  aad.set(name);
  new DataView(aad.buffer).setUint32(name.byteLength, index, true);
  aad[name.byteLength + 4] = last ? 1 : 0;
  return aad;
};

const importKey = (key: Uint8Array, usage: KeyUsage) => {
  if (key.byteLength !== STAGING_KEY_BYTES) throw new VaultError('damaged', 'A staging key must be 32 bytes.');
  return crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, 'AES-GCM', false, [usage]);
};

/**
 * `chunks` re-cut into `STAGING_CHUNK_BYTES` pieces and sealed under the one-time `key` (32 raw
 * bytes) for the staging file `fileName` (see module doc). The first piece yielded is the header.
 * @throws VaultError('damaged') when `key` is not 32 bytes.
 */
export async function* sealStagingChunks(chunks: AsyncIterable<Uint8Array>, key: Uint8Array, fileName: string): AsyncGenerator<Uint8Array> {
  const cryptoKey = await importKey(key, 'encrypt');
  yield MAGIC.slice();
  let index = 0;
  const emit = async (piece: Uint8Array, last: boolean) => {
    const i = index++;
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonceOf(i), additionalData: aadOf(fileName, i, last) }, cryptoKey, piece as Uint8Array<ArrayBuffer>),
    );
    const out = new Uint8Array(5 + sealed.byteLength);
    out[0] = last ? 1 : 0;
    new DataView(out.buffer).setUint32(1, sealed.byteLength, true);
    out.set(sealed, 5);
    return out;
  };
  for await (const piece of fixedPieces(chunks, STAGING_CHUNK_BYTES)) yield await emit(piece.bytes, piece.last);
}

/** Whether `file` starts with the sealed staging header (reads 8 bytes). */
export function isStagingSealed(file: Blob): Promise<boolean> {
  return startsWithMagic(file, MAGIC);
}

/**
 * The plaintext of a staging file `sealStagingChunks` wrote for `fileName` under `key`, as a stream
 * (read chunk by chunk, one chunk in memory).
 * @throws VaultError('damaged') (from the stream) when the key is wrong, a chunk was changed,
 *   reordered or moved, the file was cut off or has bytes after its last chunk.
 */
export function openStagingStream(file: Blob, key: Uint8Array, fileName: string): ReadableStream<Uint8Array> {
  let offset = MAGIC.length;
  let index = 0;
  let ended = false;
  let cryptoKey: Promise<CryptoKey> | null = null;
  const read = async (from: number, bytes: number) => new Uint8Array(await file.slice(from, from + bytes).arrayBuffer());
  const damaged = (why: string, cause?: unknown) => new VaultError('damaged', `A sealed staging file ${why}.`, cause === undefined ? undefined : { cause });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        cryptoKey ??= importKey(key, 'decrypt');
        if (ended) {
          if (offset !== file.size) throw damaged('has bytes after its last chunk');
          return controller.close();
        }
        const frame = await read(offset, 5);
        if (frame.byteLength < 5) throw damaged('was cut off');
        const last = frame[0] === 1;
        const length = new DataView(frame.buffer).getUint32(1, true);
        const sealed = await read(offset + 5, length);
        if (sealed.byteLength < length) throw damaged('was cut off');
        offset += 5 + length;
        const i = index++;
        let plain: ArrayBuffer;
        try {
          plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonceOf(i), additionalData: aadOf(fileName, i, last) }, await cryptoKey, sealed);
        } catch (cause) {
          throw damaged('does not open with its key', cause);
        }
        controller.enqueue(new Uint8Array(plain));
        if (last) ended = true;
      } catch (error) {
        controller.error(error);
      }
    },
  });
}

/**
 * A `Blob`-shaped view of a sealed staging file for readers that call `stream()` or
 * `arrayBuffer()`: both decrypt (`openStagingStream`); `size` is the sealed file's size (an upper bound).
 */
export function stagingFileReader(file: Blob, key: Uint8Array, fileName: string): Blob {
  const stream = () => openStagingStream(file, key, fileName);
  return { size: file.size, type: '', stream, arrayBuffer: () => new Response(stream()).arrayBuffer() } as unknown as Blob;
}
