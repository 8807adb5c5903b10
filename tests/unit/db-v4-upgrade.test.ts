/**
 * Schema v4 (issue 9, fewer bytes per memory): a database written by v3 — rows, f32 vector blocks,
 * meta blocks, header, lexical snapshot, history — upgrades in place (vector blocks to f16, three
 * `memories` indexes dropped, creation entries of the history without their text copy), opens from its blocks without a rebuild, answers the same searches
 * as a store built from the same memories, takes fewer bytes, and its data exports and imports; an
 * export written in the v3 era (f32 vectors, ADD history with its text) still imports.
 * Embeddings: the hashed n-gram TEST embedder (surface overlap only, not a language model).
 */
import 'fake-indexeddb/auto';
import Dexie from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import type { MemoryHistoryRecord, MemoryRecord } from '../../src/model/records';
import { createMemoryStore, type LongTermStore } from '../../src/memory/long-term/store';
import { isVectorRecord, layoutFromRows, type MemoryIndexRecord } from '../../src/memory/long-term/retrieval/blocks';
import { LexicalIndex } from '../../src/memory/long-term/retrieval/lexical';
import { EXPORT_FORMAT, EXPORT_VERSION, exportAll, importAll, vectorToBase64, type ExportFile } from '../../src/backup';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { tableBytes } from '../../bench/data/storage-breakdown';
import { withCreationTexts } from '../../src/db/history';
import { createMemoryAdmin } from '../../src/core/memory-admin';
import { V1_STORES } from '../helpers/published-schemas';
import { memoryRecord } from '../helpers/memory-record';

const T0 = Date.UTC(2025, 0, 1);
const embedder = createHashedEmbedder();
const dbs: Dexie[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) {
    db.close();
    await Dexie.delete(db.name);
  }
});

/** Schema v1–v3 exactly as published (src/db/schema.ts): a v3-era database. */
function v3Database(name: string): Dexie {
  const db = new Dexie(name);
  db.version(1).stores(V1_STORES);
  db.version(2).stores({ tombstones: '[namespace+hash], deletedAt' });
  db.version(3).stores({ memories: 'id, namespace, kind, hash, current, *sourceMessageIds, pending', memoryIndex: 'key' });
  dbs.push(db);
  return db;
}

const PLACES = ['Hangzhou', 'Lisbon', 'Berlin', 'Osaka', 'Toronto', 'Nairobi', 'Lima', 'Oslo'];
const THINGS = ['green tea', 'running', 'jazz', 'chess', 'peanuts', 'window seats', 'sushi', 'cycling'];
const TEXTS = [
  ...PLACES.flatMap((p, i) => [`My friend ${i} lives in ${p}`, `I visited ${p} last spring`]),
  ...THINGS.flatMap((t) => [`I like ${t}`, `My brother dislikes ${t}`]),
  '我每天早上跑步五公里',
  '我喜欢喝绿茶',
];
const QUERIES: [string, string][] = [
  ['where does my friend live in Lisbon', 'default'],
  ['I like jazz', 'default'],
  ['brother dislikes sushi', 'work'],
  ['绿茶', 'default'],
  ['visited Osaka', 'work'],
];

/** Rows as v3 code wrote them (with their vectors, as the layout took them), and their history. */
async function v3Content(): Promise<{ rows: MemoryRecord[]; history: MemoryHistoryRecord[] }> {
  const vectors = await embedder.embed(TEXTS);
  const rows = TEXTS.map((text, i) =>
    memoryRecord({
      id: `m${i}`,
      namespace: i % 4 === 3 ? 'work' : 'default',
      kind: i % 5 === 0 ? 'episodic' : 'fact',
      text,
      embedding: i === 7 ? null : vectors[i]!,
      embeddingModel: i === 7 ? null : embedder.modelId,
      createdAt: T0 - i * 60_000,
      validUntil: i === 5 ? T0 - 1 : null,
      current: i === 5 ? 0 : 1,
      sourceMessageIds: [`msg${i}`],
      pinned: i === 2,
    }),
  );
  const history: MemoryHistoryRecord[] = rows.map((r) => ({
    memoryId: r.id,
    event: 'ADD',
    oldText: null,
    newText: r.text,
    at: r.createdAt,
    source: 'conversation:c1',
  }));
  history.push({ memoryId: 'm5', event: 'INVALIDATE', oldText: rows[5]!.text, newText: null, at: T0 - 1, source: 'conversation:c2' });
  // m1 was reworded once: its ADD holds the first wording, which the UPDATE records as replaced.
  history[1] = { ...history[1]!, newText: 'My friend 0 lived in Hangzhou' };
  history.push({ memoryId: 'm1', event: 'UPDATE', oldText: 'My friend 0 lived in Hangzhou', newText: rows[1]!.text, at: T0, source: 'user' });
  // m9's ADD came from a file whose history disagrees with the row: nothing derives it, it keeps its text.
  history[9] = { ...history[9]!, newText: 'a wording nothing else records' };
  return { rows, history };
}

