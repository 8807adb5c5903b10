/**
 * "Not relevant here" feedback (issue 14 item 1): the similarity rule and the demotion stage by
 * hand (`retrieval/feedback.ts`), then through the real store (Dexie, MiniSearch, block scan) with
 * the hashed n-gram TEST embedder (surface overlap only, not a language model) and with no
 * embedder (the lexical fallback): the marked memory ranks last for the same question, keeps its
 * rank for an unrelated one, comes back on undo, and its rows go with the memory and with erase.
 * Plus the schema v7 upgrade of a v4 database with data.
 */
import Dexie from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB, TABLE_DATA } from '../../src/db/schema';
import { eraseUserData } from '../../src/db/erase';
import { createMemoryStore, type LongTermStore } from '../../src/memory/long-term/store';
import { demoteByFeedback, FEEDBACK_COSINE_THRESHOLD, FEEDBACK_PENALTY, isSimilarQuery, termOverlap } from '../../src/memory/long-term/retrieval/feedback';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import type { Embedder } from '../../src/engines/types';
import { contentTerms } from '../../src/text/terms';
import { V1_STORES } from '../helpers/published-schemas';

const dbs: Dexie[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) {
    db.close();
    await Dexie.delete(db.name);
  }
});

const NOW = Date.UTC(2025, 5, 18, 12);

async function open(embedder: Embedder | null): Promise<{ db: RecallDB; store: LongTermStore }> {
  const db = new RecallDB(`feedback-${crypto.randomUUID()}`);
  dbs.push(db);
  const store = await createMemoryStore({ db, embedder: () => embedder, now: () => NOW, loadVoyWasm: nodeVoyWasm });
  return { db, store };
}

const vec = (...xs: number[]) => Float32Array.from(xs);

describe('the similarity rule and the demotion stage (values by hand)', () => {
  it('term overlap is Jaccard: {a,b} vs {b,c} = 1/3; identical = 1; disjoint or empty = 0', () => {
    expect(termOverlap(['a', 'b'], ['b', 'c'])).toBeCloseTo(1 / 3, 12);
    expect(termOverlap(['colour', 'favourite'], ['favourite', 'colour'])).toBe(1);
    expect(termOverlap(['car'], ['colour'])).toBe(0);
    expect(termOverlap([], [])).toBe(0);
  });

  it('cosine of same-model embeddings decides (0.8 is similar, 0.6 is not); another model falls back to terms', () => {
    expect(FEEDBACK_COSINE_THRESHOLD).toBe(0.8);
    const row = { terms: ['colour'], embedding: vec(1, 0), embeddingModel: 'm' };
    expect(isSimilarQuery(row, { terms: ['other'], embedding: vec(0.8, 0.6), embeddingModel: 'm' })).toBe(true); // cos 0.8
    expect(isSimilarQuery(row, { terms: ['colour'], embedding: vec(0.6, 0.8), embeddingModel: 'm' })).toBe(false); // cos 0.6, even with the same words
    // Not comparable (other model / no vector): the terms decide — 1/2 overlap is similar, 1/3 is not.
    expect(isSimilarQuery(row, { terms: ['colour', 'eyes'], embedding: vec(0, 1), embeddingModel: 'other' })).toBe(true);
    expect(
      isSimilarQuery({ ...row, embedding: null, embeddingModel: null }, { terms: ['colour', 'eyes', 'hair'], embedding: null, embeddingModel: null }),
    ).toBe(false);
  });

  it('a demoted memory loses FEEDBACK_PENALTY and goes after the others; nothing similar leaves the list as it is', () => {
    const ranked = [
      { id: 'x', score: 1.2 },
      { id: 'y', score: 0.9 },
      { id: 'z', score: 0.3 },
    ];
    const query = { terms: ['favourite', 'colour'], embedding: null, embeddingModel: null };
    const rows = [{ memoryId: 'x', terms: ['colour', 'favourite'], embedding: null, embeddingModel: null }];
    expect(demoteByFeedback(ranked, query, rows)).toEqual([
      { id: 'y', score: 0.9 },
      { id: 'z', score: 0.3 },
      { id: 'x', score: 1.2 - FEEDBACK_PENALTY },
    ]);
    const unrelated = { terms: ['car', 'parked'], embedding: null, embeddingModel: null };
    expect(demoteByFeedback(ranked, unrelated, rows)).toBe(ranked);
  });
});

const TEXTS = [
  'My favourite colour is green',
  'The green car is parked outside the office',
  'I painted the garden fence green last summer',
  'My sister lives in Porto',
  'The colour of my eyes is brown',
];
const SAME = 'What is my favourite colour?';
const SIMILAR = 'what is my favourite colour';
const UNRELATED = 'Where is the green car parked?';

async function ids(store: LongTermStore, text: string, k = 5): Promise<string[]> {
  return (await store.search({ text, namespace: 'default', k })).map((r) => r.memory.text);
}

