/**
 * The summary strategy (progressive summary of the whole conversation). The summarizer LLM is
 * faked at the ChatEngine boundary with the scripted engine (a real instruction-following model
 * cannot run in unit tests); storage, jobs, prompts and parsing are real.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/engines/types';
import { createStrategy, readSummaryState, registerShortTermJobs, SUMMARY_JOB } from '../../src/memory/short-term';
import { createScriptedEngine, type ScriptedEngine } from '../helpers/scripted-engine';
import { createHarness, wordCounter, type Harness } from '../../bench/data/strategy-harness';

let h: Harness;
let engine: ScriptedEngine;
let t = 1_000_000;
afterEach(async () => h?.close());

function setup(contextWindow = 10_000_000) {
  t = 1_000_000;
  engine = createScriptedEngine({ contextWindow });
  h = createHarness({ counter: wordCounter(), engine, now: () => t });
  registerShortTermJobs(h.jobs, h.deps);
}
const summaryJson = (summary: string) => JSON.stringify({ summary });
const linesOf = (r: ChatRequest) => r.messages[1]!.content.split('New lines of conversation:\n')[1]!.split('\n\nReturn the JSON')[0]!;

describe('summary strategy', () => {
  it('updates the summary after each exchange and then returns only the summary', async () => {
    setup();
    const s = createStrategy({ kind: 'summary' }, h.deps);
    await h.addExchange('c1', 'My name is Ana and I live in Porto.', 'Nice to meet you, Ana!');
    engine.push(summaryJson('The user is Ana, who lives in Porto.'));
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    expect(engine.requests).toHaveLength(0); // nothing ran yet: summarization is a background job
    await h.jobs.start();
    await h.jobs.drain();
    let ctx = await s.load('c1', { userText: 'What is my name?', budgetTokens: 1000 });
    expect(ctx).toEqual({ summary: 'The user is Ana, who lives in Porto.', entities: [], retrieved: [], recent: [] });

    await h.addExchange('c1', 'I adopted a dog named Bolt on 3 May.', 'Congratulations on Bolt!');
    engine.push(summaryJson('The user is Ana, who lives in Porto. She adopted a dog, Bolt, on 3 May.'));
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.drain();
    // The second call saw the previous summary once and only the new exchange.
    const second = engine.requests[1]!.messages[1]!.content;
    expect(second).toContain('Previous summary:\nThe user is Ana, who lives in Porto.\n');
    expect(linesOf(engine.requests[1]!)).toBe('User: I adopted a dog named Bolt on 3 May.\nAssistant: Congratulations on Bolt!');
    ctx = await s.load('c1', { userText: 'x', budgetTokens: 1000 });
    expect(ctx.summary).toBe('The user is Ana, who lives in Porto. She adopted a dog, Bolt, on 3 May.');
    expect(ctx.recent).toEqual([]);
  });

  it('returns not-yet-summarized messages verbatim and leaves an unanswered message for later', async () => {
    setup();
    const s = createStrategy({ kind: 'summary' }, h.deps);
    await h.addExchange('c1', 'I adopted a dog named Bolt.', 'Congratulations on Bolt!');
    await h.addMessage('c1', 'user', 'three');
    await h.addMessage('c1', 'assistant', '', 'error');
    // load() sees pending exchanges and enqueues the job (self-healing after a strategy switch).
    const ctx = await s.load('c1', { userText: 'four', budgetTokens: 1000 });
    expect(ctx.recent.map((m) => m.content)).toEqual(['I adopted a dog named Bolt.', 'Congratulations on Bolt!', 'three']);
    expect(await h.db.jobs.where('type').equals(SUMMARY_JOB).count()).toBe(1);
    engine.push(summaryJson('The user adopted a dog named Bolt.'));
    await h.jobs.start();
    await h.jobs.drain();
    expect(linesOf(engine.requests[0]!)).toBe('User: I adopted a dog named Bolt.\nAssistant: Congratulations on Bolt!');
    const after = await s.load('c1', { userText: 'four', budgetTokens: 1000 });
    expect(after.summary).toBe('The user adopted a dog named Bolt.');
    expect(after.recent.map((m) => m.content)).toEqual(['three']);
  });

  it('splits a long backlog into chunks that fit the summarizer context window, committing each', async () => {
    // Window 2,300 tokens: reply room 2·512+64 = 1088, the prompt's fixed text ~160 words
    // → room for the lines is a few hundred words, so 30 exchanges of 40 words need several calls.
    setup(2300);
    // The scripted summary reuses the first words of the lines it is given (so it is grounded in them).
    engine = createScriptedEngine({ contextWindow: 2300, fallback: (r) => summaryJson(linesOf(r).split(' ').slice(1, 6).join(' ')) });
    h.setEngine(engine);
    const words = (p: string) => Array.from({ length: 20 }, (_, i) => `${p}${i}`).join(' ');
    for (let i = 0; i < 30; i++) await h.addExchange('c1', words(`u${i}x`), words(`a${i}x`));
    await createStrategy({ kind: 'summary' }, h.deps).onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.start();
    await h.jobs.drain();
    expect(engine.requests.length).toBeGreaterThan(1);
    // Each message went to exactly one call, in order, and the watermark reached the end.
    const lines = engine.requests.flatMap((r) => linesOf(r).split('\n'));
    expect(lines).toHaveLength(60);
    expect(lines[0]).toBe(`User: ${words('u0x')}`);
    expect(lines[59]).toBe(`Assistant: ${words('a29x')}`);
    for (const r of engine.requests) expect(r.maxTokens).toBe(2 * 512 + 64);
    expect(await readSummaryState(h.db, 'c1', 'summary')).toMatchObject({ coveredSeq: 59, folds: engine.requests.length });
  });

  it('keeps the previous summary when the model answers with a story, and says why', async () => {
    setup();
    const s = createStrategy({ kind: 'summary' }, h.deps);
    await h.addExchange('c1', 'I love hiking.', 'Great hobby!');
    engine.push(summaryJson('The user loves hiking.'));
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.start();
    await h.jobs.drain();
    await h.addExchange('c1', 'I am allergic to peanuts.', 'I will remember that.');
    engine.push('Once upon a time, a little bunny hopped into the garden and found a carrot.');
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.drain();
    const state = await readSummaryState(h.db, 'c1', 'summary');
    expect(state).toMatchObject({ summary: 'The user loves hiking.', coveredSeq: 1, rejectedReplies: 1, lastError: 'no JSON object in the reply' });
    const ctx = await s.load('c1', { userText: 'x', budgetTokens: 1000 });
    expect(ctx.summary).toBe('The user loves hiking.');
    expect(ctx.recent.map((m) => m.content)).toEqual(['I am allergic to peanuts.', 'I will remember that.']);
  });
});

describe('a summary that forgets the previous one', () => {
  /** Folds a first exchange into `first`, then a second exchange with `replies` queued. */
  async function twoFolds(first: [string, string, string], second: [string, string], ...replies: string[]) {
    setup();
    const s = createStrategy({ kind: 'summary' }, h.deps);
    await h.addExchange('c1', first[0], first[1]);
    engine.push(summaryJson(first[2]));
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.start();
    await h.jobs.drain();
    await h.addExchange('c1', second[0], second[1]);
    engine.push(...replies);
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.drain();
    return s;
  }

  it('English: a fold that drops Ana and Lisbon (a previous summary of fewer than 8 key words) is asked again, naming them, and the good reply is kept', async () => {
    const s = await twoFolds(
      ['My sister Ana lives in Lisbon.', 'Lisbon is lovely!', 'The user said: My sister Ana lives in Lisbon.'],
      ['I adopted a cat called Miso.', 'Congratulations on Miso!'],
      summaryJson('The user adopted a cat called Miso.'),
      summaryJson("The user's sister Ana lives in Lisbon. The user adopted a cat called Miso."),
    );
    expect(engine.requests).toHaveLength(3);
    expect(engine.requests[2]!.messages[1]!.content).toContain('Important: an earlier answer left out facts of the previous summary: Ana, Lisbon.');
    expect(engine.requests[1]!.messages[1]!.content).not.toContain('Important:');
    const state = await readSummaryState(h.db, 'c1', 'summary');
    expect(state).toMatchObject({
      summary: "The user's sister Ana lives in Lisbon. The user adopted a cat called Miso.",
      coveredSeq: 3,
      folds: 2,
      lastError: null,
    });
    expect((await s.load('c1', { userText: 'x', budgetTokens: 1000 })).recent).toEqual([]);
  });

  it('Chinese: a fold that forgets 安娜 and 里斯本 twice is rejected; the previous summary and the new turns are both kept', async () => {
    const s = await twoFolds(
      ['我妹妹安娜住在里斯本。', '里斯本很美！', '用户的妹妹安娜住在里斯本。'],
      ['我养了一只猫，叫味噌。', '恭喜你有了味噌！'],
      summaryJson('用户养了一只猫，叫味噌。'),
      summaryJson('用户养了一只叫味噌的猫。'),
    );
    expect(engine.requests).toHaveLength(3); // one corrective retry, bounded
    expect(engine.requests[2]!.messages[1]!.content).toContain('left out facts of the previous summary: 安娜, 里斯本.');
    const state = await readSummaryState(h.db, 'c1', 'summary');
    expect(state).toMatchObject({ summary: '用户的妹妹安娜住在里斯本。', coveredSeq: 1, rejectedReplies: 1 });
    expect(state.lastError).toMatch(/^summary drops the previous summary/);
    const job = (await h.db.jobs.where('status').equals('queued').toArray())[0];
    expect(job).toMatchObject({ type: SUMMARY_JOB, attempts: 1 }); // retried later with backoff, up to the job's maxAttempts
    const ctx = await s.load('c1', { userText: 'x', budgetTokens: 1000 });
    expect(ctx.summary).toBe('用户的妹妹安娜住在里斯本。');
    expect(ctx.recent.map((m) => m.content)).toEqual(['我养了一只猫，叫味噌。', '恭喜你有了味噌！']);
  });
});
