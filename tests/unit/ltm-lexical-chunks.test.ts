/**
 * The lexical snapshot in chunks (issue 9, `retrieval/lexical-snapshot.ts`): restored from its
 * chunks it is the index it was taken of (the same answers, and the same MiniSearch content as the
 * single-record JSON round trip, the reference); a write after a change rewrites only the chunks
 * that change touched (worked out by hand from the short ids below); a vacuum makes a full write;
 * a chunk of another write or a missing one is refused. In the store: a snapshot write cut half-way
 * (the context dies inside the transaction) leaves the previous snapshot, and the reopened store
 * answers as the rows say; chunks that disagree with their manifest are detected on open and the
 * index rebuilt from the rows; an older build's single-record snapshot still loads and is written
 * back in chunks.
 */
import 'fake-indexeddb/auto';
import type Dexie from 'dexie';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import type { MemoryRecord } from '../../src/model/records';
import { createMemoryStore, type LongTermStore } from '../../src/memory/long-term/store';
import { indexLexical } from '../../src/memory/long-term/store/index-sync';
import { LexicalIndex, LEXICAL_SNAPSHOT_VERSION } from '../../src/memory/long-term/retrieval/lexical';
import { lexicalChunkKey, TornLexicalSnapshotError, type LexicalChunks } from '../../src/memory/long-term/retrieval/lexical-snapshot';
import type { LexicalChunkRecord, LexicalManifestRecord, MemoryIndexRecord } from '../../src/memory/long-term/retrieval/blocks/records';
import { INDEXED_TEXT_VERSION } from '../../src/memory/long-term/text';
import { nodeVoyWasm } from '../../bench/data/node-voy';

const TEXTS = [
  'I was born in Chengdu',
  'My favourite band is Radiohead',
  'The cat is called Mochi and she likes tuna',
  '我的生日是三月五日',
  '邻居送了我一只小猫咪',
  'I work as a nurse in Porto; my manager is Ana',
  'I am allergic to peanuts',
  '我每天早上跑步五公里',
];
const QUERIES = ['Mochi tuna', '小猫', 'Chengdu', 'nurse Porto', 'topic words', 'Hangzhou', 'peanuts', '跑步'];

/** A fake `memoryIndex`: the records a write puts, by key. */
class Records {
  readonly byKey = new Map<string, MemoryIndexRecord>();
  apply(chunks: LexicalChunks, gen: number): void {
    const { put, remove, clearChunks } = chunks.records(gen, INDEXED_TEXT_VERSION, LEXICAL_SNAPSHOT_VERSION);
    if (clearChunks) for (const k of [...this.byKey.keys()]) if (k.startsWith('lexical|')) this.byKey.delete(k);
    for (const k of remove) this.byKey.delete(k);
    for (const r of put) this.byKey.set(r.key, r);
    chunks.commit(gen);
  }
  get manifest(): LexicalManifestRecord {
    return this.byKey.get('lexical') as LexicalManifestRecord;
  }
  read = async (keys: string[]) => keys.map((k) => this.byKey.get(k));
}

const noPause = async () => undefined;

/** MiniSearch's content as its JSON has it, terms sorted (a restored trie lists its terms in insertion order). */
function content(index: LexicalIndex): unknown {
  const parsed = JSON.parse(index.toJSON()) as { index: { index: Array<[string, unknown]> } };
  parsed.index.index.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return parsed;
}

function filled(n: number): LexicalIndex {
  const index = new LexicalIndex();
  for (let i = 0; i < n; i++) index.set(`m${i}`, `${TEXTS[i % TEXTS.length]} (${i})`, i % 3 === 0 ? 'topic words' : undefined);
  return index;
}

async function expectSame(restored: LexicalIndex, live: LexicalIndex): Promise<void> {
  // The reference: the single-record snapshot's round trip of the live index.
  expect(content(restored)).toEqual(content(LexicalIndex.fromJSON(live.toJSON())));
  for (const q of QUERIES) expect(restored.search(q, 10)).toEqual(live.search(q, 10));
}

