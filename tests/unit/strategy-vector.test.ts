/**
 * Vector memory: top-k similar past exchanges plus the last k exchanges. `searchExchanges` is the
 * dependency the core wires to long-term memory (embedding search); here it is a function over a
 * fixed list with given similarities, so the expected selection can be computed by hand.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createStrategy } from '../../src/memory/short-term';
import type { RetrievedExchange } from '../../src/model/context';
import { createHarness, type Harness } from '../../bench/data/strategy-harness';

let h: Harness;
afterEach(async () => h?.close());

describe('vector strategy', () => {
  it('returns the top-k retrieved exchanges (best first) that are not already in the recent window', async () => {
    const calls: { text: string; k: number; namespace: string }[] = [];
    let hits: RetrievedExchange[] = [];
    h = createHarness({
      searchExchanges: async (query) => {
        calls.push(query);
        return hits;
      },
    });
    await h.addConversation('c1', { kind: 'vector', k: 1, topK: 2 }, 'work');
    await h.addExchange('c1', 'u1', 'a1');
    const last = await h.addExchange('c1', 'u2', 'a2');
    hits = [
      { text: 'User: where do I live?\nAssistant: Porto.', conversationId: 'old', messageIds: ['o1', 'o2'], similarity: 0.71 },
      { text: 'User: u2\nAssistant: a2', conversationId: 'c1', messageIds: [last.userMessageId, last.assistantMessageId], similarity: 0.99 },
      { text: 'User: my cat?\nAssistant: Mochi.', conversationId: 'old2', messageIds: ['o3', 'o4'], similarity: 0.83 },
      { text: 'User: my cat?\nAssistant: Mochi.', conversationId: 'old3', messageIds: ['o5', 'o6'], similarity: 0.8 }, // same text: duplicate
      { text: 'User: weather\nAssistant: sunny', conversationId: 'old', messageIds: ['o7', 'o8'], similarity: 0.2 },
    ];
    const s = createStrategy({ kind: 'vector', k: 1, topK: 2 }, h.deps);
    const ctx = await s.load('c1', { userText: 'Tell me about my cat', budgetTokens: 1000 });
    // topK + k, since window hits are skipped; only the conversation's own namespace is searched.
    expect(calls).toEqual([{ text: 'Tell me about my cat', k: 3, namespace: 'work' }]);
    expect(ctx.retrieved.map((r) => r.similarity)).toEqual([0.83, 0.71]);
    expect(ctx.recent.map((m) => m.content)).toEqual(['u2', 'a2']);
    expect(ctx.summary).toBeNull();
  });

  it('still answers with the recent window when the search fails (no embedder yet)', async () => {
    h = createHarness({
      searchExchanges: async () => {
        throw new Error('embedder not loaded');
      },
    });
    await h.addConversation('c1', { kind: 'vector', k: 2, topK: 4 });
    await h.addExchange('c1', 'u1', 'a1');
    const ctx = await createStrategy({ kind: 'vector', k: 2, topK: 4 }, h.deps).load('c1', { userText: 'x', budgetTokens: 1000 });
    expect(ctx.retrieved).toEqual([]);
    expect(ctx.recent.map((m) => m.content)).toEqual(['u1', 'a1']);
  });
});
