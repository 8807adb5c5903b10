/**
 * Retrieval evaluation over the documented conversation format (docs/eval-format.md), used by
 * `npm run eval:retrieval` and the retrieval benchmark. It ingests conversations through the
 * real memory pipeline — messages stored as the chat service stores them, then
 * `LongTermMemory.onExchange` per round, the persisted job queue with the registered handlers,
 * drained — and asks each question through `LongTermMemory.retrieve` (or the store's search in a
 * given mode), measuring recall@k of the evidence turns (LoCoMo's retrieval metric: the share of
 * a question's evidence turns found among the source turns of the top-k memories — a memory's
 * own and those of the adjacent rounds retrieval attached to it, `RetrievedMemory.neighbours`) and latency.
 *
 * Runs wherever Dexie runs (browser, or Node with fake-indexeddb); no file access here.
 *
 * Over 300 lines: the input schema, the ingest replay and the per-category metrics (recall@k,
 * MRR) are one pipeline whose parts only this file uses.
 */
import { z } from 'zod';
import type { RecallDB } from '../../../db/schema';
import { MESSAGE_ROLES, type MessageRecord } from '../../../model/records';
import type { JobQueue } from '../../../jobs/queue';
import { DEFAULT_STRATEGY } from '../../../model/strategies';
import type { ExchangeInput, LongTermMemory, LongTermStore, RetrievalMode, SearchOptions } from '../types';
import type { RetrievedMemory } from '../../../model/context';

const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: 'not an ISO 8601 date' });

/** zod schema of the evaluation file (see docs/eval-format.md). */
export const EvalDatasetSchema = z
  .object({
    format: z.literal('recall-retrieval-eval').optional(),
    version: z.literal(1),
    description: z.string().optional(),
    conversations: z
      .array(
        z.object({
          id: z.string().min(1),
          namespace: z.string().min(1).optional(),
          title: z.string().optional(),
          sessions: z.array(
            z.object({
              id: z.string().min(1),
              date: isoDate,
              turns: z.array(
                z.object({
                  id: z.string().min(1),
                  speaker: z.string().min(1),
                  text: z.string(),
                  role: z.enum(MESSAGE_ROLES).optional(),
                  date: isoDate.optional(),
                }),
              ),
            }),
          ),
        }),
      )
      .min(1),
    questions: z
      .array(
        z.object({
          id: z.string().min(1),
          conversationId: z.string().min(1),
          question: z.string().min(1),
          evidence: z.array(z.string().min(1)).min(1),
          stale: z.array(z.string().min(1)).optional(),
          date: isoDate.optional(),
          category: z.string().optional(),
          language: z.string().optional(),
          answer: z.string().optional(),
        }),
      )
      .min(1, 'no questions: nothing to evaluate'),
  })
  .superRefine((data, ctx) => {
    const turnIds = new Set<string>();
    const conversations = new Set<string>();
    for (const c of data.conversations) {
      if (conversations.has(c.id)) ctx.addIssue({ code: 'custom', message: `duplicate conversation id "${c.id}"` });
      conversations.add(c.id);
      for (const s of c.sessions)
        for (const t of s.turns) {
          if (turnIds.has(t.id)) ctx.addIssue({ code: 'custom', message: `duplicate turn id "${t.id}"` });
          turnIds.add(t.id);
        }
    }
    for (const q of data.questions) {
      if (!conversations.has(q.conversationId)) ctx.addIssue({ code: 'custom', message: `question "${q.id}": unknown conversation "${q.conversationId}"` });
      for (const id of [...q.evidence, ...(q.stale ?? [])])
        if (!turnIds.has(id)) ctx.addIssue({ code: 'custom', message: `question "${q.id}": unknown turn id "${id}"` });
    }
  });

/** An evaluation data set (validated). */
export type EvalDataset = z.infer<typeof EvalDatasetSchema>;
/** One question of a data set. */
export type EvalQuestion = EvalDataset['questions'][number];

/**
 * Parses and validates an evaluation file.
 * @throws Error naming the first problems (path and message) when the JSON is malformed or invalid.
 */
