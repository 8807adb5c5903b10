/**
 * Issue 8, items 2 and 11: an import recomputes what it can derive, refuses inconsistent files
 * whole, streams the file (any size, any chunking), and holds all or nothing of a file even when
 * the context dies mid-import (the journal is undone when the core starts again).
 * Real code paths on fake-indexeddb; the long-term store is the real one (Dexie + MiniSearch +
 * Voy) with the hashed n-gram TEST embedder (tests/helpers/ltm-test-store.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { flushStoreOf, storeOf } from '../helpers/ltm-test-store';
import type { MemoryRecord } from '../../src/model/records';
import { DEFAULT_SETTINGS } from '../../src/model/settings';
import { createMemoryStore } from '../../src/memory/long-term/store';
import {
  exportAll,
  exportChunks,
  importAll,
  ImportError,
  IMPORT_JOURNAL_KEY,
  IMPORT_NOTICE_KEY,
  IMPORT_UNDO_PREFIX,
  recoverInterruptedImport,
  vectorToBase64,
} from '../../src/backup';
import { VectorIndex } from '../../src/memory/long-term/retrieval/vector';
import { memoryHash } from '../../src/memory/long-term/text';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { memoryRecord } from '../helpers/memory-record';

const dbs: RecallDB[] = [];
const open = (name = `import-${crypto.randomUUID()}`) => {
  const db = new RecallDB(name);
  dbs.push(db);
  return db;
};
afterEach(async () => {
  await Promise.all(dbs.map(flushStoreOf));
  await Promise.all(dbs.splice(0).map((d) => d.delete()));
});

const T0 = Date.UTC(2025, 2, 1);
const voyWasm = async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>;

/** A file memory (JSON shape of export format v1). */
function fileMemory(id: string, text: string, extra: Record<string, unknown> = {}) {
  // The file's form of a memory: the record's fields, the vector as a base64 string (here none).
  return { ...memoryRecord({ id, text, createdAt: T0, validFrom: T0 }), embedding: null as string | null, ...extra };
}

const conversation = (id: string) => ({ id, title: id, namespace: 'default', strategy: { kind: 'full-buffer' }, createdAt: T0, updatedAt: T0 });
const message = (id: string, conversationId: string, seq: number) => ({
  id,
  conversationId,
  seq,
  role: 'user',
  content: `text of ${id}`,
  createdAt: T0 + seq,
  status: 'complete',
});

function file(parts: { memories?: unknown[]; memoryHistory?: unknown[]; conversations?: unknown[]; messages?: unknown[] }): string {
  return JSON.stringify({ format: 'recall-export', version: 1, exportedAt: T0, memories: [], memoryHistory: [], conversations: [], messages: [], ...parts });
}

/** A Blob-like source whose stream gives `chunkBytes`-sized pieces (and, on pass `stallOnPass`, stops after `stallAfter` pieces, never ending: a context that dies mid-import). */
function chunkedSource(text: string, chunkBytes: number, stall?: { onPass: number; afterChunks: number }): Blob {
  const bytes = new TextEncoder().encode(text);
  let pass = 0;
  return {
    size: bytes.byteLength,
    stream() {
      pass += 1;
      const thisPass = pass;
      let offset = 0;
      let chunks = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (stall && thisPass === stall.onPass && chunks >= stall.afterChunks) return new Promise<void>(() => undefined);
          if (offset >= bytes.byteLength) return controller.close();
          controller.enqueue(bytes.slice(offset, offset + chunkBytes));
          offset += chunkBytes;
          chunks += 1;
        },
      });
    },
  } as unknown as Blob;
}

async function contents(db: RecallDB) {
  return {
    memories: (await db.memories.toArray()).map((m) => [m.id, m.text]),
    history: (await db.memoryHistory.toArray()).map((h) => [h.memoryId, h.event]),
    conversations: (await db.conversations.toArray()).map((c) => c.id),
    messages: (await db.messages.toArray()).map((m) => m.id),
  };
}

