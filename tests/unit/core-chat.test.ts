/**
 * The whole core (`createCore`) in Node: real Dexie (fake-indexeddb), real job queue, real
 * long-term store (MiniSearch + Voy), real strategies, and real embeddings through
 * transformers.js on a generated fixture model (tests/helpers/core-harness.ts). Only the chat
 * model is scripted (tests/helpers/scripted-engine.ts): an instruction-following LLM cannot run
 * here. The browser-only engine manager is replaced by the harness's stand-in.
 */
import { describe, expect, it } from 'vitest';
import type { Core, CoreDeps } from '../../src/core/index';
import { RecallDB } from '../../src/db/schema';
import type { ChatEngine } from '../../src/engines/types';
import { readProfile } from '../../src/memory/long-term/profile-summary';
import { PROFILE_JSON_SCHEMA } from '../../src/memory/long-term/profile-summary/llm';
import { FIXTURE_EMBEDDER_ID, useTestCores } from '../helpers/core-harness';
import { createScriptedEngine, type ScriptedEngine } from '../helpers/scripted-engine';

const MODEL_ID = FIXTURE_EMBEDDER_ID;
/** What stories260K writes whatever it is asked (a real sample of its output). */
const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play in the park with her big red ball.';

const cores = useTestCores();
let core: Core | null = null;
let db: RecallDB;
const deltas: string[] = [];

/** Starts a core serving `chat` and the fixture embedder (or none); streamed reply pieces go to `deltas`. */
async function start(chat: ChatEngine | null, withEmbedder = true, events: Partial<CoreDeps['events']> = {}): Promise<Core> {
  deltas.length = 0;
  ({ core, db } = await cores.start({
    chat: () => chat,
    embedder: () => (withEmbedder ? cores.embedder : null),
    events: { chatDelta: (e) => void deltas.push(e.delta), ...events },
  }));
  return core;
}

/** A scripted model that answers chat turns with `reply` and every background job with story text. */
function model(reply: (userText: string) => string): ScriptedEngine {
  return createScriptedEngine({
    fallback: (request) => {
      const last = request.messages[request.messages.length - 1]!;
      return request.responseFormat?.type === 'json_object' ? STORY : reply(last.content);
    },
  });
}

