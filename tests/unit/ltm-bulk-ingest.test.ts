/**
 * Bulk writes of long-term memory: `store.addMany` (one duplicate read, one embedding call, one
 * transaction), `storeEpisodes` (the `ltm.episodic` job's work for many exchanges) and
 * `ingestDataset`'s bulk mode, checked against the one-at-a-time job path on the same data.
 * Real Dexie (fake-indexeddb), real store and indexes; embeddings: the hashed n-gram TEST embedder.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import type { MessageRecord } from '../../src/model/records';
import { createJobQueue } from '../../src/jobs/queue';
import { createLongTermMemory, registerEpisodicJobs, storeEpisodes } from '../../src/memory/long-term';
import { createMemoryStore } from '../../src/memory/long-term/store';
import { INGEST_BATCH, ingestDataset } from '../../src/memory/long-term/retrieval/evaluate';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { generateBenchmark } from '../../bench/data/generate';
import { withCreationTexts } from '../../src/db/history';

const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.delete();
});
const T = Date.UTC(2025, 2, 3, 9);

async function open(now = () => T) {
  const db = new RecallDB(`bulk-${crypto.randomUUID()}`);
  dbs.push(db);
  const embedder = createHashedEmbedder();
  const store = await createMemoryStore({ db, embedder: () => embedder, now, loadVoyWasm: nodeVoyWasm });
  return { db, store, embedder };
}

describe('store.addMany', () => {
  it('stores a batch with one embedding call, one read and one write transaction; duplicates (stored or earlier in the batch) return the first copy', async () => {
    const { db, store, embedder } = await open();
    const { memory: stored } = await store.add({ namespace: 'default', kind: 'fact', text: 'My cat is called Mochi' }, 'user');
    const calls = embedder.calls;
    const transactions = vi.spyOn(db, 'transaction');
    const results = await store.addMany(
      [
        { namespace: 'default', kind: 'fact', text: 'I live in Hangzhou' },
        { namespace: 'default', kind: 'fact', text: 'My cat is called Mochi!' }, // same normalized text as `stored`
        { namespace: 'work', kind: 'fact', text: 'My cat is called Mochi' }, // other namespace: a new memory
        { namespace: 'default', kind: 'preference', text: '我喜欢喝乌龙茶' },
        { namespace: 'default', kind: 'preference', text: '我喜欢喝乌龙茶。' }, // duplicate of the input before
      ],
      'import',
    );
    expect(embedder.calls - calls).toBe(1);
    expect(transactions.mock.calls.map((c) => c[0])).toEqual(['r', 'rw']); // the duplicate read, then all the writes
    expect(results.map((r) => r.created)).toEqual([true, false, true, true, false]);
    expect(results[1]!.memory.id).toBe(stored.id);
    expect(results[4]!.memory.id).toBe(results[3]!.memory.id);
    expect(await db.memories.count()).toBe(4);
    expect((await withCreationTexts(db, await db.memoryHistory.filter((h) => h.event === 'ADD').toArray())).map((h) => h.newText).sort()).toEqual(
      ['I live in Hangzhou', 'My cat is called Mochi', 'My cat is called Mochi', '我喜欢喝乌龙茶'].sort(),
    );
    expect(results.filter((r) => r.created).every((r) => r.memory.embedding?.length === 256)).toBe(true);
    // The indexes hold the batch: found by keyword and by vector.
    expect((await store.search({ text: 'Hangzhou', namespace: 'default', k: 1 }))[0]?.memory.id).toBe(results[0]!.memory.id);
    expect((await store.search({ text: '乌龙茶', namespace: 'default', k: 1 }, { mode: 'vector' }))[0]?.memory.id).toBe(results[3]!.memory.id);
  });

  it('a bad input rejects the whole batch with its position, and nothing is written', async () => {
    const { db, store } = await open();
    await expect(
      store.addMany(
        [
          { namespace: 'default', kind: 'fact', text: 'I live in Hangzhou' },
          { namespace: 'default', kind: 'fact', text: '   ' },
        ],
        'import',
      ),
    ).rejects.toThrow('Memory 2 of 2: Memory text is empty');
    await expect(store.addMany([{ namespace: 'default', kind: 'rumour' as 'fact', text: 'x' }], 'import')).rejects.toThrow('Unknown memory kind "rumour"');
    expect(await db.memories.count()).toBe(0);
    expect(await db.memoryHistory.count()).toBe(0);
    expect(store.indexStats()).toMatchObject({ memories: 0, lexical: 0 });
  });
});

/** Stores exchanges (user, reply) of one conversation; `texts[i]` = [user, reply]. */
async function addExchanges(db: RecallDB, texts: [string, string][]) {
  const rows: MessageRecord[] = [];
  texts.forEach(([u, a], i) => {
    rows.push({ id: `u${i}`, conversationId: 'c1', seq: 2 * i, role: 'user', content: u, createdAt: T + i * 60_000, status: 'complete' });
    rows.push({ id: `a${i}`, conversationId: 'c1', seq: 2 * i + 1, role: 'assistant', content: a, createdAt: T + i * 60_000 + 5_000, status: 'complete' });
  });
  await db.messages.bulkAdd(rows);
  return texts.map((_, i) => ({ conversationId: 'c1', namespace: 'default', userMessageId: `u${i}`, assistantMessageId: `a${i}` }));
}

