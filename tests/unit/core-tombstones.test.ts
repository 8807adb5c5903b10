/**
 * What the user deleted or forgot stays gone: an extraction (and episodic) job that re-runs after
 * the context was killed between its writes and "done" — simulated exactly: the job row is left
 * `running`, and the next core's queue re-queues it on start — does not bring the memory back.
 * Tombstones keep no text; "remember …" by the user lifts one. The whole core runs
 * (tests/helpers/core-harness.ts); only the chat model is scripted (an instruction-following LLM
 * cannot run here).
 */
import Dexie from 'dexie';
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/index';
import { RecallDB } from '../../src/db/schema';
import { EPISODIC_JOB, EXTRACT_JOB } from '../../src/memory/long-term';
import { isTombstoned, tombstonedHashes } from '../../src/memory/long-term/store';
import { memoryHash } from '../../src/memory/long-term/text';
import { noteTakingEngine, useTestCores } from '../helpers/core-harness';

const FACT = 'Diary password is swordfish';
const cores = useTestCores();
let core: Core | null = null;
let db: RecallDB | null = null;

/** Chat turns answer "Noted."; an extraction about the secret (swordfish) extracts the fact, any other nothing. */
const engine = () => noteTakingEngine('swordfish', FACT);

const texts = async () => (await db!.memories.toArray()).map((m) => m.text);

describe('tombstones', () => {
  it('a deleted memory and a deleted round stay deleted when their jobs re-run after a killed context', async () => {
    const chat = engine();
    ({ core, db } = await cores.start({ chat: () => chat }));
    const conversation = await core.conversations.create({ strategy: { kind: 'full-buffer' } });
    await core.chat.send({ conversationId: conversation.id, text: 'My diary password is swordfish', requestId: 'r1' });
    await core.jobs.drain();
    const fact = (await db.memories.toArray()).find((m) => m.text === FACT)!;
    const round = (await db.memories.toArray()).find((m) => m.kind === 'episodic')!;
    expect(fact).toBeDefined();
    expect(round.text).toContain('swordfish');

    await core.memoryAdmin.delete(fact.id);
    await core.memoryAdmin.delete(round.id);
    expect(await texts()).toEqual([]);
    // Tombstones: namespace + hash + time + reason, no text.
    const stones = await db.tombstones.toArray();
    expect(stones.map((s) => [s.namespace, s.hash, s.reason]).sort()).toEqual(
      [
        ['default', fact.hash, 'DELETE'],
        ['default', round.hash, 'DELETE'],
      ].sort(),
    );
    expect(JSON.stringify(stones)).not.toMatch(/swordfish|diary/i);
    expect(await isTombstoned(db, 'default', memoryHash(FACT.toUpperCase()))).toBe(true); // normalized text
    expect(await isTombstoned(db, 'work', fact.hash)).toBe(false);
    expect(await tombstonedHashes(db, 'default', [fact.hash, memoryHash('something else')])).toEqual(new Set([fact.hash]));

    // The context was killed after the jobs' writes but before "done": their rows are still `running`.
    const jobIds = (await db.jobs.toArray()).filter((j) => j.type === EXTRACT_JOB || j.type === EPISODIC_JOB).map((j) => j.id);
    expect(jobIds).toHaveLength(2);
    await db.jobs.bulkUpdate(jobIds.map((key) => ({ key, changes: { status: 'running' as const } })));
    await core.stop();
    const before = chat.requests.length;
    ({ core } = await cores.start({ db, chat: () => chat }));
    await core.jobs.drain();
    // Both jobs really ran again (the extraction asked the model again) and stored nothing.
    expect(chat.requests.length).toBeGreaterThan(before);
    expect((await db.jobs.bulkGet(jobIds)).map((j) => j?.status)).toEqual(['done', 'done']);
    expect(await texts()).toEqual([]);
  });

  it('"remember …" by the user lifts the tombstone; "forget …" writes one', async () => {
    const chat = engine();
    ({ core, db } = await cores.start({ chat: () => chat }));
    const conversation = await core.conversations.create({ strategy: { kind: 'full-buffer' } });
    const added = await core.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: FACT });
    await core.memoryAdmin.delete(added.id);
    expect(await isTombstoned(db, 'default', memoryHash(FACT))).toBe(true);
    await core.chat.send({ conversationId: conversation.id, text: `remember that ${FACT}`, requestId: 'r1' });
    expect(await texts()).toEqual([FACT]);
    expect(await isTombstoned(db, 'default', memoryHash(FACT))).toBe(false);
    await core.chat.send({ conversationId: conversation.id, text: 'forget my diary password', requestId: 'r2' });
    await core.jobs.drain();
    expect(await texts()).toEqual([]);
    expect((await db.tombstones.toArray()).map((s) => [s.hash, s.reason])).toEqual([[memoryHash(FACT), 'FORGET']]);
  });

  it('schema v2 opens a v1 database as it is and adds an empty tombstones table', async () => {
    const name = `v1-${crypto.randomUUID()}`;
    const v1 = new Dexie(name);
    v1.version(1).stores({
      memories: 'id, namespace, kind, hash, current, updatedAt, sourceConversationId, *sourceMessageIds, [namespace+current]',
      settings: 'key',
    });
    await v1
      .table('memories')
      .add({ id: 'm1', namespace: 'default', kind: 'fact', text: 'Likes tea', hash: memoryHash('Likes tea'), current: 1, sourceMessageIds: [] });
    v1.close();
    db = cores.track(new RecallDB(name));
    await db.open();
    expect(db.verno).toBeGreaterThanOrEqual(4); // v3 (the persisted long-term index) and v4 (fewer bytes per memory) come after v2; every upgrade ran
    expect((await db.memories.get('m1'))?.text).toBe('Likes tea');
    expect(await db.tombstones.count()).toBe(0);
  });
});