/** Writes the v3 layout of `rows`: f32 vector blocks (no `halves`, no `scales`), meta blocks, header, lexical snapshot. */
async function writeV3(db: Dexie, rows: MemoryRecord[], history: MemoryHistoryRecord[]): Promise<void> {
  const gen = 5;
  const { records } = layoutFromRows(rows, gen);
  const byId = new Map(rows.map((r) => [r.id, r.embedding]));
  const v3Records = records.map((r): MemoryIndexRecord => {
    if (!isVectorRecord(r) || !('halves' in r)) return r;
    const { halves: _halves, scales: _scales, ...rest } = r;
    const vectors = new Float32Array(r.halves.length);
    r.ids.forEach((id, s) => id && vectors.set(byId.get(id)!, s * r.dim));
    return { ...rest, vectors };
  });
  const lexical = new LexicalIndex();
  for (const r of rows) lexical.set(r.id, r.text, r.topic);
  await db.table('memories').bulkAdd(rows.map(({ embedding: _embedding, ...row }) => row));
  await db.table('memoryHistory').bulkAdd(history);
  await db.table('memoryIndex').bulkPut([...v3Records, { key: 'lexical', gen, json: lexical.toJSON() }]);
}

const openStore = (db: RecallDB) => createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: nodeVoyWasm });

/** Ids and scores (4 decimals) of every query in every mode. */
async function answers(store: LongTermStore) {
  const out: unknown[] = [];
  for (const [text, namespace] of QUERIES) {
    for (const mode of ['hybrid', 'lexical', 'vector'] as const) {
      out.push((await store.search({ text, namespace, includeInvalid: true }, { mode })).map((r) => [r.memory.id, r.score.toFixed(4)]));
    }
  }
  return out;
}

/** A store built the plain way from the same memories (rows written with their vectors, then rebuilt). */
async function referenceStore(rows: MemoryRecord[]): Promise<LongTermStore> {
  const db = new RecallDB(`v4-reference-${crypto.randomUUID()}`);
  dbs.push(db);
  await db.memories.bulkAdd(rows);
  const store = await openStore(db);
  expect(store.indexStats().open.via).toBe('rebuilt');
  await store.whenIndexed();
  return store;
}

