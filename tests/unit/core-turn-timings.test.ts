/**
 * The turn timings stored with each prompt trace (`PromptTrace.timings`), through the real core
 * (`createCore` on fake-indexeddb, the fixture embedder, the summary + buffer strategy). The
 * core's monotonic clock (`CoreDeps.clock`) is a fake that only moves when a stand-in says so:
 * the query embedder takes `EMBED_MS` per call, every token count `COUNT_MS`, so each timing is
 * known by hand — `promptReadyMs` is the fake time between the `send` call and the moment the
 * chat engine got the prompt (noted by the engine itself), `queryEmbeddingMs` the embedder's
 * time inside the retrieval (plus the token counts of other steps that ran while it was awaited). The retrieval starts with the turn and overlaps the short-term load
 * and the user message's write, whose token counts move the clock too: `retrievalMs` is at least
 * the embedding and ends by the end of the memory wait. `startMs` counts no tokens (0); the
 * short-term load (its budget) and the assembly do; the contiguous spans add up to `promptReadyMs`.
 */
import { describe, expect, it } from 'vitest';
import { EngineError, type Embedder } from '../../src/engines/types';
import type { TokenCounter } from '../../src/model/tokens';
import type { TurnTimings } from '../../src/model/trace';
import { createTokenEstimator } from '../../src/tokens';
import { useTestCores } from '../helpers/core-harness';
import { createScriptedEngine } from '../helpers/scripted-engine';

const EMBED_MS = 7;
const COUNT_MS = 0.25;

const cores = useTestCores();

/** A core whose clock is `clock.t` (ms), with the stand-ins above; `promptAt` lists the fake time of each chat prompt the engine got. */
async function start(options: { withEmbedder?: boolean } = {}) {
  const clock = { t: 1000 };
  const promptAt: number[] = [];
  const estimator = createTokenEstimator();
  const counter: TokenCounter = {
    id: estimator.id,
    exact: estimator.exact,
    perMessageOverhead: estimator.perMessageOverhead,
    replyPrimerTokens: estimator.replyPrimerTokens,
    count(text) {
      clock.t += COUNT_MS;
      return estimator.count(text);
    },
  };
  const inner = cores.embedder;
  let embedCalls = 0;
  const embedder: Embedder = {
    modelId: inner.modelId,
    dimension: inner.dimension,
    async embed(texts, signal) {
      embedCalls += 1;
      clock.t += EMBED_MS;
      return inner.embed(texts, signal);
    },
  };
  const engine = createScriptedEngine({
    tokenCounter: counter,
    fallback: (request) => {
      if (request.responseFormat?.type === 'json_object') return '{"topic": "chat", "facts": [], "preferences": []}';
      promptAt.push(clock.t);
      return 'Noted.';
    },
  });
  const { core, db } = await cores.start({
    chat: () => engine,
    embedder: () => (options.withEmbedder === false ? null : embedder),
    extra: { clock: () => clock.t },
  });
  const conversation = await core.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
  /** Sends `text` and returns the stored trace's timings and the fake time from the call to the engine's prompt. */
  const turn = async (text: string): Promise<{ timings: TurnTimings | undefined; sentToPrompt: number; embedCalls: number }> => {
    const sentAt = clock.t;
    const callsBefore = embedCalls;
    const result = await core.chat.send({ conversationId: conversation.id, text, requestId: crypto.randomUUID() });
    const trace = (await db.promptTraces.get(result.assistantMessage.id))!.trace;
    const calls = embedCalls - callsBefore;
    await core.jobs.drain();
    return { timings: trace.timings, sentToPrompt: promptAt.at(-1)! - sentAt, embedCalls: calls };
  };
  return { core, turn };
}

/** Checks the span structure of `timings` (see the file doc) and returns it. */
function checkSpans(timings: TurnTimings | undefined): TurnTimings {
  expect(timings).toBeDefined();
  const t = timings!;
  expect(t.startMs + t.shortTermMs + t.userMessageMs + t.memoryWaitMs! + t.assemblyMs).toBe(t.promptReadyMs);
  expect(t.startMs).toBe(0);
  expect(t.shortTermMs).toBeGreaterThan(0);
  expect(t.memoryWaitMs).toBeGreaterThanOrEqual(0);
  expect(t.assemblyMs).toBeGreaterThan(0);
  // The retrieval ran inside the turn, from its start to at most the end of the memory wait.
  expect(t.retrievalMs).toBeGreaterThanOrEqual(t.queryEmbeddingMs);
  expect(t.retrievalMs).toBeLessThanOrEqual(t.shortTermMs + t.userMessageMs + t.memoryWaitMs!);
  return t;
}