describe('chunked lexical snapshot (LexicalIndex)', () => {
  it('restores to the index it was taken of, with discarded documents not yet vacuumed', async () => {
    const live = filled(20); // short ids 0..19
    live.set('m4', 'Moved to Hangzhou last month'); // m4: short id 4 discarded, 20 added
    live.delete('m7');
    const records = new Records();
    records.apply(live.snapshotChunksSync(8), 1);
    // Short ids 0..20 in chunks of 8: chunks 0, 1, 2.
    expect(records.manifest.chunks).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    await expectSame(await LexicalIndex.fromChunks(records.manifest, records.read, noPause), live);
  });

  it('a write after a change rewrites only the chunks it touched; a restore of the merged records is the live index', async () => {
    const live = filled(20); // short ids 0..19: chunks 0 (0–7), 1 (8–15), 2 (16–19)
    const records = new Records();
    records.apply(await live.snapshotChunks(noPause, { chunkDocs: 8 }), 1);
    // One add: short id 20, the last chunk.
    live.set('new1', 'My kite is orange');
    let chunks = await live.snapshotChunks(noPause, { chunkDocs: 8 });
    expect([chunks.full, [...chunks.changed.keys()]]).toEqual([false, [2]]);
    records.apply(chunks, 2);
    // A re-index of m3 (short id 3 discarded, 21 added) and a delete of m9 (short id 9).
    live.set('m3', 'My birthday is on the fifth of March');
    live.delete('m9');
    chunks = await live.snapshotChunks(noPause, { chunkDocs: 8 });
    expect([chunks.full, [...chunks.changed.keys()].sort()]).toEqual([false, [0, 1, 2]]);
    records.apply(chunks, 3);
    // Nothing changed: nothing but the manifest is written.
    chunks = await live.snapshotChunks(noPause, { chunkDocs: 8 });
    expect([...chunks.changed.keys()]).toEqual([]);
    records.apply(chunks, 4);
    expect(records.manifest.chunks).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
    ]);
    const restored = await LexicalIndex.fromChunks(records.manifest, records.read, noPause);
    await expectSame(restored, live);
    // The restored index's next write is incremental too: one add, the last chunk.
    restored.set('new2', 'I sold the old bicycle');
    expect([...(await restored.snapshotChunks(noPause, { chunkDocs: 8 })).changed.keys()]).toEqual([2]);
  });

  it('a vacuum makes the next write a full one, and chunks left empty are deleted', async () => {
    const live = filled(40); // chunks 0..4 of 8
    const records = new Records();
    records.apply(await live.snapshotChunks(noPause, { chunkDocs: 8 }), 1);
    // Deleting 24 of 40: the 20th discard (≥ 20 and ≥ 10 % dirty) starts MiniSearch's auto-vacuum, which
    // (fewer than 1,000 terms: one batch) removes short ids 0..19 from the postings; 20..23 stay (dirt 4).
    for (let i = 0; i < 24; i++) live.delete(`m${i}`);
    const chunks = await live.snapshotChunks(noPause, { chunkDocs: 8 });
    expect(chunks.full).toBe(true);
    expect(chunks.head.dirtCount).toBe(4);
    records.apply(chunks, 2);
    // Chunks 0 and 1 (short ids 0..15) are empty and no longer stored; chunk 2 keeps the postings of 20..23.
    expect(records.manifest.chunks).toEqual([
      [2, 2],
      [3, 2],
      [4, 2],
    ]);
    expect([...records.byKey.keys()].filter((k) => k.startsWith('lexical|')).sort()).toEqual([2, 3, 4].map(lexicalChunkKey));
    await expectSame(await LexicalIndex.fromChunks(records.manifest, records.read, noPause), live);
  });

  it('pauses between slices while restoring', async () => {
    const live = filled(30);
    const records = new Records();
    records.apply(live.snapshotChunksSync(8), 1);
    let pauses = 0;
    // sliceMs 0: a pause after every chunk's documents and every term.
    const restored = await LexicalIndex.fromChunks(records.manifest, records.read, async () => void (pauses += 1), 0);
    const terms = records.manifest.chunks.reduce(
      (n, [c]) => n + (JSON.parse((records.byKey.get(lexicalChunkKey(c)) as LexicalChunkRecord).json) as { t: unknown[] }).t.length,
      0,
    );
    expect(pauses).toBe(records.manifest.chunks.length + terms);
    await expectSame(restored, live);
  });

  it('reads a window of 32 chunks (8 requests of 4) before parsing any of them, then the next window', async () => {
    const live = filled(40);
    const records = new Records();
    records.apply(live.snapshotChunksSync(1), 1); // one document per chunk: 40 chunks
    expect(records.manifest.chunks).toHaveLength(40);
    const events: string[] = [];
    const read = async (keys: string[]) => {
      events.push(`read ${keys.length}`);
      return records.read(keys);
    };
    // sliceMs 0: a pause after every chunk's documents and every term (each pause is a parse step).
    const restored = await LexicalIndex.fromChunks(records.manifest, read, async () => void events.push('pause'), 0);
    const reads = events.flatMap((e, i) => (e.startsWith('read') ? [i] : []));
    expect(reads.map((i) => events[i])).toEqual([...Array<string>(10).fill('read 4')]);
    expect(reads.slice(0, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]); // the first window: all requests before any parse
    expect(events.slice(0, reads[8]!).filter((e) => e === 'pause').length).toBeGreaterThanOrEqual(32); // the second: after the first 32 chunks
    await expectSame(restored, live);
  });

  it('refuses a chunk of another generation than its manifest lists, a missing chunk and a document count that disagrees', async () => {
    const live = filled(20);
    const records = new Records();
    records.apply(live.snapshotChunksSync(8), 1);
    const chunk1 = records.byKey.get(lexicalChunkKey(1)) as LexicalChunkRecord;
    records.byKey.set(chunk1.key, { ...chunk1, gen: 2 });
    await expect(LexicalIndex.fromChunks(records.manifest, records.read, noPause)).rejects.toThrow(
      new TornLexicalSnapshotError('chunk 1 is of generation 2, not 1'),
    );
    records.byKey.delete(chunk1.key);
    await expect(LexicalIndex.fromChunks(records.manifest, records.read, noPause)).rejects.toThrow(new TornLexicalSnapshotError('chunk 1 is missing'));
    records.byKey.set(chunk1.key, chunk1);
    const manifest = { ...records.manifest, head: { ...records.manifest.head, documentCount: 21 } };
    await expect(LexicalIndex.fromChunks(manifest, records.read, noPause)).rejects.toThrow(
      new TornLexicalSnapshotError('20 documents in the chunks, 21 in the manifest'),
    );
  });
});

