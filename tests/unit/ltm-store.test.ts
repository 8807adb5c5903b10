/**
 * The long-term store: Dexie rows, history on every change, indexes in sync, exact duplicates,
 * validity, removal everywhere, failures that lose nothing. Embeddings come from the hashed
 * n-gram TEST embedder (bench/data/hashed-embedder.ts), not a language model.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { EngineError, type Embedder } from '../../src/engines/types';
import { createMemoryStore } from '../../src/memory/long-term/store';
import { fnv1a64, memoryHash, normalizeMemoryText } from '../../src/memory/long-term/text';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { withCreationTexts } from '../../src/db/history';

let db: RecallDB;
afterEach(async () => db?.delete());

const T0 = Date.UTC(2025, 4, 1, 12);

async function open(options: { embedder?: Embedder | null; now?: () => number; loadVoyWasm?: () => Promise<BufferSource> } = {}) {
  db = new RecallDB(`ltm-store-${crypto.randomUUID()}`);
  const embedder = options.embedder === undefined ? createHashedEmbedder() : options.embedder;
  let embedderRef: Embedder | null = embedder;
  const store = await createMemoryStore({
    db,
    embedder: () => embedderRef,
    now: options.now ?? (() => T0),
    loadVoyWasm: options.loadVoyWasm ?? nodeVoyWasm,
  });
  return { store, setEmbedder: (e: Embedder | null) => (embedderRef = e) };
}

const ids = (results: { memory: { id: string } }[]) => results.map((r) => r.memory.id);

describe('text normalization and hashing', () => {
  it('normalizes width, case, spaces and final punctuation, keeps Chinese as is', () => {
    expect(normalizeMemoryText('  Ｉ like   TEA. ')).toBe('i like tea');
    expect(normalizeMemoryText('我喜欢乌龙茶。')).toBe('我喜欢乌龙茶');
    expect(normalizeMemoryText('我喜欢乌龙茶！！')).toBe('我喜欢乌龙茶');
    expect(normalizeMemoryText('\n\t')).toBe('');
  });

  it('FNV-1a 64 matches the reference test vectors', () => {
    // From the FNV reference implementation's test suite (isthe.com/chongo/src/fnv/test_fnv.c).
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
    expect(memoryHash('I like tea.')).toBe(memoryHash('i LIKE tea'));
    expect(memoryHash('I like tea')).not.toBe(memoryHash('I like coffee'));
  });
});

describe('memory store', () => {
  it('adds a memory with all record fields, an ADD history entry, and finds it by search', async () => {
    const { store } = await open();
    const { memory, created } = await store.add(
      { namespace: 'default', kind: 'fact', text: 'My sister Ana lives in Lisbon', importance: 0.7, sourceConversationId: 'c1', sourceMessageIds: ['m1'] },
      'conversation:c1',
    );
    expect(created).toBe(true);
    expect(memory).toMatchObject({
      namespace: 'default',
      kind: 'fact',
      text: 'My sister Ana lives in Lisbon',
      importance: 0.7,
      createdAt: T0,
      updatedAt: T0,
      validFrom: null,
      validUntil: null,
      current: 1,
      lastAccessedAt: null,
      accessCount: 0,
      sourceConversationId: 'c1',
      sourceMessageIds: ['m1'],
      pinned: false,
      hash: memoryHash('My sister Ana lives in Lisbon'),
      embeddingModel: 'test:hashed-ngrams-256',
    });
    expect(memory.embedding).toBeInstanceOf(Float32Array);
    expect(memory.embedding!.length).toBe(256);
    expect(await db.memories.get(memory.id)).toMatchObject({ id: memory.id, text: memory.text });
    // The ADD entry stores no copy of the text (schema v4); the history as read derives it from the row.
    expect(await db.memoryHistory.toArray()).toEqual([
      { id: 1, memoryId: memory.id, event: 'ADD', oldText: null, newText: null, at: T0, source: 'conversation:c1' },
    ]);
    expect(await withCreationTexts(db, await db.memoryHistory.toArray())).toEqual([
      { id: 1, memoryId: memory.id, event: 'ADD', oldText: null, newText: 'My sister Ana lives in Lisbon', at: T0, source: 'conversation:c1' },
    ]);
    const found = await store.search({ text: 'Where does Ana live?', namespace: 'default' });
    expect(ids(found)).toEqual([memory.id]);
    expect(found[0]!.ranks.lexical).toBe(1);
    expect(found[0]!.ranks.vector).toBe(1);
    expect(found[0]!.memory).not.toHaveProperty('embedding');
  });

  it('returns the existing memory for an exact duplicate (normalized) in the same namespace only', async () => {
    const { store } = await open();
    const a = await store.add({ namespace: 'default', kind: 'preference', text: '我喜欢乌龙茶。' }, 'user');
    const b = await store.add({ namespace: 'default', kind: 'preference', text: '  我喜欢乌龙茶 ' }, 'user');
    const c = await store.add({ namespace: 'work', kind: 'preference', text: '我喜欢乌龙茶' }, 'user');
    expect(b).toEqual({ memory: a.memory, created: false });
    expect(c.created).toBe(true);
    expect(await db.memories.count()).toBe(2);
    expect(await db.memoryHistory.count()).toBe(2);
  });

  it('serializes concurrent adds so the duplicate check cannot race', async () => {
    const { store } = await open();
    const results = await Promise.all([1, 2, 3].map(() => store.add({ namespace: 'default', kind: 'fact', text: 'I have two cats' }, 'user')));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await db.memories.count()).toBe(1);
  });

  it('rejects empty text and unknown kinds without writing anything', async () => {
    const { store } = await open();
    await expect(store.add({ namespace: 'default', kind: 'fact', text: '   ' }, 'user')).rejects.toThrow('Memory text is empty');
    await expect(store.add({ namespace: 'default', kind: 'gossip' as never, text: 'x' }, 'user')).rejects.toThrow('Unknown memory kind');
    await expect(store.update('nope', { text: 'x' }, 'user')).rejects.toThrow('Unknown memory id "nope"');
    expect(await db.memories.count()).toBe(0);
    expect(await db.memoryHistory.count()).toBe(0);
  });

  it('updates text: re-hashes, re-embeds, re-indexes and records old and new text', async () => {
    let t = T0;
    const { store } = await open({ now: () => t });
    const { memory } = await store.add({ namespace: 'default', kind: 'profile', text: 'I work as a nurse' }, 'user');
    t += 1000;
    const updated = await store.update(memory.id, { text: 'I work as a pilot' }, 'conversation:c2');
    expect(updated).toMatchObject({ text: 'I work as a pilot', hash: memoryHash('I work as a pilot'), updatedAt: T0 + 1000, createdAt: T0 });
    expect(Array.from(updated.embedding!)).not.toEqual(Array.from(memory.embedding!));
    expect(ids(await store.search({ text: 'nurse', namespace: 'default' }, { mode: 'lexical' }))).toEqual([]);
    expect(ids(await store.search({ text: 'pilot', namespace: 'default' }, { mode: 'lexical' }))).toEqual([memory.id]);
    const history = await withCreationTexts(db, await db.memoryHistory.where('memoryId').equals(memory.id).sortBy('id'));
    expect(history.map((h) => [h.event, h.oldText, h.newText, h.at, h.source])).toEqual([
      ['ADD', null, 'I work as a nurse', T0, 'user'],
      ['UPDATE', 'I work as a nurse', 'I work as a pilot', T0 + 1000, 'conversation:c2'],
    ]);
  });

  it('re-indexes lexically only an update that changes the lexical document (text, topic, speakers), not importance or supersession', async () => {
    const { store } = await open();
    const { LexicalIndex } = await import('../../src/memory/long-term/retrieval/lexical');
    const { memory } = await store.add({ namespace: 'default', kind: 'episodic', text: 'User: I moved to Hangzhou\nAssistant: Nice!' }, 'user');
    const set = vi.spyOn(LexicalIndex.prototype, 'set');
    try {
      await store.update(memory.id, { importance: 0.9 }, 'user');
      await store.update(memory.id, { supersededBy: 'someone-else' }, 'user');
      expect(set).not.toHaveBeenCalled();
      expect(ids(await store.search({ text: 'Hangzhou', namespace: 'default', includeInvalid: true }, { mode: 'lexical' }))).toEqual([memory.id]);
      await store.update(memory.id, { topic: 'move' }, 'user');
      expect(set).toHaveBeenCalledTimes(1);
      await store.update(memory.id, { text: 'User: I moved to Suzhou\nAssistant: Nice!' }, 'user');
      expect(set).toHaveBeenCalledTimes(2);
      expect(ids(await store.search({ text: 'Hangzhou', namespace: 'default', includeInvalid: true }, { mode: 'lexical' }))).toEqual([]);
      expect(ids(await store.search({ text: 'Suzhou', namespace: 'default', includeInvalid: true }, { mode: 'lexical' }))).toEqual([memory.id]);
    } finally {
      set.mockRestore();
    }
  });

  it('invalidates instead of erasing: Hangzhou becomes current, Shenzhen past but still queryable', async () => {
    let t = T0;
    const { store } = await open({ now: () => t });
    const old = await store.add({ namespace: 'default', kind: 'profile', text: '我住在深圳' }, 'conversation:c1');
    t += 86_400_000;
    const next = await store.add({ namespace: 'default', kind: 'profile', text: '我住在杭州' }, 'conversation:c2');
    await store.invalidate(old.memory.id, t, 'conversation:c2', next.memory.id);
    const stale = await store.get(old.memory.id);
    expect(stale).toMatchObject({ validUntil: t, current: 0, supersededBy: next.memory.id, text: '我住在深圳' });
    const now = await store.search({ text: '我住在哪里', namespace: 'default' });
    expect(ids(now)).toEqual([next.memory.id]);
    const all = await store.search({ text: '我住在哪里', namespace: 'default', includeInvalid: true });
    expect(new Set(ids(all))).toEqual(new Set([old.memory.id, next.memory.id]));
    const history = await db.memoryHistory.where('memoryId').equals(old.memory.id).sortBy('id');
    expect(history.map((h) => h.event)).toEqual(['ADD', 'INVALIDATE']);
    // Once invalid, the same text may be stored again (the user moved back).
    t += 1000;
    expect((await store.add({ namespace: 'default', kind: 'profile', text: '我住在深圳' }, 'user')).created).toBe(true);
  });

  it('a future validity end keeps the memory current until then (events expire)', async () => {
    let t = T0;
    const { store } = await open({ now: () => t });
    const { memory } = await store.add({ namespace: 'default', kind: 'event', text: 'Dentist appointment on Friday', validUntil: T0 + 3 * 86_400_000 }, 'user');
    expect(memory.current).toBe(1);
    expect(ids(await store.search({ text: 'dentist', namespace: 'default' }))).toEqual([memory.id]);
    expect(ids(await store.search({ text: 'dentist', namespace: 'default', now: T0 + 4 * 86_400_000 }))).toEqual([]);
    t = T0 + 4 * 86_400_000;
    expect(ids(await store.search({ text: 'dentist', namespace: 'default' }))).toEqual([]);
    expect(ids(await store.search({ text: 'dentist', namespace: 'default', includeInvalid: true }))).toEqual([memory.id]);
  });

  it('DELETE removes from Dexie and both indexes but keeps the history', async () => {
    const { store } = await open();
    const a = await store.add({ namespace: 'default', kind: 'fact', text: 'My bike is blue' }, 'user');
    const b = await store.add({ namespace: 'default', kind: 'fact', text: 'My car is blue' }, 'user');
    await store.remove([a.memory.id, 'unknown-id'], 'DELETE', 'maintenance');
    expect(await store.get(a.memory.id)).toBeUndefined();
    expect(ids(await store.search({ text: 'blue bike', namespace: 'default' }, { mode: 'lexical' }))).toEqual([b.memory.id]);
    expect(ids(await store.search({ text: 'blue bike', namespace: 'default' }, { mode: 'vector' }))).toEqual([b.memory.id]);
    expect(store.indexStats()).toMatchObject({ memories: 1, lexical: 1, vector: { size: 1 } });
    const history = await withCreationTexts(db, await db.memoryHistory.where('memoryId').equals(a.memory.id).sortBy('id'));
    expect(history.map((h) => [h.event, h.oldText, h.newText])).toEqual([
      ['ADD', null, 'My bike is blue'],
      ['DELETE', 'My bike is blue', null],
    ]);
  });

  it('FORGET removes from Dexie, lexical index, Voy and the history text', async () => {
    const { store } = await open();
    const secret = await store.add({ namespace: 'default', kind: 'fact', text: '我的银行密码是1234' }, 'user');
    await store.update(secret.memory.id, { text: '我的银行密码是5678' }, 'user');
    const other = await store.add({ namespace: 'default', kind: 'fact', text: '我的银行在市中心' }, 'user');
    await store.whenIndexed();
    await store.remove([secret.memory.id], 'FORGET', 'user');
    expect(await db.memories.get(secret.memory.id)).toBeUndefined();
    for (const mode of ['lexical', 'vector', 'hybrid'] as const) {
      expect(ids(await store.search({ text: '银行密码', namespace: 'default', includeInvalid: true }, { mode }))).toEqual([other.memory.id]);
    }
    const history = await db.memoryHistory.toArray();
    expect(JSON.stringify(history)).not.toContain('密码');
    expect(history.filter((h) => h.memoryId === secret.memory.id)).toEqual([
      expect.objectContaining({ event: 'FORGET', oldText: null, newText: null, source: 'user' }),
    ]);
    expect(store.indexStats()).toMatchObject({ memories: 1, lexical: 1, vector: { size: 1, voyReady: true } });
  });

  it('stores a memory without a vector when the embedder fails, and re-embeds it later', async () => {
    const good = createHashedEmbedder();
    const failing: Embedder = {
      modelId: good.modelId,
      dimension: good.dimension,
      embed: async () => {
        throw new EngineError('embedding', 'worker killed');
      },
    };
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { store, setEmbedder } = await open({ embedder: failing });
    const { memory } = await store.add({ namespace: 'default', kind: 'preference', text: 'I prefer window seats' }, 'user');
    expect(memory).toMatchObject({ embedding: null, embeddingModel: null });
    expect(warn).toHaveBeenCalled();
    warn.mockRestore();
    // Lexical search still finds it; vector search cannot yet.
    expect(ids(await store.search({ text: 'window seat', namespace: 'default' }, { mode: 'lexical' }))).toEqual([memory.id]);
    setEmbedder(good);
    expect(ids(await store.search({ text: 'window seat', namespace: 'default' }, { mode: 'vector' }))).toEqual([]);
    expect(await store.reembed()).toEqual({ embedded: 1, remaining: 0 });
    expect((await store.get(memory.id))?.embeddingModel).toBe(good.modelId);
    expect(ids(await store.search({ text: 'window seat', namespace: 'default' }, { mode: 'vector' }))).toEqual([memory.id]);
    expect(await store.reembed()).toEqual({ embedded: 0, remaining: 0 });
  });

  it('re-embeds everything after an embedding-model change; vector search waits for the new model', async () => {
    const { store, setEmbedder } = await open({ embedder: createHashedEmbedder(128) });
    const texts = ['I play the violin', 'I run every morning', '我每天晚上看书'];
    for (const text of texts) await store.add({ namespace: 'default', kind: 'fact', text }, 'user');
    const next = createHashedEmbedder(64);
    setEmbedder(next);
    // Old 128-d vectors are not comparable with the new model: no vector hits until re-embedded.
    expect(await store.search({ text: 'violin', namespace: 'default' }, { mode: 'vector' })).toEqual([]);
    expect(await store.nearest((await store.embed('violin'))!, { namespace: 'default', k: 3 })).toEqual([]);
    const progress: [number, number][] = [];
    expect(await store.reembed({ batchSize: 2, onProgress: (d, t) => progress.push([d, t]) })).toEqual({ embedded: 3, remaining: 0 });
    expect(progress).toEqual([
      [2, 3],
      [3, 3],
    ]);
    expect((await db.memories.toArray()).every((m) => m.embeddingModel === next.modelId && m.embedding!.length === 64)).toBe(true);
    const hits = await store.search({ text: 'violin', namespace: 'default' }, { mode: 'vector' });
    expect(hits[0]!.memory.text).toBe('I play the violin');
    expect(await db.memoryHistory.count()).toBe(3); // re-embedding is not a content change
  });

  it('nearest returns cosine similarities best first, scoped to the namespace and validity', async () => {
    const embedder = createHashedEmbedder();
    const { store } = await open({ embedder });
    const a = await store.add({ namespace: 'default', kind: 'fact', text: 'I like green tea' }, 'user');
    await store.add({ namespace: 'default', kind: 'fact', text: 'The train leaves at noon' }, 'user');
    await store.add({ namespace: 'other', kind: 'fact', text: 'I like green tea a lot' }, 'user');
    const q = (await store.embed('I like green tea'))!;
    const hits = await store.nearest(q, { namespace: 'default', k: 5 });
    expect(hits.map((h) => h.memory.text)).toEqual(['I like green tea', 'The train leaves at noon']);
    expect(hits[0]!.similarity).toBeCloseTo(1, 5);
    const [expected] = await embedder.embed(['The train leaves at noon']);
    let dot = 0;
    for (let i = 0; i < q.length; i += 1) dot += q[i]! * expected![i]!;
    expect(hits[1]!.similarity).toBeCloseTo(dot, 5);
    await store.invalidate(a.memory.id, T0 - 1, 'user');
    expect((await store.nearest(q, { namespace: 'default', k: 5 })).map((h) => h.memory.text)).toEqual(['The train leaves at noon']);
    expect((await store.nearest(q, { namespace: 'default', k: 5, includeInvalid: true })).length).toBe(2);
  });

  it('works without an embedder (lexical only) and without the Voy WASM (exact scan)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const lexicalOnly = await open({ embedder: null });
    const m = await lexicalOnly.store.add({ namespace: 'default', kind: 'fact', text: '我对花生过敏' }, 'user');
    expect(m.memory.embedding).toBeNull();
    expect(ids(await lexicalOnly.store.search({ text: '我对什么过敏？', namespace: 'default' }))).toEqual([m.memory.id]);
    expect(await lexicalOnly.store.embed('x')).toBeNull();
    await db.delete();
    // A broken WASM file. Voy is instantiated once per JS context, so the store module is loaded
    // afresh (new module registry) for the failed load to happen here.
    vi.resetModules();
    const fresh = (await import('../../src/memory/long-term/store')).createMemoryStore;
    db = new RecallDB(`ltm-store-${crypto.randomUUID()}`);
    const embedder = createHashedEmbedder();
    const broken = await fresh({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: async () => new Uint8Array([0, 1, 2]) });
    // The store does not wait for the Voy WASM at open; `whenIndexed` does (and sees it fail).
    await broken.whenIndexed();
    expect(warn).toHaveBeenCalledWith('[ltm] voy-search unavailable, vector search uses an exact scan:', expect.any(Error));
    const n = await broken.add({ namespace: 'default', kind: 'fact', text: 'I am allergic to peanuts' }, 'user');
    expect(ids(await broken.search({ text: 'peanut allergy', namespace: 'default' }, { mode: 'vector' }))).toEqual([n.memory.id]);
    expect(broken.indexStats().vector).toMatchObject({ size: 1, voyReady: false });
    warn.mockRestore();
  });

  it('rebuilds both indexes from Dexie in a new context (restart)', async () => {
    const { store } = await open();
    const texts = ['I was born in Chengdu', '我的生日是三月五日', 'My favourite band is Radiohead'];
    const added = [];
    for (const text of texts) added.push((await store.add({ namespace: 'default', kind: 'profile', text }, 'user')).memory);
    // A second store over the same database = the offscreen document restarted.
    const restarted = await createMemoryStore({ db, embedder: () => createHashedEmbedder(), now: () => T0, loadVoyWasm: nodeVoyWasm });
    // Metadata first; the vector blocks load in the background (see ltm-open-order.test.ts).
    expect(restarted.indexStats()).toMatchObject({ memories: 3 });
    await restarted.whenVectorsLoaded();
    expect(restarted.indexStats()).toMatchObject({ memories: 3, vector: { size: 3 } });
    // The lexical snapshot and Voy load in the background (the store answers before: see ltm-layout.test.ts).
    await restarted.whenIndexed();
    expect(restarted.indexStats().lexical).toBe(3);
    expect(restarted.indexStats().vector.voyReady).toBe(true);
    expect(ids(await restarted.search({ text: '生日', namespace: 'default' }))[0]).toBe(added[1]!.id);
    expect(ids(await restarted.search({ text: 'Radiohead band', namespace: 'default' }, { mode: 'vector' }))[0]).toBe(added[2]!.id);
  });

  it('records accesses without touching content or updatedAt', async () => {
    const { store } = await open();
    const { memory } = await store.add({ namespace: 'default', kind: 'fact', text: 'I have a dog named Rex' }, 'user');
    await store.recordAccess([memory.id, memory.id, 'missing'], T0 + 5);
    await store.recordAccess([memory.id], T0 + 9);
    expect(await store.get(memory.id)).toMatchObject({ lastAccessedAt: T0 + 9, accessCount: 2, updatedAt: T0, text: 'I have a dog named Rex' });
  });

  it('a failed Dexie write changes neither the table, the history nor the indexes', async () => {
    const { store } = await open();
    const { memory } = await store.add({ namespace: 'default', kind: 'fact', text: 'I like jazz' }, 'user');
    const spy = vi.spyOn(db.memoryHistory, 'add').mockRejectedValueOnce(new Error('disk full'));
    await expect(store.update(memory.id, { text: 'I like techno' }, 'user')).rejects.toThrow('disk full');
    spy.mockRestore();
    expect((await store.get(memory.id))?.text).toBe('I like jazz');
    expect(await db.memoryHistory.count()).toBe(1);
    expect(ids(await store.search({ text: 'techno', namespace: 'default' }, { mode: 'lexical' }))).toEqual([]);
    expect(ids(await store.search({ text: 'jazz', namespace: 'default' }, { mode: 'lexical' }))).toEqual([memory.id]);
    // The store keeps working after the failure.
    expect((await store.update(memory.id, { text: 'I like techno' }, 'user')).text).toBe('I like techno');
  });
});