describe('the core, end to end in Node', () => {
  it('runs a turn: stores both messages and the prompt trace, streams the reply, then ingests the exchange', async () => {
    const engine = model(() => 'Nice to meet you, Mengqianxun!');
    const c = await start(engine);
    const conversation = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    const result = await c.chat.send({ conversationId: conversation.id, text: '你好，我是梦千寻，我喜欢打篮球，你是？', requestId: 'r1' });

    expect(result.assistantMessage).toMatchObject({ role: 'assistant', status: 'complete', content: 'Nice to meet you, Mengqianxun!', seq: 1 });
    expect(result.userMessage).toMatchObject({ role: 'user', seq: 0 });
    expect(deltas.join('')).toBe('Nice to meet you, Mengqianxun!');
    expect(deltas.length).toBeGreaterThan(1);
    const trace = (await db.promptTraces.get(result.assistantMessage.id))!.trace;
    expect(trace.messages[trace.messages.length - 1]).toEqual({ role: 'user', content: '你好，我是梦千寻，我喜欢打篮球，你是？' });
    expect(trace.sections.map((s) => s.kind)).toEqual(['system', 'user']);
    expect((await c.conversations.get(conversation.id))!.title).toBe('你好，我是梦千寻，我喜欢打篮球，你是？');

    await c.jobs.drain();
    const memories = await db.memories.toArray();
    const episodic = memories.filter((m) => m.kind === 'episodic');
    expect(episodic).toHaveLength(1);
    expect(episodic[0]).toMatchObject({
      sourceConversationId: conversation.id,
      sourceMessageIds: [result.userMessage.id, result.assistantMessage.id],
      embeddingModel: MODEL_ID,
    });
    expect(episodic[0]!.text).toContain('我喜欢打篮球');
    // The scripted model answered the extraction job with a story: nothing but the episodic round was stored.
    expect(memories).toHaveLength(1);
  });

  it('tells open panels what changed, and serves the reply streaming now to a panel opened mid-reply', async () => {
    const engine = model(() => 'Once upon a time there was a small dragon who liked tea.');
    const changed: (string | null)[] = [];
    const live: (string | null)[] = [];
    const announcedAtDelta: number[] = [];
    let c: Core | null = null;
    c = await start(engine, true, {
      conversations: (e) => void changed.push(e.conversationId),
      chatDelta: (e) => {
        announcedAtDelta.push(changed.length);
        deltas.push(e.delta);
        live.push(c!.chat.live(e.conversationId)?.content ?? null);
      },
    });
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    expect(changed).toEqual([conversation.id]);
    const result = await c.chat.send({ conversationId: conversation.id, text: 'Tell me a story', requestId: 'r1' });
    // At every streamed piece, `live` held exactly the text streamed so far; afterwards nothing is live.
    expect(deltas.length).toBeGreaterThan(1);
    expect(live).toEqual(deltas.map((_, i) => deltas.slice(0, i + 1).join('')));
    expect(c.chat.live(conversation.id)).toBeNull();
    expect(result.assistantMessage.content).toBe(live[live.length - 1]);
    // The user message and the reply were each announced once they were stored; the user message's
    // event was held while the prompt was built and went out before the first streamed piece.
    expect(changed).toEqual([conversation.id, conversation.id, conversation.id]);
    expect(new Set(announcedAtDelta)).toEqual(new Set([2]));
    await c.conversations.update(conversation.id, { title: 'Dragons' });
    await c.conversations.delete(conversation.id);
    expect(changed.slice(3)).toEqual([conversation.id, conversation.id]);
    await c.eraseAll();
    expect(changed[changed.length - 1]).toBeNull();
  });

  it('announces saved settings to every open panel', async () => {
    const announced: number[] = [];
    const c = await start(
      model(() => 'ok'),
      true,
      { settings: (s) => void announced.push(s.memoryTopK) },
    );
    const saved = await c.updateSettings({ memoryTopK: 3 });
    expect(saved.memoryTopK).toBe(3);
    expect(announced).toEqual([3]);
  });

  it('remembers across conversations: the memory of conversation A is cited in conversation B', async () => {
    const c = await start(model(() => 'OK.'));
    const a = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    await c.chat.send({ conversationId: a.id, text: 'I love playing basketball on weekends', requestId: 'a1' });
    await c.jobs.drain();
    const b = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    const turn = await c.chat.send({ conversationId: b.id, text: 'which sport do I love playing?', requestId: 'b1' });
    const trace = (await db.promptTraces.get(turn.assistantMessage.id))!.trace;
    const cited = trace.memories.find((m) => m.text.includes('basketball'));
    expect(cited).toMatchObject({ sourceConversationId: a.id, sourceConversationTitle: 'I love playing basketball on weekends', kind: 'episodic' });
    expect(trace.messages[0]!.content).toContain('<long_term_memories>');
    expect(trace.messages[0]!.content).toContain('basketball');
  });

  it('a turn reads the conversations it cites by key, not every conversation', async () => {
    const c = await start(model(() => 'OK.'));
    const a = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    await c.chat.send({ conversationId: a.id, text: 'I love playing basketball on weekends', requestId: 'a1' });
    await c.jobs.drain();
    for (let i = 0; i < 30; i++) await c.conversations.create({ title: `other ${i}`, strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    const b = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    let read = 0;
    const counting = (row: unknown) => {
      read += 1;
      return row;
    };
    db.conversations.hook('reading', counting);
    const turn = await c.chat.send({ conversationId: b.id, text: 'which sport do I love playing?', requestId: 'b1' });
    db.conversations.hook('reading').unsubscribe(counting);
    const trace = (await db.promptTraces.get(turn.assistantMessage.id))!.trace;
    expect(trace.memories.find((m) => m.text.includes('basketball'))).toMatchObject({ sourceConversationTitle: 'I love playing basketball on weekends' });
    // b itself (the turn and its two appends) and the cited conversation a, not the 32 rows.
    expect(read).toBeLessThanOrEqual(5);
  });

  it('keeps the message and stores a clear error when no model is loaded', async () => {
    const c = await start(null);
    const conversation = await c.conversations.create({ strategy: { kind: 'buffer-window', k: 3 } });
    const result = await c.chat.send({ conversationId: conversation.id, text: 'hello?', requestId: 'r' });
    expect(result.assistantMessage).toMatchObject({ status: 'error', content: '', errorCode: 'not_loaded' });
    expect(result.assistantMessage.error).toMatch(/No language model is loaded/);
    expect((await c.conversations.messages(conversation.id)).map((m) => [m.role, m.content, m.status])).toEqual([
      ['user', 'hello?', 'complete'],
      ['assistant', '', 'error'],
    ]);
  });

  it('stops a reply mid-stream and keeps the partial text as aborted', async () => {
    const engine = model(() => 'one two three four five six seven eight nine ten');
    const c = await start(engine);
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    const stopAfterFirst = c.chat.send({ conversationId: conversation.id, text: 'count', requestId: 'stop-me' });
    // Each delta is delivered synchronously; stop as soon as the first piece arrived.
    const original = deltas.push.bind(deltas);
    deltas.push = (...items: string[]) => {
      c.chat.stop('stop-me');
      return original(...items);
    };
    const result = await stopAfterFirst;
    deltas.push = original;
    expect(result.assistantMessage.status).toBe('aborted');
    expect(result.assistantMessage.content).toBe('one two ');
  });

  it('remembers what the user said when they stop the reply before its first token', async () => {
    let c: Core | null = null;
    const engine = model(() => {
      c!.chat.stop('stop-early'); // the reply is stopped before it streams anything
      return 'never shown';
    });
    c = await start(engine);
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    const result = await c.chat.send({ conversationId: conversation.id, text: 'My favourite colour is teal and I play the cello.', requestId: 'stop-early' });
    expect(result.assistantMessage).toMatchObject({ status: 'aborted', content: '' });
    expect(deltas.length).toBe(0);
    await c.jobs.drain();
    const episodic = (await db.memories.toArray()).filter((m) => m.kind === 'episodic').map((m) => m.text);
    expect(episodic).toEqual(['User: My favourite colour is teal and I play the cello.']);
  });

  it('runs explicit memory commands without the model: remember, then forget', async () => {
    const engine = model(() => 'unused');
    const c = await start(engine);
    const conversation = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    const remembered = await c.chat.send({ conversationId: conversation.id, text: '记住：我的猫叫咪咪', requestId: 'r1' });
    expect(remembered.command?.kind).toBe('remember');
    expect(remembered.assistantMessage.content).toMatch(/^好的，我记住了：\n- /);
    const pinned = (await db.memories.toArray()).filter((m) => m.pinned);
    expect(pinned).toHaveLength(1);
    expect(pinned[0]!.text).toContain('咪咪');
    expect(engine.requests).toHaveLength(0);

    const forgot = await c.chat.send({ conversationId: conversation.id, text: '忘记我的猫叫咪咪', requestId: 'r2' });
    expect(forgot.command?.kind).toBe('forget');
    expect(forgot.command!.affected.map((a) => a.id)).toEqual([pinned[0]!.id]);
    expect(await db.memories.get(pinned[0]!.id)).toBeUndefined();
    expect(forgot.assistantMessage.content).toMatch(/^已忘记以下 1 条记忆/);

    // "Forget everything" from a chat line erases nothing, points to Erase everything, and is not learned from.
    await c.chat.send({ conversationId: conversation.id, text: '记住：我住在杭州', requestId: 'r3' });
    const all = await c.chat.send({ conversationId: conversation.id, text: 'forget everything', requestId: 'r4' });
    expect(all.assistantMessage).toMatchObject({ command: { kind: 'forget', affected: [] } });
    expect(all.assistantMessage.content).toMatch(/Erase everything….*Nothing was removed\.$/);
    await c.jobs.drain();
    expect((await db.memories.toArray()).map((m) => m.text)).toEqual(['我住在杭州']);
    // No turn asked the model and none was learned from: the only requests are the background rebuilds of
    // "What Recall knows about me" (`ltm.profile`) that follow the remembered facts ('unused' is no JSON: the rules write it).
    expect(engine.requests.filter((r) => !(r.responseFormat?.type === 'json_object' && r.responseFormat.schema === PROFILE_JSON_SCHEMA))).toHaveLength(0);
    expect((await readProfile(db, 'default')).lines.map((l) => l.text)).toEqual(['我住在杭州']);
  });

  it('marks command turns and leaves them out of later prompts, so a forgotten fact does not come back', async () => {
    const engine = model(() => '好的。');
    const c = await start(engine);
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    await c.chat.send({ conversationId: conversation.id, text: '记住：我的暗号是菠萝', requestId: 'r1' });
    const forgot = await c.chat.send({ conversationId: conversation.id, text: '忘记我的暗号是菠萝', requestId: 'r2' });
    expect(forgot.assistantMessage.command).toEqual({ kind: 'forget', affected: [expect.objectContaining({ text: expect.stringContaining('菠萝') })] });
    const stored = await c.conversations.messages(conversation.id);
    expect(stored.map((m) => m.command?.kind)).toEqual(['remember', 'remember', 'forget', 'forget']);
    await c.chat.send({ conversationId: conversation.id, text: '我的暗号是什么？', requestId: 'r3' });
    const prompt = engine.requests.find((r) => r.messages[r.messages.length - 1]!.content === '我的暗号是什么？')!;
    expect(prompt.messages.map((m) => m.content).join('\n')).not.toContain('菠萝');
  });

  it('marks a reply cut off at the answer limit as truncated', async () => {
    const engine = model(() => 'a long answer');
    const complete = engine.complete.bind(engine);
    engine.complete = async (request, onDelta) => ({ ...(await complete(request, onDelta)), finishReason: 'length' });
    const c = await start(engine);
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    const turn = await c.chat.send({ conversationId: conversation.id, text: 'tell me everything', requestId: 'r' });
    expect(turn.assistantMessage).toMatchObject({ status: 'complete', truncated: true, content: 'a long answer' });
  });

  it('notes in the trace when summaries lag behind and when memory search is keyword-only', async () => {
    // Every background reply is story text: the summarizer's replies are rejected, nothing is folded.
    const engine = model(() => 'Sure. '.repeat(40));
    const c = await start(engine, false);
    const conversation = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 200 } });
    let last;
    for (const text of [
      'My sister Lin studies piano in Vienna every weekday morning.',
      'Her teacher is called Mr. Huber and he is strict.',
      'She has a concert in March.',
    ]) {
      last = await c.chat.send({ conversationId: conversation.id, text, requestId: text });
      await c.jobs.drain();
    }
    const trace = (await db.promptTraces.get(last!.assistantMessage.id))!.trace;
    const pending = trace.notices!.find((n) => n.code === 'summary_pending');
    expect(pending).toMatchObject({ code: 'summary_pending', messages: expect.any(Number) });
    expect((pending as { messages: number }).messages).toBeGreaterThan(0);
    expect((pending as { lastError: string | null }).lastError).toMatch(/rejected|JSON|summary/i);
    expect(trace.notices).toContainEqual({ code: 'keyword_memory_only' });
    // Nothing was dropped before it was summarized: all four earlier messages are in the prompt.
    expect(trace.sections.find((s) => s.kind === 'recent')).toMatchObject({ items: 4, dropped: 0 });
  });

  it('erases everything on request and keeps working', async () => {
    const c = await start(model(() => 'fine'));
    const conversation = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    await c.chat.send({ conversationId: conversation.id, text: 'I live in Hangzhou', requestId: 'r' });
    await c.jobs.drain();
    expect(await db.memories.count()).toBeGreaterThan(0);
    await c.eraseAll();
    for (const table of [db.memories, db.memoryHistory, db.conversations, db.messages, db.promptTraces]) expect(await table.count()).toBe(0);
    // Only the daily maintenance is queued again (tests/unit/core-erase.test.ts checks every table).
    expect((await db.jobs.toArray()).map((j) => j.type)).toEqual(['ltm.maintenance']);
    expect(await c.store.search({ text: 'Hangzhou', namespace: 'default' })).toEqual([]);
    const again = await c.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    expect((await c.chat.send({ conversationId: again.id, text: 'hi', requestId: 'x' })).assistantMessage.status).toBe('complete');
  });
});

