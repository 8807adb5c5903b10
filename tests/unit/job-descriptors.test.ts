/**
 * Job descriptors (src/jobs/descriptor.ts) on the real queue and fake-indexeddb: the payload
 * policies (`invalidPayload`), and `enqueueJob` applying a descriptor's attempts and dedupe key.
 * Checked on the real descriptors, so the messages and policies are the ones the jobs had before
 * they described themselves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { enqueueJob, registerJobs } from '../../src/jobs/descriptor';
import { episodicJob } from '../../src/memory/long-term';
import { extractJob, LONG_TERM_JOBS } from '../../src/memory/long-term/jobs';
import { foldJob, SHORT_TERM_JOBS, summaryJob } from '../../src/memory/short-term';
import { createHarness, type Harness } from '../../bench/data/strategy-harness';

let h: Harness;
afterEach(async () => h?.close());

describe('payload policies', () => {
  it('short-term jobs: a payload without a conversation id fails and is retried (attempt counted, backoff)', async () => {
    let t = 1_000_000;
    h = createHarness({ now: () => t });
    registerJobs(h.jobs, SHORT_TERM_JOBS, h.deps);
    const id = await h.jobs.enqueue(summaryJob.type, { conversationId: '' }, { maxAttempts: 4 });
    await h.jobs.start();
    await h.jobs.drain();
    expect(await h.db.jobs.get(id)).toMatchObject({
      status: 'queued',
      attempts: 1,
      lastError: 'Short-term job payload has no conversationId',
      runAfter: t + 2_000,
    });
    await h.jobs.stop();
  });

  it('ltm.episodic: names the first missing field and retries', async () => {
    h = createHarness();
    registerJobs(h.jobs, [episodicJob], { db: h.db, store: {} as never });
    const id = await h.jobs.enqueue(episodicJob.type, { conversationId: 'c1', userMessageId: 'u1' });
    const none = await h.jobs.enqueue(episodicJob.type, null);
    await h.jobs.start();
    await h.jobs.drain();
    expect(await h.db.jobs.get(id)).toMatchObject({ status: 'queued', attempts: 1, lastError: 'Exchange is missing "namespace"' });
    expect(await h.db.jobs.get(none)).toMatchObject({ status: 'queued', attempts: 1, lastError: 'Exchange is missing "conversationId"' });
    await h.jobs.stop();
  });

  it('ltm.extract: a malformed payload fails at once, without retries', async () => {
    h = createHarness();
    registerJobs(h.jobs, LONG_TERM_JOBS, { db: h.db, store: {} as never, engine: () => null, jobs: h.jobs });
    const id = await h.jobs.enqueue(extractJob.type, { conversationId: 'c1' }, { maxAttempts: 2 });
    await h.jobs.start();
    await h.jobs.drain();
    const job = await h.db.jobs.get(id);
    expect(job).toMatchObject({ status: 'failed', attempts: 1 });
    expect(job?.lastError).toMatch(/^Invalid ltm\.extract payload: /);
    await h.jobs.stop();
  });
});

describe('enqueueJob', () => {
  it("uses the descriptor's attempts and dedupe key, and coalesces while queued", async () => {
    h = createHarness();
    const a = await enqueueJob(h.jobs, foldJob, { conversationId: 'c1', maxTokens: 900 });
    const b = await enqueueJob(h.jobs, foldJob, { conversationId: 'c1', maxTokens: 500 });
    const c = await enqueueJob(h.jobs, foldJob, { conversationId: 'c2', maxTokens: 900 });
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(await h.db.jobs.get(a)).toMatchObject({
      type: 'short-term.fold',
      maxAttempts: 4,
      dedupeKey: 'short-term.fold:c1',
      payload: { conversationId: 'c1', maxTokens: 900 },
    });
    const extract = await enqueueJob(h.jobs, extractJob, { conversationId: 'c1', namespace: 'default', userMessageId: 'u1', assistantMessageId: 'a1' });
    expect(await h.db.jobs.get(extract)).toMatchObject({ maxAttempts: 2, dedupeKey: 'ltm.extract:a1' });
  });
});
