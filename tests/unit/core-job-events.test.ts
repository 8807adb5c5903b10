/**
 * The core's coalesced job-stats event (`events.jobs`, one per 250 ms of job changes): a failure
 * while reading or sending the stats is logged, never an unhandled rejection (Vitest fails the run
 * on one), and later job changes still send the event.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core-harness';

let started: TestCore | null = null;
afterEach(async () => {
  await started?.core.stop();
  await started?.db.delete();
  started = null;
  vi.restoreAllMocks();
});

describe('core job-stats event', () => {
  it('logs a failed send and keeps sending on later job changes', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const sent: number[] = [];
    let fail = true;
    started = await startTestCore({
      chat: () => null,
      embedder: () => null,
      events: {
        jobs: (stats) => {
          if (fail) {
            fail = false;
            throw new Error('port closed');
          }
          sent.push(stats.queued + stats.scheduled);
        },
      },
    });
    const { core } = started;
    await core.jobs.stop(); // keep the probe jobs queued
    await core.jobs.enqueue('probe', {});
    await vi.waitFor(() => expect(warn.mock.calls.some((c) => String(c[0]).includes('could not send the job stats event'))).toBe(true), { timeout: 2_000 });
    await core.jobs.enqueue('probe', {}, { dedupeKey: 'second' });
    await vi.waitFor(() => expect(sent.length).toBeGreaterThan(0), { timeout: 2_000 });
  });
});
