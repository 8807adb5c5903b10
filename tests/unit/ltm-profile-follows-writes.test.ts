/**
 * "What Recall knows about me" follows every write of a profile, instruction or preference memory,
 * whatever path wrote it: the store reports each committed write (`MemoryStoreDeps.onWrite`) and
 * the composition queues `ltm.profile` (`queueProfileRebuildsFor`). Through the whole core (real
 * Dexie, store, queue; no chat model, so the rules write the profile): "Remember that …", a manual
 * add, an edit, a kind change and a delete in the Memory tab. Through the composition with a queue
 * that is not started (nothing runs between the writes): a burst of writes queues one job per
 * namespace, an import batch (`putMemories`) queues one, other kinds and `MERGE` queue none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { RecallDB } from '../../src/db/schema';
import { createJobQueue } from '../../src/jobs/queue';
import { composeLongTermMemory } from '../../src/memory/long-term/compose';
import { PROFILE_JOB, readProfile } from '../../src/memory/long-term/profile-summary';
import { DEFAULT_NAMESPACE } from '../../src/model/memory';
import { useTestCores } from '../helpers/core-harness';
import { memoryRecord } from '../helpers/memory-record';

const NS = DEFAULT_NAMESPACE;

describe('through the core', () => {
  const cores = useTestCores();
  const profileLines = async (db: RecallDB) => (await readProfile(db, NS)).lines.map((l) => l.text);

  it('"Remember that …" and Memory-tab writes rebuild the profile (no Rebuild click)', async () => {
    const { core, db } = await cores.start();
    const conversation = await core.conversations.create({ strategy: { kind: 'full-buffer' } });
    await core.chat.send({ conversationId: conversation.id, text: 'Remember that I prefer tea', requestId: 'r1' });
    await core.jobs.drain();
    expect(await profileLines(db)).toEqual(['I prefer tea']);

    const walks = await core.memoryAdmin.add({ namespace: NS, kind: 'preference', text: 'Likes long walks by the sea' });
    await core.jobs.drain();
    // Both pinned and equally important: the newer first (`rank`).
    expect(await profileLines(db)).toEqual(['Likes long walks by the sea', 'I prefer tea']);

    await core.memoryAdmin.update({ id: walks.id, text: 'Likes long walks in the hills' });
    await core.jobs.drain();
    expect(await profileLines(db)).toEqual(['Likes long walks in the hills', 'I prefer tea']);

    // A kind change out of the source kinds takes the line away too.
    await core.memoryAdmin.update({ id: walks.id, kind: 'fact' });
    await core.jobs.drain();
    expect(await profileLines(db)).toEqual(['I prefer tea']);

    const tea = (await core.memoryAdmin.list({ namespace: NS, kinds: ['preference'] })).find((m) => m.text === 'I prefer tea')!;
    await core.memoryAdmin.delete(tea.id);
    await core.jobs.drain();
    expect(await profileLines(db)).toEqual([]);
  });
});

describe('through the composition (queue not started)', () => {
  const dbs: RecallDB[] = [];
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.delete();
  });
  const compose = async () => {
    const db = new RecallDB(`profile-follows-${crypto.randomUUID()}`);
    dbs.push(db);
    const jobs = createJobQueue(db);
    const { store } = await composeLongTermMemory({
      db,
      jobs,
      embedder: () => null,
      loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
    });
    const queued = async () => (await db.jobs.where('type').equals(PROFILE_JOB).toArray()).map((j) => (j.payload as { namespace: string }).namespace).sort();
    return { db, store, queued };
  };

  it('a burst of 5 writes queues one rebuild per namespace; other kinds and MERGE queue none', async () => {
    const { store, queued } = await compose();
    const round = await store.add({ namespace: NS, kind: 'episodic', text: 'User: hello\nAssistant: hi' }, 'conversation:c1');
    await store.add({ namespace: NS, kind: 'event', text: 'Dentist on Friday' }, 'user');
    await store.update(round.memory.id, { sourceMessageIds: ['m1', 'm2'] }, 'conversation:c1', 'MERGE');
    expect(await queued()).toEqual([]);

    const a = await store.add({ namespace: NS, kind: 'preference', text: 'Likes tea' }, 'user');
    await store.add({ namespace: NS, kind: 'instruction', text: 'Answer in short sentences' }, 'user');
    await store.update(a.memory.id, { text: 'Likes green tea' }, 'user');
    await store.update(a.memory.id, { pinned: true }, 'user', 'PIN');
    await store.remove([a.memory.id], 'DELETE', 'user');
    expect(await queued()).toEqual([NS]);

    await store.add({ namespace: 'work', kind: 'profile', text: 'Team lead of the data group' }, 'user');
    expect(await queued()).toEqual([NS, 'work']);
  });

  it('an import batch (putMemories) queues a rebuild of the namespace it restores', async () => {
    const { store, queued } = await compose();
    const t = Date.UTC(2025, 0, 1);
    const record = memoryRecord({ id: 'imported-1', namespace: 'home', kind: 'profile', text: 'Lives in Porto', importance: 0.8, createdAt: t });
    await store.putMemories(async () => ({ added: [record], updated: [], result: null }));
    expect(await queued()).toEqual(['home']);
  });
});