describe('a full disk (IndexedDB QuotaExceededError) during a turn', () => {
  /**
   * Makes the next `times` inserts into `table` fail with a QuotaExceededError, as IndexedDB does
   * when storage is full (a Dexie `creating` hook that throws aborts the write and its transaction).
   */
  function failInserts(table: { hook(event: 'creating', fn: () => void): void }, times = 1): () => number {
    let left = times;
    let thrown = 0;
    table.hook('creating', () => {
      if (left <= 0) return;
      left -= 1;
      thrown += 1;
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    });
    return () => thrown;
  }

  it('the reply and its trace are stored together or not at all; the user message stays; the error has code storage_full; the next turn works', async () => {
    const engine = model(() => 'A reply that will not fit.');
    const c = await start(engine);
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    // The trace write is the last write of a turn: the reply row was already added in the same transaction.
    const thrown = failInserts(db.promptTraces);
    const jobsBefore = (await db.jobs.toArray()).map((j) => j.type);
    const error = await c.chat.send({ conversationId: conversation.id, text: 'My locker is number 12', requestId: 'r1' }).catch((e: unknown) => e);
    expect(thrown()).toBe(1);
    expect(error).toMatchObject({ name: 'StorageFullError', code: 'storage_full' });
    const stored = await c.conversations.messages(conversation.id);
    expect(stored.map((m) => [m.seq, m.role, m.content])).toEqual([[0, 'user', 'My locker is number 12']]);
    expect(await db.promptTraces.count()).toBe(0);
    // Nothing was learned from a turn whose reply was not stored (only jobs that existed before, e.g. maintenance).
    expect((await db.jobs.toArray()).map((j) => j.type)).toEqual(jobsBefore);

    const next = await c.chat.send({ conversationId: conversation.id, text: 'Try again', requestId: 'r2' });
    expect(next.assistantMessage).toMatchObject({ seq: 2, status: 'complete', content: 'A reply that will not fit.' });
    expect((await c.conversations.messages(conversation.id)).map((m) => m.seq)).toEqual([0, 1, 2]);
    expect(await db.promptTraces.get(next.assistantMessage.id)).toBeDefined();
  });

  it('a user message that does not fit stores nothing (no message, no new title) and reports storage_full', async () => {
    const c = await start(model(() => 'unused'));
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    failInserts(db.messages);
    const error = await c.chat.send({ conversationId: conversation.id, text: 'Hello there', requestId: 'r1' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'storage_full' });
    expect(await db.messages.count()).toBe(0);
    expect((await c.conversations.get(conversation.id))!.title).toBe(conversation.title);
  });
});

