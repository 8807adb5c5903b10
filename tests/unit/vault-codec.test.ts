/**
 * The vault's building blocks, each against values computed by hand or by a reference:
 * the row codec (`vault/codec.ts`: what a sealed row holds), the AEAD (`vault/cipher.ts`, checked
 * against RFC 8439's own test vector through `@noble/ciphers`), the sealed row (`vault/middleware.ts`:
 * which fields stay clear), the sealed file stream (`vault/files.ts`) and the passphrase rule.
 */
import { describe, expect, it } from 'vitest';
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { decodeValue, encodeValue } from '../../src/vault/codec';
import { open, seal, SEAL_OVERHEAD } from '../../src/vault/cipher';
import { checkPassphrase, newDataKey, newKdfParams, unwrapDataKey, vaultKeys, wrapDataKey } from '../../src/vault/keys';
import { openRow, sealRow, SEALED_FIELD } from '../../src/vault/middleware';
import { isSealedFile, openSealedStream, SEALED_CHUNK_BYTES, sealChunks } from '../../src/vault/files';
import { codedErrorOf } from '../../src/model/errors';
import { rejection } from '../helpers/rejection';

const hex = (s: string) => Uint8Array.from(s.match(/../g)!.map((b) => parseInt(b, 16)));
const thrown = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return new Error('did not throw');
};

describe('row codec', () => {
  it('round-trips every kind of value the tables hold, typed arrays with their type and bytes', () => {
    const value = {
      text: 'my locker code is 4711 / 我的储物柜密码是4711',
      n: 3.25,
      nan: Number.NaN,
      inf: -Infinity,
      flag: true,
      none: null,
      missing: undefined,
      when: new Date(1700000000000),
      nested: { list: [1, 'two', { three: [undefined, 4] }] },
      halves: new Uint16Array([1, 2, 65535]),
      factors: new Float32Array([0.5, -1.25]),
      bytes: new Uint8Array([0, 255]),
      view: new Float32Array(new Float32Array([9, 8, 7, 6]).buffer, 4, 2), // a view at an offset
      buffer: new Uint8Array([7, 7, 7]).buffer,
    };
    const back = decodeValue(encodeValue(value)) as typeof value;
    expect(back).toEqual(value);
    expect(Object.hasOwn(back, 'missing')).toBe(true);
    expect(back.halves).toBeInstanceOf(Uint16Array);
    expect(Array.from(back.view)).toEqual([8, 7]);
    expect(back.when).toBeInstanceOf(Date);
    expect(decodeValue(encodeValue('plain'))).toBe('plain');
  });

  it('refuses a Map or a Set (the app stores none; silent loss would be worse)', () => {
    expect(() => encodeValue({ m: new Map() })).toThrow(/Map or Set/);
  });
});

describe('cipher', () => {
  it('is ChaCha20-Poly1305: the RFC 8439 §2.8.2 vector through the same library', () => {
    const key = hex('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f');
    const nonce = hex('070000004041424344454647');
    const aad = hex('50515253c0c1c2c3c4c5c6c7');
    const plain = new TextEncoder().encode(
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
    );
    const sealed = chacha20poly1305(key, nonce, aad).encrypt(plain);
    expect(Buffer.from(sealed.subarray(-16)).toString('hex')).toBe('1ae10b594f09e26a7e902ecbd0600691');
    // Our blob: format byte, that nonce, the same ciphertext + tag; it opens to the plaintext.
    const blob = new Uint8Array([1, ...nonce, ...sealed]);
    expect(open(key, blob, aad)).toEqual(plain);
  });

  it('a changed byte, another key or another place (aad) is refused as damaged', () => {
    const key = newDataKey();
    const aad = new TextEncoder().encode('recall/row/messages');
    const blob = seal(key, new TextEncoder().encode('secret'), aad);
    expect(blob.byteLength).toBe(6 + SEAL_OVERHEAD);
    const changed = blob.slice();
    changed[20]! ^= 1;
    expect(codedErrorOf(thrown(() => open(key, changed, aad)))).toMatchObject({ domain: 'vault', code: 'damaged' });
    expect(codedErrorOf(thrown(() => open(newDataKey(), blob, aad)))).toMatchObject({ code: 'damaged' });
    expect(codedErrorOf(thrown(() => open(key, blob, new TextEncoder().encode('recall/row/memories'))))).toMatchObject({ code: 'damaged' });
  });
});

describe('sealed rows', () => {
  it('keeps exactly the key and indexed fields clear; opens back to the same row; refuses without the key', () => {
    const keys = vaultKeys(newDataKey());
    const row = { id: 'm1', hash: 'abc', sourceMessageIds: ['x'], text: 'my locker code is 4711', embeddingModel: 'e', importance: 0.5 };
    const sealed = sealRow('memories', row, new Set(['id', 'hash', 'sourceMessageIds', 'pending']), keys) as Record<string, unknown>;
    expect(Object.keys(sealed).sort()).toEqual(['hash', 'id', SEALED_FIELD, 'sourceMessageIds'].sort());
    expect(openRow('memories', sealed, keys)).toEqual(row);
    expect(codedErrorOf(thrown(() => openRow('memories', sealed, null)))).toEqual({ domain: 'vault', code: 'locked', params: {} });
    // A row written before the lock (no blob) reads as it is; the vault record never seals.
    expect(openRow('memories', row, null)).toBe(row);
    const record = { key: 'vault', value: { wrapped: 'x' } };
    expect(sealRow('settings', record, new Set(['key']), keys)).toBe(record);
    // A blob moved to another table does not open there.
    expect(codedErrorOf(thrown(() => openRow('messages', sealed, keys)))).toMatchObject({ code: 'damaged' });
  });
});

