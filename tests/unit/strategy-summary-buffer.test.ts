/**
 * Summary + buffer: the fold boundary on hand-computed scripted conversations, exactly-once
 * folding, background execution, and robustness to garbage summarizer replies. The LLM is the one
 * boundary faked here (tests/helpers/scripted-engine.ts): a real instruction-following model
 * cannot run in unit tests. Token counts use a word counter (100 tokens per word, no template
 * overhead) so every boundary can be computed by hand; one test uses the real Qwen2.5 tokenizer.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatEngine, ChatRequest, ChatResult } from '../../src/engines/types';
import { createStrategy, FOLD_JOB, readSummaryState, registerShortTermJobs } from '../../src/memory/short-term';
import { createScriptedEngine, type ScriptedEngine } from '../helpers/scripted-engine';
import { createHarness, wordCounter, type Harness } from '../../bench/data/strategy-harness';
import { qwenCounter } from '../../bench/data/qwen-tokenizer';

let h: Harness;
let engine: ScriptedEngine;
let t = 1_000_000;
afterEach(async () => h?.close());

/** Harness with the word counter (100 tokens/word), a scripted engine with a huge window, jobs registered, fake clock. */
function setup(options: { counter?: ReturnType<typeof wordCounter> } = {}) {
  t = 1_000_000;
  engine = createScriptedEngine({ contextWindow: 10_000_000 });
  h = createHarness({ counter: options.counter ?? wordCounter(0, 0, 100), engine, now: () => t });
  registerShortTermJobs(h.jobs, h.deps);
}
const summaryJson = (summary: string) => JSON.stringify({ summary });
/** Stores exchanges i = from..to: user "u{i} alpha beta gamma", assistant "a{i} delta epsilon zeta" (4 words = 400 tokens each). */
async function exchanges(from: number, to: number, conversationId = 'c1') {
  for (let i = from; i <= to; i++) await h.addExchange(conversationId, `u${i} alpha beta gamma`, `a${i} delta epsilon zeta`);
}
/** The "New lines of conversation" part of a summarizer request. */
const linesOf = (r: ChatRequest) => r.messages[1]!.content.split('New lines of conversation:\n')[1]!.split('\n\nReturn the JSON')[0]!;
const previousOf = (r: ChatRequest) => r.messages[1]!.content.split('Previous summary:\n')[1]!.split('\n\nNew lines')[0]!;