describe('import recomputes what it can derive (item 11)', () => {
  it("a new memory whose file hash equals another memory's hash is imported, with the hash of its own text", async () => {
    const db = open();
    await db.memories.add({ ...(fileMemory('old', 'Lives in Shenzhen') as unknown as MemoryRecord), embedding: null });
    const forged = fileMemory('new', 'Has a cat named Mochi', { hash: memoryHash('Lives in Shenzhen') });
    const report = await importAll(db, await storeOf(db), new Blob([file({ memories: [forged] })]), { now: () => T0 });
    expect(report.added).toBe(1);
    expect((await db.memories.get('new'))!.hash).toBe(memoryHash('Has a cat named Mochi'));
    expect((await db.memories.get('new'))!.hash).not.toBe(memoryHash('Lives in Shenzhen'));
  });

  it('a vector of the wrong dimension or with NaN is dropped (memory re-embedded); the rest are re-normalized and vector search works, also after a restart', async () => {
    const embedder = createHashedEmbedder(16, 'test/hashed-16');
    const good = await embedder.embed(['tea with milk every morning', 'plays basketball on sundays']);
    const scaled = (v: Float32Array, k: number) => v.map((x) => x * k);
    const memories = [
      // Sorted first by id: under today's code its 3-d vector became the index's dimension.
      fileMemory('0-wrong-dim', 'likes green tea', { embedding: vectorToBase64(new Float32Array([1, 0, 0])), embeddingModel: embedder.modelId }),
      fileMemory('1-nan', 'likes coffee', { embedding: vectorToBase64(new Float32Array(16).fill(Number.NaN)), embeddingModel: embedder.modelId }),
      fileMemory('2-tea', 'tea with milk every morning', { embedding: vectorToBase64(scaled(good[0]!, 3)), embeddingModel: embedder.modelId }),
      fileMemory('3-ball', 'plays basketball on sundays', { embedding: vectorToBase64(good[1]!), embeddingModel: embedder.modelId }),
    ];
    const name = `import-vec-${crypto.randomUUID()}`;
    const db = open(name);
    const voy = async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>;
    const store = await createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: voy });
    const report = await importAll(db, store, new Blob([file({ memories })]), { now: () => T0, embedder: { modelId: embedder.modelId, dimension: 16 } });
    expect(report.vectorsDropped).toBe(2);
    expect(report.needsEmbedding).toBe(2);
    expect((await db.memories.get('0-wrong-dim'))!.embedding).toBeNull();
    expect((await db.memories.get('1-nan'))!.embeddingModel).toBeNull();
    const tea = (await db.memories.get('2-tea'))!.embedding!;
    expect(Math.hypot(...tea)).toBeCloseTo(1, 6);
    const [query] = await embedder.embed(['tea with milk every morning']);
    const hits = await store.nearest(query!, { namespace: 'default', k: 2 });
    expect(hits[0]?.memory.id).toBe('2-tea');
    expect(hits[0]!.similarity).toBeCloseTo(1, 5);

    // Restart: a new store over the same database rebuilds its indexes from the stored rows.
    const again = await createMemoryStore({ db: open(name), embedder: () => embedder, now: () => T0, loadVoyWasm: voy });
    expect((await again.nearest(query!, { namespace: 'default', k: 1 }))[0]?.memory.id).toBe('2-tea');
  });

  it('duplicate ids inside one file refuse the file, naming the id (memories, conversations, messages)', async () => {
    const db = open();
    const twice = file({ memories: [fileMemory('m-1', 'Lives in Hangzhou'), fileMemory('m-1', 'Lives in Lisbon')] });
    await expect(importAll(db, await storeOf(db), new Blob([twice]))).rejects.toThrow(
      'The file holds two memories with the id "m-1"; it is inconsistent. Nothing was imported.',
    );
    const convs = file({ conversations: [conversation('c'), conversation('c')] });
    await expect(importAll(db, await storeOf(db), new Blob([convs]))).rejects.toThrow('two conversations with the id "c"');
    const msgs = file({ conversations: [conversation('c')], messages: [message('x', 'c', 0), message('x', 'c', 1)] });
    await expect(importAll(db, await storeOf(db), new Blob([msgs]))).rejects.toThrow('two messages with the id "x"');
    expect(await contents(db)).toEqual({ memories: [], history: [], conversations: [], messages: [] });
  });

  it('two messages at one position (conversationId + seq) refuse the file', async () => {
    const db = open();
    const clash = file({ conversations: [conversation('c')], messages: [message('a', 'c', 0), message('b', 'c', 1), message('z', 'c', 1)] });
    await expect(importAll(db, await storeOf(db), new Blob([clash]))).rejects.toThrow(
      'The file holds two messages at position 1 of conversation "c" ("b" and "z"); it is inconsistent. Nothing was imported.',
    );
    expect(await contents(db)).toEqual({ memories: [], history: [], conversations: [], messages: [] });
  });
});

