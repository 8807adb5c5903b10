/**
 * Encrypted backups in the age format (https://age-encryption.org/v1) with a passphrase
 * (scrypt) recipient, through the maintained `age-encryption` library, so a backup also decrypts
 * with the `age` command-line tool (`age -d backup.age`). Both directions are streams: the
 * library encrypts and decrypts `ReadableStream`s in 64 KiB chunks (age's STREAM construction),
 * so memory holds a chunk or two whatever the file size. Export pipes `exportBytes` through
 * `encryptChunks` into the OPFS staging file; import first decrypts the staged file into a
 * second staging file (`decryptChunks`) and hands that plain file to the reader, so a wrong
 * passphrase or a cut-off / tampered file is refused before anything is written to the store.
 */
import { Decrypter, Encrypter } from 'age-encryption';
import { AGE_HEADER } from '../model/backup';
import { ImportError } from './format';

export { AGE_HEADER };

/** scrypt work factor (log2 N) of new encrypted backups: the library's and the `age` CLI's default, 18 (about 1 s, 256 MiB, once per file). */
export const AGE_SCRYPT_WORK_FACTOR = 18;

/**
 * Whether `source` is a binary age file: its first bytes are `AGE_HEADER` followed by a newline.
 * Reads only those 22 bytes.
 */
export async function isAgeFile(source: Blob): Promise<boolean> {
  const head = new TextDecoder().decode(await source.slice(0, AGE_HEADER.length + 1).arrayBuffer());
  return head === `${AGE_HEADER}\n`;
}

/** An async iterable of byte chunks as a pull-based `ReadableStream` (one chunk read per pull). */
function toStream(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}

/** The chunks of a `ReadableStream`, read one at a time (no reliance on stream async iteration). */
async function* fromStream(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Encrypts a stream of plaintext bytes to an age file for `passphrase` (scrypt recipient).
 * @param chunks plaintext bytes (e.g. `exportBytes`), read one chunk at a time as the output is pulled.
 * @param options.workFactor scrypt log2 N (default `AGE_SCRYPT_WORK_FACTOR`; tests use less).
 * @returns the age file as byte chunks (header first, then 64 KiB payload chunks + 16-byte tags).
 * @throws Error from `chunks` as is; nothing else once started.
 */
export async function* encryptChunks(chunks: AsyncIterable<Uint8Array>, passphrase: string, options: { workFactor?: number } = {}): AsyncGenerator<Uint8Array> {
  const encrypter = new Encrypter();
  encrypter.setPassphrase(passphrase);
  encrypter.setScryptWorkFactor(options.workFactor ?? AGE_SCRYPT_WORK_FACTOR);
  yield* fromStream(await encrypter.encrypt(toStream(chunks)));
}

/**
 * Opens an age file for streamed decryption with `passphrase`. The header (and so the
 * passphrase) is checked before this resolves; the payload is authenticated chunk by chunk as
 * it is read, so a cut-off or altered file throws while reading, at the damaged chunk.
 * @param source the age file (e.g. the staged `File` from OPFS, read lazily).
 * @param options.onBytes called as the encrypted file is read, with the bytes read so far (of `source.size`).
 * @returns the plaintext as byte chunks.
 * @throws ImportError `passphrase_required` (empty passphrase), `wrong_passphrase` (the
 *   passphrase does not open the file, or it has no passphrase recipient), `encrypted_damaged`
 *   (invalid header; while iterating: cut off or altered).
 */
export async function decryptChunks(
  source: Blob,
  passphrase: string,
  options: { onBytes?: (bytes: number) => void } = {},
): Promise<AsyncGenerator<Uint8Array>> {
  if (!passphrase) throw new ImportError('passphrase_required', 'This backup is encrypted: enter its passphrase. Nothing was imported.');
  const decrypter = new Decrypter();
  decrypter.addPassphrase(passphrase);
  let plain: ReadableStream<Uint8Array>;
  let read = 0;
  const counted = options.onBytes
    ? source.stream().pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            read += chunk.byteLength;
            options.onBytes!(read);
            controller.enqueue(chunk);
          },
        }),
      )
    : source.stream();
  try {
    plain = await decrypter.decrypt(counted);
  } catch (error) {
    if (/no identity matched/i.test((error as Error).message))
      throw new ImportError('wrong_passphrase', 'The passphrase does not open this backup. Nothing was imported.', { cause: error });
    throw damaged(error);
  }
  return (async function* () {
    try {
      yield* fromStream(plain);
    } catch (error) {
      throw damaged(error);
    }
  })();
}

const damaged = (error: unknown) =>
  new ImportError('encrypted_damaged', `The encrypted backup is cut off or damaged (${(error as Error).message}). Nothing was imported.`, { cause: error });
