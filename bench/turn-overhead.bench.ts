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
 * Set-up per size (not timed): N memories (bilingual generated exchanges, valid, namespace
 * `default`, with vectors) written to one database as rows plus their persisted index blocks
 * (`layoutFromRows`, what a store's first open writes); a first core opening builds the lexical
 * index from the rows and writes its snapshot. The lock-on database is a copy of it, then sealed.
 * Each run then opens a fresh core over that database (the index opens from its
 * blocks, as after a restart) with a fresh copy of one conversation of `HISTORY` earlier messages
 * whose first `FOLDED` are already folded into a summary, and sends `turns` messages (English and
 * Chinese alternating; the first is a warm-up, not timed). Background jobs (episodic memory,
 * folds) are drained and retrieval accesses written between turns, outside the timing (a user
 * takes longer than that to type the next message). Reported per counter (the estimator, and the
 * exact Qwen2.5 tokenizer with its chat template): p50 and p95 over all timed turns of all runs,
 * the median of the per-run p50 and p95, and the process's CPU time over the same span (user +
 * system), which other processes on a shared machine do not inflate.
 * Vault lock (issue 16): each size and counter runs with the lock off and on, side by side (runs
 * interleaved, the order alternating), over two databases prepared alike; the lock-on one was sealed by the
 * real in-place pass (`vault/pass.ts`) and its core seals and opens every row through the vault
 * middleware. The ratio table compares on / off (p50, p95, CPU); target ≤ 1.2×.
 * Parameters `{ sizes, runs, turns, counters, locks, lockOnUpTo }` (sizes above `lockOnUpTo` run with
 * the lock off only: see `Params.lockOnUpTo`); TURN_BENCH_SIZES, TURN_BENCH_RUNS,
 * TURN_BENCH_TURNS, TURN_BENCH_COUNTERS and TURN_BENCH_LOCKS (`off,on`; comma-separated) override them;
 * TURN_BENCH_ROUND_MESSAGES=1 also stores the messages the memories cite (neighbour expansion runs).
 */