export function parseEvalDataset(json: string): EvalDataset {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw new Error(`Evaluation file is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = EvalDatasetSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`Evaluation file does not match docs/eval-format.md:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

/** Milliseconds between two consecutive turns of a session when turns carry no date. */
export const TURN_SPACING_MS = 60_000;

/** Rounds stored per batch by `ingestDataset` in bulk mode. */
export const INGEST_BATCH = 25;

/** Report of `ingestDataset`. */
export interface IngestReport {
  conversations: number;
  messages: number;
  /** Exchanges handed to `onExchange` (rounds). */
  rounds: number;
  /** Memories in the store afterwards. */
  memories: number;
  /** Jobs that failed (should be 0). */
  failedJobs: number;
  /** Wall time of the whole ingestion (ms). */
  ms: number;
}

/**
 * Ingests the conversations through the memory pipeline:
 * 1. conversations and messages are written as the chat service writes them (role = the turn's
 *    `role`, else alternating user/assistant from the first turn of each session; time = the
 *    turn's `date`, else the session date + `TURN_SPACING_MS` per turn; `speaker` = the turn's
 *    named speaker, which the episodic rounds carry into their indexed text);
 * 2. each round (a user turn and the assistant turn that follows it, if any) is handed to
 *    `longTerm.onExchange`, which enqueues the persisted jobs;
 * 3. the job queue (started by the caller, with handlers registered) is drained every 25 rounds
 *    and after each conversation. With no language model, `ltm.extract` jobs have no runnable
 *    handler and the rounds are stored as episodic memories by `ltm.episodic`.
 * Replay clock: before each round is handed over, `deps.setTime` (when given) receives the time
 * of its latest message, so a store whose `now` follows it stamps what the jobs change (an exact
 * duplicate merged into an earlier memory: `updatedAt`, history times, validity checks) with the
 * replayed time — that of the round being handed over while the job runs, at most 25 rounds
 * (one drain) late — instead of the wall clock of the run, which would make every merged memory
 * look newer than the questions and win every recency weighting.
 * A user turn without a reply is handed over with `assistantMessageId = '<user turn id>:no-reply'`
 * (no such message: the episodic job stores the user turn alone).
 * Bulk mode (`deps.storeEpisodes`, what `eval:retrieval` and the benchmarks use): steps 2–3 are
 * replaced by storing each batch of `INGEST_BATCH` rounds with `storeEpisodes` (the episodic
 * job's work for the batch: one message read, one embedding call, one transaction) with the replay
 * clock at the batch's latest message; nothing is enqueued — extraction needs a language model,
 * and none runs in Node. Same memories as the job path, about an order of magnitude faster.
 * @param onProgress called after each conversation with (rounds done, rounds total).
 */
export async function ingestDataset(
  data: EvalDataset,
  deps: {
    db: RecallDB;
    jobs: JobQueue;
    longTerm: LongTermMemory;
    onProgress?: (done: number, total: number) => void;
    setTime?: (ms: number) => void;
    /** Bulk mode (see above): `storeEpisodes` of `src/memory/long-term` bound to the store and database. */
    storeEpisodes?: (exchanges: ExchangeInput[]) => Promise<void>;
  },
): Promise<IngestReport> {
  const started = performance.now();
  const { db, jobs, longTerm } = deps;
  let messages = 0;
  let rounds = 0;
  const total = data.conversations.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
  let turnsDone = 0;
  for (const conversation of data.conversations) {
    const namespace = conversation.namespace ?? conversation.id;
    const records: MessageRecord[] = [];
    const exchanges: { userMessageId: string; assistantMessageId: string }[] = [];
    let seq = 0;
    for (const session of conversation.sessions) {
      const base = Date.parse(session.date);
      session.turns.forEach((turn, i) => {
        const role = turn.role ?? (i % 2 === 0 ? 'user' : 'assistant');
        records.push({
          id: turn.id,
          conversationId: conversation.id,
          seq: seq++,
          role,
          content: turn.text,
          createdAt: turn.date ? Date.parse(turn.date) : base + i * TURN_SPACING_MS,
          status: 'complete',
          speaker: turn.speaker,
        });
      });
      for (let i = 0; i < session.turns.length; i += 1) {
        const turn = session.turns[i]!;
        const role = turn.role ?? (i % 2 === 0 ? 'user' : 'assistant');
        if (role !== 'user') continue;
        const next = session.turns[i + 1];
        const nextRole = next ? (next.role ?? ((i + 1) % 2 === 0 ? 'user' : 'assistant')) : null;
        exchanges.push({ userMessageId: turn.id, assistantMessageId: next && nextRole === 'assistant' ? next.id : `${turn.id}:no-reply` });
      }
    }
    const first = records[0]?.createdAt ?? 0;
    const last = records[records.length - 1]?.createdAt ?? first;
    await db.conversations.put({
      id: conversation.id,
      title: conversation.title ?? conversation.id,
      namespace,
      strategy: DEFAULT_STRATEGY,
      createdAt: first,
      updatedAt: last,
    });
    await db.messages.bulkPut(records);
    messages += records.length;
    const timeOf = new Map(records.map((r) => [r.id, r.createdAt]));
    let latest = first;
    const storeEpisodes = deps.storeEpisodes;
    if (storeEpisodes) {
      for (let start = 0; start < exchanges.length; start += INGEST_BATCH) {
        const batch = exchanges.slice(start, start + INGEST_BATCH).map((e) => ({ conversationId: conversation.id, namespace, ...e }));
        for (const e of batch) latest = Math.max(latest, timeOf.get(e.userMessageId) ?? latest, timeOf.get(e.assistantMessageId) ?? latest);
        deps.setTime?.(latest);
        await storeEpisodes(batch);
        rounds += batch.length;
      }
      turnsDone += records.length;
      deps.onProgress?.(turnsDone, total);
      continue;
    }
    for (const exchange of exchanges) {
      latest = Math.max(latest, timeOf.get(exchange.userMessageId) ?? latest, timeOf.get(exchange.assistantMessageId) ?? latest);
      deps.setTime?.(latest);
      await longTerm.onExchange({ conversationId: conversation.id, namespace, ...exchange });
      rounds += 1;
      // Drain every 25 rounds: in the app jobs run between turns; a long backlog makes every
      // queue step re-read all due jobs (measured: 200 rounds per drain was 3.6× slower than 25).
      if (rounds % 25 === 0) await jobs.drain();
    }
    await jobs.drain();
    turnsDone += records.length;
    deps.onProgress?.(turnsDone, total);
  }
  const stats = await jobs.stats();
  return {
    conversations: data.conversations.length,
    messages,
    rounds,
    memories: await db.memories.count(),
    failedJobs: stats.failed,
    ms: performance.now() - started,
  };
}

/** Per-question result. */
export interface QuestionResult {
  id: string;
  question: string;
  category: string;
  language: string | null;
  evidence: string[];
  stale: string[];
  /** Recall of the evidence turns among the sources of the top-k memories, per k. */
  recall: Record<number, number>;
  /** 1-based rank of the first memory holding an evidence turn (`null`: not retrieved). */
  evidenceRank: number | null;
  /** 1-based rank of the first memory holding a stale turn (`null`: not retrieved). */
  staleRank: number | null;
  /** For questions with `stale` turns: evidence ranked above the stale value (a stale value not retrieved counts as below). */
  updatedAboveStale: boolean | null;
  latencyMs: number;
  ranking: { memoryId: string; sourceMessageIds: string[]; score: number; ranks: RetrievedMemory['ranks']; text: string }[];
}

/** Aggregate of `evaluateDataset`. */
export interface EvalSummary {
  questions: number;
  ks: number[];
  /** Mean recall@k over questions, per k. */
  recall: Record<number, number>;
  /**
   * Mean reciprocal rank: mean over questions of 1 / (rank of the first memory holding an
   * evidence turn), 0 when none is among the top max(ks) (so MRR is cut at that depth).
   */
  mrr: number;
  /** Recall@k and MRR per category. */
  byCategory: Record<string, { questions: number; recall: Record<number, number>; mrr: number }>;
  /** Share of update questions (with `stale`) whose current value ranks above the stale one; `null` when none. */
  updatedAboveStale: number | null;
  updateQuestions: number;
  /** Retrieval latency (ms), nearest-rank percentiles. */
  latency: { p50: number; p95: number; mean: number };
}

/** Nearest-rank percentile (p in 0..100) of `values` (ms); 0 for an empty list. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/**
 * recall@k of one question: |evidence ∩ sources of the top-k memories| / |evidence|.
 * @param rankedSources source message ids of each retrieved memory, best first.
 */
export function recallAtK(evidence: readonly string[], rankedSources: readonly (readonly string[])[], k: number): number {
  const found = new Set<string>();
  for (const sources of rankedSources.slice(0, k)) for (const id of sources) found.add(id);
  return evidence.filter((id) => found.has(id)).length / evidence.length;
}

/**
 * How each question is answered: the facade (always hybrid; records accesses in the background,
 * awaited through `flush` after each timed call so it does not slow the next one) or the store in
 * a mode, with optional search options (benchmarks compare weightings).
 */
export type Retriever =
  | { kind: 'facade'; longTerm: LongTermMemory & { flush?(): Promise<void> } }
  | { kind: 'store'; store: LongTermStore; mode: RetrievalMode; options?: SearchOptions };

/**
 * Asks every question and scores the rankings.
 * @param ks cut-offs of recall@k (the largest is the number of memories retrieved per question).
 * @param defaultNow question time when a question has no `date` (ms epoch): the evaluation uses
 *   one hour after the last turn of its conversation.
 */
export async function evaluateDataset(
  data: EvalDataset,
  retriever: Retriever,
  ks: number[] = [1, 5, 10],
): Promise<{ summary: EvalSummary; results: QuestionResult[] }> {
  const sortedKs = [...new Set(ks)].filter((k) => k >= 1).sort((a, b) => a - b);
  const maxK = sortedKs[sortedKs.length - 1] ?? 10;
  const namespaces = new Map(data.conversations.map((c) => [c.id, c.namespace ?? c.id]));
  const lastTurn = new Map(
    data.conversations.map((c) => {
      let last = 0;
      for (const s of c.sessions) s.turns.forEach((t, i) => (last = Math.max(last, t.date ? Date.parse(t.date) : Date.parse(s.date) + i * TURN_SPACING_MS)));
      return [c.id, last] as const;
    }),
  );
  const results: QuestionResult[] = [];
  for (const q of data.questions) {
    const query = {
      text: q.question,
      namespace: namespaces.get(q.conversationId)!,
      k: maxK,
      now: q.date ? Date.parse(q.date) : lastTurn.get(q.conversationId)! + 3_600_000,
    };
    const started = performance.now();
    const ranked =
      retriever.kind === 'facade'
        ? await retriever.longTerm.retrieve(query)
        : await retriever.store.search(query, { ...retriever.options, mode: retriever.mode });
    const latencyMs = performance.now() - started;
    if (retriever.kind === 'facade') await retriever.longTerm.flush?.();
    // A memory unit's sources: the memory's and those of the rounds shown with it (`RetrievedMemory.neighbours`).
    const sources = ranked.map((r) => [
      ...r.memory.sourceMessageIds,
      ...(r.neighbours?.before?.sourceMessageIds ?? []),
      ...(r.neighbours?.after?.sourceMessageIds ?? []),
    ]);
    const firstRank = (ids: readonly string[]) => {
      const i = sources.findIndex((s) => s.some((id) => ids.includes(id)));
      return i < 0 ? null : i + 1;
    };
    const stale = q.stale ?? [];
    const evidenceRank = firstRank(q.evidence);
    const staleRank = stale.length > 0 ? firstRank(stale) : null;
    results.push({
      id: q.id,
      question: q.question,
      category: q.category ?? 'uncategorized',
      language: q.language ?? null,
      evidence: q.evidence,
      stale,
      recall: Object.fromEntries(sortedKs.map((k) => [k, recallAtK(q.evidence, sources, k)])),
      evidenceRank,
      staleRank,
      updatedAboveStale: stale.length === 0 ? null : evidenceRank !== null && (staleRank === null || evidenceRank < staleRank),
      latencyMs,
      ranking: ranked.map((r) => ({ memoryId: r.memory.id, sourceMessageIds: r.memory.sourceMessageIds, score: r.score, ranks: r.ranks, text: r.memory.text })),
    });
  }
  return { summary: summarize(results, sortedKs), results };
}

/** Aggregates per-question results (mean recall@k and MRR overall and per category, update rate, latency). */
export function summarize(results: QuestionResult[], ks: number[]): EvalSummary {
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const recallOf = (rs: QuestionResult[]) => Object.fromEntries(ks.map((k) => [k, mean(rs.map((r) => r.recall[k]!))]));
  const mrrOf = (rs: QuestionResult[]) => mean(rs.map((r) => (r.evidenceRank === null ? 0 : 1 / r.evidenceRank)));
  const byCategory: EvalSummary['byCategory'] = {};
  for (const category of [...new Set(results.map((r) => r.category))].sort()) {
    const rs = results.filter((r) => r.category === category);
    byCategory[category] = { questions: rs.length, recall: recallOf(rs), mrr: mrrOf(rs) };
  }
  const updates = results.filter((r) => r.updatedAboveStale !== null);
  const latencies = results.map((r) => r.latencyMs);
  return {
    questions: results.length,
    ks,
    recall: recallOf(results),
    mrr: mrrOf(results),
    byCategory,
    updatedAboveStale: updates.length === 0 ? null : updates.filter((r) => r.updatedAboveStale).length / updates.length,
    updateQuestions: updates.length,
    latency: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), mean: mean(latencies) },
  };
}
