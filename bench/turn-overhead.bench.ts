/**
 * Turn-overhead benchmark (`npm run bench -- turn-overhead`; `--full` adds 100k memories).
 *
 * What is measured: the time from `ChatService.send` to the moment the chat engine receives the
 * finished prompt (send → prompt ready), through the real core (`createCore`: Dexie on
 * fake-indexeddb, persisted job queue, long-term store with its indexes, summary + buffer
 * strategy, prompt assembly, the token counter). Two boundaries are faked, and only them:
 * - the chat model: a stand-in that notes the time it is called and answers at once (a short
 *   reply; a summary or an empty extraction for background jobs), so no generation is timed;
 * - the query embedding: a deterministic embedder that turns a text into a seeded random unit
 *   vector in microseconds (384-d like the default MiniLM), so the vector scan runs but the
 *   embedding model's own cost is not timed ("no LLM, no query embedding").
 * Set-up per size: N memories (bilingual generated exchanges, valid, namespace `default`, with
 * vectors) written to the database, the core opened (indexes built; waits for the vector index),
 * one conversation of `HISTORY` earlier messages whose first part is already folded into a
 * summary. Each run sends `TURNS` messages (English and Chinese alternating); background jobs
 * (episodic memory, folds) are drained and retrieval accesses written between turns, outside the
 * timing (a user takes longer than that to type the next message). Reported per counter
 * (the estimator and the exact Qwen2.5 tokenizer with its chat template): p50 and p95 over all
 * timed turns, and the median of the per-run p50s, over `RUNS` runs (the first turn of each run is
 * a warm-up and not timed); also the process's CPU time over the same span (user + system), which
 * other processes on a shared machine do not inflate.
 * Environment: TURN_BENCH_RUNS (5), TURN_BENCH_TURNS (30), TURN_BENCH_SIZES (10000; `--full`:
 * 10000,100000), TURN_BENCH_COUNTERS (estimator,qwen2.5).
 */
import 'fake-indexeddb/auto';
import { nodeVoyWasm } from './data/node-voy';
import { generateConversation, mulberry32 } from './data/bilingual-conversation';
import { qwenCounter } from './data/qwen-tokenizer';
import type { EngineManager } from '../src/core/engine-manager';
import { createCore, type Core } from '../src/core/index';
import { RecallDB } from '../src/db/schema';
import type { MemoryRecord, MessageRecord } from '../src/model/records';
import type { ChatEngine, ChatRequest, ChatResult, Embedder } from '../src/engines/types';
import type { TokenCounter } from '../src/model/tokens';
import { memoryHash } from '../src/memory/long-term/text';
import type { EngineStatus } from '../src/model/engine';
import { createTokenEstimator } from '../src/tokens';

const EMBED_DIM = 384;
/** Earlier messages of the benchmark conversation. */
const HISTORY = 400;
/** Messages of the history already folded into the summary (seq < FOLDED). */
const FOLDED = 380;

