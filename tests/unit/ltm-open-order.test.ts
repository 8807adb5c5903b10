/**
 * The two-step open of the long-term store (issue 9, cold start): the metadata (header + meta
 * blocks) is read first and answers the catalog and lexical searches at once; the vector blocks
 * load in the background (`MemoryStoreDeps.background` says when that may start), and searches
 * that need vectors wait for them, so they are answered from complete vectors, never from a part.
 * No timers: the background is held by an explicit promise the test releases.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { createMemoryStore } from '../../src/memory/long-term/store';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';

let db: RecallDB;
afterEach(async () => db?.delete());

const T0 = Date.UTC(2025, 4, 1, 12);
const embedder = createHashedEmbedder();
const TEXTS = ['I was born in Chengdu', 'My favourite band is Radiohead', 'The cat is called Mochi', '我的生日是三月五日', 'I work as a nurse in Porto'];

/** A store over `db` whose background load waits for the returned `release()`. */
async function openHeld() {
  let release = (): void => undefined;
  const background = new Promise<void>((resolve) => (release = resolve));
  const store = await createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: nodeVoyWasm, background });
  return { store, release };
}

describe('store open order: metadata first, vectors in the background', () => {
  it('answers lexical searches and the catalog before the vectors are in; vector searches and writes wait for them, then see all of them', async () => {
    db = new RecallDB(`open-order-${crypto.randomUUID()}`);
    const first = await createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: nodeVoyWasm });
    const ids = new Map<string, string>();
    for (const text of TEXTS) ids.set(text, (await first.add({ namespace: 'default', kind: 'fact', text }, 'user')).memory.id);
    await first.flushSnapshot();

    const { store, release } = await openHeld();
    expect(store.indexStats().open.via).toBe('blocks');
    expect(store.indexStats()).toMatchObject({ memories: 5, vector: { size: 0 } });
    expect((await store.catalog('default')).map((e) => e.id).sort()).toEqual([...ids.values()].sort());
    // A lexical search (the memory manager's) is answered now, from the catalog (the snapshot loads after the vectors).
    const lexical = await store.search({ text: 'Radiohead band', namespace: 'default', now: T0 }, { mode: 'lexical', timeFilters: false });
    expect(lexical.map((h) => h.memory.id)).toEqual([ids.get('My favourite band is Radiohead')]);
    expect(lexical[0]!.lexicalFrom).toBe('catalog');

    // A vector search and a write issued meanwhile wait for the vectors (nothing can load before the release).
    let vectorDone = false;
    const vectorSearch = store.search({ text: 'cat called Mochi', namespace: 'default', now: T0 }, { mode: 'vector' }).then((hits) => {
      vectorDone = true;
      return hits;
    });
    let addDone = false;
    const added = store.add({ namespace: 'default', kind: 'fact', text: 'My sister lives in Lyon' }, 'user').then((r) => {
      addDone = true;
      return r;
    });
    // Another lexical search completes while both wait: the store does not stall.
    expect((await store.search({ text: 'Chengdu', namespace: 'default', now: T0 }, { mode: 'lexical', timeFilters: false })).map((h) => h.memory.id)).toEqual([
      ids.get('I was born in Chengdu'),
    ]);
    expect([vectorDone, addDone]).toEqual([false, false]);
    expect(store.missingVectors(embedder.modelId)).toBe(5); // none counted yet: callers await `whenVectorsLoaded`

    release();
    await store.whenVectorsLoaded();
    expect(store.indexStats().vector.size).toBe(5);
    expect(store.missingVectors(embedder.modelId)).toBe(0);
    const hits = await vectorSearch;
    expect(hits[0]!.memory.id).toBe(ids.get('The cat is called Mochi'));
    // The same order as a store that had every vector from the start.
    const reference = await first.search({ text: 'cat called Mochi', namespace: 'default', now: T0 }, { mode: 'vector' });
    expect(hits.map((h) => [h.memory.id, h.score])).toEqual(reference.map((h) => [h.memory.id, h.score]));
    const sister = (await added).memory;
    expect(sister.embeddingModel).toBe(embedder.modelId);
    await store.whenIndexed();
    expect(store.indexStats()).toMatchObject({ memories: 6, lexical: 6, vector: { size: 6 } });
    expect((await store.search({ text: 'sister Lyon', namespace: 'default', now: T0 }, { mode: 'vector' }))[0]!.memory.id).toBe(sister.id);
    await store.flushSnapshot();

    // What was written during the background load is persisted with its vector: a restart finds it.
    const { store: again, release: releaseAgain } = await openHeld();
    releaseAgain();
    await again.whenIndexed();
    expect(again.indexStats()).toMatchObject({ memories: 6, lexical: 6, vector: { size: 6 }, open: { via: 'blocks', repairedAfterOpen: false } });
    expect((await again.search({ text: 'sister Lyon', namespace: 'default', now: T0 }, { mode: 'vector' }))[0]!.memory.id).toBe(sister.id);
  });

  it('reads rows with their vector once loaded (the reading hook), and the rows keep theirs through a write made while loading', async () => {
    db = new RecallDB(`open-order-${crypto.randomUUID()}`);
    const first = await createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: nodeVoyWasm });
    const { memory } = await first.add({ namespace: 'default', kind: 'fact', text: 'The cat is called Mochi' }, 'user');
    const vector = Array.from((await db.memories.get(memory.id))!.embedding!);
    await first.flushSnapshot();

    const { store, release } = await openHeld();
    // An update issued before the vectors are in: it runs after them, so the row keeps its vector.
    const updated = store.update(memory.id, { importance: 0.9 }, 'user');
    release();
    await updated;
    await store.whenIndexed();
    const row = await db.memories.get(memory.id);
    expect(row?.importance).toBe(0.9);
    expect(Array.from(row!.embedding!)).toEqual(vector);
  });
});