describe('sealed staging files', () => {
  async function* pieces(sizes: number[]) {
    let n = 0;
    for (const size of sizes) {
      const piece = new Uint8Array(size);
      for (let i = 0; i < size; i++) piece[i] = n++ % 251;
      yield piece;
    }
  }
  const all = async <T>(items: AsyncIterable<T>) => {
    const out: T[] = [];
    for await (const item of items) out.push(item);
    return out;
  };
  const collect = async (stream: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(stream).arrayBuffer());

  it('round-trips across chunk boundaries and refuses a cut, reordered or changed file', async () => {
    const key = vaultKeys(newDataKey()).fileKey;
    const sizes = [10, SEALED_CHUNK_BYTES, 5, SEALED_CHUNK_BYTES - 15];
    const plain = await collect(new Blob(await all(pieces(sizes))).stream());
    const parts = (await all(sealChunks(pieces(sizes), key))) as Uint8Array<ArrayBuffer>[];
    const file = new Blob(parts);
    expect(await isSealedFile(file)).toBe(true);
    expect(await isSealedFile(new Blob(['{"format":"recall"}']))).toBe(false);
    const opened = await collect(openSealedStream(file, key));
    // Byte comparison (a deep equal of 2 MiB element by element is slow).
    expect(opened.byteLength).toBe(2 * SEALED_CHUNK_BYTES);
    expect(Buffer.from(opened).equals(Buffer.from(plain))).toBe(true);
    // The header, then 2 MiB as two chunks of 1 MiB (the second one flagged last).
    expect(parts).toHaveLength(1 + 2);
    const cut = new Blob(parts.slice(0, 2)); // the last chunk missing
    expect(codedErrorOf(await rejection(collect(openSealedStream(cut, key))))).toMatchObject({ code: 'damaged' });
    const swapped = new Blob([parts[0]!, parts[2]!, parts[1]!]);
    expect(codedErrorOf(await rejection(collect(openSealedStream(swapped, key))))).toMatchObject({ code: 'damaged' });
    const changed = parts.map((p) => p.slice()) as Uint8Array<ArrayBuffer>[];
    changed[1]![100]! ^= 1;
    expect(codedErrorOf(await rejection(collect(openSealedStream(new Blob(changed), key))))).toMatchObject({ code: 'damaged' });
  });
});

describe('key wrap', () => {
  it("new wraps use Argon2id at OWASP's minimum by default; unwraps with the passphrase only; a changed KDF parameter does not unwrap either", async () => {
    expect(newKdfParams()).toMatchObject({ name: 'argon2id', m: 19_456, t: 2, p: 1 });
    const dataKey = newDataKey();
    const kdf = newKdfParams({ m: 1024, t: 1 });
    expect(kdf).toMatchObject({ name: 'argon2id', m: 1024, t: 1, p: 1 });
    expect(Buffer.from(kdf.salt, 'base64')).toHaveLength(16);
    const wrapped = await wrapDataKey(dataKey, 'correct horse', kdf);
    expect(await unwrapDataKey({ kdf, wrapped }, 'correct horse')).toEqual(dataKey);
    expect(codedErrorOf(await rejection(unwrapDataKey({ kdf, wrapped }, 'correct horsf')))).toMatchObject({ code: 'wrong_passphrase' });
    expect(codedErrorOf(await rejection(unwrapDataKey({ kdf: { ...kdf, t: 2 }, wrapped }, 'correct horse')))).toMatchObject({ code: 'wrong_passphrase' });
  });

  it('a vault wrapped before with scrypt keeps unlocking with its stored parameters (a record the previous version wrote)', async () => {
    // Written by the previous keys.ts (scrypt N = 2^10, r = 8, p = 1) for "correct horse battery".
    const record = {
      kdf: { name: 'scrypt', N: 1024, r: 8, p: 1, salt: 'mBGpQlezVm/zxJ1FjldVFw==' },
      wrapped: { iv: 'PzzJELkIw/qM3mbE', data: '/wWg5xW0g0lVuQbksi2QR84kueN4JF5weoUrTfBwCeOKCKKhmMZSsO+d/RxhyVb0' },
    } as const;
    const dataKey = await unwrapDataKey(record, 'correct horse battery');
    expect(Buffer.from(dataKey).toString('hex')).toBe('8b696fa06f700356e8501b9f3502484600e7d0ddc20fafd5431fcf55afe804f6');
    expect(codedErrorOf(await rejection(unwrapDataKey(record, 'correct horse batterz')))).toMatchObject({ code: 'wrong_passphrase' });
    expect(codedErrorOf(await rejection(unwrapDataKey({ ...record, kdf: { ...record.kdf, r: 4 } }, 'correct horse battery')))).toMatchObject({
      code: 'wrong_passphrase',
    });
  });

  it('the passphrase rule: at least 8 characters, counted as code points', () => {
    expect(codedErrorOf(thrown(() => checkPassphrase('1234567')))).toEqual({ domain: 'vault', code: 'weak_passphrase', params: { min: 8 } });
    expect(codedErrorOf(thrown(() => checkPassphrase('        ')))).toMatchObject({ code: 'weak_passphrase' });
    expect(() => checkPassphrase('我的储物柜密码是')).not.toThrow(); // 8 characters (24 UTF-8 bytes)
    expect(() => checkPassphrase('12345678')).not.toThrow();
  });
});