describe('the cited conversations’ titles', () => {
  it('a memory from another conversation is cited with that conversation’s title (read once the top-k is ranked)', async () => {
    const c = await start(model(() => 'Noted.'));
    const first = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    await c.chat.send({ conversationId: first.id, text: 'My gym locker is number 12.', requestId: 'r1' });
    await c.jobs.drain();
    await c.conversations.update(first.id, { title: 'Gym things' });
    const second = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    const turn = await c.chat.send({ conversationId: second.id, text: 'Which number is my gym locker?', requestId: 'r2' });
    const trace = (await db.promptTraces.get(turn.assistantMessage.id))!.trace;
    const cited = trace.memories.filter((m) => m.sourceConversationId === first.id);
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.map((m) => m.sourceConversationTitle)).toEqual(cited.map(() => 'Gym things'));
  });
});

describe('the user message is stored while the engine starts on the prompt', () => {
  it('the prompt reaches the engine before the user message is written; no piece of the reply reaches the panel before it is stored', async () => {
    const order: string[] = [];
    const base = model(() => 'unused');
    const engine = Object.assign(Object.create(base) as ChatEngine, {
      complete: async (_request: unknown, onDelta?: (d: string) => void) => {
        order.push('engine');
        onDelta?.('Hello ');
        onDelta?.('there');
        return { content: 'Hello there', finishReason: 'stop' as const, usage: null };
      },
    });
    const c = await start(engine, true, { chatDelta: (e) => void order.push(`delta:${e.delta}`) });
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    db.messages.hook('creating', function (_key, message) {
      if (message.role !== 'user') return;
      order.push('user write');
      this.onsuccess = () => void order.push('user written');
    });
    const result = await c.chat.send({ conversationId: conversation.id, text: 'Hi', requestId: 'r1' });
    expect(order).toEqual(['engine', 'user write', 'user written', 'delta:Hello ', 'delta:there']);
    expect(result.assistantMessage).toMatchObject({ status: 'complete', content: 'Hello there' });
    expect((await c.conversations.messages(conversation.id)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hi'],
      ['assistant', 'Hello there'],
    ]);
  });

  it('a user message that cannot be stored stops the engine: nothing reaches the panel, nothing is stored, the error is storage_full', async () => {
    let signal: AbortSignal | undefined;
    const base = model(() => 'unused');
    const engine = Object.assign(Object.create(base) as ChatEngine, {
      complete: (request: { signal?: AbortSignal }, onDelta?: (d: string) => void) => {
        signal = request.signal;
        onDelta?.('Once upon a ');
        return new Promise<never>((_resolve, reject) => request.signal!.addEventListener('abort', () => reject(new DOMException('Stopped', 'AbortError'))));
      },
    });
    const c = await start(engine);
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    db.messages.hook('creating', () => {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    });
    const error = await c.chat.send({ conversationId: conversation.id, text: 'Hello there', requestId: 'r1' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'storage_full' });
    expect(signal?.aborted).toBe(true);
    expect([...deltas]).toEqual([]);
    expect(await db.messages.count()).toBe(0);
    expect(c.chat.live(conversation.id)).toBeNull();
  });
});

