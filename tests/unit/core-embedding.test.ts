/**
 * Every memory eventually gets its vector: memories saved while no embedder was ready (or left
 * without one by an older version, or embedded by another model) are re-embedded through the real
 * job queue (`ltm.reembed`) once an embedder is ready — also after a restart. The whole core runs
 * (tests/helpers/core-harness.ts) with real transformers.js embeddings on a fixture model; no chat
 * model is needed.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Core } from '../../src/core/index';
import { RecallDB } from '../../src/db/schema';
import type { Embedder } from '../../src/engines/types';
import { REEMBED_JOB } from '../../src/memory/long-term/jobs';
import type { LongTermStore } from '../../src/memory/long-term/store';
import { FIXTURE_EMBEDDER_ID, useTestCores } from '../helpers/core-harness';
import { memoryRecord } from '../helpers/memory-record';

const cores = useTestCores();
let core: Core | null = null;
let db: RecallDB | null = null;

const reembedJobs = async () => (await db!.jobs.toArray()).filter((j) => j.type === REEMBED_JOB);

describe('memories saved before the embedder was ready', () => {
  it('get their vector once an embedder is ready, even after a restart in between', async () => {
    let ready: Embedder | null = null;
    ({ core, db } = await cores.start({ embedder: () => ready }));
    await core.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'My cat is called Mochi' });
    await core.memoryAdmin.add({ namespace: 'default', kind: 'profile', text: '我住在杭州' });
    expect((await db.memories.toArray()).map((m) => m.embedding)).toEqual([null, null]);
    // Queued at once, and it waits without failing (no attempt counted) while no embedder is ready.
    await vi.waitFor(async () => expect((await reembedJobs()).length).toBeGreaterThan(0));
    await core.jobs.drain();
    const waiting = async () => (await reembedJobs()).every((j) => j.status === 'queued' && j.attempts === 0);
    expect(await waiting()).toBe(true);

    // The browser restarts before any embedder loaded.
    await core.stop();
    const restarted = await cores.start({ db, embedder: () => ready });
    core = restarted.core;
    await core.jobs.drain();
    expect((await db.memories.toArray()).every((m) => m.embedding === null)).toBe(true);
    expect(await waiting()).toBe(true);

    // The embedder becomes ready: the waiting job is moved up and runs now (not after its 60 s deferral).
    ready = cores.embedder;
    restarted.engines.notify();
    await vi.waitFor(
      async () => expect((await db!.memories.toArray()).every((m) => m.embeddingModel === FIXTURE_EMBEDDER_ID && m.embedding !== null)).toBe(true),
      { timeout: 5_000 },
    );
    await core.jobs.drain();
    const [mochi] = await core.store.search({ text: 'cat called Mochi', namespace: 'default', k: 1 }, { mode: 'vector' });
    expect(mochi?.memory.text).toBe('My cat is called Mochi');
    expect((await reembedJobs()).every((j) => j.status === 'done')).toBe(true);
  });

  it('re-embeds on start what an older version left without a vector or with another model’s, in bounded pages', async () => {
    db = cores.track(new RecallDB(`core-${crypto.randomUUID()}`));
    const rows = ['Likes green tea', 'Plays the cello', 'Works in Porto', 'Allergic to peanuts', 'Has two sisters'].map((text, i) =>
      memoryRecord({
        id: `m${i}`,
        text,
        createdAt: 1,
        embedding: i === 4 ? new Float32Array([1, 0, 0]) : null,
        embeddingModel: i === 4 ? 'old/model' : null,
      }),
    );
    await db.memories.bulkAdd(rows);
    ({ core } = await cores.start({ db }));
    await core.jobs.drain();
    const after = await db.memories.toArray();
    expect(after.map((m) => [m.id, m.embeddingModel, m.embedding?.length])).toEqual(rows.map((r) => [r.id, FIXTURE_EMBEDDER_ID, cores.embedder.dimension]));
    // Paged: batches of 2 report 2, 4, 5 of 5.
    await db.memories.toCollection().modify({ embedding: null, embeddingModel: null });
    const progress: number[] = [];
    expect(await (core.store as unknown as LongTermStore).reembed({ batchSize: 2, onProgress: (done, total) => void progress.push(done, total) })).toEqual({
      embedded: 5,
      remaining: 0,
    });
    expect(progress).toEqual([2, 5, 4, 5, 5, 5]);
  });
});
