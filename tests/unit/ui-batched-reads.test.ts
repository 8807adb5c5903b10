/** `BatchedReads` (src/ui/state/batched-reads.ts): one read per microtask, requests of at most `perRequest` ids, all-or-nothing results. */
import { describe, expect, it } from 'vitest';
import { BatchedReads } from '../../src/ui/state/batched-reads';

function setup(options: { perRequest: number; fail?: (ids: string[]) => boolean }) {
  const cache: Record<string, string | null> = {};
  const requests: string[][] = [];
  const reads = new BatchedReads<string>({
    perRequest: options.perRequest,
    isRead: (id) => id in cache,
    read: async (ids) => {
      requests.push(ids);
      if (options.fail?.(ids)) throw new Error('offline');
      return new Map(ids.filter((id) => !id.startsWith('gone')).map((id) => [id, `value of ${id}`]));
    },
    store: (results) => Object.assign(cache, results),
  });
  return { cache, requests, reads };
}

describe('BatchedReads', () => {
  it('joins the loads of one microtask into one read, split into requests of perRequest ids; missing ids are stored as null', async () => {
    const { cache, requests, reads } = setup({ perRequest: 2 });
    await Promise.all([reads.load(['a', 'b']), reads.load(['b', 'gone1']), reads.load(['c'])]);
    expect(requests).toEqual([
      ['a', 'b'],
      ['gone1', 'c'],
    ]);
    expect(cache).toEqual({ a: 'value of a', b: 'value of b', gone1: null, c: 'value of c' });
    // Read ids are not asked for again.
    await reads.load(['a', 'gone1']);
    expect(requests).toHaveLength(2);
  });

  it('stores nothing when one request of a read fails, and asks again on the next load', async () => {
    let failing = true;
    const { cache, requests, reads } = setup({ perRequest: 1, fail: (ids) => failing && ids[0] === 'b' });
    await expect(reads.load(['a', 'b'])).resolves.toBeUndefined();
    expect(cache).toEqual({});
    failing = false;
    await reads.load(['a', 'b']);
    expect(requests).toEqual([['a'], ['b'], ['a'], ['b']]);
    expect(cache).toEqual({ a: 'value of a', b: 'value of b' });
  });
});