const T0 = Date.UTC(2025, 4, 1, 12);
const dbs: Dexie[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const d of dbs.splice(0)) await d.delete();
});

/** A connection to `name`; while `cut.on`, a put of lexical chunks writes the first half of them and then fails (the context dies mid-write). */
function connect(name: string, cut = { on: false }): RecallDB {
  const db = new RecallDB(name);
  dbs.push(db);
  db.use({
    stack: 'dbcore',
    name: 'cut-chunk-writes',
    create: (down) => ({
      ...down,
      table(tableName) {
        const table = down.table(tableName);
        if (tableName !== 'memoryIndex') return table;
        return {
          ...table,
          mutate: async (req) => {
            if (cut.on && req.type === 'put' && req.values.some((v: { key?: string }) => v.key?.startsWith('lexical|'))) {
              const half = Math.ceil(req.values.length / 2);
              await table.mutate({ ...req, values: req.values.slice(0, half), keys: req.keys?.slice(0, half) });
              throw new Error('cut: the context died mid-write');
            }
            return table.mutate(req);
          },
        };
      },
    }),
  });
  return db;
}

const openStore = (db: RecallDB) => createMemoryStore({ db, embedder: () => null, now: () => T0, loadVoyWasm: nodeVoyWasm, lexicalChunkDocs: 4 });

async function answers(store: LongTermStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const text of QUERIES)
    out.push((await store.search({ text, namespace: 'default', now: T0 }, { mode: 'lexical', timeFilters: false })).map((r) => [r.memory.id, r.score]));
  return out;
}

async function fill(store: LongTermStore, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++)
    out.push((await store.add({ namespace: 'default', kind: 'fact', text: `${TEXTS[i % TEXTS.length]} (${i})`, createdAt: T0 - i * 1000 }, 'test')).memory.id);
  return out;
}

/** What a store whose lexical index is built from the rows answers (a database with the same rows and no snapshot). */
async function fromRows(name: string): Promise<unknown[]> {
  const source = connect(name);
  const rows = (await source.memories.toArray()) as MemoryRecord[];
  source.close();
  const lexical = new LexicalIndex();
  for (const r of rows) indexLexical(lexical, r);
  const copy = connect(`ltm-chunks-copy-${crypto.randomUUID()}`);
  await copy.memories.bulkAdd(rows);
  const store = await openStore(copy); // no index over stored rows: rebuilt from them
  vi.spyOn(console, 'warn').mockImplementationOnce(() => undefined);
  await store.whenIndexed();
  return answers(store);
}