describe('VectorIndex keeps one dimension', () => {
  it('refuses a vector of another dimension or with NaN under the same model; replaceAll keeps the most common dimension', async () => {
    const index = new VectorIndex(null);
    expect(index.set('a', new Float32Array([3, 4]), 'm')).toBe(true);
    expect(index.set('b', new Float32Array([1, 0, 0]), 'm')).toBe(false);
    expect(index.set('c', new Float32Array([Number.NaN, 1]), 'm')).toBe(false);
    expect(index.stats()).toMatchObject({ size: 1, dimension: 2 });
    expect(index.search(new Float32Array([3, 4]), 5)).toEqual([{ id: 'a', similarity: expect.closeTo(1, 6) }]);
    await index.replaceAll(
      [
        ['bad', new Float32Array([1, 0, 0])],
        ['x', new Float32Array([1, 0])],
        ['y', new Float32Array([0, 1])],
      ],
      'm',
    );
    expect(index.stats()).toMatchObject({ size: 2, dimension: 2 });
    expect(index.search(new Float32Array([0, 2]), 1)[0]?.id).toBe('y');
  });
});

describe('streaming export and import (item 2)', () => {
  async function seed(db: RecallDB, n: number) {
    await db.conversations.bulkAdd([conversation('c1'), conversation('c2')] as never[]);
    await db.messages.bulkAdd(Array.from({ length: n }, (_, i) => message(`msg-${i}`, i % 2 ? 'c2' : 'c1', i)) as never[]);
    await db.memories.bulkAdd(
      Array.from({ length: n }, (_, i) => ({
        ...(fileMemory(`mem-${String(i).padStart(3, '0')}`, `fact number ${i}`) as unknown as MemoryRecord),
        embedding: new Float32Array([1, i, 0, 0]),
        embeddingModel: 'm4',
      })),
    );
    await db.memoryHistory.bulkAdd(
      Array.from({ length: n }, (_, i) => ({
        memoryId: `mem-${String(i).padStart(3, '0')}`,
        event: 'ADD' as const,
        oldText: null,
        newText: `fact number ${i}`,
        at: T0 + i,
        source: 'user',
      })),
    );
  }

  it('exports in pages (one record per line) a file that parses to every record, and re-imports it from 3-byte chunks', async () => {
    const source = open();
    await seed(source, 7);
    const pieces: string[] = [];
    const progress: number[] = [];
    for await (const piece of exportChunks(source, { exportedAt: T0, pageSize: 2, onProgress: (p) => progress.push(p.done) })) pieces.push(piece);
    const text = pieces.join('');
    const parsed = JSON.parse(text);
    expect([parsed.memories.length, parsed.memoryHistory.length, parsed.conversations.length, parsed.messages.length]).toEqual([7, 7, 2, 7]);
    expect(parsed.messages.map((m: { id: string }) => m.id)).toEqual(['msg-0', 'msg-2', 'msg-4', 'msg-6', 'msg-1', 'msg-3', 'msg-5']);
    expect(progress.at(-1)).toBe(23);
    expect(text).toBe((await exportAll(source, { now: () => T0 })).json);

    const target = open();
    const report = await importAll(target, await storeOf(target), chunkedSource(text, 3), { now: () => T0, batchSize: 4 });
    // 7 memories + 7 history rows + 2 conversations + 7 messages
    expect(report).toMatchObject({ added: 23, updated: 0, skipped: 0, errors: [], vectorsDropped: 0 });
    expect((await target.memories.toArray()).map((m) => m.id)).toEqual((await source.memories.toArray()).map((m) => m.id));
    expect((await target.settings.toArray()).map((r) => r.key)).toEqual([]);
  });

  it('an empty store exports a valid file', async () => {
    const { json } = await exportAll(open(), { now: () => T0 });
    expect(JSON.parse(json)).toEqual({
      format: 'recall-export',
      version: 2,
      exportedAt: T0,
      embeddingModel: DEFAULT_SETTINGS.embeddingModelId, // the default: nothing stored
      memories: [],
      memoryHistory: [],
      conversations: [],
      messages: [],
      entities: [],
      strategyState: [],
      settings: [],
      feedback: [],
      rejectedSuggestions: [],
      profiles: [],
    });
  });

  it('a failure in a later batch undoes the batches already committed', async () => {
    const source = open();
    await seed(source, 9);
    const target = open();
    await target.memories.add({ ...(fileMemory('mem-000', 'fact number 0', { updatedAt: T0 - 5 }) as unknown as MemoryRecord), embedding: null });
    let created = 0;
    target.messages.hook('creating', () => {
      created += 1;
      if (created === 6) throw new Error('QuotaExceededError (simulated)');
    });
    await expect(importAll(target, await storeOf(target), new Blob([(await exportAll(source)).json]), { now: () => T0, batchSize: 3 })).rejects.toThrow(
      /QuotaExceeded/,
    );
    expect(await contents(target)).toEqual({ memories: [['mem-000', 'fact number 0']], history: [], conversations: [], messages: [] });
    expect((await target.memories.get('mem-000'))!.updatedAt).toBe(T0 - 5); // the older local version is back
    expect((await target.settings.toArray()).map((r) => r.key)).toEqual([]);
  });
});

