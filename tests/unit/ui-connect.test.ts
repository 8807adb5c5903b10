/** Reaching the core (src/ui/lib/connect.ts): polite retries and error classification. */
import { describe, expect, it } from 'vitest';
import { ensureCore, errorMessage, isConnectionError, retryDelayMs } from '../../src/ui/lib/connect';

describe('retryDelayMs', () => {
  it('doubles from 250 ms and caps at 4 s', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map(retryDelayMs)).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000]);
  });
});

describe('ensureCore', () => {
  it('retries until the core answers, waiting the backoff delays in between', async () => {
    const waits: number[] = [];
    const retries: [number, string][] = [];
    let calls = 0;
    const attempts = await ensureCore(
      async () => {
        calls += 1;
        if (calls < 4) throw new Error('Could not establish connection. Receiving end does not exist.');
        return { ready: true };
      },
      {
        sleep: async (ms) => void waits.push(ms),
        onRetry: (attempt, error) => retries.push([attempt, errorMessage(error)]),
      },
    );
    expect(attempts).toBe(4);
    expect(waits).toEqual([250, 500, 1000]);
    expect(retries.map(([n]) => n)).toEqual([1, 2, 3]);
    expect(retries[0]![1]).toContain('Receiving end does not exist');
  });

  it('answers at once when the core is up', async () => {
    const waits: number[] = [];
    expect(await ensureCore(async () => ({ ready: true }), { sleep: async (ms) => void waits.push(ms) })).toBe(1);
    expect(waits).toEqual([]);
  });

  it('gives up after maxAttempts with the last error', async () => {
    let n = 0;
    await expect(
      ensureCore(
        async () => {
          n += 1;
          throw new Error(`fail ${n}`);
        },
        { sleep: async () => undefined, maxAttempts: 3 },
      ),
    ).rejects.toThrow('fail 3');
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    const run = ensureCore(
      async () => {
        throw new Error('down');
      },
      {
        sleep: async () => controller.abort(new Error('panel closed')),
        signal: controller.signal,
      },
    );
    await expect(run).rejects.toThrow('panel closed');
  });
});

describe('isConnectionError', () => {
  it('recognizes Chrome runtime messaging failures', () => {
    expect(isConnectionError(new Error('Could not establish connection. Receiving end does not exist.'))).toBe(true);
    expect(isConnectionError(new Error('The message port closed before a response was received.'))).toBe(true);
    expect(isConnectionError(new Error('No response'))).toBe(true);
    expect(isConnectionError(new Error('Extension context invalidated.'))).toBe(true);
  });
  it('does not mistake a handler error for a lost connection', () => {
    expect(isConnectionError(new Error('WebGPU is not available on this device.'))).toBe(false);
    expect(isConnectionError(new Error('A memory needs some text'))).toBe(false);
  });
});

describe('errorMessage', () => {
  it('reads messages of errors, error-like objects and anything else', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage({ message: 'serialized' })).toBe('serialized');
    expect(errorMessage('plain')).toBe('plain');
  });
});
