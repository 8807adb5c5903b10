/**
 * The retrieval evaluation (format validation, metrics, ingestion through the pipeline, report)
 * and the benchmark data generator. Embeddings: the hashed n-gram TEST embedder.
 */
import { describe, expect, it } from 'vitest';
import 'fake-indexeddb/auto';
import { RecallDB } from '../../src/db/schema';
import { createJobQueue } from '../../src/jobs/queue';
import { createLongTermMemory, registerEpisodicJobs } from '../../src/memory/long-term';
import { createMemoryStore } from '../../src/memory/long-term/store';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import {
  EvalDatasetSchema,
  ingestDataset,
  parseEvalDataset,
  percentile,
  recallAtK,
  summarize,
  type QuestionResult,
  type EvalDataset,
} from '../../src/memory/long-term/retrieval/evaluate';
import { parseTimeFilter } from '../../src/memory/long-term/retrieval/time-filter';
import { formatReport, parseArgs, runEvaluation } from '../../scripts/eval-retrieval';
import { generateBenchmark, QUESTION_TIME, TIMELINE_END, TIMELINE_START } from '../../bench/data/generate';

const SMALL: EvalDataset = {
  version: 1,
  conversations: [
    {
      id: 'c1',
      sessions: [
        {
          id: 's1',
          date: '2025-01-06T09:00:00Z',
          turns: [
            { id: 't1', speaker: 'Lin', text: '我家的猫叫小白，刚满三岁。' },
            { id: 't2', speaker: 'Bot', text: '好可爱的名字！' },
            { id: 't3', speaker: 'Lin', text: 'I live in Shenzhen with my parents.' },
            { id: 't4', speaker: 'Bot', text: 'Nice city.' },
            { id: 't5', speaker: 'Lin', text: 'The printer at work is broken again.' },
          ],
        },
        {
          id: 's2',
          date: '2025-05-20T18:00:00Z',
          turns: [
            { id: 't6', speaker: 'user', role: 'user', text: 'I moved to Hangzhou, I live in Hangzhou now.' },
            { id: 't7', speaker: 'assistant', role: 'assistant', text: 'Congratulations on the move!' },
            { id: 't8', speaker: 'user', role: 'user', text: 'We watched a documentary about whales.' },
            { id: 't9', speaker: 'assistant', role: 'assistant', text: 'Whales are amazing.' },
          ],
        },
      ],
    },
  ],
  questions: [
    { id: 'q1', conversationId: 'c1', question: '我家的猫叫什么名字？', evidence: ['t1'], category: 'fact' },
    { id: 'q2', conversationId: 'c1', question: 'Which city do I live in now?', evidence: ['t6'], stale: ['t3'], category: 'update' },
    { id: 'q3', conversationId: 'c1', question: 'Is the printer broken?', evidence: ['t5'], category: 'fact' },
  ],
};