/** A unit vector seeded by the text (FNV-1a), the same for the same text. */
function seededVector(text: string): Float32Array {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  const rand = mulberry32(h);
  const v = new Float32Array(EMBED_DIM);
  let norm = 0;
  for (let i = 0; i < EMBED_DIM; i++) {
    v[i] = rand() * 2 - 1;
    norm += v[i]! * v[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < EMBED_DIM; i++) v[i]! /= norm;
  return v;
}

/** The query-embedding stand-in (see module doc). */
const embedder: Embedder = {
  modelId: 'bench/seeded-384',
  dimension: EMBED_DIM,
  embed: async (texts: string[]) => texts.map(seededVector),
  dispose: async () => undefined,
} as unknown as Embedder;

/** The chat-model stand-in: notes when it got the prompt, answers at once. */
function fakeEngine(counter: TokenCounter | null, onPrompt: () => void): ChatEngine {
  return {
    kind: 'scripted',
    modelId: 'bench/instant',
    contextWindow: () => 4096,
    tokenCounter: () => counter,
    isLoaded: () => true,
    async complete(request: ChatRequest): Promise<ChatResult> {
      const schema = request.responseFormat?.type === 'json_object' ? JSON.stringify(request.responseFormat.schema ?? {}) : '';
      // A "summary" that keeps the key words of the lines it was given (what the fold checks).
      if (schema.includes('"summary"')) return { content: JSON.stringify({ summary: Array.from(request.messages.at(-1)?.content ?? '').slice(-240).join('') }), finishReason: 'stop', usage: null };
      if (schema.includes('"facts"')) return { content: JSON.stringify({ topic: 'chat', facts: [], preferences: [] }), finishReason: 'stop', usage: null };
      onPrompt();
      return { content: 'Noted, thank you.', finishReason: 'stop', usage: null };
    },
    unload: async () => undefined,
  } as ChatEngine;
}

function engineManager(chat: ChatEngine): EngineManager {
  const estimator = createTokenEstimator();
  const status = (): EngineStatus => ({
    chat: { kind: 'scripted', modelId: chat.modelId, state: 'ready', progress: null, contextWindow: 4096, error: null, errorCode: null },
    embedder: { modelId: embedder.modelId, dimension: EMBED_DIM, state: 'ready', progress: null, error: null, errorCode: null },
    gpu: { available: false, shaderF16: false, adapter: null },
  });
  const unsupported = () => Promise.reject(new Error('not in the benchmark'));
  return {
    status,
    chatEngine: () => chat,
    embedder: () => embedder,
    tokenCounter: () => chat.tokenCounter() ?? estimator,
    catalog: unsupported,
    loadWebLLM: unsupported,
    loadWllama: unsupported,
    unloadChat: unsupported,
    loadEmbedder: async () => status(),
    reloadEmbedder: async () => status(),
    onChange: () => () => undefined,
  } as EngineManager;
}

/** Writes `n` memories straight into the table (the set-up, not the measured path). */
async function fillMemories(db: RecallDB, n: number): Promise<void> {
  const exchanges = generateConversation(Math.min(n, 2000), 7);
  const t0 = Date.UTC(2024, 0, 1);
  for (let start = 0; start < n; start += 5000) {
    const batch: MemoryRecord[] = [];
    for (let i = start; i < Math.min(n, start + 5000); i++) {
      const e = exchanges[i % exchanges.length]!;
      const text = `User: ${e.user} (#${i})\nAssistant: ${e.assistant}`;
      batch.push({
        id: `m${i}`,
        namespace: 'default',
        kind: i % 5 === 0 ? 'fact' : 'episodic',
        text,
        embedding: seededVector(text),
        embeddingModel: embedder.modelId,
        importance: 0.3 + (i % 7) / 10,
        createdAt: t0 + i * 60_000,
        updatedAt: t0 + i * 60_000,
        validFrom: null,
        validUntil: null,
        current: 1,
        lastAccessedAt: null,
        accessCount: 0,
        sourceConversationId: `old-${i % 50}`,
        sourceMessageIds: [`old-${i}-u`, `old-${i}-a`],
        pinned: false,
        hash: memoryHash(text),
      });
    }
    await db.memories.bulkAdd(batch);
  }
}

/** The benchmark conversation: `HISTORY` messages, the first `FOLDED` summarized. */
async function fillConversation(db: RecallDB): Promise<string> {
  const id = 'bench-conversation';
  const t0 = Date.UTC(2025, 0, 1);
  await db.conversations.put({ id, title: 'Bench', namespace: 'default', strategy: { kind: 'summary-buffer', maxTokens: 2000 }, createdAt: t0, updatedAt: t0 });
  const exchanges = generateConversation(HISTORY / 2, 11);
  const messages: MessageRecord[] = [];
  exchanges.forEach((e, i) => {
    messages.push({ id: `h${i}-u`, conversationId: id, seq: 2 * i, role: 'user', content: e.user, createdAt: t0 + i * 120_000, status: 'complete' });
    messages.push({ id: `h${i}-a`, conversationId: id, seq: 2 * i + 1, role: 'assistant', content: e.assistant, createdAt: t0 + i * 120_000 + 60_000, status: 'complete' });
  });
  await db.messages.bulkAdd(messages);
  const summary = exchanges.slice(0, FOLDED / 2).slice(-12).map((e) => e.fact).join(' ');
  await db.strategyState.put({ conversationId: id, strategy: 'summary-buffer', state: { summary, coveredSeq: FOLDED - 1, folds: 1, lastError: null, rejectedReplies: 0, updatedAt: t0 }, updatedAt: t0 });
  return id;
}

/** Nearest-rank percentile of `values` (0 < p ≤ 1). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

interface CounterResult {
  counter: string;
  p50: number;
  p95: number;
  medianRunP50: number;
  medianRunP95: number;
  /** CPU time of this process (user + system, ms) from send to prompt ready: insensitive to other processes on a shared machine. */
  cpuP50: number;
  cpuP95: number;
  turns: number;
}