describe('the memory core killed mid-reply', () => {
  /** A model that streams its first words, then never finishes (the context running it dies meanwhile). */
  function stallingModel(): ChatEngine & { started: Promise<void> } {
    const base = model(() => 'unused');
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    return Object.assign(Object.create(base) as ChatEngine, {
      started,
      complete: async (_request: unknown, onDelta?: (d: string) => void) => {
        onDelta?.('Once upon a ');
        markStarted();
        return new Promise<never>(() => undefined);
      },
    });
  }

  it('the next core stores exactly one error reply (disconnected) after the kept user message, once, and the next turn works', async () => {
    const engine = stallingModel();
    const dying = await start(engine);
    const firstDb = db;
    const conversation = await dying.conversations.create({ strategy: { kind: 'full-buffer' } });
    core = null;
    void dying.chat.send({ conversationId: conversation.id, text: 'Tell me a long story', requestId: 'r1' });
    await engine.started;
    // "Killed": the context's memory is gone; only what reached IndexedDB remains.
    await dying.stop();
    firstDb.close();

    // The offscreen document is created again (core.ensure) on the same database.
    db = new RecallDB(firstDb.name);
    const endModel = model(() => 'The end.');
    const { core: reborn } = await cores.start({ db, chat: () => endModel });
    core = reborn;
    const messages = await reborn.conversations.messages(conversation.id);
    expect(messages.map((m) => [m.seq, m.role, m.status, m.content, m.errorCode ?? null])).toEqual([
      [0, 'user', 'complete', 'Tell me a long story', null],
      [1, 'assistant', 'error', '', 'disconnected'],
    ]);
    expect(messages[1]!.error).toMatch(/interrupted/);
    expect(await db.settings.where('key').startsWith('state.openTurn.').count()).toBe(0);
    // Recovering again stores nothing more.
    expect(await reborn.chat.recoverInterruptedTurns()).toBe(0);

    const next = await reborn.chat.send({ conversationId: conversation.id, text: 'Again please', requestId: 'r2' });
    expect(next.assistantMessage).toMatchObject({ seq: 3, status: 'complete', content: 'The end.' });
  });

  it('a turn whose reply was stored before the kill gets no second reply', async () => {
    const c = await start(model(() => 'Stored reply.'));
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    const turn = await c.chat.send({ conversationId: conversation.id, text: 'Hi', requestId: 'r1' });
    // Killed between storing the reply and clearing the marker: the marker is still there.
    await db.settings.put({
      key: `state.openTurn.${turn.userMessage.id}`,
      value: { conversationId: conversation.id, userMessageId: turn.userMessage.id, startedAt: 1 },
    });
    expect(await c.chat.recoverInterruptedTurns()).toBe(0);
    expect((await c.conversations.messages(conversation.id)).map((m) => m.status)).toEqual(['complete', 'complete']);
    expect(await db.settings.where('key').startsWith('state.openTurn.').count()).toBe(0);
  });
});