describe('evaluation format', () => {
  it('accepts a valid file and rejects malformed ones with a clear message', () => {
    expect(parseEvalDataset(JSON.stringify(SMALL)).questions).toHaveLength(3);
    expect(() => parseEvalDataset('{"version": 1,')).toThrow('Evaluation file is not valid JSON');
    expect(() => parseEvalDataset(JSON.stringify({ ...SMALL, version: 2 }))).toThrow(/version/);
    const badEvidence = { ...SMALL, questions: [{ ...SMALL.questions[0]!, evidence: ['nope'] }] };
    expect(() => parseEvalDataset(JSON.stringify(badEvidence))).toThrow('question "q1": unknown turn id "nope"');
    const badDate = structuredClone(SMALL);
    badDate.conversations[0]!.sessions[0]!.date = 'yesterday';
    expect(() => parseEvalDataset(JSON.stringify(badDate))).toThrow('conversations.0.sessions.0.date: not an ISO 8601 date');
    expect(() => parseEvalDataset(JSON.stringify({ ...SMALL, questions: [] }))).toThrow('questions: no questions: nothing to evaluate');
    const dupTurn = structuredClone(SMALL);
    dupTurn.conversations[0]!.sessions[1]!.turns[0]!.id = 't1';
    expect(EvalDatasetSchema.safeParse(dupTurn).success).toBe(false);
  });

  it('computes recall@k and nearest-rank percentiles', () => {
    const ranked = [['a', 'b'], ['c'], ['d', 'e']];
    expect(recallAtK(['c', 'e'], ranked, 1)).toBe(0);
    expect(recallAtK(['c', 'e'], ranked, 2)).toBe(0.5);
    expect(recallAtK(['c', 'e'], ranked, 3)).toBe(1);
    expect(recallAtK(['z'], ranked, 10)).toBe(0);
    // 10 values 1..10: p50 = 5th smallest, p95 = ceil(9.5) = 10th.
    const values = [7, 1, 9, 3, 5, 2, 8, 10, 4, 6];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 95)).toBe(10);
    expect(percentile([], 50)).toBe(0);
  });

  it('parses command-line arguments', () => {
    expect(parseArgs(['--input', 'x.json'])).toEqual({ input: 'x.json', k: 10, embedder: 'fixture-bert', mode: 'facade', out: null });
    expect(parseArgs(['--input', 'x.json', '--k', '20', '--embedder', 'hashed', '--mode', 'all', '--out', 'o.json'])).toEqual({
      input: 'x.json',
      k: 20,
      embedder: 'hashed',
      mode: 'all',
      out: 'o.json',
    });
    expect(() => parseArgs([])).toThrow('--input is required');
    expect(() => parseArgs(['--input', 'x', '--k', '0'])).toThrow('--k must be a positive integer');
    expect(() => parseArgs(['--input', 'x', '--embedder', 'gpt'])).toThrow('--embedder must be one of');
    expect(() => parseArgs(['--input', '--k'])).toThrow('--input needs a value');
  });
});

describe('evaluation run', () => {
  it('ingests rounds through the pipeline and scores every question', async () => {
    const run = await runEvaluation(SMALL, { k: 10, embedder: 'hashed', mode: 'all' });
    // Rounds: (t1,t2) (t3,t4) (t5 alone) (t6,t7) (t8,t9).
    expect(run.ingest).toMatchObject({ conversations: 1, messages: 9, rounds: 5, memories: 5, failedJobs: 0 });
    expect(run.runs.map((r) => r.mode)).toEqual([
      'hybrid (LongTermMemory.retrieve)',
      'lexical (store.search)',
      'vector (store.search)',
      'hybrid (store.search)',
    ]);
    const facade = run.runs[0]!;
    const byId = new Map(facade.results.map((r) => [r.id, r]));
    expect(byId.get('q1')).toMatchObject({ evidenceRank: 1, recall: { 1: 1, 5: 1, 10: 1 } });
    expect(byId.get('q1')!.ranking[0]!.sourceMessageIds).toEqual(['t1', 't2']);
    expect(byId.get('q3')!.ranking[0]!.sourceMessageIds).toEqual(['t5']);
    const q2 = byId.get('q2')!;
    expect(q2.evidenceRank).toBe(1);
    expect(q2.staleRank).toBe(2);
    expect(q2.updatedAboveStale).toBe(true);
    expect(facade.summary).toMatchObject({ questions: 3, ks: [1, 5, 10], recall: { 1: 1, 5: 1, 10: 1 }, updatedAboveStale: 1, updateQuestions: 1 });
    expect(facade.summary.byCategory).toEqual({
      fact: { questions: 2, recall: { 1: 1, 5: 1, 10: 1 }, mrr: 1 },
      update: { questions: 1, recall: { 1: 1, 5: 1, 10: 1 }, mrr: 1 },
    });
    expect(facade.summary.mrr).toBe(1);
    const report = formatReport(run);
    expect(report).toContain('memories: 5 (from 5 rounds, 0 failed jobs)');
    expect(report).toContain('updated value ranked above the stale one: 100.0 % of 1 questions');
    expect(report).toMatch(/latency: p50 [\d.]+ ms, p95 [\d.]+ ms/u);
  });
});

