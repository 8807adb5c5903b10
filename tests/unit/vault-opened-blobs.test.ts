/**
 * The cache of opened blobs (`OpenedBlobs`, `src/vault/middleware.ts`): a sealed row read again is
 * decoded from the kept plaintext instead of being opened again, through a real database (Dexie on
 * fake-indexeddb with the vault middleware); what is answered is the same as opening it; a blob
 * changed in IndexedDB is still refused as damaged; nothing of it outlives the keys; the bound holds.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { OpenedBlobs, SEALED_FIELD, VaultKeyring } from '../../src/vault/middleware';
import { newDataKey, vaultKeys } from '../../src/vault/keys';
import type { MessageRecord } from '../../src/model/records';

const open: RecallDB[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) {
    db.close();
    await RecallDB.delete(db.name);
  }
});

/** A database with the lock on and unlocked (the keyring holds a key). */
async function lockedOnDb(): Promise<RecallDB> {
  const keyring = new VaultKeyring();
  keyring.keys = vaultKeys(newDataKey());
  keyring.sealing = true;
  const db = new RecallDB(`opened-blobs-${crypto.randomUUID()}`, { keyring });
  open.push(db);
  await db.open();
  return db;
}

const message = (id: string, content: string): MessageRecord => ({
  id,
  conversationId: 'c1',
  seq: 0,
  role: 'user',
  content,
  createdAt: 1_700_000_000_000,
  status: 'complete',
});

/** The raw row of `messages` under `id`, as IndexedDB holds it (below Dexie and the middleware). */
function rawMessage(db: RecallDB, id: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = db.backendDB().transaction('messages', 'readonly').objectStore('messages').get(id);
    req.onsuccess = () => resolve(req.result as Record<string, unknown>);
    req.onerror = () => reject(req.error);
  });
}

function putRawMessage(db: RecallDB, row: Record<string, unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    const tx = db.backendDB().transaction('messages', 'readwrite');
    tx.objectStore('messages').put(row);
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
  });
}

describe('OpenedBlobs through the vault middleware', () => {
  it('a row written sealed is read from the kept plaintext, every time equal to what was written, each read its own object', async () => {
    const db = await lockedOnDb();
    const opened = db.keyring.opened;
    const row = message('m1', 'The locker code is 4711 / 储物柜密码是4711');
    await db.messages.put(row);
    expect(await rawMessage(db, 'm1')).not.toHaveProperty('content'); // sealed on disk
    const before = { hits: opened.hits, misses: opened.misses };
    const first = await db.messages.get('m1');
    const second = await db.messages.get('m1');
    expect(first).toEqual(row);
    expect(second).toEqual(row);
    expect(second).not.toBe(first);
    // Sealed by this keyring: both reads are hits (the write kept the plaintext), none opened the blob.
    expect({ hits: opened.hits - before.hits, misses: opened.misses - before.misses }).toEqual({ hits: 2, misses: 0 });
    // A caller changing what it read changes nothing of the next read.
    first!.content = 'changed by a caller';
    expect((await db.messages.get('m1'))!.content).toBe(row.content);
  });

  it('a blob changed in IndexedDB (same nonce, one ciphertext byte flipped) is refused as damaged although its original was kept', async () => {
    const db = await lockedOnDb();
    await db.messages.put(message('m1', 'a secret'));
    expect((await db.messages.get('m1'))!.content).toBe('a secret');
    const raw = await rawMessage(db, 'm1');
    const blob = new Uint8Array(raw[SEALED_FIELD] as Uint8Array);
    const flip = blob.byteLength - 20; // inside the ciphertext; format byte and nonce kept
    blob[flip] = blob[flip]! ^ 0x01;
    await putRawMessage(db, { ...raw, [SEALED_FIELD]: blob });
    await expect(db.messages.get('m1')).rejects.toMatchObject({ domain: 'vault', code: 'damaged' });
  });

  it('setting the keys (a lock, an unlock) empties it: a row sealed with the old key is refused under another, not answered from the cache', async () => {
    const db = await lockedOnDb();
    await db.messages.put(message('m1', 'sealed with the first key'));
    await db.messages.get('m1');
    expect(db.keyring.opened.bytes).toBeGreaterThan(0);
    db.keyring.keys = null; // locked
    expect(db.keyring.opened.bytes).toBe(0);
    await expect(db.messages.get('m1')).rejects.toMatchObject({ domain: 'vault', code: 'locked' });
    db.keyring.keys = vaultKeys(newDataKey()); // another key
    await expect(db.messages.get('m1')).rejects.toMatchObject({ domain: 'vault', code: 'damaged' });
  });
});

describe('OpenedBlobs bounds', () => {
  /** A blob of `n` bytes in `cipher.ts`'s layout whose nonce starts with `tag` (format byte 1). */
  const blobOf = (tag: number, n: number) => {
    const b = new Uint8Array(n);
    b[0] = 1;
    b[1] = tag;
    b[7] = tag; // beyond the 48-bit key: the bytes tell blobs apart
    return b;
  };

  it('keeps at most maxBytes (blob + plaintext), dropping the least recently used first; a blob over maxBlobBytes is not kept', () => {
    const cache = new OpenedBlobs(300, 100);
    const [a, b, c] = [blobOf(1, 50), blobOf(2, 50), blobOf(3, 50)];
    cache.put('messages', a, new Uint8Array(50)); // 100 bytes
    cache.put('messages', b, new Uint8Array(50)); // 200
    expect(cache.get('messages', a)).not.toBeNull(); // a is now the most recent
    cache.put('messages', c, new Uint8Array(50)); // 300
    expect(cache.bytes).toBe(300);
    cache.put('memories', blobOf(4, 60), new Uint8Array(40)); // 400 > 300: b (least recent) goes
    expect(cache.bytes).toBe(300);
    expect(cache.get('messages', b)).toBeNull();
    expect(cache.get('messages', a)).not.toBeNull();
    cache.put('messages', blobOf(5, 101), new Uint8Array(1)); // over maxBlobBytes
    expect(cache.get('messages', blobOf(5, 101))).toBeNull();
    expect(cache.bytes).toBe(300);
  });

  it('answers only for the same table and the same bytes', () => {
    const cache = new OpenedBlobs();
    const plain = new Uint8Array([1, 2, 3]);
    const blob = blobOf(9, 40);
    cache.put('messages', blob, plain);
    expect(cache.get('messages', new Uint8Array(blob))).toBe(plain); // equal bytes, another array
    expect(cache.get('memories', blob)).toBeNull();
    const other = new Uint8Array(blob);
    other[39] = 7;
    expect(cache.get('messages', other)).toBeNull();
    const unaligned = new Uint8Array(41).subarray(1); // byteOffset 1: the byte-wise compare
    unaligned.set(blob);
    expect(cache.get('messages', unaligned)).toBe(plain);
  });
});