describe('summary + buffer boundary', () => {
  it('folds against the room the prompt has when that is less than maxTokens (a small context window)', async () => {
    setup();
    await h.addConversation('c1', { kind: 'summary-buffer', maxTokens: 2000 });
    const s = createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps);
    await exchanges(1, 2); // 4 messages × 400 = 1600 tokens: within maxTokens 2000
    const roomy = await s.load('c1', { userText: 'next', budgetTokens: 100_000 });
    expect(roomy.pending).toBeUndefined();
    expect(await h.db.jobs.where('type').equals(FOLD_JOB).count()).toBe(0);
    // The model's window leaves 1000 tokens for short-term context: S 0 + B 1600 > 1000 → the 2 oldest
    // messages overflow (B → 800), and the fold job gets the lower limit.
    const tight = await s.load('c1', { userText: 'next', budgetTokens: 1000 });
    expect(tight.pending).toEqual({ messages: 2, lastError: null });
    expect(tight.recent).toHaveLength(4); // not dropped before they are summarized
    const job = await h.db.jobs.where('type').equals(FOLD_JOB).first();
    expect(job?.payload).toEqual({ conversationId: 'c1', maxTokens: 1000 });
    // Summary "s1" (100) + 800 = 900 ≤ 1000: one fold of exactly u1, a1.
    engine.push(summaryJson('s1'));
    await h.jobs.start();
    await h.jobs.drain();
    expect(engine.requests).toHaveLength(1);
    expect(linesOf(engine.requests[0]!)).toBe('User: u1 alpha beta gamma\nAssistant: a1 delta epsilon zeta');
    const after = await s.load('c1', { userText: 'next', budgetTokens: 1000 });
    expect(after.summary).toBe('s1');
    expect(after.recent.map((m) => m.content)).toEqual(['u2 alpha beta gamma', 'a2 delta epsilon zeta']);
  });

  it('folds exactly the oldest messages that overflow, then the new overflow after the summary grew', async () => {
    setup();
    await h.addConversation('c1', { kind: 'summary-buffer', maxTokens: 2000 });
    const s = createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps);
    await exchanges(1, 5); // 10 messages × 400 = 4000 tokens
    // Before any fold: nothing is dropped, everything verbatim.
    const before = await s.load('c1', { userText: 'next', budgetTokens: 100_000 });
    expect(before.summary).toBeNull();
    expect(before.recent).toHaveLength(10);
    expect(await h.db.jobs.where('type').equals(FOLD_JOB).count()).toBe(1);
    // S = 0, B = 4000 > 2000 → fold the 5 oldest (B → 2000). New summary: 3 words = 300 → 300 + 2000 > 2000
    // → fold 1 more (B → 1600). New summary: 4 words = 400 → 400 + 1600 = 2000 ≤ 2000: done.
    engine.push(summaryJson('s1 s2 s3'), summaryJson('s1 s2 s3 s4'));
    await h.jobs.start();
    await h.jobs.drain();
    expect(engine.requests).toHaveLength(2);
    expect(linesOf(engine.requests[0]!)).toBe(
      'User: u1 alpha beta gamma\nAssistant: a1 delta epsilon zeta\nUser: u2 alpha beta gamma\nAssistant: a2 delta epsilon zeta\nUser: u3 alpha beta gamma',
    );
    expect(previousOf(engine.requests[0]!)).toBe('(none)');
    expect(linesOf(engine.requests[1]!)).toBe('Assistant: a3 delta epsilon zeta');
    expect(previousOf(engine.requests[1]!)).toBe('s1 s2 s3');
    const state = await readSummaryState(h.db, 'c1', 'summary-buffer');
    expect(state).toMatchObject({ summary: 's1 s2 s3 s4', coveredSeq: 5, folds: 2, lastError: null });
    const after = await s.load('c1', { userText: 'next', budgetTokens: 100_000 });
    expect(after.summary).toBe('s1 s2 s3 s4');
    expect(after.recent.map((m) => m.content)).toEqual(['u4 alpha beta gamma', 'a4 delta epsilon zeta', 'u5 alpha beta gamma', 'a5 delta epsilon zeta']);

    // One more exchange: S 400 + B 2400 = 2800 → fold exactly the 2 oldest buffered messages (→ 400 + 1600).
    await exchanges(6, 6);
    engine.push(summaryJson('s1 s2 s3 s4'));
    await s.onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    await h.jobs.drain();
    expect(engine.requests).toHaveLength(3);
    expect(linesOf(engine.requests[2]!)).toBe('User: u4 alpha beta gamma\nAssistant: a4 delta epsilon zeta');
    expect((await readSummaryState(h.db, 'c1', 'summary-buffer')).coveredSeq).toBe(7);
  });

  it('a turn reads only the messages after the fold watermark, however long the conversation', async () => {
    setup();
    await h.addConversation('c1', { kind: 'summary-buffer', maxTokens: 2000 });
    const s = createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps);
    await exchanges(1, 100); // seq 0..199
    // 196 messages folded (seq 0..195): the buffer is the last two exchanges (seq 196..199).
    await h.db.strategyState.put({
      conversationId: 'c1',
      strategy: 'summary-buffer',
      state: { summary: 'earlier talk', coveredSeq: 195, folds: 1, lastError: null, rejectedReplies: 0, updatedAt: t },
      updatedAt: t,
    });
    let read = 0;
    const counting = (row: unknown) => {
      read += 1;
      return row;
    };
    h.db.messages.hook('reading', counting);
    const context = await s.load('c1', { userText: 'next', budgetTokens: 100_000 });
    h.db.messages.hook('reading').unsubscribe(counting);
    expect(context.summary).toBe('earlier talk');
    expect(context.recent.map((m) => m.content)).toEqual([
      'u99 alpha beta gamma',
      'a99 delta epsilon zeta',
      'u100 alpha beta gamma',
      'a100 delta epsilon zeta',
    ]);
    expect(read).toBe(4);
  });

  it('does nothing while summary + buffer fit, and never folds the newest message', async () => {
    setup();
    const s = createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps);
    await exchanges(1, 2); // 1600 tokens ≤ 2000
    await s.onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    expect(await h.db.jobs.count()).toBe(0);
    // One giant reply (30 words = 3000 tokens): everything before it is folded, it stays verbatim.
    await h.addExchange('c1', 'short question here', Array.from({ length: 30 }, (_, i) => `w${i}`).join(' '));
    engine.push(summaryJson('alpha beta gamma; short question'));
    await s.onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    await h.jobs.start();
    await h.jobs.drain();
    const ctx = await s.load('c1', { userText: 'next', budgetTokens: 100_000 });
    expect(ctx.summary).toBe('alpha beta gamma; short question');
    expect(ctx.recent).toHaveLength(1);
    expect(ctx.recent[0]!.content.startsWith('w0 w1')).toBe(true);
  });

  it('computes the boundary with the real Qwen2.5 tokenizer (message cost = tokens + 5)', async () => {
    const qwen = qwenCounter();
    setup({ counter: qwen as never });
    const corpus = JSON.parse(readFileSync(new URL('../../bench/data/token-corpus.json', import.meta.url), 'utf8'));
    const texts: string[] = [0, 1, 2, 3].flatMap((i) => [corpus.calibration.en[i], corpus.calibration.zh[i]]);
    for (let i = 0; i < texts.length; i += 2) await h.addExchange('c1', texts[i]!, texts[i + 1]!);
    const costs = texts.map((x) => qwen.count(x) + 5);
    const total = costs.reduce((a, b) => a + b, 0);
    // Limit = total − the two oldest messages + 1 → the first fold must move exactly those two.
    const limit = total - costs[0]! - costs[1]! + 1;
    expect(limit).toBeGreaterThanOrEqual(200);
    let expectedFold = 0;
    for (let rest = total; rest > limit; rest -= costs[expectedFold]!, expectedFold++);
    await h.addConversation('c1', { kind: 'summary-buffer', maxTokens: limit });
    const gist = "The user's sister Emma marries in Lisbon on June 14; the user prefers morning flights. 艾玛在里斯本结婚。";
    engine.push(...Array.from({ length: 12 }, () => summaryJson(gist)));
    await createStrategy({ kind: 'summary-buffer', maxTokens: limit }, h.deps).onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    await h.jobs.start();
    await h.jobs.drain();
    // First fold moves exactly `expectedFold` (= 2) oldest messages.
    expect(expectedFold).toBe(2);
    expect(linesOf(engine.requests[0]!)).toBe(`User: ${texts[0]!.trim()}\nAssistant: ${texts[1]!.trim()}`);
    const state = await readSummaryState(h.db, 'c1', 'summary-buffer');
    const buffer = (await h.db.messages.where('conversationId').equals('c1').sortBy('seq')).filter((m) => m.seq > state.coveredSeq);
    expect(qwen.count(state.summary) + buffer.reduce((a, m) => a + qwen.count(m.content) + 5, 0)).toBeLessThanOrEqual(limit);
  });
});