describe('a context killed mid-import (journal undone on start-up)', () => {
  it('after batches were committed and the core died, start-up undoes them and leaves a notice; a second import then succeeds whole', async () => {
    const source = open();
    for (let i = 0; i < 40; i += 1)
      await source.memories.add({ ...(fileMemory(`k-${String(i).padStart(2, '0')}`, `memory ${i}`) as unknown as MemoryRecord), embedding: null });
    const { json } = await exportAll(source, { now: () => T0 });
    const name = `import-killed-${crypto.randomUUID()}`;
    const target = open(name);
    await target.memories.add({ ...(fileMemory('local', 'my own memory') as unknown as MemoryRecord), embedding: null });
    // Pass 2 (the write pass) stops after 30 pieces of 256 bytes (about 20 of the 40 memories), for good: the context is dead.
    void importAll(target, await storeOf(target), chunkedSource(json, 256, { onPass: 2, afterChunks: 30 }), {
      now: () => T0,
      batchSize: 5,
      fileName: 'backup.json',
    }).catch(() => undefined);
    for (let i = 0; i < 200 && (await target.settings.where('key').startsWith(IMPORT_UNDO_PREFIX).count()) < 2; i += 1)
      await new Promise((r) => setTimeout(r, 10));
    const partial = await target.memories.count();
    expect(partial).toBeGreaterThan(1);
    expect(partial).toBeLessThan(41);
    expect((await target.settings.get(IMPORT_JOURNAL_KEY))?.value).toMatchObject({ fileName: 'backup.json' });
    target.close();

    // The core starts again on the same database.
    const restarted = open(name);
    const notice = await recoverInterruptedImport(restarted, () => T0 + 1);
    expect(notice).toEqual({ fileName: 'backup.json', startedAt: T0, undoneAt: T0 + 1 });
    expect(await contents(restarted)).toEqual({ memories: [['local', 'my own memory']], history: [], conversations: [], messages: [] });
    expect((await restarted.settings.toArray()).map((r) => r.key)).toEqual([IMPORT_NOTICE_KEY]);

    const report = await importAll(restarted, await storeOf(restarted), new Blob([json]), { now: () => T0, batchSize: 5 });
    expect(report.added).toBe(40);
    expect(await restarted.memories.count()).toBe(41);
    expect(new Set((await restarted.memories.toArray()).map((m) => m.id)).size).toBe(41);
  });

  it("batches write the store's index with their rows; killed mid-import, start-up undoes them and the reopened index matches the rows again", async () => {
    const embedder = createHashedEmbedder(16, 'test/hashed-16');
    const name = `import-killed-index-${crypto.randomUUID()}`;
    const target = open(name);
    const store = await storeOf(target, { embedder, now: () => T0 });
    await store.add({ namespace: 'default', kind: 'fact', text: 'my own memory' }, 'user');
    const { memory: local } = await store.add({ namespace: 'default', kind: 'fact', text: 'Lives in Shenzhen', createdAt: T0 - 100 }, 'user');
    const texts = Array.from({ length: 30 }, (_, i) => `imported fact ${i} about the garden`);
    const vectors = await embedder.embed(['Lives in Hangzhou near the lake', ...texts]);
    // The file: a newer version of the local memory first (an update, in batch 1), then 30 new memories.
    const json = file({
      memories: [
        fileMemory(local.id, 'Lives in Hangzhou near the lake', {
          updatedAt: T0 + 10,
          embedding: vectorToBase64(vectors[0]!),
          embeddingModel: embedder.modelId,
        }),
        ...texts.map((text, i) =>
          fileMemory(`n-${String(i).padStart(2, '0')}`, text, { embedding: vectorToBase64(vectors[i + 1]!), embeddingModel: embedder.modelId }),
        ),
      ],
    });
    const [shenzhen] = await embedder.embed(['Lives in Shenzhen']);
    const importing = importAll(target, store, chunkedSource(json, 200, { onPass: 2, afterChunks: 30 }), {
      now: () => T0,
      batchSize: 5,
      embedder: { modelId: embedder.modelId, dimension: 16 },
    });
    void importing.catch(() => undefined);
    for (let i = 0; i < 300 && (await target.settings.where('key').startsWith(IMPORT_UNDO_PREFIX).count()) < 2; i += 1)
      await new Promise((r) => setTimeout(r, 10));
    // Committed batches are in the live index already (no rebuild ran): the update and some new memories.
    expect(store.indexStats().memories).toBeGreaterThan(4);
    expect(store.indexStats().memories).toBeLessThan(32);
    expect((await store.search({ text: 'Hangzhou lake', namespace: 'default', k: 3 }, { mode: 'lexical' }))[0]?.memory.id).toBe(local.id);
    target.close();

    // The core starts again: the journal is undone before the store opens, which then repairs its index from the rows.
    const restarted = open(name);
    expect(await recoverInterruptedImport(restarted, () => T0 + 1)).toMatchObject({ fileName: 'import' });
    const reopened = await createMemoryStore({ db: restarted, embedder: () => embedder, now: () => T0, loadVoyWasm: voyWasm });
    await reopened.whenIndexed();
    expect(reopened.indexStats()).toMatchObject({ memories: 2, lexical: 2, vector: { size: 2 } });
    const catalog = await reopened.catalog('default');
    expect(catalog.map((e) => e.normalized).sort()).toEqual(['lives in shenzhen', 'my own memory']);
    expect(catalog.find((e) => e.id === local.id)?.normalized).toBe('lives in shenzhen'); // the local version is back
    expect(await reopened.search({ text: 'Hangzhou lake garden', namespace: 'default', k: 5 }, { mode: 'lexical' })).toEqual([]);
    const nearest = await reopened.nearest(shenzhen!, { namespace: 'default', k: 1 });
    expect(nearest[0]?.memory.id).toBe(local.id);
    expect(nearest[0]!.similarity).toBeCloseTo(1, 5);
  });

  it('a second import while one is in progress is refused', async () => {
    const db = open();
    await db.settings.put({ key: IMPORT_JOURNAL_KEY, value: { importId: 'x', fileName: 'a.json', startedAt: T0 } });
    await expect(importAll(db, await storeOf(db), new Blob([file({})]))).rejects.toThrow(ImportError);
  });
});
