/**
 * What a retrieval reads after its search (issue 9: no O(N) reads per turn, batched keyed reads):
 * neighbour expansion and the past-round marks share one set of citing reads (`CitingReads`), and
 * each round's two adjacent messages come from one `[conversationId+seq]` range. Counted at
 * Dexie's own DBCore layer (a counting middleware: every `get`, `getMany`, `query`, `openCursor`
 * and `count` the tables receive), on a real store over fake-indexeddb with the hashed TEST
 * embedder; nothing is faked. The answers are compared with the steps run without sharing.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { RecallDB } from '../../src/db/schema';
import { markPastRounds, storeEpisodes } from '../../src/memory/long-term';
import { CitingReads, expandNeighbours } from '../../src/memory/long-term/retrieval/neighbours';
import { createMemoryStore, toView } from '../../src/memory/long-term/store';
import type { MessageRecord } from '../../src/model/records';
import type { RetrievedMemory } from '../../src/model/context';

const T = Date.UTC(2025, 2, 4, 12);
const ROUNDS = 10;
const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.delete();
});

/** A database whose DBCore requests are counted (`reads.n`), a store, one conversation of `ROUNDS` rounds, and a fact from round 4 closed by a contradiction. */
async function setUp() {
  const db = new RecallDB(`ltm-reads-${crypto.randomUUID()}`);
  dbs.push(db);
  const reads = { n: 0, transactions: 0, on: false };
  const counted = ['get', 'getMany', 'query', 'openCursor', 'count'] as const;
  db.use({
    stack: 'dbcore',
    name: 'count-requests',
    create: (down) => ({
      ...down,
      transaction: (...args: Parameters<typeof down.transaction>) => {
        if (reads.on) reads.transactions += 1;
        return down.transaction(...args);
      },
      table: (name) => {
        const table = down.table(name);
        const wrapped = { ...table };
        for (const method of counted) {
          const call = table[method].bind(table) as (req: never) => Promise<unknown>;
          (wrapped as Record<string, unknown>)[method] = (req: never) => {
            if (reads.on) reads.n += 1;
            return call(req);
          };
        }
        return wrapped;
      },
    }),
  });
  const store = await createMemoryStore({
    db,
    embedder: () => createHashedEmbedder(),
    now: () => T + 3_600_000,
    loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
  });
  const messages: MessageRecord[] = Array.from({ length: ROUNDS }, (_, i) => [
    {
      id: `u${i}`,
      conversationId: 'c1',
      seq: 2 * i,
      role: 'user' as const,
      content: `Question number ${i} about topic ${i}?`,
      createdAt: T + i * 60_000,
      status: 'complete' as const,
    },
    {
      id: `a${i}`,
      conversationId: 'c1',
      seq: 2 * i + 1,
      role: 'assistant' as const,
      content: `Answer number ${i}.`,
      createdAt: T + i * 60_000 + 1,
      status: 'complete' as const,
    },
  ]).flat();
  await db.messages.bulkPut(messages);
  await storeEpisodes(
    { store, db },
    Array.from({ length: ROUNDS }, (_, i) => ({ conversationId: 'c1', namespace: 'default', userMessageId: `u${i}`, assistantMessageId: `a${i}` })),
  );
  const { memory: fact } = await store.add(
    { namespace: 'default', kind: 'fact', text: 'Lives in Shenzhen', sourceConversationId: 'c1', sourceMessageIds: ['u4', 'a4'] },
    'test',
  );
  const { memory: newer } = await store.add({ namespace: 'default', kind: 'fact', text: 'Lives in Hangzhou' }, 'test');
  await store.invalidate(fact.id, T + 1_000_000, 'test', newer.id);
  await store.whenIndexed();
  const rounds = new Map((await db.memories.toArray()).filter((m) => m.kind === 'episodic').map((m) => [Number(m.sourceMessageIds[0]!.slice(1)), m] as const));
  return { db, reads, round: (i: number) => rounds.get(i)! };
}

describe('reads of one retrieval after its search', () => {
  it('neighbours and past-round marks: one range per round, each message’s citers read once — 22 requests for 3 hits instead of 31', async () => {
    const { db, reads, round } = await setUp();
    const now = T + 3_600_000;
    // Three hits that are not each other's neighbours (rounds 2, 5, 8): each has both neighbours.
    const hits: RetrievedMemory[] = [2, 5, 8].map((i, rank) => ({ memory: toView(round(i)), score: 1 - rank / 10, ranks: { lexical: rank + 1 } }));
    // Without sharing (each step on its own reads), as the reference answer.
    const reference = await markPastRounds(db, await expandNeighbours(db, hits, { now }), now);

    reads.n = 0;
    reads.on = true;
    const citing = new CitingReads(db);
    const shared = await markPastRounds(db, await expandNeighbours(db, hits, { now, citing }), now, citing);
    reads.on = false;

    expect(shared).toEqual(reference);
    expect(shared.map((r) => [r.memory.id, r.neighbours?.before?.id, r.neighbours?.after?.id])).toEqual(
      [2, 5, 8].map((i) => [round(i).id, round(i - 1).id, round(i + 1).id]),
    );
    // Round 4 (hit 5's previous round) states the closed fact: marked past.
    expect(shared[1]!.neighbours!.before!.pastSince).toBe(T + 1_000_000);
    // Counted by hand for 3 hits with both neighbours each (6 neighbour rounds, 18 distinct messages):
    // 1 getMany (the hits' first and last messages) + 6 citing reads of the hits' messages (asked
    // ahead) + 3 ranges (one per hit: both adjacent messages) + 6 citing reads of the adjacent
    // messages (the neighbour rounds) + 6 citing reads of the neighbours' other messages (marks).
    // Before: 1 getMany + 6 keyed message reads + 6 citing reads, then the marks read all 18 again.
    expect(reads.n).toBe(1 + 6 + 3 + 6 + 6);
  });

  it('the marks open no transaction when the expansion read every citer they need (hits whose neighbours are hits)', async () => {
    const { db, reads, round } = await setUp();
    const now = T + 3_600_000;
    // Rounds 3, 4, 5: each one's neighbours are among the hits, so the marks need only the hits' own messages' citers.
    const hits: RetrievedMemory[] = [4, 3, 5].map((i, rank) => ({ memory: toView(round(i)), score: 1 - rank / 10, ranks: { lexical: rank + 1 } }));
    const reference = await markPastRounds(db, await expandNeighbours(db, hits, { now }), now);
    const citing = new CitingReads(db);
    const expanded = await expandNeighbours(db, hits, { now, citing });
    reads.n = 0;
    reads.transactions = 0;
    reads.on = true;
    const marked = await markPastRounds(db, expanded, now, citing);
    reads.on = false;
    expect(marked).toEqual(reference);
    // Round 4 states the closed fact: marked past, from the citers the expansion read.
    expect(marked.find((r) => r.memory.id === round(4).id)!.memory.pastSince).toBe(T + 1_000_000);
    expect([reads.n, reads.transactions]).toEqual([0, 0]);
  });
});
