/**
 * The long-term memory facade and the episodic job, through the real persisted job queue:
 * onExchange → `ltm.episodic` → an episodic memory with source ids; resumption after a killed
 * context; access recording; explicit commands. Embeddings: the hashed n-gram TEST embedder.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import type { MessageRecord } from '../../src/model/records';
import { createJobQueue, type JobQueue } from '../../src/jobs/queue';
import { ACCESS_WRITE_DELAY_MS, createLongTermMemory, EPISODIC_JOB, EXTRACT_JOB, episodicText, registerEpisodicJobs } from '../../src/memory/long-term';
import { createMemoryStore } from '../../src/memory/long-term/store';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';

let db: RecallDB;
const queues: JobQueue[] = [];
afterEach(async () => {
  for (const q of queues.splice(0)) await q.stop();
  await db?.delete();
});

const T = new Date(2025, 2, 3, 9).getTime();

async function boot(name = `facade-${crypto.randomUUID()}`) {
  db = new RecallDB(name);
  const embedder = createHashedEmbedder();
  const store = await createMemoryStore({ db, embedder: () => embedder, now: () => T + 60_000, loadVoyWasm: nodeVoyWasm });
  const jobs = createJobQueue(db, { now: () => T + 60_000 });
  queues.push(jobs);
  registerEpisodicJobs(jobs, { store, db });
  const ltm = createLongTermMemory({ store, jobs, db, now: () => T + 120_000 });
  return { store, jobs, ltm };
}

async function addExchange(conversationId: string, user: string, assistant: string, at: number, seq = 0) {
  const u: MessageRecord = { id: `${conversationId}-u${seq}`, conversationId, seq, role: 'user', content: user, createdAt: at, status: 'complete' };
  const a: MessageRecord = {
    id: `${conversationId}-a${seq}`,
    conversationId,
    seq: seq + 1,
    role: 'assistant',
    content: assistant,
    createdAt: at + 5_000,
    status: 'complete',
  };
  await db.messages.bulkAdd([u, a]);
  return { conversationId, namespace: 'default', userMessageId: u.id, assistantMessageId: a.id };
}

describe('long-term memory facade', () => {
  it('onExchange enqueues the episodic and extraction jobs once per exchange', async () => {
    const { ltm } = await boot();
    const exchange = await addExchange('c1', '我下个月去成都出差', '好的，祝你出差顺利！', T);
    await ltm.onExchange(exchange);
    await ltm.onExchange(exchange); // deduplicated while queued
    const jobs = await db.jobs.toArray();
    expect(jobs.map((j) => j.type).sort()).toEqual([EPISODIC_JOB, EXTRACT_JOB].sort());
    expect(jobs.every((j) => j.status === 'queued')).toBe(true);
    expect(jobs[0]!.payload).toEqual(exchange);
    await expect(ltm.onExchange({ ...exchange, userMessageId: '' })).rejects.toThrow('Exchange is missing "userMessageId"');
  });

  it('the episodic job stores the round verbatim with source ids and the message time', async () => {
    const { ltm, jobs, store } = await boot();
    const exchange = await addExchange('c1', '我下个月去成都出差', '好的，祝你出差顺利！', T);
    await ltm.onExchange(exchange);
    await jobs.start();
    await jobs.drain();
    const memories = await db.memories.toArray();
    expect(memories).toHaveLength(1);
    expect(memories[0]).toMatchObject({
      kind: 'episodic',
      namespace: 'default',
      text: 'User: 我下个月去成都出差\nAssistant: 好的，祝你出差顺利！',
      createdAt: T,
      validFrom: T,
      sourceConversationId: 'c1',
      sourceMessageIds: ['c1-u0', 'c1-a0'],
      importance: 0.3,
      pinned: false,
    });
    expect((await db.memoryHistory.toArray())[0]).toMatchObject({ event: 'ADD', source: 'conversation:c1' });
    // The extraction job has no handler here (LTM-B registers it): it is parked, never attempted.
    expect(await db.jobs.where('type').equals(EXTRACT_JOB).first()).toMatchObject({ status: 'parked', attempts: 0 });
    expect((await store.search({ text: '成都出差', namespace: 'default' }))[0]?.memory.id).toBe(memories[0]!.id);
  });

  it('resumes after a context was killed mid-job, before or after the memory was written, without duplicates', async () => {
    const name = `facade-${crypto.randomUUID()}`;
    const first = await boot(name);
    const e1 = await addExchange('c1', 'My daughter starts school in September', 'That is exciting!', T, 0);
    const e2 = await addExchange('c1', 'She will go to Riverside Primary', 'Great choice.', T + 60_000, 2);
    await first.ltm.onExchange(e1);
    await first.ltm.onExchange(e2);
    // Killed while running e1's job after its memory was committed, and before e2's job ran:
    // both jobs are left `running` (the state a killed context leaves behind).
    await first.store.add(
      {
        namespace: 'default',
        kind: 'episodic',
        text: 'User: My daughter starts school in September\nAssistant: That is exciting!',
        createdAt: T,
        validFrom: T,
        sourceConversationId: 'c1',
        sourceMessageIds: [e1.userMessageId, e1.assistantMessageId],
      },
      'conversation:c1',
    );
    await db.jobs.where('type').equals(EPISODIC_JOB).modify({ status: 'running', attempts: 1 });
    // The context dies; a new one opens the same database.
    await first.jobs.stop();
    db.close();
    const second = await boot(name);
    await second.jobs.start();
    await second.jobs.drain();
    const memories = (await db.memories.toArray()).sort((a, b) => a.createdAt - b.createdAt);
    expect(memories.map((m) => m.sourceMessageIds)).toEqual([
      [e1.userMessageId, e1.assistantMessageId],
      [e2.userMessageId, e2.assistantMessageId],
    ]);
    expect((await db.jobs.where('type').equals(EPISODIC_JOB).toArray()).map((j) => j.status)).toEqual(['done', 'done']);
  });

  it('stores nothing when the messages were deleted meanwhile, and leaves out a failed reply', async () => {
    const { ltm, jobs } = await boot();
    const gone = await addExchange('c1', 'secret plan', 'ok', T);
    await db.messages.clear();
    await ltm.onExchange(gone);
    const failed = await addExchange('c2', 'What is the capital of Peru?', '', T, 0);
    await db.messages.update(failed.assistantMessageId, { status: 'error', error: 'engine crashed' });
    await ltm.onExchange(failed);
    await jobs.start();
    await jobs.drain();
    expect((await db.memories.toArray()).map((m) => m.text)).toEqual(['User: What is the capital of Peru?']);
    expect((await jobs.stats()).failed).toBe(0);
  });

  it('retrieve records accesses on what it returns', async () => {
    const { ltm, store } = await boot();
    const { memory } = await store.add({ namespace: 'default', kind: 'preference', text: 'I prefer aisle seats on long flights' }, 'user');
    const other = await store.add({ namespace: 'default', kind: 'fact', text: '我的车是白色的' }, 'user');
    const results = await ltm.retrieve({ text: 'aisle seat flight', namespace: 'default', k: 1 });
    expect(results.map((r) => r.memory.id)).toEqual([memory.id]);
    await ltm.flush();
    expect(await store.get(memory.id)).toMatchObject({ accessCount: 1, lastAccessedAt: T + 120_000 });
    expect(await store.get(other.memory.id)).toMatchObject({ accessCount: 0, lastAccessedAt: null });
  });

  it('runCommand stores a pinned memory at once and forgets it everywhere', async () => {
    const { ltm, store } = await boot();
    expect(await ltm.runCommand('What is the weather like?', { namespace: 'default', conversationId: 'c1', messageId: 'm0' })).toBeNull();
    const remembered = await ltm.runCommand('记住：我对花生过敏', { namespace: 'default', conversationId: 'c1', messageId: 'm1' });
    expect(remembered?.command).toBe('remember');
    const id = remembered!.affected[0]!.id;
    expect(await store.get(id)).toMatchObject({ text: '我对花生过敏', pinned: true, sourceMessageIds: ['m1'] });
    expect((await store.search({ text: '花生过敏', namespace: 'default' }))[0]?.memory.id).toBe(id);
    const forgotten = await ltm.runCommand('忘记我对花生过敏', { namespace: 'default', conversationId: 'c1', messageId: 'm2' });
    expect(forgotten).toEqual({ command: 'forget', affected: [{ id, kind: remembered!.affected[0]!.kind, text: '我对花生过敏' }] });
    expect(await store.get(id)).toBeUndefined();
    expect(await store.search({ text: '花生过敏', namespace: 'default', includeInvalid: true })).toEqual([]);
    expect(JSON.stringify(await db.memoryHistory.toArray())).not.toContain('花生');
  });

  it('accesses of several retrievals are written later in one batch, by key (no cursor), each retrieval counted', async () => {
    const { ltm, store, jobs } = await boot();
    await jobs.start();
    const { memory } = await store.add({ namespace: 'default', kind: 'preference', text: 'I prefer aisle seats on long flights' }, 'user');
    const other = await store.add({ namespace: 'default', kind: 'fact', text: 'My car is white' }, 'user');
    const puts = vi.spyOn(db.memories, 'bulkPut');
    const where = vi.spyOn(db.memories, 'where');
    // Four retrievals inside one turn (a regenerate and a follow-up would be others): whatever the
    // machine's speed, the write waits for the turn's end, so all four are in its batch.
    await jobs.runForeground(async () => {
      for (const text of ['aisle seat', 'long flights', 'aisle seats on flights']) {
        expect((await ltm.retrieve({ text, namespace: 'default', k: 1 })).map((r) => r.memory.id)).toEqual([memory.id]);
      }
      expect((await ltm.retrieve({ text: 'white car', namespace: 'default', k: 1 })).map((r) => r.memory.id)).toEqual([other.memory.id]);
      // Nothing is written while the turn runs, even past ACCESS_WRITE_DELAY_MS.
      await new Promise((resolve) => setTimeout(resolve, ACCESS_WRITE_DELAY_MS + 100));
      expect(await store.get(memory.id)).toMatchObject({ accessCount: 0 });
    });
    await vi.waitFor(async () => expect(await store.get(memory.id)).toMatchObject({ accessCount: 3, lastAccessedAt: T + 120_000 }), {
      timeout: ACCESS_WRITE_DELAY_MS + 3_000,
      interval: 100,
    });
    expect(await store.get(other.memory.id)).toMatchObject({ accessCount: 1, lastAccessedAt: T + 120_000 });
    expect(puts).toHaveBeenCalledTimes(1);
    expect(where).not.toHaveBeenCalled();
    await ltm.flush(); // nothing pending: writes nothing more
    expect(puts).toHaveBeenCalledTimes(1);
  });

  it('an access write due while a turn runs waits for the turn to end', async () => {
    const { ltm, store, jobs } = await boot();
    await jobs.start();
    const { memory } = await store.add({ namespace: 'default', kind: 'preference', text: 'I prefer aisle seats on long flights' }, 'user');
    let turnEnded = 0;
    await jobs.runForeground(async () => {
      expect((await ltm.retrieve({ text: 'aisle seat', namespace: 'default', k: 1 })).map((r) => r.memory.id)).toEqual([memory.id]);
      // Past the delay, still inside the turn: nothing written.
      await new Promise((resolve) => setTimeout(resolve, ACCESS_WRITE_DELAY_MS + 300));
      expect(await store.get(memory.id)).toMatchObject({ accessCount: 0 });
      turnEnded = Date.now();
    });
    await vi.waitFor(async () => expect(await store.get(memory.id)).toMatchObject({ accessCount: 1 }), { timeout: 1_000, interval: 20 });
    // Written right after the turn, not a whole delay later.
    expect(Date.now() - turnEnded).toBeLessThan(ACCESS_WRITE_DELAY_MS);
  });

  it('a failed access write is logged and does not fail the retrieval', async () => {
    const { ltm, store } = await boot();
    await store.add({ namespace: 'default', kind: 'fact', text: 'I collect vinyl records' }, 'user');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const spy = vi.spyOn(db.memories, 'bulkPut').mockRejectedValueOnce(new Error('quota exceeded'));
    expect((await ltm.retrieve({ text: 'vinyl', namespace: 'default' })).map((r) => r.memory.text)).toEqual(['I collect vinyl records']);
    await ltm.flush();
    expect(warn).toHaveBeenCalledWith('[ltm] could not record memory accesses:', expect.any(Error));
    spy.mockRestore();
    warn.mockRestore();
  });

  it('an exchange repeated word for word is one memory citing both occurrences', async () => {
    const { ltm, jobs } = await boot();
    const first = await addExchange('c1', 'Good morning', 'Good morning! How can I help?', T, 0);
    const again = await addExchange('c2', 'Good morning', 'Good morning! How can I help?', T + 86_400_000, 0);
    await ltm.onExchange(first);
    await ltm.onExchange(again);
    await jobs.start();
    await jobs.drain();
    const memories = await db.memories.toArray();
    expect(memories).toHaveLength(1);
    // Both jobs were queued at the same instant, so either may run first.
    expect([...memories[0]!.sourceMessageIds].sort()).toEqual(['c1-a0', 'c1-u0', 'c2-a0', 'c2-u0']);
    const history = await db.memoryHistory.toArray();
    expect(history.map((h) => h.event)).toEqual(['ADD', 'MERGE']);
    expect(new Set(history.map((h) => h.source))).toEqual(new Set(['conversation:c1', 'conversation:c2']));
  });

  it('episodicText keeps both messages verbatim', () => {
    const base = { conversationId: 'c', seq: 0, createdAt: 0, status: 'complete' as const };
    expect(episodicText({ ...base, id: 'u', role: 'user', content: ' Hi there \n' }, { ...base, id: 'a', role: 'assistant', content: '你好！' })).toBe(
      'User: Hi there\nAssistant: 你好！',
    );
    expect(episodicText({ ...base, id: 'u', role: 'user', content: 'Hi' }, undefined)).toBe('User: Hi');
    // Stopped or failed replies are left out; a reply cut off at the answer limit is complete.
    expect(episodicText({ ...base, id: 'u', role: 'user', content: 'Hi' }, { ...base, id: 'a', role: 'assistant', content: '"Mom', status: 'aborted' })).toBe(
      'User: Hi',
    );
    expect(episodicText({ ...base, id: 'u', role: 'user', content: 'Hi' }, { ...base, id: 'a', role: 'assistant', content: 'x', status: 'error' })).toBe(
      'User: Hi',
    );
    expect(episodicText({ ...base, id: 'u', role: 'user', content: 'Hi' }, { ...base, id: 'a', role: 'assistant', content: 'Hello', truncated: true })).toBe(
      'User: Hi\nAssistant: Hello',
    );
  });
});