describe('turn timings in the prompt trace', () => {
  it('measures send → prompt ready, the retrieval and its query embedding on the core clock', async () => {
    const { turn } = await start();
    // Empty store: the search returns before embedding anything.
    const first = await turn('I bought a red bicycle in Lisbon last spring.');
    checkSpans(first.timings);
    expect(first.timings!.queryEmbeddingMs).toBe(0);
    expect(first.timings!.promptReadyMs).toBe(first.sentToPrompt);
    // The token counts before the prompt (short-term budget, assembly) took some fake time.
    expect(first.timings!.promptReadyMs).toBeGreaterThan(0);

    // The first exchange is now an episodic memory with a vector: the next query is embedded.
    const second = await turn('What colour is my bicycle?');
    expect(second.embedCalls).toBeGreaterThanOrEqual(1);
    checkSpans(second.timings);
    // The embedding step's time on the clock: the embedder's EMBED_MS, plus the token counts of the
    // short-term load that ran while it was awaited (the two overlap): a whole number of COUNT_MS.
    const overlapped = (second.timings!.queryEmbeddingMs - EMBED_MS) / COUNT_MS;
    expect(Number.isInteger(overlapped) && overlapped >= 0).toBe(true);
    expect(second.timings!.queryEmbeddingMs).toBeLessThanOrEqual(EMBED_MS + second.timings!.shortTermMs + second.timings!.userMessageMs);
    expect(second.timings!.retrievalMs).toBeGreaterThanOrEqual(EMBED_MS);
    expect(second.timings!.promptReadyMs).toBe(second.sentToPrompt);
    expect(second.timings!.promptReadyMs).toBeGreaterThan(second.timings!.retrievalMs);
  });

  it('reports no retrieval when long-term memory is off, and no query embedding without an embedder', async () => {
    const { core, turn } = await start();
    await turn('I bought a red bicycle in Lisbon last spring.');
    await core.updateSettings({ memoryTopK: 0 });
    const off = await turn('What colour is my bicycle?');
    checkSpans(off.timings);
    expect(off.timings).toMatchObject({ retrievalMs: 0, queryEmbeddingMs: 0, promptReadyMs: off.sentToPrompt });

    const keywords = await start({ withEmbedder: false });
    await keywords.turn('I bought a red bicycle in Lisbon last spring.');
    const lexical = await keywords.turn('What colour is my bicycle?');
    expect(lexical.embedCalls).toBe(0);
    checkSpans(lexical.timings);
    expect(lexical.timings).toMatchObject({ queryEmbeddingMs: 0, promptReadyMs: lexical.sentToPrompt });
  });
});

describe('the long-term reads start with the turn', () => {
  it('embeds the query before the user message is written, and still reports a failed retrieval after the message is kept', async () => {
    const inner = cores.embedder;
    const query = 'What colour is my bicycle?';
    const broken = 'Which city was the bicycle bought in?';
    /** Whether the user message row had been handed to IndexedDB (its `creating` hook) when the query was embedded. */
    const storedAtEmbed: boolean[] = [];
    const written = new Set<string>();
    const embedder: Embedder = {
      modelId: inner.modelId,
      dimension: inner.dimension,
      async embed(texts, signal) {
        if (texts.length === 1 && (texts[0] === query || texts[0] === broken)) {
          storedAtEmbed.push(written.has(texts[0]!));
          if (texts[0] === broken) throw new EngineError('embedding', 'The embedding worker was killed');
        }
        return inner.embed(texts, signal);
      },
    };
    const engine = createScriptedEngine({
      fallback: (request) => (request.responseFormat?.type === 'json_object' ? '{"topic": "chat", "facts": [], "preferences": []}' : 'Noted.'),
    });
    const { core, db } = await cores.start({ chat: () => engine, embedder: () => embedder });
    db.messages.hook('creating', (_key, row) => {
      if (row.role === 'user') written.add(row.content);
    });
    const conversation = await core.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    await core.chat.send({ conversationId: conversation.id, text: 'I bought a red bicycle in Lisbon last spring.', requestId: 'r1' });
    await core.jobs.drain();

    const answered = await core.chat.send({ conversationId: conversation.id, text: query, requestId: 'r2' });
    expect(answered.assistantMessage.status).toBe('complete');
    // A retrieval run after the write (the order before) would have seen the row already written.
    expect(storedAtEmbed).toEqual([false]);
    await core.jobs.drain();

    // The retrieval fails while the message is being written: the message is kept and the reply says why.
    const failed = await core.chat.send({ conversationId: conversation.id, text: broken, requestId: 'r3' });
    expect(storedAtEmbed).toEqual([false, false]);
    expect(failed.assistantMessage).toMatchObject({ status: 'error', content: '', errorInfo: { domain: 'engine', code: 'embedding' } });
    const messages = await core.conversations.messages(conversation.id);
    expect(messages.slice(-2).map((m) => [m.role, m.content, m.status])).toEqual([
      ['user', broken, 'complete'],
      ['assistant', '', 'error'],
    ]);
  });
});