describe('ingestion replay clock', () => {
  it('stamps a merged duplicate with the replayed time, not the wall clock', async () => {
    const data: EvalDataset = {
      version: 1,
      conversations: [
        {
          id: 'c',
          sessions: [
            {
              id: 's1',
              date: '2024-03-01T09:00:00Z',
              turns: [
                { id: 'a1', speaker: 'u', text: 'Good morning' },
                { id: 'a2', speaker: 'b', text: 'Morning!' },
              ],
            },
            {
              id: 's2',
              date: '2024-09-10T09:00:00Z',
              turns: [
                { id: 'b1', speaker: 'u', text: 'Good morning' },
                { id: 'b2', speaker: 'b', text: 'Morning!' },
              ],
            },
          ],
        },
      ],
      questions: [],
    };
    const db = new RecallDB(`replay-${crypto.randomUUID()}`);
    try {
      let replayNow = Date.now();
      const times: number[] = [];
      const embedder = createHashedEmbedder();
      const store = await createMemoryStore({ db, embedder: () => embedder, loadVoyWasm: nodeVoyWasm, now: () => replayNow });
      const jobs = createJobQueue(db);
      registerEpisodicJobs(jobs, { store, db });
      const longTerm = createLongTermMemory({ store, jobs, db });
      await jobs.start();
      await ingestDataset(data, { db, jobs, longTerm, setTime: (t) => times.push((replayNow = t)) });
      await jobs.stop();
      // The clock is set before each round to its reply's time (turns without dates are
      // TURN_SPACING_MS = 60 s apart). Jobs run in the background as rounds are handed over, so a
      // job is stamped with the time of its round or, at most one drain later, a later round.
      const first = Date.parse('2024-03-01T09:01:00Z');
      const last = Date.parse('2024-09-10T09:01:00Z');
      expect(times).toEqual([first, last]);
      const [memory] = await db.memories.toArray();
      expect(memory).toMatchObject({ sourceMessageIds: ['a1', 'a2', 'b1', 'b2'], createdAt: Date.parse('2024-03-01T09:00:00Z'), updatedAt: last });
      const history = (await db.memoryHistory.where('memoryId').equals(memory!.id).toArray()).map((h) => [h.event, h.at]);
      expect(history).toHaveLength(2);
      expect(history[0]![0]).toBe('ADD');
      expect([first, last]).toContain(history[0]![1]);
      expect(history[1]).toEqual(['MERGE', last]);
    } finally {
      await db.delete();
    }
  });
});