describe('summary + buffer in the background', () => {
  it('onExchange returns without calling the model; the fold runs later in the job queue', async () => {
    setup();
    const s = createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps);
    await exchanges(1, 5);
    await s.onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' }); // queue not started
    expect(engine.requests).toHaveLength(0);
    expect(await h.db.jobs.where('type').equals(FOLD_JOB).count()).toBe(1);
    // The next turn is not blocked: load answers at once with every message verbatim.
    expect((await s.load('c1', { userText: 'next', budgetTokens: 100_000 })).recent).toHaveLength(10);
  });

  it('waits without failing while no model is loaded', async () => {
    setup();
    h.setEngine(null);
    await exchanges(1, 5);
    await createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps).onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    await h.jobs.start();
    await h.jobs.drain();
    const job = (await h.db.jobs.toArray())[0]!;
    expect(job).toMatchObject({ status: 'queued', attempts: 0, runAfter: t + 30_000 });
    expect((await readSummaryState(h.db, 'c1', 'summary-buffer')).coveredSeq).toBe(-1);
  });

  it('is preempted by a chat turn and re-runs afterwards, folding once', async () => {
    setup();
    let started!: () => void;
    const startedP = new Promise<void>((r) => (started = r));
    let calls = 0;
    // An engine that blocks until aborted on its first call (a long generation), then answers.
    const slow: ChatEngine = {
      ...engine,
      async complete(request: ChatRequest): Promise<ChatResult> {
        calls += 1;
        if (calls === 1) {
          started();
          await new Promise<void>((resolve) => request.signal?.addEventListener('abort', () => resolve()));
          return { content: '{"summary": "half', finishReason: 'abort', usage: null };
        }
        return { content: summaryJson(calls === 2 ? 's1 s2 s3' : 's1 s2 s3 s4'), finishReason: 'stop', usage: null };
      },
    };
    h.setEngine(slow);
    await exchanges(1, 5);
    await createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps).onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    await h.jobs.start();
    await startedP;
    const order: string[] = [];
    await h.jobs.runForeground(async () => void order.push(`turn sees coveredSeq ${(await readSummaryState(h.db, 'c1', 'summary-buffer')).coveredSeq}`));
    await h.jobs.drain();
    expect(order).toEqual(['turn sees coveredSeq -1']);
    expect(calls).toBe(3);
    expect(await readSummaryState(h.db, 'c1', 'summary-buffer')).toMatchObject({ summary: 's1 s2 s3 s4', coveredSeq: 5, folds: 2 });
  });

  it('never folds twice when a job is re-run after a kill (committed but not marked done)', async () => {
    setup();
    await exchanges(1, 5);
    engine.push(summaryJson('s1 s2 s3'), summaryJson('s1 s2 s3 s4'));
    await createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps).onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    await h.jobs.start();
    await h.jobs.drain();
    await h.jobs.stop();
    expect(engine.requests).toHaveLength(2);
    // Simulate a context killed right after the commit: the same job is left `running`.
    const job = (await h.db.jobs.toArray())[0]!;
    await h.db.jobs.put({ ...job, status: 'running' });
    await h.jobs.start();
    await h.jobs.drain();
    expect(engine.requests).toHaveLength(2);
    expect(await readSummaryState(h.db, 'c1', 'summary-buffer')).toMatchObject({ summary: 's1 s2 s3 s4', coveredSeq: 5, folds: 2 });
    // Every folded line went to the summarizer exactly once; the summary was given back once per call.
    const lines = engine.requests.flatMap((r) => linesOf(r).split('\n'));
    expect(new Set(lines).size).toBe(lines.length);
    expect(lines).toHaveLength(6);
  });
});