describe('chunked lexical snapshot in the store', () => {
  it('a snapshot write cut half-way leaves the previous snapshot; the reopened store replays the changes and answers as the rows say', async () => {
    const name = `ltm-chunks-${crypto.randomUUID()}`;
    const cut = { on: false };
    const first = await openStore(connect(name, cut));
    const ids = await fill(first, 10); // short ids 0..9: chunks 0, 1, 2 of 4
    await first.flushSnapshot();
    // Changes in chunk 0 (a delete), chunk 1 (an update) and a new chunk (an add); their snapshot write is cut.
    await first.remove([ids[1]!], 'DELETE', 'test');
    await first.update(ids[5]!, { text: 'Moved to Hangzhou last month' }, 'test');
    await first.add({ namespace: 'default', kind: 'fact', text: 'My kite is orange, like the one in Chengdu' }, 'test');
    const live = await answers(first);
    cut.on = true;
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    await first.flushSnapshot();
    expect(warn).toHaveBeenCalledWith(
      '[ltm] could not write the lexical snapshot (changes are replayed on the next open):',
      new Error('cut: the context died mid-write'),
    );
    warn.mockClear();
    // The context dies here; a new one opens the database.
    const reopened = await openStore(connect(name));
    await reopened.whenIndexed();
    expect(warn).not.toHaveBeenCalled(); // no repair: the previous snapshot was intact
    expect(reopened.indexStats().open).toMatchObject({ via: 'blocks', replayed: 3, repairedAfterOpen: false });
    expect(await answers(reopened)).toEqual(live);
    expect(live).toEqual(await fromRows(name));
  });

  it('chunks that disagree with their manifest (another write, a missing one) are detected on open and the index rebuilt from the rows', async () => {
    const name = `ltm-chunks-${crypto.randomUUID()}`;
    const db = connect(name);
    const first = await openStore(db);
    const ids = await fill(first, 10);
    await first.flushSnapshot();
    const stale = (await db.memoryIndex.get(lexicalChunkKey(0))) as LexicalChunkRecord;
    // A later write that only the chunks reached (as if each chunk had its own transaction).
    await first.remove([ids[0]!], 'DELETE', 'test');
    await first.flushSnapshot();
    const expected = await answers(first);
    const manifest = (await db.memoryIndex.get('lexical')) as LexicalManifestRecord;
    await db.memoryIndex.put({ ...stale, gen: manifest.gen + 1 });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const reopened = await openStore(connect(name));
    await reopened.whenIndexed();
    expect(warn).toHaveBeenCalledWith(
      '[ltm] the lexical snapshot is torn; rebuilding it from the rows:',
      `The lexical snapshot is torn: chunk 0 is of generation ${manifest.gen + 1}, not ${manifest.gen}`,
    );
    expect(await answers(reopened)).toEqual(expected);
    expect(expected).toEqual(await fromRows(name));
    // A missing chunk, likewise.
    await reopened.flushSnapshot();
    await db.memoryIndex.delete(lexicalChunkKey(1));
    warn.mockClear();
    const again = await openStore(connect(name));
    await again.whenIndexed();
    expect(warn).toHaveBeenCalledWith('[ltm] the lexical snapshot is torn; rebuilding it from the rows:', 'The lexical snapshot is torn: chunk 1 is missing');
    expect(await answers(again)).toEqual(expected);
  });

  it("an older build's single-record snapshot loads as before (no rebuild) and is written back in chunks", async () => {
    const name = `ltm-chunks-${crypto.randomUUID()}`;
    const db = connect(name);
    const first = await openStore(db);
    await fill(first, 10);
    await first.flushSnapshot();
    const expected = await answers(first);
    const manifest = (await db.memoryIndex.get('lexical')) as LexicalManifestRecord;
    const lexical = new LexicalIndex();
    for (const r of (await db.memories.toArray()) as MemoryRecord[]) indexLexical(lexical, r);
    await db.memoryIndex.where('key').startsWith('lexical|').delete();
    await db.memoryIndex.put({ key: 'lexical', gen: manifest.gen, json: lexical.toJSON(), textVersion: INDEXED_TEXT_VERSION });
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const reopened = await openStore(connect(name));
    await reopened.whenIndexed();
    expect([info.mock.calls, warn.mock.calls]).toEqual([[], []]);
    expect(await answers(reopened)).toEqual(expected);
    await reopened.flushSnapshot();
    const written = (await db.memoryIndex.get('lexical')) as LexicalManifestRecord;
    expect(written).not.toHaveProperty('json');
    expect(written.chunks.map(([c]) => c)).toEqual([0, 1, 2]);
    const again = await openStore(connect(name));
    await again.whenIndexed();
    expect(await answers(again)).toEqual(expected);
  });
});