describe('benchmark generator', () => {
  const data = generateBenchmark({ rounds: 600, seed: 3 });

  it('is deterministic and valid', () => {
    expect(JSON.stringify(generateBenchmark({ rounds: 600, seed: 3 }))).toBe(JSON.stringify(data));
    expect(JSON.stringify(generateBenchmark({ rounds: 600, seed: 4 }))).not.toBe(JSON.stringify(data));
    expect(EvalDatasetSchema.safeParse(data).success).toBe(true);
    expect(() => generateBenchmark({ rounds: 100 })).toThrow('at least 200 rounds');
  });

  it('has the planted content and the requested number of rounds, in both languages', () => {
    const turns = data.conversations[0]!.sessions.flatMap((s) => s.turns);
    expect(turns.filter((t) => t.role === 'user')).toHaveLength(600);
    expect(turns).toHaveLength(1200);
    const count = (c: string) => data.questions.filter((q) => q.category === c).length;
    expect([count('fact'), count('cross-lingual'), count('update'), count('temporal'), count('event')]).toEqual([48, 8, 24, 10, 12]);
    expect([count('next-turn'), count('paraphrase'), count('relative')]).toEqual([4, 4, 3]);
    expect(new Set(turns.map((t) => `${t.speaker}/${t.role}`))).toEqual(new Set(['Mia/user', 'Jonas/assistant']));
    expect(turns.filter((t) => t.role === 'assistant' && /Thanks, Mia!|谢谢你，米娅/u.test(t.text)).length).toBeGreaterThan(10);
    expect(new Set(data.questions.map((q) => q.language))).toEqual(new Set(['en', 'zh']));
    expect(turns.some((t) => /[\u4e00-\u9fff]/u.test(t.text)) && turns.some((t) => /^[\x20-\x7e]+$/u.test(t.text))).toBe(true);
    for (const t of turns) {
      const at = Date.parse(t.date!);
      expect(at).toBeGreaterThanOrEqual(TIMELINE_START);
      expect(at).toBeLessThan(TIMELINE_END + 2 * 86_400_000);
    }
  });

  it('places every temporal evidence turn inside the range its question names', () => {
    const turns = new Map(data.conversations[0]!.sessions.flatMap((s) => s.turns).map((t) => [t.id, t]));
    for (const q of data.questions.filter((x) => x.category === 'temporal')) {
      const filter = parseTimeFilter(q.question, QUESTION_TIME);
      expect(filter, q.question).not.toBeNull();
      const at = Date.parse(turns.get(q.evidence[0]!)!.date!);
      expect(at >= filter!.start && at < filter!.end, `${q.question}: ${turns.get(q.evidence[0]!)!.date}`).toBe(true);
    }
  });

  it("puts each next-turn answer in the user's turn right after the other speaker's question", () => {
    const turns = data.conversations[0]!.sessions.flatMap((s) => s.turns);
    const at = new Map(turns.map((t, i) => [t.id, i]));
    for (const q of data.questions.filter((x) => x.category === 'next-turn')) {
      const i = at.get(q.evidence[0]!)!;
      expect(turns[i]!.text, q.question).toContain(q.answer!);
      expect(turns[i - 1]!.role).toBe('assistant');
      expect(turns[i - 1]!.text).toMatch(/\?|？/u); // the other speaker's question, the turn before
      expect(turns[i - 1]!.text).not.toContain(q.answer!);
    }
  });

  it('puts stale evidence before the update it is replaced by', () => {
    const turns = new Map(data.conversations[0]!.sessions.flatMap((s) => s.turns).map((t) => [t.id, t]));
    for (const q of data.questions.filter((x) => x.stale)) {
      expect(Date.parse(turns.get(q.stale![0]!)!.date!)).toBeLessThan(Date.parse(turns.get(q.evidence[0]!)!.date!));
    }
  });
});

describe('summarize', () => {
  it('computes MRR from the first evidence rank (0 when not retrieved), overall and per category', () => {
    const result = (id: string, category: string, evidenceRank: number | null, r1: number) =>
      ({
        id,
        question: id,
        category,
        language: null,
        evidence: ['e'],
        stale: [],
        recall: { 1: r1, 5: evidenceRank ? 1 : 0 },
        evidenceRank,
        staleRank: null,
        updatedAboveStale: null,
        latencyMs: 1,
        ranking: [],
      }) as QuestionResult;
    const summary = summarize([result('a', 'x', 1, 1), result('b', 'x', 4, 0), result('c', 'y', null, 0), result('d', 'y', 2, 0)], [1, 5]);
    // (1 + 1/4 + 0 + 1/2) / 4 = 0.4375; x: (1 + 0.25) / 2 = 0.625; y: (0 + 0.5) / 2 = 0.25.
    expect(summary.mrr).toBeCloseTo(0.4375, 10);
    expect(summary.byCategory.x!.mrr).toBeCloseTo(0.625, 10);
    expect(summary.byCategory.y!.mrr).toBeCloseTo(0.25, 10);
  });
});
