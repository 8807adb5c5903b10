/**
 * The LTM-B background jobs end to end: the persisted job queue, the real store (Dexie +
 * MiniSearch + Voy, hashed n-gram TEST embedder), LTM-A's facade and episodic job, and the
 * scripted engine standing in for the one boundary that cannot run here (an instruction-following
 * LLM; for the fixture model stories260K, its story-style output is replayed).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecallDB } from '../../src/db/schema';
import type { ChatEngine, ChatRequest, ChatResult } from '../../src/engines/types';
import { createJobQueue, type JobQueue } from '../../src/jobs/queue';
import { createLongTermMemory, registerEpisodicJobs } from '../../src/memory/long-term';
import { EXTRACT_JOB, MAINTENANCE_JOB, readExtractionStats, REEMBED_JOB, registerExtractionJobs } from '../../src/memory/long-term/jobs';
import type { LongTermStore } from '../../src/memory/long-term/store';
import type { ExchangeInput } from '../../src/memory/long-term/types';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { createScriptedEngine, type ScriptedEngine } from '../helpers/scripted-engine';
import { openTestStore } from '../helpers/ltm-test-store';

const T1 = new Date(2024, 2, 1, 10).getTime();
const T2 = new Date(2024, 4, 10, 14, 30).getTime();
const DAY = 86_400_000;

/** stories260K writes children's stories whatever it is asked (TinyStories style). */
const STORY = 'Once upon a time, there was a little bird. The bird liked to sing. One day it met a cat. They were friends.';
/**
 * The real reply of stories260K to the extraction request when the engine enforces the JSON
 * schema as a grammar: captured verbatim from `@wllama/wllama` 3.13 running
 * ../shared/fixtures/models/stories260K/stories260K.gguf in the built extension (headless
 * Chromium on this machine), for the message "我住在深圳，下周三去北京出差。".
 */
const STORIES260K_GRAMMAR_REPLY = '{ "topic" : "Yes,","facts" : [ \n                    ], "preferences" : [ \n                    ] }';

let db: RecallDB;
let queue: JobQueue | null = null;
afterEach(async () => {
  await queue?.stop();
  queue = null;
  await db?.delete();
});

interface Harness {
  store: LongTermStore;
  jobs: JobQueue;
  engine: ScriptedEngine;
  clock: { t: number };
  exchange(user: string, assistant: string, at: number, conversationId?: string, status?: 'complete' | 'aborted'): Promise<ExchangeInput>;
  setEngine(e: ChatEngine | null): void;
  setEmbedder: (e: ReturnType<typeof createHashedEmbedder> | null) => void;
}

async function setup(options: { start?: boolean } = {}): Promise<Harness> {
  const clock = { t: T2 };
  const opened = await openTestStore({ now: T2, name: 'ltm-jobs' });
  db = opened.db;
  const store = opened.store;
  let embedder = opened.embedder;
  const setEmbedder = (e: ReturnType<typeof createHashedEmbedder> | null) => {
    embedder = e;
    opened.setEmbedder(e);
  };
  const jobs = createJobQueue(db, { now: () => clock.t });
  queue = jobs;
  const engine = createScriptedEngine();
  let current: ChatEngine | null = engine;
  registerEpisodicJobs(jobs, { store, db, now: () => clock.t });
  registerExtractionJobs(jobs, { db, store, engine: () => current, embedder: () => embedder, now: () => clock.t });
  const ltm = createLongTermMemory({ store, jobs, db, now: () => clock.t });
  let seq = 0;
  const exchange = async (user: string, assistant: string, at: number, conversationId = 'c1', status: 'complete' | 'aborted' = 'complete') => {
    if (!(await db.conversations.get(conversationId))) {
      await db.conversations.add({ id: conversationId, title: '', namespace: 'default', strategy: { kind: 'full-buffer' }, createdAt: at, updatedAt: at });
    }
    const u = `u${seq}`;
    const a = `a${seq}`;
    await db.messages.bulkAdd([
      { id: u, conversationId, seq: seq * 2, role: 'user', content: user, createdAt: at, status: 'complete' },
      { id: a, conversationId, seq: seq * 2 + 1, role: 'assistant', content: assistant, createdAt: at + 1000, status },
    ]);
    seq += 1;
    const input = { conversationId, namespace: 'default', userMessageId: u, assistantMessageId: a };
    await ltm.onExchange(input);
    return input;
  };
  if (options.start !== false) await jobs.start();
  return { store, jobs, engine, clock, exchange, setEngine: (e) => (current = e), setEmbedder };
}