/** What a test compares: memories by text with their sources, times and kind (ids differ between runs). */
async function snapshot(db: RecallDB) {
  const memories = await db.memories.toArray();
  return memories
    .map((m) => ({
      text: m.text,
      kind: m.kind,
      sourceMessageIds: m.sourceMessageIds,
      createdAt: m.createdAt,
      validFrom: m.validFrom,
      importance: m.importance,
    }))
    .sort((a, b) => a.text.localeCompare(b.text));
}

describe('storeEpisodes', () => {
  const TEXTS: [string, string][] = [
    ['Good morning', 'Good morning! How can I help?'],
    ['我下个月去成都出差', '好的，祝你出差顺利！'],
    ['Good morning', 'Good morning! How can I help?'], // an exact repeat: merged into the first
    ['   ', 'empty user turn: stores nothing'],
    ['I bought a bike', 'Nice!'],
    ['Good morning', 'Good morning! How can I help?'], // a third occurrence
  ];

  it('stores the same memories as one ltm.episodic job per exchange, and is idempotent', async () => {
    const jobPath = await open();
    const exchanges = await addExchanges(jobPath.db, TEXTS);
    const jobs = createJobQueue(jobPath.db, { now: () => T });
    registerEpisodicJobs(jobs, { store: jobPath.store, db: jobPath.db });
    const ltm = createLongTermMemory({ store: jobPath.store, jobs, db: jobPath.db, now: () => T });
    await jobs.start();
    for (const e of exchanges) {
      // One exchange at a time, in order (as turns happen): each job runs before the next exchange.
      await ltm.onExchange(e);
      await jobs.drain();
    }
    await jobs.stop();

    const bulk = await open();
    await addExchanges(bulk.db, TEXTS);
    const calls = bulk.embedder.calls;
    await storeEpisodes({ store: bulk.store, db: bulk.db }, exchanges);
    expect(bulk.embedder.calls - calls).toBe(1);
    const expected = await snapshot(jobPath.db);
    expect(expected.find((m) => m.text.startsWith('User: Good morning'))?.sourceMessageIds).toEqual(['u0', 'a0', 'u2', 'a2', 'u5', 'a5']);
    expect(await snapshot(bulk.db)).toEqual(expected);
    expect((await bulk.db.memoryHistory.toArray()).map((h) => h.event).sort()).toEqual((await jobPath.db.memoryHistory.toArray()).map((h) => h.event).sort());
    // Again (a resumed batch): nothing changes.
    await storeEpisodes({ store: bulk.store, db: bulk.db }, exchanges);
    expect(await snapshot(bulk.db)).toEqual(expected);
    await expect(storeEpisodes({ store: bulk.store, db: bulk.db }, [{ ...exchanges[0]!, namespace: '' }])).rejects.toThrow('Exchange is missing "namespace"');
  });
});

describe('ingestDataset bulk mode', () => {
  it('gives the same memories as the job path, with one embedding call per batch of rounds', async () => {
    const data = generateBenchmark({ rounds: 200, seed: 5 });
    const run = async (bulk: boolean) => {
      let replayNow = T;
      const { db, store, embedder } = await open(() => replayNow);
      const jobs = createJobQueue(db, { now: () => T });
      registerEpisodicJobs(jobs, { store, db });
      const longTerm = createLongTermMemory({ store, jobs, db });
      await jobs.start();
      const calls = embedder.calls;
      const report = await ingestDataset(data, {
        db,
        jobs,
        longTerm,
        setTime: (t) => (replayNow = t),
        ...(bulk ? { storeEpisodes: (batch) => storeEpisodes({ store, db }, batch) } : {}),
      });
      await jobs.stop();
      return { report, calls: embedder.calls - calls, memories: await snapshot(db) };
    };
    const jobs = await run(false);
    const bulk = await run(true);
    expect(bulk.report).toMatchObject({ rounds: jobs.report.rounds, messages: jobs.report.messages, memories: jobs.report.memories, failedJobs: 0 });
    expect(bulk.memories).toEqual(jobs.memories);
    expect(jobs.calls).toBe(jobs.report.memories); // one call per stored round
    expect(bulk.calls).toBeLessThanOrEqual(Math.ceil(bulk.report.rounds / INGEST_BATCH) + data.conversations.length);
  });
});
