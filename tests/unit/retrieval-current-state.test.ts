/**
 * The current-state weighting ("… now?", "现在…": recency up to +1) applies to the asked slot's
 * memories when the query names a slot, not to every recent memory that shares a word
 * (`weightingForCandidate`). Real store (Dexie on fake-indexeddb, MiniSearch), lexical search; nothing faked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecallDB } from '../../src/db/schema';
import { CURRENT_STATE_WEIGHTING, DEFAULT_WEIGHTING, weightingForCandidate } from '../../src/memory/long-term/retrieval/fusion';
import { openTestStore } from '../helpers/ltm-test-store';

describe('weightingForCandidate', () => {
  it('keeps the current-state weighting for the asked slot, the near-tie weighting for the rest; a query naming no slot keeps it for all', () => {
    expect(weightingForCandidate(CURRENT_STATE_WEIGHTING, true, true)).toBe(CURRENT_STATE_WEIGHTING);
    expect(weightingForCandidate(CURRENT_STATE_WEIGHTING, true, false)).toBe(DEFAULT_WEIGHTING);
    expect(weightingForCandidate(CURRENT_STATE_WEIGHTING, false, false)).toBe(CURRENT_STATE_WEIGHTING);
    expect(weightingForCandidate(DEFAULT_WEIGHTING, true, false)).toBe(DEFAULT_WEIGHTING);
  });
});

describe('a "now" question about a slot (real store, lexical)', () => {
  const dbs: RecallDB[] = [];
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.delete();
  });
  const DAY = 86_400_000;
  const NOW = Date.UTC(2025, 6, 2, 10);

  it('the newest statement of the asked slot ranks above recent rounds that only share a word', async () => {
    const { db, store, setNow } = await openTestStore({ now: NOW, embedder: null, name: 'current-state' });
    dbs.push(db);
    const add = async (user: string, daysAgo: number) => {
      setNow(NOW - daysAgo * DAY);
      return (await store.add({ namespace: 'default', kind: 'episodic', text: `User: ${user}\nAssistant: 好的。`, createdAt: NOW - daysAgo * DAY }, 'test'))
        .memory;
    };
    await add('我的领导是陈总。', 346);
    const current = await add('陈总调走了，我现在的领导是黄总。', 140);
    for (const [i, thing] of ['打印机', '显示器', '台灯', '耳机', '背包'].entries()) await add(`现在买${thing}还是等打折？`, 5 + i);
    setNow(NOW);
    const hits = await store.search({ text: '我现在向谁汇报？', namespace: 'default', k: 3 }, { mode: 'lexical' });
    expect(hits[0]?.memory.id).toBe(current.id);
  });
});