describe('garbage summarizer replies never corrupt the stored summary', () => {
  const story =
    'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. One day, she saw a big red ball in the park and wanted to play with it.';
  const garbage: [string, string | ChatResult][] = [
    ["a children's story (stories260K)", story],
    ['an empty string', ''],
    ['truncated JSON', '{"summary": "The user is called Li Lei and lives in'],
    ['a reply cut at the token limit', { content: '{"summary": "The user is called Li Lei"', finishReason: 'length', usage: null }],
    ['10x-too-long text', summaryJson(Array.from({ length: 200 }, (_, i) => `word${i}`).join(' '))],
    ['an empty summary', summaryJson('   ')],
    ['JSON of the wrong shape', '{"result": "ok", "text": 3}'],
    ['JSON inside a story', `${story} {"summary": 7}`],
    ['a story inside valid JSON (grammar-constrained decoding)', summaryJson(story)],
    ['a grammar-constrained reply with no content', '{ "summary" : "Yes," }'],
  ];

  for (const [what, reply] of garbage) {
    it(`keeps the previous summary and every unsummarized message on ${what}`, async () => {
      setup();
      await exchanges(1, 5);
      engine.push(summaryJson('s1 s2 s3'), summaryJson('s1 s2 s3 s4'));
      const s = createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps);
      await s.onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
      await h.jobs.start();
      await h.jobs.drain();
      const good = await readSummaryState(h.db, 'c1', 'summary-buffer');
      expect(good.coveredSeq).toBe(5);

      await exchanges(6, 6);
      if (typeof reply === 'string') engine.push(reply);
      else h.setEngine({ ...engine, complete: async () => reply });
      await s.onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
      await h.jobs.drain();
      const state = await readSummaryState(h.db, 'c1', 'summary-buffer');
      expect(state).toMatchObject({ summary: 's1 s2 s3 s4', coveredSeq: 5, folds: 2, rejectedReplies: 1 });
      expect(state.lastError).toBeTruthy();
      const job = (await h.db.jobs.where('status').equals('queued').toArray())[0];
      expect(job).toMatchObject({ type: FOLD_JOB, attempts: 1 }); // retried later with backoff
      expect(job!.lastError).toMatch(/^Summary reply rejected: /);
      const ctx = await s.load('c1', { userText: 'next', budgetTokens: 100_000 });
      expect(ctx.summary).toBe('s1 s2 s3 s4');
      expect(ctx.recent.map((m) => m.content)).toEqual([
        'u4 alpha beta gamma',
        'a4 delta epsilon zeta',
        'u5 alpha beta gamma',
        'a5 delta epsilon zeta',
        'u6 alpha beta gamma',
        'a6 delta epsilon zeta',
      ]);

      // A good reply later heals it.
      h.setEngine(engine);
      engine.push(summaryJson('s1 s2 s3 s4 s5'));
      t += 2_000;
      await h.jobs.drain();
      expect(await readSummaryState(h.db, 'c1', 'summary-buffer')).toMatchObject({
        summary: 's1 s2 s3 s4 s5',
        coveredSeq: 7,
        lastError: null,
        rejectedReplies: 0,
      });
    });
  }

  it('a fold that forgets the short previous summary (Ana, Lisbon) is retried once naming them, then rejected: the turns stay verbatim until a good fold', async () => {
    setup();
    // 100 tokens per word, limit 1000: the first fold takes exchange 1 (600 + 300), the second the next user line.
    await h.addExchange('c1', 'My sister Ana lives in Lisbon', 'Lisbon is lovely');
    await h.addExchange('c1', 'I adopted a cat called Miso', 'Congratulations on Miso');
    const forgetful = summaryJson('The user adopted a cat called Miso.');
    engine.push(summaryJson("The user's sister Ana lives in Lisbon."), forgetful, forgetful);
    const s = createStrategy({ kind: 'summary-buffer', maxTokens: 1000 }, h.deps);
    await s.onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    await h.jobs.start();
    await h.jobs.drain();
    expect(engine.requests.map((r) => linesOf(r))).toEqual([
      'User: My sister Ana lives in Lisbon\nAssistant: Lisbon is lovely',
      'User: I adopted a cat called Miso',
      'User: I adopted a cat called Miso',
    ]);
    expect(engine.requests[2]!.messages[1]!.content).toContain('left out facts of the previous summary: Ana, Lisbon.');
    const state = await readSummaryState(h.db, 'c1', 'summary-buffer');
    expect(state).toMatchObject({
      summary: "The user's sister Ana lives in Lisbon.",
      folds: 1,
      rejectedReplies: 1,
      lastError: 'summary drops key facts of the previous summary: Ana, Lisbon',
    });
    const ctx = await s.load('c1', { userText: 'next', budgetTokens: 100_000 });
    expect(ctx.summary).toBe("The user's sister Ana lives in Lisbon.");
    expect(ctx.recent.map((m) => m.content)).toEqual(['I adopted a cat called Miso', 'Congratulations on Miso']);
    expect(ctx.pending).toMatchObject({ messages: 1 });

    engine.push(summaryJson('Sister Ana lives in Lisbon; adopted cat Miso.')); // 8 words: within twice the 400-token target
    t += 2_000;
    await h.jobs.drain();
    expect(await readSummaryState(h.db, 'c1', 'summary-buffer')).toMatchObject({
      summary: 'Sister Ana lives in Lisbon; adopted cat Miso.',
      folds: 2,
      lastError: null,
    });
  });

  it('rejects an English summary of a Chinese conversation, and keeps Chinese text untranslated in the prompt', async () => {
    setup({ counter: wordCounter(0, 0, 100) });
    await h.addExchange('c1', '我叫李雷 住在杭州 我的猫叫麻薯', '好的 我记住了 你的猫叫麻薯');
    await h.addExchange('c1', '下个月 我要去北京 参加面试', '祝你面试顺利');
    engine.push(summaryJson('Li Lei likes Mochi')); // 400 tokens: short enough, wrong language
    await createStrategy({ kind: 'summary-buffer', maxTokens: 600 }, h.deps).onExchange('c1', { userMessageId: 'x', assistantMessageId: 'y' });
    await h.jobs.start();
    await h.jobs.drain();
    const prompt = engine.requests[0]!.messages;
    expect(prompt[0]!.content).toContain('请用简体中文写');
    expect(prompt[1]!.content).toContain('User: 我叫李雷 住在杭州 我的猫叫麻薯');
    const state = await readSummaryState(h.db, 'c1', 'summary-buffer');
    expect(state.summary).toBe('');
    expect(state.lastError).toMatch(/language/);
  });

  it('reads a corrupt stored state as "nothing summarized" (all messages verbatim) and repairs it on the next fold', async () => {
    setup();
    await exchanges(1, 2);
    await h.db.strategyState.put({ conversationId: 'c1', strategy: 'summary-buffer', state: { summary: 42, coveredSeq: 'x' }, updatedAt: 0 });
    const s = createStrategy({ kind: 'summary-buffer', maxTokens: 2000 }, h.deps);
    const ctx = await s.load('c1', { userText: 'next', budgetTokens: 100_000 });
    expect(ctx.summary).toBeNull();
    expect(ctx.recent).toHaveLength(4);
    expect((await readSummaryState(h.db, 'c1', 'summary-buffer')).lastError).toMatch(/unreadable/);
  });
});
