/**
 * Review store (src/ui/state/review.svelte.ts) against a fake messaging api
 * (tests/helpers/fake-api.ts: the core cannot run behind the panel's messaging in Node); the store
 * and the notices are the real ones.
 */
import { describe, expect, it } from 'vitest';
import type { SuggestionRecord } from '../../src/model/records';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createReviewStore } from '../../src/ui/state/review.svelte';
import { createFakeApi } from '../helpers/fake-api';

const suggestion = (id: string, text: string): SuggestionRecord => ({
  id,
  namespace: 'work',
  hash: id,
  status: 'pending',
  kind: 'fact',
  text,
  importance: 0.5,
  validFrom: null,
  validUntil: null,
  sourceConversationId: 'c1',
  sourceMessageIds: ['u1'],
  messageTime: 1,
  createdAt: 1,
});
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function setup() {
  const api = createFakeApi();
  let pending = [suggestion('s1', 'Keeps bees'), suggestion('s2', 'Plays cello')];
  api.on('review.status', () => ({ enabled: true, pending: pending.length }));
  api.on('review.suggestions', () => pending);
  api.on('review.recent', () => []);
  api.on('review.accept', ({ id }) => {
    pending = pending.filter((s) => s.id !== id);
    return null;
  });
  api.on('review.reject', ({ id }) => void (pending = pending.filter((s) => s.id !== id)));
  const notices = createNoticesStore();
  const review = createReviewStore({ ...api, notices, namespace: () => 'work' });
  return { api, review, notices };
}

describe('review store', () => {
  it('reads the badge count when an extraction ends (event.jobs) and the lists of the active namespace', async () => {
    const { api, review } = setup();
    review.listen();
    api.emit('event.jobs', {} as never);
    await flush();
    await flush();
    expect(review.enabled).toBe(true);
    expect(review.pending).toBe(2);
    expect(review.suggestions.map((s) => s.text)).toEqual(['Keeps bees', 'Plays cello']);
    expect(api.callsOf('review.status')).toEqual([{ namespace: 'work' }]);
    expect(api.callsOf('review.suggestions')).toEqual([{ namespace: 'work' }]);
  });

  it('accepts with the edited text, rejects, and the badge follows', async () => {
    const { api, review } = setup();
    await review.load();
    await review.accept('s1', { text: 'Keeps two hives' });
    expect(api.callsOf('review.accept')).toEqual([{ id: 's1', text: 'Keeps two hives' }]);
    expect(review.pending).toBe(1);
    await review.reject('s2');
    expect(api.callsOf('review.reject')).toEqual([{ id: 's2' }]);
    expect(review.pending).toBe(0);
    expect(review.suggestions).toEqual([]);
  });

  it('turns a failed choice into an error notice and keeps the list', async () => {
    const { api, review, notices } = setup();
    await review.load();
    api.on('review.accept', () => {
      throw new Error('core gone');
    });
    await review.accept('s1');
    expect(notices.list.map((n) => n.kind)).toEqual(['error']);
    expect(review.pending).toBe(2);
  });
});
