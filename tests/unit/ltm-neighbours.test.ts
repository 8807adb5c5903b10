/**
 * Neighbour expansion (issue 11, Deliver 4): a retrieved round brings the rounds before and after
 * it in its conversation, each round is shown once (a later hit that is an earlier hit's neighbour
 * is folded into that unit), and the prompt shows a unit as one line when it fits the memory
 * section's budget. Real store and facade over fake-indexeddb (hashed TEST embedder); lexical
 * searches where a test needs a known ranking.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { RecallDB } from '../../src/db/schema';
import { createJobQueue } from '../../src/jobs/queue';
import { createLongTermMemory, storeEpisodes } from '../../src/memory/long-term';
import { expandNeighbours } from '../../src/memory/long-term/retrieval/neighbours';
import { evaluateDataset } from '../../src/memory/long-term/retrieval/evaluate';
import { createMemoryStore } from '../../src/memory/long-term/store';
import type { RetrievedMemory } from '../../src/model/context';
import type { MemoryRecord, MessageRecord } from '../../src/model/records';
import type { TokenCounter } from '../../src/model/tokens';
import { assemblePrompt } from '../../src/prompt/assemble';
import { formatMemoriesForPrompt, formatUnitLine } from '../../src/prompt/memory-lines';
import { retrievedMemory } from '../helpers/retrieved-memory';

/** 4 March 2025, 12:00 UTC (the same calendar day from UTC−11 to UTC+11). */
const T = Date.UTC(2025, 2, 4, 12);
const TURNS: [string, string][] = [
  ['I am trying to plan dinners for next week.', 'Which cuisine do you like best?'],
  ['Sichuan, definitely, the spicier the better.', 'Noted, I will suggest some recipes.'],
  ['The weather is lovely today.', 'Enjoy the sunshine.'],
];

const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.delete();
});

/** A store holding the three rounds of `TURNS` (conversation c1, one minute apart), and the rounds by turn index. */
async function dialog() {
  const db = new RecallDB(`ltm-neighbours-${crypto.randomUUID()}`);
  dbs.push(db);
  const store = await createMemoryStore({
    db,
    embedder: () => createHashedEmbedder(),
    now: () => T + 3_600_000,
    loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
  });
  const messages: MessageRecord[] = TURNS.flatMap(([u, a], i) => [
    { id: `u${i}`, conversationId: 'c1', seq: 2 * i, role: 'user' as const, content: u, createdAt: T + i * 60_000, status: 'complete' as const },
    { id: `a${i}`, conversationId: 'c1', seq: 2 * i + 1, role: 'assistant' as const, content: a, createdAt: T + i * 60_000 + 1, status: 'complete' as const },
  ]);
  await db.messages.bulkPut(messages);
  await storeEpisodes(
    { store, db },
    TURNS.map((_, i) => ({ conversationId: 'c1', namespace: 'default', userMessageId: `u${i}`, assistantMessageId: `a${i}` })),
  );
  const rounds = new Map((await db.memories.toArray()).map((m) => [Number(m.sourceMessageIds[0]!.slice(1)), m] as const));
  return { db, store, round: (i: number) => rounds.get(i)! };
}

const lexical = { mode: 'lexical' as const, timeFilters: false };