const texts = async (kind?: string) =>
  (await db.memories.toArray())
    .filter((m) => !kind || m.kind === kind)
    .map((m) => m.text)
    .sort();

describe('ltm.extract', () => {
  it('plants facts from English and Chinese exchanges, with kinds and source ids, next to the episodic round', async () => {
    const h = await setup();
    // One reply per exchange, pushed just before it: the profile rebuild (ltm.profile) that follows a
    // new profile fact also asks the model, and must not take the next exchange's reply.
    h.engine.push('{"topic": "family", "facts": [{"kind": "profile", "text": "Sister Ana lives in Lisbon"}], "preferences": [{"text": "Likes fado music"}]}');
    const first = await h.exchange('My sister Ana lives in Lisbon. I love fado.', 'Lovely!', T1);
    await h.jobs.drain();
    h.engine.push('{"topic": "饮食", "facts": [{"kind": "fact", "text": "对花生过敏"}], "preferences": [{"text": "喜欢吃辣"}]}');
    await h.exchange('我对花生过敏，但是很喜欢吃辣。', '记下了，推荐菜时会注意。', T2);
    await h.jobs.drain();

    expect(await texts('episodic')).toHaveLength(2);
    expect(await texts('profile')).toEqual(['Sister Ana lives in Lisbon']);
    expect(await texts('preference')).toEqual(['Likes fado music', '喜欢吃辣']);
    expect(await texts('fact')).toEqual(['对花生过敏']);
    const ana = (await db.memories.toArray()).find((m) => m.text === 'Sister Ana lives in Lisbon')!;
    expect(ana).toMatchObject({ sourceConversationId: 'c1', sourceMessageIds: [first.userMessageId], createdAt: T1, topic: 'family' });
    expect(await readExtractionStats(db)).toMatchObject({ succeeded: 2, failed: 0, itemsExtracted: 4 });
    expect((await db.jobs.toArray()).every((j) => j.status === 'done')).toBe(true);
  });

  it('a reply the user stopped is not learned from: only the user message is remembered and sent to extraction', async () => {
    const h = await setup();
    h.engine.push('{"topic": "pets", "facts": [{"kind": "fact", "text": "Has a cat called Mochi"}], "preferences": []}');
    const fragment = 'Once upon a time Mochi the dragon';
    await h.exchange('My cat is called Mochi. Tell me a long story.', fragment, T1, 'c1', 'aborted');
    await h.jobs.drain();

    expect(await texts('episodic')).toEqual(['User: My cat is called Mochi. Tell me a long story.']);
    expect(await texts('fact')).toEqual(['Has a cat called Mochi']);
    expect(h.engine.requests).toHaveLength(1);
    const sent = h.engine.requests[0]!.messages.map((m) => m.content).join('\n');
    expect(sent).toContain('My cat is called Mochi');
    expect(sent).not.toContain('dragon');
  });

  it('the update scenario: "I moved from Shenzhen to Hangzhou" ranks Hangzhou current and keeps Shenzhen as past', async () => {
    const h = await setup();
    h.engine.push('{"topic": "home", "facts": [{"kind": "profile", "text": "Lives in Shenzhen"}], "preferences": []}');
    await h.exchange('I live in Shenzhen.', 'Nice.', T1);
    await h.jobs.drain();
    h.engine.push(
      '{"topic": "home", "facts": [{"kind": "profile", "text": "Moved from Shenzhen to Hangzhou"}], "preferences": []}',
      '{"event": "DELETE", "id": "0"}',
    );
    await h.exchange('I moved from Shenzhen to Hangzhou last month.', 'Big change!', T2);
    await h.jobs.drain();

    const all = await db.memories.toArray();
    const shenzhen = all.find((m) => m.text === 'Lives in Shenzhen')!;
    const hangzhou = all.find((m) => m.text === 'Moved from Shenzhen to Hangzhou')!;
    expect(shenzhen).toMatchObject({ current: 0, validUntil: T2, supersededBy: hangzhou.id });
    expect(hangzhou.current).toBe(1);
    const found = await h.store.search({ text: 'Where does the user live, Shenzhen or Hangzhou?', namespace: 'default', now: T2 + DAY });
    const facts = found.filter((r) => r.memory.kind === 'profile').map((r) => r.memory.text);
    expect(facts).toEqual(['Moved from Shenzhen to Hangzhou']);
  });

  it('stories260K-style output: the job ends rejected (an expected outcome, not a failure) with lastError, the store keeps only the episodic round', async () => {
    const h = await setup();
    h.engine.push(STORY, STORY, STORY);
    const input = await h.exchange('I am allergic to cats.', 'Noted.', T2);
    await h.jobs.drain();

    const job = (await db.jobs.toArray()).find((j) => j.type === EXTRACT_JOB)!;
    expect(job).toMatchObject({ status: 'done', outcome: 'rejected', attempts: 1 });
    expect(job.lastError).toBe('Memory extraction failed after 3 attempts: The reply contained no JSON object.');
    expect(h.engine.requests).toHaveLength(3);
    const memories = await db.memories.toArray();
    expect(memories.map((m) => m.kind)).toEqual(['episodic']);
    expect(memories[0]!.text).toBe('User: I am allergic to cats.\nAssistant: Noted.');
    expect((await db.memoryHistory.toArray()).map((h) => h.event)).toEqual(['ADD']);
    const stats = await readExtractionStats(db);
    expect(stats).toMatchObject({ succeeded: 0, failed: 1 });
    expect(stats.recentFailures[0]).toMatchObject({ conversationId: 'c1', userMessageId: input.userMessageId, at: T2 });
    expect(stats.recentFailures[0]!.attempts.map((a) => a.reason)).toEqual(['no_json', 'no_json', 'no_json']);
    // The store answers as before: indexes consistent with the table.
    expect((await h.store.search({ text: 'allergic cats', namespace: 'default', now: T2 })).map((r) => r.memory.id)).toEqual([memories[0]!.id]);
    expect(h.store.indexStats()).toMatchObject({ memories: 1, lexical: 1 });
  });

  it("stories260K's real grammar-constrained reply (valid JSON, nothing in it) completes and writes nothing", async () => {
    const h = await setup();
    h.engine.push(STORIES260K_GRAMMAR_REPLY);
    await h.exchange('我住在深圳，下周三去北京出差。', 'a big house and could keep after.', T2);
    await h.jobs.drain();
    expect(h.engine.requests).toHaveLength(1);
    expect((await db.jobs.toArray()).find((j) => j.type === EXTRACT_JOB)).toMatchObject({ status: 'done', attempts: 1 });
    expect((await db.memories.toArray()).map((m) => m.kind)).toEqual(['episodic']);
    expect((await db.memoryHistory.toArray()).map((x) => x.event)).toEqual(['ADD']);
    expect(await readExtractionStats(db)).toMatchObject({ succeeded: 1, failed: 0, itemsExtracted: 0 });
  });

  it('waits without counting an attempt while no model is loaded, then runs', async () => {
    const h = await setup();
    h.setEngine(null);
    await h.exchange('I am allergic to cats.', 'Noted.', T2);
    await h.jobs.drain();
    const waiting = (await db.jobs.toArray()).find((j) => j.type === EXTRACT_JOB)!;
    expect(waiting).toMatchObject({ status: 'queued', attempts: 0, runAfter: T2 + 60_000 });
    h.setEngine(h.engine);
    h.engine.push('{"topic": "", "facts": [{"kind": "fact", "text": "Allergic to cats"}], "preferences": []}');
    h.clock.t += 60_000;
    await h.jobs.drain();
    expect(await texts('fact')).toEqual(['Allergic to cats']);
  });

  it('skips explicit memory commands (extracting "forget …" could re-store what was forgotten)', async () => {
    const h = await setup();
    await h.exchange('Forget that I live in Paris', 'I forgot 1 memory.', T2);
    await h.jobs.drain();
    expect(h.engine.requests).toHaveLength(0);
    expect((await db.jobs.toArray()).find((j) => j.type === EXTRACT_JOB)).toMatchObject({ status: 'done' });
  });

  it('resumes a job left running by a killed context, and stores its items once', async () => {
    const h = await setup({ start: false });
    const input = await h.exchange('My dog is called Rex.', 'Cute.', T2);
    // The context died while extraction ran: the records say `running`.
    await db.jobs.where('type').equals(EXTRACT_JOB).modify({ status: 'running', attempts: 1 });
    h.engine.push('{"topic": "pets", "facts": [{"kind": "fact", "text": "Has a dog named Rex"}], "preferences": []}');
    await h.jobs.start();
    await h.jobs.drain();
    expect(await texts('fact')).toEqual(['Has a dog named Rex']);
    expect((await db.jobs.toArray()).find((j) => j.type === EXTRACT_JOB)).toMatchObject({ status: 'done' });
    // Running the same exchange again (e.g. a second resume) adds nothing.
    h.engine.push('{"topic": "pets", "facts": [{"kind": "fact", "text": "Has a dog named Rex"}], "preferences": []}');
    await h.jobs.enqueue(EXTRACT_JOB, input);
    await h.jobs.drain();
    expect(await texts('fact')).toEqual(['Has a dog named Rex']);
  });

  it('a chat turn preempts extraction mid-generation; the job re-runs afterwards', async () => {
    const h = await setup({ start: false });
    let calls = 0;
    let started!: () => void;
    const startedP = new Promise<void>((r) => (started = r));
    // First call: generation that only ends when aborted (what a real engine does on preemption).
    const slow: ChatEngine = {
      ...h.engine,
      async complete(request: ChatRequest): Promise<ChatResult> {
        calls += 1;
        if (calls === 1) {
          started();
          await new Promise<void>((resolve) => request.signal?.addEventListener('abort', () => resolve()));
          return { content: '{"topic": "", "facts": [{"kind": "fa', finishReason: 'abort', usage: null };
        }
        return h.engine.complete(request);
      },
    };
    h.setEngine(slow);
    await h.exchange('I collect stamps.', 'Fun!', T2);
    h.engine.push('{"topic": "hobby", "facts": [{"kind": "fact", "text": "Collects stamps"}], "preferences": []}');
    await h.jobs.start();
    await startedP;
    await h.jobs.runForeground(async () => undefined);
    await h.jobs.drain();
    expect(await texts('fact')).toEqual(['Collects stamps']);
    expect((await db.jobs.toArray()).find((j) => j.type === EXTRACT_JOB)).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('a store failure mid-apply is retried; the final state has each item once', async () => {
    const h = await setup();
    let creates = 0;
    db.memories.hook('creating', (_key, record) => {
      if (record.kind !== 'episodic' && ++creates === 2) throw new Error('QuotaExceededError (simulated)');
    });
    const reply = '{"topic": "", "facts": [{"kind": "fact", "text": "Plays chess"}, {"kind": "fact", "text": "Owns a kayak"}], "preferences": []}';
    h.engine.push(reply, reply);
    await h.exchange('I play chess and own a kayak.', 'Nice!', T2);
    await h.jobs.drain();
    const job = (await db.jobs.toArray()).find((j) => j.type === EXTRACT_JOB)!;
    expect(job).toMatchObject({ status: 'queued', attempts: 1 });
    expect(job.lastError).toContain('QuotaExceededError');
    expect(await texts('fact')).toEqual(['Plays chess']);
    h.clock.t += 2_000;
    await h.jobs.drain();
    expect(await texts('fact')).toEqual(['Owns a kayak', 'Plays chess']);
    expect(h.store.indexStats()).toMatchObject({ memories: 3, lexical: 3 });
  });
});

describe('ltm.maintenance and ltm.reembed jobs', () => {
  it('maintenance reads the retention setting, reports, and schedules the next run', async () => {
    const h = await setup();
    await db.settings.put({ key: 'episodicRetentionDays', value: 30 });
    await h.store.add({ namespace: 'default', kind: 'episodic', text: 'User: old chat', createdAt: T2 - 40 * DAY }, 'conversation:c0');
    await h.store.add({ namespace: 'default', kind: 'episodic', text: 'User: recent chat', createdAt: T2 - 5 * DAY }, 'conversation:c0');
    await h.jobs.enqueue(MAINTENANCE_JOB, {});
    await h.jobs.drain();
    expect(await texts()).toEqual(['User: recent chat']);
    expect((await db.settings.get('stats.ltmMaintenance'))?.value).toEqual({ at: T2, expired: 0, dropped: 1, merged: 0 });
    // The next run only compares memories changed from now on.
    expect((await db.settings.get('state.ltmMaintenance'))?.value).toEqual({ mergedThrough: T2 });
    const next = (await db.jobs.toArray()).filter((j) => j.type === MAINTENANCE_JOB && j.status === 'queued');
    expect(next).toHaveLength(1);
    expect(next[0]!.runAfter).toBe(T2 + DAY);
  });

  it('re-embedding waits for the requested model, then gives every memory a vector from it', async () => {
    const h = await setup();
    await h.store.add({ namespace: 'default', kind: 'fact', text: 'Plays chess' }, 'user');
    await h.store.add({ namespace: 'default', kind: 'fact', text: '喜欢下围棋' }, 'user');
    await h.jobs.enqueue(REEMBED_JOB, { modelId: 'test:hashed-ngrams-128' });
    await h.jobs.drain();
    expect((await db.jobs.toArray()).find((j) => j.type === REEMBED_JOB)).toMatchObject({ status: 'queued', attempts: 0 });
    h.setEmbedder(createHashedEmbedder(128));
    h.clock.t += 30_000;
    await h.jobs.drain();
    const rows = await db.memories.toArray();
    expect(rows.map((m) => [m.embeddingModel, m.embedding?.length])).toEqual([
      ['test:hashed-ngrams-128', 128],
      ['test:hashed-ngrams-128', 128],
    ]);
    expect((await db.jobs.toArray()).find((j) => j.type === REEMBED_JOB)).toMatchObject({ status: 'done', progress: 1 });
  });

  it('re-embedding updates the vector blocks batch by batch: no full index rebuild after it, and the new vectors answer at once', async () => {
    const h = await setup();
    h.setEmbedder(null);
    const chess = (await h.store.add({ namespace: 'default', kind: 'fact', text: 'Plays chess on Sundays' }, 'user')).memory;
    await h.store.add({ namespace: 'default', kind: 'fact', text: '喜欢下围棋' }, 'user');
    const rebuild = vi.spyOn(h.store, 'rebuildIndexes');
    h.setEmbedder(createHashedEmbedder(128));
    await h.jobs.enqueue(REEMBED_JOB, { modelId: 'test:hashed-ngrams-128' });
    await h.jobs.drain();
    expect((await db.jobs.toArray()).find((j) => j.type === REEMBED_JOB)).toMatchObject({ status: 'done', progress: 1 });
    expect(rebuild).not.toHaveBeenCalled();
    expect(h.store.missingVectors('test:hashed-ngrams-128')).toBe(0);
    const hits = await h.store.search({ text: 'chess Sundays', namespace: 'default' }, { mode: 'vector' });
    expect(hits[0]).toMatchObject({ memory: { id: chess.id }, ranks: { vector: 1 } });
  });
});