async function measure(size: number, counterName: 'estimator' | 'qwen2.5', runs: number, turns: number): Promise<CounterResult> {
  const texts = generateConversation(turns + 1, 99).map((e) => e.user);
  const all: number[] = [];
  const runP50: number[] = [];
  const runP95: number[] = [];
  const cpuTimes: number[] = [];
  for (let run = 0; run < runs; run++) {
    const db = new RecallDB(`turn-bench-${crypto.randomUUID()}`);
    await fillMemories(db, size);
    const conversationId = await fillConversation(db);
    let promptAt = 0;
    let promptCpu = { user: 0, system: 0 };
    const engine = fakeEngine(counterName === 'qwen2.5' ? qwenCounter() : null, () => {
      promptAt = performance.now();
      promptCpu = process.cpuUsage();
    });
    const core: Core = await createCore({
      db,
      engines: engineManager(engine),
      loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
      events: { chatDelta: () => undefined, jobs: () => undefined },
    });
    await (core.store as { whenIndexed?: () => Promise<void> }).whenIndexed?.();
    const times: number[] = [];
    for (let i = 0; i <= turns; i++) {
      const startedCpu = process.cpuUsage();
      const started = performance.now();
      await core.chat.send({ conversationId, text: texts[i]!, requestId: `r${run}-${i}` });
      if (i > 0) {
        // turn 0 warms up caches and JIT
        times.push(promptAt - started);
        cpuTimes.push((promptCpu.user - startedCpu.user + promptCpu.system - startedCpu.system) / 1000);
      }
      await core.jobs.drain();
      // Between turns (the user is typing): the batched access write happens here, not in the next turn.
      await (core.longTerm as { flush?: () => Promise<void> }).flush?.();
    }
    await core.stop();
    await db.delete();
    all.push(...times);
    runP50.push(percentile(times, 0.5));
    runP95.push(percentile(times, 0.95));
  }
  return {
    counter: counterName,
    p50: percentile(all, 0.5),
    p95: percentile(all, 0.95),
    medianRunP50: percentile(runP50, 0.5),
    medianRunP95: percentile(runP95, 0.5),
    cpuP50: percentile(cpuTimes, 0.5),
    cpuP95: percentile(cpuTimes, 0.95),
    turns: all.length,
  };
}

export default {
  name: 'turn overhead (send → prompt ready)',
  async run() {
    const full = process.argv.includes('--full');
    const runs = Number(process.env.TURN_BENCH_RUNS ?? 5);
    const turns = Number(process.env.TURN_BENCH_TURNS ?? 30);
    const sizes = (process.env.TURN_BENCH_SIZES ?? (full ? '10000,100000' : '10000')).split(',').map(Number);
    const results: ({ memories: number } & CounterResult)[] = [];
    for (const size of sizes) {
      for (const counter of (process.env.TURN_BENCH_COUNTERS ?? 'estimator,qwen2.5').split(',') as ('estimator' | 'qwen2.5')[]) {
        const r = await measure(size, counter, runs, turns);
        results.push({ memories: size, ...r });
        console.log(
          `${String(size).padStart(7)} memories  ${counter.padEnd(9)}  p50 ${r.p50.toFixed(1)} ms  p95 ${r.p95.toFixed(1)} ms  (median of ${runs} runs: p50 ${r.medianRunP50.toFixed(1)}, p95 ${r.medianRunP95.toFixed(1)}; ${r.turns} turns)  CPU p50 ${r.cpuP50.toFixed(1)} ms  p95 ${r.cpuP95.toFixed(1)} ms`,
        );
      }
    }
    return { runs, turnsPerRun: turns, history: HISTORY, results };
  },
};