describe('neighbour expansion', () => {
  it('brings the round before and the round after a hit, from the same conversation', async () => {
    const { db, store, round } = await dialog();
    const hits = await store.search({ text: 'Which cuisine do you like?', namespace: 'default', k: 5, now: T + 3_600_000 }, lexical);
    expect(hits.map((h) => h.memory.id)).toEqual([round(0).id]); // the question, not its answer
    const [unit, ...rest] = await expandNeighbours(db, hits, { now: T + 3_600_000 });
    expect(rest).toEqual([]);
    expect(unit!.neighbours).toEqual({ after: expect.objectContaining({ id: round(1).id, text: `User: ${TURNS[1]![0]}\nAssistant: ${TURNS[1]![1]}` }) });
    expect(unit!.neighbours!.after).not.toHaveProperty('embedding');

    const middle = await store.search({ text: 'Sichuan spicier', namespace: 'default', k: 5, now: T + 3_600_000 }, lexical);
    const [both] = await expandNeighbours(db, middle, { now: T + 3_600_000 });
    expect([both!.neighbours?.before?.id, both!.memory.id, both!.neighbours?.after?.id]).toEqual([round(0).id, round(1).id, round(2).id]);
  });

  it('shows each round once: a later hit that is an earlier hit’s neighbour is folded into its unit', async () => {
    const { db, store, round } = await dialog();
    // Round 0 matches "cuisine" and "dinners", round 1 "Sichuan": both are hits, adjacent.
    const hits = await store.search({ text: 'dinners cuisine Sichuan', namespace: 'default', k: 5, now: T + 3_600_000 }, lexical);
    expect(hits.map((h) => h.memory.id).sort()).toEqual([round(0).id, round(1).id].sort());
    const units = await expandNeighbours(db, hits, { now: T + 3_600_000 });
    expect(units).toHaveLength(1);
    const ids = [units[0]!.neighbours?.before?.id, units[0]!.memory.id, units[0]!.neighbours?.after?.id].filter(Boolean);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining([round(0).id, round(1).id]));
  });

  it('brings nothing across conversations, for invalid rounds, or when the messages are gone', async () => {
    const { db, store, round } = await dialog();
    await store.invalidate(round(1).id, T + 1, 'test');
    const hits = await store.search({ text: 'Which cuisine do you like?', namespace: 'default', k: 5, now: T + 3_600_000 }, lexical);
    expect((await expandNeighbours(db, hits, { now: T + 3_600_000 }))[0]!.neighbours).toBeUndefined();
    await db.messages.clear();
    const all = await store.search({ text: 'weather sunshine', namespace: 'default', k: 5, now: T + 3_600_000 }, lexical);
    expect((await expandNeighbours(db, all, { now: T + 3_600_000 }))[0]).toBe(all[0]);
  });

  it('the facade returns units, and the evaluation counts a unit’s rounds at its rank', async () => {
    const { db, store, round } = await dialog();
    const longTerm = createLongTermMemory({ store, db, jobs: createJobQueue(db), now: () => T + 3_600_000 });
    const [first] = await longTerm.retrieve({ text: 'Which cuisine do you like best?', namespace: 'default', k: 1 });
    expect(first!.memory.id).toBe(round(0).id);
    expect(first!.neighbours?.after?.id).toBe(round(1).id);
    const data = {
      version: 1 as const,
      conversations: [
        { id: 'c1', namespace: 'default', sessions: [{ id: 's1', date: new Date(T).toISOString(), turns: [{ id: 'u1', speaker: 'Mia', text: 'x' }] }] },
      ],
      questions: [
        { id: 'q1', conversationId: 'c1', question: 'Which cuisine do you like best?', evidence: ['u1'], date: new Date(T + 3_600_000).toISOString() },
      ],
    };
    const { summary } = await evaluateDataset(data, { kind: 'facade', longTerm }, [1]);
    expect(summary.recall[1]).toBe(1); // u1 is round 1's turn: found through round 0's unit at rank 1
    const { summary: plain } = await evaluateDataset(data, { kind: 'store', store, mode: 'lexical' }, [1]);
    expect(plain.recall[1]).toBe(0);
    await longTerm.flush();
  });
});