import 'fake-indexeddb/auto';
import { nodeVoyWasm } from './data/node-voy';
import { generateConversation, mulberry32 } from './data/bilingual-conversation';
import { loadQwenTokenizerFiles } from './data/qwen-tokenizer';
import { Tokenizer } from '@huggingface/tokenizers';
import { defineBench, type HeadlineRow } from './lib/bench';
import { formatMs, summarize } from './lib/stats';
import type { EngineManager } from '../src/core/engine-manager';
import { createCore, type Core } from '../src/core/index';
import { RecallDB } from '../src/db/schema';
import type { MemoryRecord, MessageRecord } from '../src/model/records';
import type { ChatEngine, ChatRequest, ChatResult, Embedder } from '../src/engines/types';
import type { TokenCounter } from '../src/model/tokens';
import { INDEXED_TEXT_VERSION, memoryHash } from '../src/memory/long-term/text';
import { layoutFromRows } from '../src/memory/long-term/retrieval/blocks';
import { toRow } from '../src/memory/long-term/store/rows';
import type { EngineStatus } from '../src/model/engine';
import { createHfTokenCounter, createTokenEstimator } from '../src/tokens';
import { newDataKey, vaultKeys } from '../src/vault/keys';
import { runPass } from '../src/vault/pass';

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
function fakeEngine(counter: TokenCounter | null, onPrompt: (request: ChatRequest) => void): ChatEngine {
  return {
    kind: 'scripted',
    modelId: 'bench/instant',
    contextWindow: () => 4096,
    tokenCounter: () => counter,
    isLoaded: () => true,
    async complete(request: ChatRequest): Promise<ChatResult> {
      const schema = request.responseFormat?.type === 'json_object' ? JSON.stringify(request.responseFormat.schema ?? {}) : '';
      // A "summary" that keeps the key words of the lines it was given (what the fold checks).
      if (schema.includes('"summary"'))
        return {
          content: JSON.stringify({
            summary: Array.from(request.messages.at(-1)?.content ?? '')
              .slice(-240)
              .join(''),
          }),
          finishReason: 'stop',
          usage: null,
        };
      if (schema.includes('"facts"')) return { content: JSON.stringify({ topic: 'chat', facts: [], preferences: [] }), finishReason: 'stop', usage: null };
      onPrompt(request);
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

/**
 * Writes the messages the seeded memories cite (`fillMemories`: memory `i` cites `old-<i>-u` and
 * `old-<i>-a` of conversation `old-<i mod 50>`), consecutive in their conversation, so neighbour
 * expansion finds each round's adjacent rounds (`TURN_BENCH_ROUND_MESSAGES=1`). Set-up, not timed.
 */
async function fillRoundMessages(db: RecallDB, n: number): Promise<void> {
  const t0 = Date.UTC(2024, 0, 1);
  for (let start = 0; start < n; start += 5000) {
    const batch: MessageRecord[] = [];
    for (let i = start; i < Math.min(n, start + 5000); i++) {
      const conversationId = `old-${i % 50}`;
      const seq = 2 * Math.floor(i / 50);
      batch.push({ id: `old-${i}-u`, conversationId, seq, role: 'user', content: `question ${i}`, createdAt: t0 + i * 60_000, status: 'complete' });
      batch.push({
        id: `old-${i}-a`,
        conversationId,
        seq: seq + 1,
        role: 'assistant',
        content: `answer ${i}`,
        createdAt: t0 + i * 60_000 + 1,
        status: 'complete',
      });
    }
    await db.messages.bulkAdd(batch);
  }
}

/**
 * Writes `n` memories straight into the database (the set-up, not the measured path): the rows
 * (without their vectors, as stored since v3) and their persisted index, meta and vector blocks
 * laid out by the store's own `layoutFromRows` (what the first open of a store writes), in
 * batches of 5,000 rows. The lexical snapshot is left to the first core opening over it (it
 * builds the lexical index from the rows and writes its snapshot, in the snapshot format of the
 * code under test). At 100k this takes about a minute; letting the store rebuild the index from
 * rows holding their embeddings did not finish in 18 minutes.
 */
async function fillMemories(db: RecallDB, n: number): Promise<void> {
  const records: MemoryRecord[] = [];
  await generateMemories(n, async (batch) => {
    records.push(...batch);
    await db.memories.bulkAdd(batch.map(toRow));
  });
  const layout = layoutFromRows(records, 1);
  records.length = 0;
  const blocks = layout.records.map((r) => (r.key === 'header' ? { ...layout.header, textVersion: INDEXED_TEXT_VERSION } : r));
  for (let i = 0; i < blocks.length; i += 64) await db.memoryIndex.bulkPut(blocks.slice(i, i + 64));
}

/** Calls `write` with the `n` benchmark memories (bilingual generated exchanges, with vectors), 5,000 at a time. */
async function generateMemories(n: number, write: (batch: MemoryRecord[]) => Promise<void>): Promise<void> {
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
    await write(batch);
  }
}

/** The benchmark conversation under `id`: `HISTORY` messages, the first `FOLDED` summarized (a fresh copy per run). */
async function fillConversation(db: RecallDB, id: string): Promise<string> {
  const t0 = Date.UTC(2025, 0, 1);
  await db.conversations.put({ id, title: 'Bench', namespace: 'default', strategy: { kind: 'summary-buffer', maxTokens: 2000 }, createdAt: t0, updatedAt: t0 });
  const exchanges = generateConversation(HISTORY / 2, 11);
  const messages: MessageRecord[] = [];
  exchanges.forEach((e, i) => {
    messages.push({ id: `${id}-h${i}-u`, conversationId: id, seq: 2 * i, role: 'user', content: e.user, createdAt: t0 + i * 120_000, status: 'complete' });
    messages.push({
      id: `${id}-h${i}-a`,
      conversationId: id,
      seq: 2 * i + 1,
      role: 'assistant',
      content: e.assistant,
      createdAt: t0 + i * 120_000 + 60_000,
      status: 'complete',
    });
  });
  await db.messages.bulkAdd(messages);
  const summary = exchanges
    .slice(0, FOLDED / 2)
    .slice(-12)
    .map((e) => e.fact)
    .join(' ');
  await db.strategyState.put({
    conversationId: id,
    strategy: 'summary-buffer',
    state: { summary, coveredSeq: FOLDED - 1, folds: 1, lastError: null, rejectedReplies: 0, updatedAt: t0 },
    updatedAt: t0,
  });
  return id;
}

/** Counters the bench can run with. */
export type CounterName = 'estimator' | 'qwen2.5';

let qwenFiles: ReturnType<typeof loadQwenTokenizerFiles> | null = null;

/**
 * A fresh exact Qwen2.5 counter (the files read once per process): one per core, as a model
 * loaded in a fresh core has, so a run's count cache holds only what that run counted (a counter
 * shared by every run would already hold the texts of the runs before).
 */
function freshQwenCounter(): TokenCounter {
  qwenFiles ??= loadQwenTokenizerFiles();
  return createHfTokenCounter(qwenFiles.tokenizerJson, qwenFiles.tokenizerConfig, { id: 'hf:Qwen/Qwen2.5' });
}

/** A core over `db` whose chat engine calls `onPrompt` when it receives a chat turn's prompt. */
export async function openBenchCore(db: RecallDB, counterName: CounterName, onPrompt: (request: ChatRequest) => void): Promise<Core> {
  const engine = fakeEngine(counterName === 'qwen2.5' ? freshQwenCounter() : null, onPrompt);
  const core = await createCore({
    db,
    engines: engineManager(engine),
    loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
    events: { chatDelta: () => undefined, jobs: () => undefined },
  });
  await (core.store as { whenIndexed?: () => Promise<void> }).whenIndexed?.();
  return core;
}

/**
 * Copies every table of `from` (a database `prepareDatabase` made with the lock off) into the empty
 * `to`, rows read raw (no reading hook) in pages of 5,000: the same rows and persisted index for a
 * second database without building them again. Set-up, not timed.
 */
async function copyDatabase(from: RecallDB, to: RecallDB): Promise<void> {
  for (const table of from.tables) {
    for (let offset = 0; ; offset += 5000) {
      const rows = await table.toCollection().offset(offset).limit(5000).raw().toArray();
      if (rows.length === 0) break;
      await to.table(table.name).bulkPut(rows);
    }
  }
}

/** The vault lock off, or on (every row sealed; the middleware holds the key, as after an unlock). */
export type LockMode = 'off' | 'on';

/**
 * A database with `size` memories and its persisted index (a core opened once over it and
 * stopped), ready for `runTurns`. With `lock: 'on'` every row is then sealed by the vault's
 * in-place pass and the database's keyring keeps the key (an unlocked vault). With `roundMessages`
 * the messages the memories cite are stored too (`fillRoundMessages`). Not timed.
 */
export async function prepareDatabase(
  size: number,
  lock: LockMode = 'off',
  roundMessages = process.env.TURN_BENCH_ROUND_MESSAGES === '1',
  copyOf?: RecallDB,
): Promise<RecallDB> {
  const db = new RecallDB(`turn-bench-${crypto.randomUUID()}`);
  if (copyOf) await copyDatabase(copyOf, db);
  else {
    await fillMemories(db, size);
    if (roundMessages) await fillRoundMessages(db, size);
    const core = await openBenchCore(db, 'estimator', () => undefined);
    await core.stop();
  }
  if (lock === 'on') {
    const keys = vaultKeys(newDataKey());
    db.keyring.keys = keys;
    db.keyring.sealing = true;
    await runPass(db, db.keyring, keys, 'encrypt', { savePosition: (row) => row });
  }
  return db;
}

/** One run's samples (ms): wall and CPU time from send to prompt ready, per timed turn. */
interface RunSamples {
  wall: number[];
  cpu: number[];
  /** Per timed turn: characters the exact tokenizer encoded (its count cache's misses; 0 with the estimator), and the prompt's characters. */
  encodedChars: number[];
  promptChars: number[];
}

/**
 * Characters passed to the Hugging Face tokenizer's `encode` so far (every exact count that is
 * not a cache hit goes through it): the difference over a turn is what that turn tokenized.
 * Counted by wrapping `Tokenizer.prototype.encode` for this process (a measurement, not a fake).
 */
let encodedChars = 0;
const encode = Tokenizer.prototype.encode;
Tokenizer.prototype.encode = function (this: Tokenizer, text: string, ...rest: unknown[]) {
  encodedChars += text.length;
  return (encode as (this: Tokenizer, text: string, ...rest: unknown[]) => ReturnType<Tokenizer['encode']>).call(this, text, ...rest);
} as Tokenizer['encode'];

/**
 * One run over `db`: a fresh core and a fresh copy of the conversation, `turns + 1` messages
 * sent (the first untimed). `onTimed` gets each timed turn's span on the monotonic clock
 * (`process.hrtime.bigint()`, ns), for a profiler to keep only the samples inside it.
 * @returns the timed turns' samples.
 */
export async function runTurns(
  db: RecallDB,
  counterName: CounterName,
  turns: number,
  run: number,
  onTimed?: (startNs: bigint, promptNs: bigint) => void,
): Promise<RunSamples> {
  const texts = generateConversation(turns + 1, 99).map((e) => e.user);
  let promptAt = 0;
  let promptCpu = { user: 0, system: 0 };
  let promptNs = 0n;
  let promptEncoded = 0;
  let promptChars = 0;
  const core = await openBenchCore(db, counterName, (request) => {
    promptAt = performance.now();
    promptCpu = process.cpuUsage();
    promptNs = process.hrtime.bigint();
    promptEncoded = encodedChars;
    promptChars = request.messages.reduce((n, m) => n + m.content.length, 0);
  });
  const conversationId = await fillConversation(db, `bench-${counterName}-${run}-${crypto.randomUUID()}`);
  const out: RunSamples = { wall: [], cpu: [], encodedChars: [], promptChars: [] };
  for (let i = 0; i <= turns; i++) {
    const startedNs = process.hrtime.bigint();
    const startedCpu = process.cpuUsage();
    const startedEncoded = encodedChars;
    const started = performance.now();
    await core.chat.send({ conversationId, text: texts[i]!, requestId: `r${run}-${i}` });
    if (i > 0) {
      onTimed?.(startedNs, promptNs);
      // turn 0 warms up caches and JIT
      out.wall.push(promptAt - started);
      out.cpu.push((promptCpu.user - startedCpu.user + promptCpu.system - startedCpu.system) / 1000);
      out.encodedChars.push(promptEncoded - startedEncoded);
      out.promptChars.push(promptChars);
    }
    await core.jobs.drain();
    // Between turns (the user is typing): the batched access write happens here, not in the next turn.
    await (core.longTerm as { flush?: () => Promise<void> }).flush?.();
  }
  await core.stop();
  return out;
}

/** Targets of issue 9: p95 (ms) of send → prompt ready, per memory count. */
const TARGET_P95_MS: Record<number, number> = { 10_000: 20, 100_000: 60 };

interface Params {
  sizes: number[];
  runs: number;
  turns: number;
  counters: CounterName[];
  locks: LockMode[];
  /**
   * Largest size run with the lock on too (larger sizes run with the lock off only): a second
   * 100k database in the same process (~2.3 GB of heap each, fake-indexeddb keeps every record in
   * memory) goes over Node's default heap limit (~4.3 GB here). `TURN_BENCH_LOCKS` given: every size.
   */
  lockOnUpTo: number;
}

const list = (env: string | undefined) =>
  env
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export default defineBench<Params>({
  name: 'turn-overhead',
  title: 'Turn overhead (send → prompt ready)',
  method:
    'The real core in Node (fake-indexeddb, persisted job queue, long-term store opened from its persisted index, summary + buffer over a 400-message conversation, prompt assembly, the token counter); time from `chat.send` to the assembled prompt reaching the chat engine, with no LLM (an instant stand-in) and no query embedding (a seeded 384-d stand-in, so the vector scan runs). Per run a fresh core and a fresh conversation; the first turn of a run is a warm-up; background jobs and the batched access write run between turns, untimed. p50 / p95 over all timed turns (nearest rank), wall and process CPU (user + system), with the estimator and with the exact Qwen2.5 counter (tokenizer + ChatML template); for the exact counter, the characters its tokenizer encoded per turn (what its count cache did not hold) against the characters of the prompt sent.',
  quick: { sizes: [10_000], runs: 5, turns: 20, counters: ['estimator', 'qwen2.5'], locks: ['off', 'on'], lockOnUpTo: 10_000 },
  full: { sizes: [10_000, 100_000], runs: 5, turns: 30, counters: ['estimator', 'qwen2.5'], locks: ['off', 'on'], lockOnUpTo: 10_000 },
  async run(params, ctx) {
    const sizes = list(process.env.TURN_BENCH_SIZES)?.map(Number) ?? params.sizes;
    const runs = Number(process.env.TURN_BENCH_RUNS ?? params.runs);
    const turns = Number(process.env.TURN_BENCH_TURNS ?? params.turns);
    const counters = (list(process.env.TURN_BENCH_COUNTERS) as CounterName[] | undefined) ?? params.counters;
    const lockList = list(process.env.TURN_BENCH_LOCKS) as LockMode[] | undefined;
    const rows: (string | number)[][] = [];
    const ratioRows: (string | number)[][] = [];
    const headline: HeadlineRow[] = [];
    const raw: unknown[] = [];
    for (const size of sizes) {
      const locks = lockList ?? (size <= params.lockOnUpTo ? params.locks : params.locks.filter((lock) => lock === 'off'));
      ctx.log(`turn-overhead: preparing ${size} memories (lock ${locks.join(', ')}) …`);
      const dbs = new Map<LockMode, RecallDB>();
      // The lock-off database is built once; the lock-on one is a copy of it, then sealed (built alike when 'off' is not run or comes later).
      for (const lock of locks) dbs.set(lock, await prepareDatabase(size, lock, undefined, dbs.get('off')));
      for (const counter of counters) {
        const perRun = new Map<LockMode, RunSamples[]>(locks.map((lock) => [lock, []]));
        // Interleaved, the order alternating (off, on; on, off; …): a load change on the shared machine, or
        // whatever the previous run left behind (garbage, a cold cache), hits both alike.
        for (let run = 0; run < runs; run++) {
          for (const lock of run % 2 === 0 ? locks : [...locks].reverse()) perRun.get(lock)!.push(await runTurns(dbs.get(lock)!, counter, turns, run));
        }
        const summaries = new Map<LockMode, { wall: ReturnType<typeof summarize>; cpu: ReturnType<typeof summarize> }>();
        for (const lock of locks) {
          const runsOf = perRun.get(lock)!;
          const wall = summarize(runsOf.flatMap((r) => r.wall));
          const cpu = summarize(runsOf.flatMap((r) => r.cpu));
          summaries.set(lock, { wall, cpu });
          const runP50 = summarize(runsOf.map((r) => summarize(r.wall).median));
          const runP95 = summarize(runsOf.map((r) => summarize(r.wall).p95));
          const target = TARGET_P95_MS[size];
          // What the exact tokenizer encoded per turn (count-cache misses) against the prompt's size: "count only what changed".
          const encoded = summarize(runsOf.flatMap((r) => r.encodedChars));
          const prompt = summarize(runsOf.flatMap((r) => r.promptChars));
          rows.push([
            size,
            // `TURN_BENCH_ROUND_MESSAGES=1`: the rounds' messages are stored, so neighbour expansion runs.
            process.env.TURN_BENCH_ROUND_MESSAGES === '1' ? `${counter}, rounds' messages stored` : counter,
            lock,
            formatMs(wall.median),
            formatMs(wall.p95),
            `${formatMs(runP50.median)} / ${formatMs(runP95.median)}`,
            formatMs(cpu.median),
            formatMs(cpu.p95),
            counter === 'estimator' ? '–' : `${Math.round(encoded.median)} / ${Math.round(encoded.p95)} of ${Math.round(prompt.median)}`,
            wall.n,
            target === undefined ? '–' : `${target} ms`,
          ]);
          if (target !== undefined && lock === 'off') {
            headline.push({
              what: `turn overhead p95, send → prompt ready, ${size.toLocaleString('en')} memories, ${counter} (wall; CPU ${formatMs(cpu.p95)} ms)`,
              measured: `${formatMs(wall.p95)} ms`,
              reference: `target ${target} ms`,
              ratio: Number((wall.p95 / target).toFixed(2)),
            });
          }
          raw.push({ memories: size, counter, lock, wall, cpu, runP50, runP95, samples: runsOf });
          ctx.log(
            `${String(size).padStart(7)} memories  ${counter.padEnd(9)}  lock ${lock.padEnd(3)}  wall p50 ${wall.median.toFixed(1)} / p95 ${wall.p95.toFixed(1)} ms  CPU p50 ${cpu.median.toFixed(1)} / p95 ${cpu.p95.toFixed(1)} ms  (${wall.n} turns)`,
          );
        }
        const off = summaries.get('off');
        const on = summaries.get('on');
        if (off && on) {
          const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
          ratioRows.push([
            size,
            counter,
            `${ratio(on.wall.median, off.wall.median)}×`,
            `${ratio(on.wall.p95, off.wall.p95)}×`,
            `${ratio(on.cpu.median, off.cpu.median)}×`,
            `${ratio(on.cpu.p95, off.cpu.p95)}×`,
          ]);
          headline.push({
            what: `turn overhead with the vault lock on / off, p95 CPU, ${size.toLocaleString('en')} memories, ${counter} (wall ${ratio(on.wall.p95, off.wall.p95)}×)`,
            measured: `${formatMs(on.cpu.p95)} / ${formatMs(off.cpu.p95)} ms`,
            reference: 'target ≤ 1.2×',
            ratio: ratio(on.cpu.p95, off.cpu.p95),
          });
        }
      }
      for (const db of dbs.values()) await db.delete();
    }
    return {
      params: { ...params, sizes, runs, turns, counters, ...(lockList ? { locks: lockList } : {}) },
      tables: [
        {
          title: `Send → prompt ready, ms (${runs} runs × ${turns} timed turns per counter and size; target: issue 9's p95):`,
          columns: [
            'memories',
            'counter',
            'lock',
            'wall p50',
            'wall p95',
            'median of runs p50 / p95',
            'CPU p50',
            'CPU p95',
            'chars tokenized p50 / p95 of prompt chars',
            'turns',
            'target p95',
          ],
          rows,
        },
        ...(ratioRows.length > 0
          ? [
              {
                title: 'Vault lock on / off, same runs side by side (target ≤ 1.2×):',
                columns: ['memories', 'counter', 'wall p50', 'wall p95', 'CPU p50', 'CPU p95'],
                rows: ratioRows,
              },
            ]
          : []),
      ],
      headline,
      notes: [
        'Wall time includes waiting for the CPU on a shared machine; CPU time (this process, user + system) does not, and is the steadier comparison between runs.',
        ...(sizes.includes(100_000) ? [] : ['100k memories: `npm run bench -- turn-overhead --full`.']),
      ],
      raw,
    };
  },
});