describe('schema v4 upgrade', () => {
  it('a v3 database with rows, blocks and history upgrades in place: f16 blocks, fewer indexes, same answers, fewer bytes, no rebuild', async () => {
    const name = `v4-upgrade-${crypto.randomUUID()}`;
    const { rows, history } = await v3Content();
    const v3 = v3Database(name);
    await writeV3(v3, rows, history);
    const before = await tableBytes(v3);
    v3.close();

    const db = new RecallDB(name);
    dbs.push(db);
    await db.open();
    expect(db.verno).toBeGreaterThanOrEqual(4); // and every later version ran too
    const vectorRecords = (await db.memoryIndex.toArray()).filter(isVectorRecord);
    expect(vectorRecords.length).toBeGreaterThan(0);
    for (const r of vectorRecords) expect(['halves' in r, 'vectors' in r]).toEqual([true, false]);
    expect(db.memories.schema.indexes.map((i) => i.name).sort()).toEqual(['hash', 'pending', 'sourceMessageIds']);
    // Creation entries lose the copy of their text where it can be derived; the history as read is unchanged.
    const stored = await db.memoryHistory.toArray();
    expect(stored.filter((h) => h.event === 'ADD' && h.newText !== null).map((h) => h.memoryId)).toEqual(['m9']);
    expect((await withCreationTexts(db, stored)).map(({ id: _id, ...h }) => h)).toEqual(history);

    const store = await openStore(db);
    expect(store.indexStats().open.via).toBe('blocks'); // the upgraded layout is used as it is
    await store.whenIndexed();
    expect(store.indexStats()).toMatchObject({ memories: rows.length, lexical: rows.length, vector: { size: rows.length - 1 } });
    // The Memory tab's history (memory.history) shows the derived texts.
    expect((await createMemoryAdmin(db, store).history({ memoryId: 'm1' })).map((h) => [h.event, h.oldText, h.newText])).toEqual([
      ['UPDATE', 'My friend 0 lived in Hangzhou', rows[1]!.text],
      ['ADD', null, 'My friend 0 lived in Hangzhou'],
    ]);
    const upgraded = await answers(store);
    expect(upgraded).toEqual(await answers(await referenceStore(rows)));
    // Nearest neighbours are the exact f32 top-8 of the original vectors (no near-ties in this set; the
    // hashed embedder gives many texts a cosine of 0 with a query, whose order is only their slot's: left out).
    for (const [text, namespace] of QUERIES) {
      const [q] = await embedder.embed([text]);
      const exact = rows
        .filter((r) => r.namespace === namespace && r.embedding)
        .map((r) => [r.id, r.embedding!.reduce((a, x, j) => a + x * q![j]!, 0)] as const)
        .filter(([, c]) => c > 0.01)
        .sort((a, b) => b[1] - a[1]);
      const got = (await store.nearest(q!, { namespace, k: 8, includeInvalid: true })).filter((h) => h.similarity > 0.01);
      expect(got.length).toBeGreaterThan(0);
      expect(got.map((h) => h.memory.id)).toEqual(exact.slice(0, 8).map(([id]) => id));
      got.forEach((h, k) => expect(Math.abs(h.similarity - exact[k]![1])).toBeLessThan(1e-4));
    }

    const after = await tableBytes(db);
    const sum = (t: (typeof after)[number] | undefined) => (t ? t.values + t.keys + Object.values(t.indexes).reduce((a, b) => a + b, 0) : 0);
    const of = (list: typeof after, table: string) => sum(list.find((t) => t.table === table));
    expect(of(after, 'memories')).toBeLessThan(of(before, 'memories'));
    // 2 namespaces · 1 block of 256 slots: f32 vectors are 4 bytes a component, f16 2.
    expect(of(after, 'memoryIndex') / of(before, 'memoryIndex')).toBeLessThan(0.6);
    expect(of(after, 'memoryHistory')).toBeLessThan(of(before, 'memoryHistory') - 30 * 20);
  });

  it('exports after the upgrade and imports into a fresh database with the same answers; a v3-era export still imports', async () => {
    const name = `v4-export-${crypto.randomUUID()}`;
    const { rows, history } = await v3Content();
    const v3 = v3Database(name);
    await writeV3(v3, rows, history);
    v3.close();
    const db = new RecallDB(name);
    dbs.push(db);
    const store = await openStore(db);
    await store.whenIndexed();
    const expected = await answers(store);

    const { json } = await exportAll(db, { now: () => T0 });
    // The file a v3 build would have written: f32 vectors (base64) and the history as it was.
    const v3File: ExportFile = {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      exportedAt: T0,
      memories: rows.map((r) => ({ ...r, embedding: r.embedding ? vectorToBase64(r.embedding) : null })),
      memoryHistory: history,
      conversations: [],
      messages: [],
    };
    for (const file of [json, JSON.stringify(v3File)]) {
      const target = new RecallDB(`v4-import-${crypto.randomUUID()}`);
      dbs.push(target);
      const fresh = await openStore(target);
      const report = await importAll(target, fresh, new Blob([file]), {
        now: () => T0,
        embedder: { modelId: embedder.modelId, dimension: embedder.dimension },
      });
      expect(report.errors).toEqual([]);
      expect(await target.memories.count()).toBe(rows.length);
      expect(await target.memoryHistory.count()).toBe(history.length + rows.length); // the file's history + one IMPORT entry per memory
      await fresh.whenIndexed();
      expect(await answers(fresh)).toEqual(expected);
    }
  });
});