describe.each([
  ['the hashed test embedder (cosine of the query vectors)', () => createHashedEmbedder() as Embedder | null],
  ['no embedder (overlap of the query terms)', () => null],
])('not relevant here, with %s', (_label, embedderOf) => {
  it('demotes the memory for the same and a similar question, not for an unrelated one; undo restores it', async () => {
    const embedder = embedderOf();
    const { db, store } = await open(embedder);
    const added = await store.addMany(
      TEXTS.map((text) => ({ namespace: 'default', kind: 'fact' as const, text })),
      'test',
    );
    const colour = added[0]!.memory;
    await store.whenIndexed();
    // Preconditions, stated rather than assumed: the colour memory answers both questions.
    const before = await ids(store, SAME);
    expect(before[0]).toBe(colour.text);
    const unrelatedBefore = await ids(store, UNRELATED);
    expect(unrelatedBefore).toContain(colour.text);
    if (embedder) {
      const [a, b, c] = await Promise.all([store.embed(SAME), store.embed(SIMILAR), store.embed(UNRELATED)]);
      const cos = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);
      expect(cos(a!, b!)).toBeGreaterThanOrEqual(FEEDBACK_COSINE_THRESHOLD);
      expect(cos(a!, c!)).toBeLessThan(FEEDBACK_COSINE_THRESHOLD);
    } else {
      expect(termOverlap(contentTerms(SAME), contentTerms(UNRELATED))).toBe(0);
    }

    const row = await store.addFeedback({ memoryId: colour.id, namespace: 'default', query: SAME, messageId: 'a1', conversationId: 'c1' });
    expect(row).toMatchObject({ memoryId: colour.id, terms: contentTerms(SAME), embeddingModel: embedder ? embedder.modelId : null });
    expect(row.embedding !== null).toBe(embedder !== null);
    // Same question: last of the candidates; top-1 no longer has it.
    const after = await ids(store, SAME);
    expect(after.at(-1)).toBe(colour.text);
    expect(await ids(store, SAME, 1)).not.toContain(colour.text);
    expect((await ids(store, SIMILAR)).at(-1)).toBe(colour.text);
    // Unrelated question: unchanged, order and all.
    expect(await ids(store, UNRELATED)).toEqual(unrelatedBefore);
    // The memory manager's filter (lexical mode) is not ranking for a reply: unchanged.
    expect((await store.search({ text: SAME, namespace: 'default', k: 1 }, { mode: 'lexical' }))[0]!.memory.id).toBe(colour.id);
    // A second click under the same reply is the same row.
    expect((await store.addFeedback({ memoryId: colour.id, namespace: 'default', query: SAME, messageId: 'a1', conversationId: 'c1' })).id).toBe(row.id);
    expect((await store.feedbackFor('a1')).map((r) => r.id)).toEqual([row.id]);

    expect(await store.removeFeedback(row.id)).toBe(true);
    expect(await store.removeFeedback(row.id)).toBe(false);
    expect(await ids(store, SAME)).toEqual(before);
    expect(await db.feedback.count()).toBe(0);
  });
});

describe('feedback rows follow their memory', () => {
  it('deleting or forgetting the memory deletes its rows (Dexie and ranking); erase clears the table (user data)', async () => {
    const { db, store } = await open(createHashedEmbedder());
    const [a, b] = await store.addMany(
      TEXTS.slice(0, 2).map((text) => ({ namespace: 'default', kind: 'fact' as const, text })),
      'test',
    );
    await store.addFeedback({ memoryId: a!.memory.id, namespace: 'default', query: SAME, messageId: 'a1', conversationId: 'c1' });
    await store.addFeedback({ memoryId: b!.memory.id, namespace: 'default', query: UNRELATED, messageId: 'a2', conversationId: 'c1' });
    await store.remove([a!.memory.id], 'DELETE', 'user');
    expect((await db.feedback.toArray()).map((r) => r.memoryId)).toEqual([b!.memory.id]);
    await store.remove([b!.memory.id], 'FORGET', 'user');
    expect(await db.feedback.count()).toBe(0);

    const [c] = await store.addMany([{ namespace: 'default', kind: 'fact', text: TEXTS[0]! }], 'user');
    await store.addFeedback({ memoryId: c!.memory.id, namespace: 'default', query: SAME, messageId: 'a3', conversationId: 'c2' });
    expect(TABLE_DATA.feedback).toBe('user');
    await eraseUserData(db);
    await store.rebuildIndexes();
    expect(await db.feedback.count()).toBe(0);
    // A memory stored again after the erase is not demoted by the erased row.
    const [d] = await store.addMany([{ namespace: 'default', kind: 'fact', text: TEXTS[0]! }], 'user');
    await store.addFeedback({ memoryId: 'gone', namespace: 'default', query: 'unrelated words entirely', messageId: 'a4', conversationId: 'c3' });
    expect((await store.search({ text: SAME, namespace: 'default', k: 1 }))[0]!.memory.id).toBe(d!.memory.id);
  });
});

describe('schema v7', () => {
  it('a v4 database with memories and conversations upgrades: the feedback table is added, empty, and nothing else changes', async () => {
    const name = `v7-upgrade-${crypto.randomUUID()}`;
    const v4 = new Dexie(name);
    v4.version(1).stores(V1_STORES);
    v4.version(2).stores({ tombstones: '[namespace+hash], deletedAt' });
    v4.version(3).stores({ memories: 'id, namespace, kind, hash, current, *sourceMessageIds, pending', memoryIndex: 'key' });
    v4.version(4).stores({ memories: 'id, hash, *sourceMessageIds, pending' });
    const conversation = { id: 'c1', title: 'Old', namespace: 'default', strategy: { kind: 'full-buffer' }, createdAt: 1, updatedAt: 1 };
    const memory = { id: 'm1', namespace: 'default', kind: 'fact', text: 'My favourite colour is green', hash: 'h1', sourceMessageIds: [] };
    await v4.table('conversations').add(conversation);
    await v4.table('memories').add(memory);
    v4.close();

    const db = new RecallDB(name);
    dbs.push(db);
    await db.open();
    expect(db.verno).toBeGreaterThanOrEqual(7);
    expect(db.feedback.schema.indexes.map((i) => i.name).sort()).toEqual(['memoryId', 'messageId']);
    expect(await db.feedback.count()).toBe(0);
    expect(await db.conversations.get('c1')).toEqual(conversation);
    expect(await db.memories.get('m1')).toEqual(memory);
  });
});
