import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DBCore } from 'dexie';
import { RecallDB } from '../../src/db/schema';
import { backoffMs, createJobQueue, JobDeferred } from '../../src/jobs/queue';
import { JobError } from '../../src/model/errors';

let db: RecallDB;
const open = () => (db = new RecallDB(`jobs-${crypto.randomUUID()}`));
afterEach(async () => db?.delete());

describe('job queue', () => {
  it('a drain that starts while the idle loop is reading its next wake time returns (no lost wake-up)', async () => {
    open();
    const q = createJobQueue(db);
    q.register('t', async () => undefined);
    // A job due in a minute: the idle loop reads its time (`nextWakeTime`) and sleeps until then.
    await q.enqueue('t', {}, { delayMs: 60_000 });
    let drained: Promise<void> | null = null;
    let started = false;
    // The first read that returns the delayed job after start is the loop's wake-time read:
    // `drain` is called right there, between the loop finding no job and setting its timer.
    db.jobs.hook('reading', (job) => {
      if (started && !drained) drained = q.drain();
      return job;
    });
    started = true;
    await q.start();
    await vi.waitFor(() => expect(drained).not.toBeNull());
    // Before the fix, this drain's wake-up was lost: it returned only when the 60 s timer fired
    // (the test timed out). It had made core-embedding.test.ts hang without an extra read in
    // `createCore`'s `ensureEmbedded`.
    await drained;
    expect((await q.stats()).scheduled).toBe(1);
    await q.stop();
  });

  it('runs queued jobs in order and marks them done', async () => {
    open();
    const q = createJobQueue(db);
    const seen: number[] = [];
    q.register<{ n: number }>('t', async ({ n }) => void seen.push(n));
    await q.enqueue('t', { n: 1 });
    await q.enqueue('t', { n: 2 });
    await q.start();
    await q.drain();
    expect(seen).toEqual([1, 2]);
    expect(await q.stats()).toEqual({
      queued: 0,
      scheduled: 0,
      retrying: 0,
      running: 0,
      failed: 0,
      done: 2,
      parked: 0,
      parkedTypes: [],
      current: null,
      recentFailures: [],
      rejected: 0,
      recentRejections: [],
    });
    await q.stop();
  });

  it('a failed progress write is logged, not an unhandled rejection, and the job still completes', async () => {
    // Vitest fails the run on an unhandled rejection: before the fix, `reportProgress` dropped this one.
    open();
    const update = db.jobs.update.bind(db.jobs);
    vi.spyOn(db.jobs, 'update').mockImplementation((key, changes) =>
      changes && typeof changes === 'object' && 'progress' in changes && Object.keys(changes).length === 1
        ? (Promise.reject(new Error('quota exceeded')) as ReturnType<typeof update>)
        : update(key, changes),
    );
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const q = createJobQueue(db);
    q.register('p', async (_payload, ctx) => {
      ctx.reportProgress(0.5);
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
    const id = await q.enqueue('p', {});
    await q.start();
    await q.drain();
    expect(await db.jobs.get(id)).toMatchObject({ status: 'done', progress: 1 });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain(`could not save the progress of p job ${id}`);
    warn.mockRestore();
    await q.stop();
  });

  it('backs off exponentially and fails after maxAttempts', async () => {
    open();
    let t = 1_000_000;
    const q = createJobQueue(db, { now: () => t });
    let calls = 0;
    q.register('boom', async () => {
      calls += 1;
      throw new Error('nope');
    });
    const id = await q.enqueue('boom', {}, { maxAttempts: 3 });
    await q.start();
    await q.drain();
    expect(calls).toBe(1);
    let job = await db.jobs.get(id);
    expect(job).toMatchObject({ status: 'queued', attempts: 1, lastError: 'nope', runAfter: t + 2_000 });
    // Waiting out its backoff after one failure: retrying, not merely scheduled.
    expect(await q.stats()).toMatchObject({ queued: 0, scheduled: 0, retrying: 1, failed: 0 });
    t += 2_000;
    await q.drain();
    job = await db.jobs.get(id);
    expect(job).toMatchObject({ status: 'queued', attempts: 2, runAfter: t + 4_000 });
    t += 4_000;
    await q.drain();
    expect((await db.jobs.get(id))?.status).toBe('failed');
    expect(calls).toBe(3);
    expect((await q.stats()).recentFailures).toEqual([{ type: 'boom', lastError: 'nope', at: t }]);
    expect(backoffMs(1)).toBe(2_000);
    expect(backoffMs(3)).toBe(8_000);
    expect(backoffMs(50)).toBe(600_000);
    await q.stop();
  });

  it('an unusable model reply to the end is an expected rejection: done, counted apart, not failed, not retried (issue 12 item 10)', async () => {
    open();
    let t = 2_000_000;
    const q = createJobQueue(db, { now: () => t });
    let calls = 0;
    q.register('summarize', async () => {
      calls += 1;
      throw new JobError('summary_rejected', 'Summary reply rejected: no summary');
    });
    q.register('boom', async () => {
      throw new Error('disk unplugged');
    });
    const id = await q.enqueue('summarize', {}, { maxAttempts: 2 });
    await q.enqueue('boom', {}, { maxAttempts: 1 });
    await q.start();
    await q.drain();
    // Retried with backoff as any error until its attempts are spent…
    expect(await db.jobs.get(id)).toMatchObject({ status: 'queued', attempts: 1 });
    t += 2_000;
    await q.drain();
    // …then done with outcome "rejected", not failed.
    expect(await db.jobs.get(id)).toMatchObject({ status: 'done', outcome: 'rejected', lastErrorInfo: { domain: 'jobs', code: 'summary_rejected' } });
    const stats = await q.stats();
    expect(stats).toMatchObject({ failed: 1, done: 0, rejected: 1 });
    expect(stats.recentFailures.map((f) => f.type)).toEqual(['boom']);
    expect(stats.recentRejections).toEqual([
      { type: 'summarize', lastError: 'Summary reply rejected: no summary', lastErrorInfo: { domain: 'jobs', code: 'summary_rejected', params: {} }, at: t },
    ]);
    // "Retry failed" re-queues the real failure only.
    expect(await q.retryFailed()).toBe(1);
    await q.drain();
    expect(calls).toBe(2);
    await q.stop();
  });

  it('counts a delayed job that never failed as scheduled, not as waiting to retry', async () => {
    open();
    let t = 5_000_000;
    const q = createJobQueue(db, { now: () => t });
    const seen: string[] = [];
    q.register('later', async () => void seen.push('later'));
    await q.enqueue('later', {}, { delayMs: 86_400_000 });
    await q.start();
    await q.drain();
    expect(seen).toEqual([]);
    expect(await q.stats()).toMatchObject({ queued: 0, scheduled: 1, retrying: 0, running: 0, done: 0 });
    t += 86_400_000;
    await q.drain();
    expect(seen).toEqual(['later']);
    expect(await q.stats()).toMatchObject({ queued: 0, scheduled: 0, retrying: 0, done: 1 });
    await q.stop();
  });

  it('resumes a job left running by a killed context', async () => {
    open();
    // Simulate a context that died mid-job: the record is still `running`.
    await db.jobs.add({
      id: 'j1',
      type: 'resume',
      payload: { x: 7 },
      status: 'running',
      attempts: 1,
      maxAttempts: 5,
      runAfter: 0,
      createdAt: 0,
      updatedAt: 0,
    });
    const q = createJobQueue(db);
    const got: unknown[] = [];
    q.register('resume', async (p) => void got.push(p));
    await q.start();
    await q.drain();
    expect(got).toEqual([{ x: 7 }]);
    expect((await db.jobs.get('j1'))?.status).toBe('done');
    await q.stop();
  });

  it('coalesces jobs with the same dedupe key while queued', async () => {
    open();
    const q = createJobQueue(db);
    const a = await q.enqueue('x', { n: 1 }, { dedupeKey: 'k' });
    const b = await q.enqueue('x', { n: 2 }, { dedupeKey: 'k' });
    expect(b).toBe(a);
    expect(await db.jobs.count()).toBe(1);
  });

  it('defers without counting an attempt', async () => {
    open();
    let t = 0;
    const q = createJobQueue(db, { now: () => t });
    q.register('wait', async () => {
      throw new JobDeferred('no model', 5_000);
    });
    const id = await q.enqueue('wait', {});
    await q.start();
    await q.drain();
    expect(await db.jobs.get(id)).toMatchObject({ status: 'queued', attempts: 0, runAfter: 5_000 });
    await q.stop();
  });

  it('preempts a running job for foreground work and re-runs it afterwards', async () => {
    open();
    const q = createJobQueue(db);
    let started!: () => void;
    const startedP = new Promise<void>((r) => (started = r));
    const runs: string[] = [];
    q.register('slow', async (_p, { signal }) => {
      runs.push('start');
      started();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, 200);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
      });
      runs.push('end');
    });
    const id = await q.enqueue('slow', {});
    await q.start();
    await startedP;
    expect((await q.stats()).current).toEqual({ type: 'slow', progress: null });
    const result = await q.runForeground(async () => {
      runs.push('foreground');
      return 42;
    });
    expect(result).toBe(42);
    await q.drain();
    expect(runs).toEqual(['start', 'foreground', 'start', 'end']);
    expect(await db.jobs.get(id)).toMatchObject({ status: 'done', attempts: 1 });
    await q.stop();
  });

  it('parks a job of an unknown type instead of polling IndexedDB, and runs it once a handler registers', async () => {
    open();
    // Count every read the queue makes, at Dexie's DBCore level (get, getMany, query, openCursor, count).
    let reads = 0;
    db.use({
      stack: 'dbcore',
      name: 'count-reads',
      create: (down: DBCore): DBCore => ({
        ...down,
        table: (name) => {
          const table = down.table(name);
          const counted =
            <A extends unknown[], R>(fn: (...args: A) => R) =>
            (...args: A): R => {
              reads += 1;
              return fn(...args);
            };
          return {
            ...table,
            get: counted(table.get.bind(table)),
            getMany: counted(table.getMany.bind(table)),
            query: counted(table.query.bind(table)),
            openCursor: counted(table.openCursor.bind(table)),
            count: counted(table.count.bind(table)),
          };
        },
      }),
    });
    // Fake clock for the queue's timers only (fake-indexeddb schedules with setImmediate, kept real).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let t = 1_000_000;
      const q = createJobQueue(db, { now: () => t });
      const id = await q.enqueue('from.a.newer.version', { x: 1 });
      await q.start();
      await q.drain();
      const afterStart = reads;
      // 100 scheduler ticks of 10 ms each (one second of the old ~1,000 polls a second).
      for (let tick = 0; tick < 100; tick++) {
        t += 10;
        await vi.advanceTimersByTimeAsync(10);
      }
      expect(reads - afterStart).toBe(0);
      expect(vi.getTimerCount()).toBe(0); // nothing is scheduled to wake the loop
      expect(await db.jobs.get(id)).toMatchObject({ status: 'parked', attempts: 0, lastError: 'No handler is registered for job type "from.a.newer.version"' });
      expect(await q.stats()).toMatchObject({ queued: 0, parked: 1, parkedTypes: ['from.a.newer.version'] });

      // A handler for the type registers (e.g. after an update): the parked job runs.
      const seen: unknown[] = [];
      q.register('from.a.newer.version', async (payload) => void seen.push(payload));
      await vi.waitFor(async () => expect((await db.jobs.get(id))?.status).toBe('done'));
      expect(seen).toEqual([{ x: 1 }]);
      expect(await q.stats()).toMatchObject({ parked: 0, parkedTypes: [], done: 1 });
      await q.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('resumes parked jobs on start when their handler is registered by then', async () => {
    open();
    const first = createJobQueue(db);
    const id = await first.enqueue('later', {});
    await first.start();
    await first.drain();
    await first.stop();
    expect((await db.jobs.get(id))?.status).toBe('parked');
    const second = createJobQueue(db);
    let ran = 0;
    second.register('later', async () => void (ran += 1));
    await second.start();
    await second.drain();
    expect(ran).toBe(1);
    expect((await db.jobs.get(id))?.status).toBe('done');
    await second.stop();
  });

  it('says whether foreground work runs, and whenForegroundIdle resolves when the last (nested) one ends', async () => {
    open();
    const q = createJobQueue(db);
    await q.start();
    expect(q.foregroundActive()).toBe(false);
    await q.whenForegroundIdle(); // at once
    const order: string[] = [];
    let endInner: () => void = () => undefined;
    let endOuter: () => void = () => undefined;
    const outer = q.runForeground(() => new Promise<void>((resolve) => (endOuter = resolve)));
    const inner = q.runForeground(() => new Promise<void>((resolve) => (endInner = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(q.foregroundActive()).toBe(true);
    const idle = q.whenForegroundIdle().then(() => order.push('idle'));
    endInner();
    await inner;
    order.push('inner done');
    expect(q.foregroundActive()).toBe(true);
    endOuter();
    await outer;
    await idle;
    expect(order).toEqual(['inner done', 'idle']);
    expect(q.foregroundActive()).toBe(false);
    await q.stop();
  });
});