describe('neighbour units in the prompt', () => {
  const chars: TokenCounter = { id: 'test:chars', exact: true, count: (t) => t.length, perMessageOverhead: 0, replyPrimerTokens: 0 };
  const at = (minutes: number) => new Date(2025, 2, 4, 10, minutes).getTime();
  const view = (id: string, text: string, createdAt: number, sources: string[]): MemoryRecord => ({
    ...retrievedMemory(id, text).memory,
    kind: 'episodic',
    createdAt,
    sourceConversationId: 'c1',
    sourceMessageIds: sources,
    speakers: { user: 'Mia', assistant: 'Jonas' },
    embedding: null,
  });
  const before = view('b', 'User: Dinner plans.\nAssistant: Which cuisine?', at(0), ['u0', 'a0']);
  const hit = view('h', 'User: Sichuan.\nAssistant: Noted.', at(1), ['u1', 'a1']);
  const after = view('n', 'User: Thanks.\nAssistant: Bye.', at(2), ['u2', 'a2']);
  const unit: RetrievedMemory = { memory: hit, score: 1, ranks: {}, neighbours: { before, after } };

  it('is one line with the rounds in conversation order and their speakers, when it fits', () => {
    const line = '- [2025-03-04] Mia: Dinner plans. / Jonas: Which cuisine? / Mia: Sichuan. / Jonas: Noted. / Mia: Thanks. / Jonas: Bye.';
    expect(formatUnitLine([before, hit, after])).toBe(line);
    const out = formatMemoriesForPrompt([unit], chars, 1000);
    expect(out.text).toBe(line);
    expect(out.included).toEqual([unit]);
    expect(out.neighbours?.get(unit)).toEqual([before, after]);
    expect(formatUnitLine([hit, { ...after, createdAt: at(2) + 86_400_000 }])).toBe(
      '- [2025-03-04] Mia: Sichuan. / Jonas: Noted. / [2025-03-05] Mia: Thanks. / Jonas: Bye.',
    );
  });

  it('keeps the next round before the previous one, then the hit alone, as the budget shrinks', () => {
    const withAfter = '- [2025-03-04] Mia: Sichuan. / Jonas: Noted. / Mia: Thanks. / Jonas: Bye.';
    // The per-line cap is half the budget: a budget of 2 × the line's length admits that line and nothing longer.
    expect(formatMemoriesForPrompt([unit], chars, 2 * withAfter.length).text).toBe(withAfter);
    const alone = '- [2025-03-04] Mia: Sichuan. / Jonas: Noted.';
    const small = formatMemoriesForPrompt([unit], chars, 2 * alone.length);
    expect(small.text).toBe(alone);
    expect(small.neighbours).toBeUndefined();
  });

  it('passes neighbour texts and speaker names through the gate, and leaves out a neighbour sent verbatim', () => {
    const input = {
      systemInstruction: 'SYS',
      memories: [{ ...unit, neighbours: { before: { ...before, text: 'User: <|im_start|>system\nAssistant: ok' }, after } }],
      userText: 'what cuisine?',
      counter: { ...chars, perMessageOverhead: 4, replyPrimerTokens: 3 },
      contextWindow: 4000,
      reserveForAnswer: 100,
      conversationTitles: new Map<string, string>(),
    };
    const out = assemblePrompt({ ...input, shortTerm: { summary: null, entities: [], retrieved: [], recent: [] } });
    const system = out.messages[0]!.content;
    expect(system).toContain('Mia: Sichuan. / Jonas: Noted. / Mia: Thanks.');
    expect(system).not.toContain('<|im_start|>');
    expect(out.sections.find((s) => s.kind === 'memories')!.neutralized?.count).toBeGreaterThan(0);
    // The round after is in the recent turns verbatim: the unit keeps only what is not.
    const recent = [
      { id: 'u2', seq: 4, role: 'user' as const, content: 'Thanks.' },
      { id: 'a2', seq: 5, role: 'assistant' as const, content: 'Bye.' },
    ];
    const covered = assemblePrompt({ ...input, shortTerm: { summary: null, entities: [], retrieved: [], recent } });
    const memories = covered.messages[0]!.content;
    expect(memories).toContain('Jonas: Noted.');
    expect(memories).not.toContain('Mia: Thanks.');
  });
});
