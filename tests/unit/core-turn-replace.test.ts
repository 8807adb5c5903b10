/**
 * Regenerate, edit and resend, retry (issue 12 item 1) through the whole core in Node
 * (tests/helpers/core-harness.ts: real Dexie, job queue, long-term store, strategies, embeddings).
 * Only the chat model is scripted (tests/helpers/scripted-engine.ts): an instruction-following LLM
 * cannot run here. The replaced turns' messages and traces are gone, and what memory learned from
 * them is revised: their rounds and facts removed with history, no tombstone, a fact they had
 * superseded valid again, a memory they updated back to its earlier text.
 */
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/index';
import type { RecallDB } from '../../src/db/schema';
import type { ChatRequest } from '../../src/engines/types';
import { EngineError } from '../../src/engines/types';
import { useTestCores } from '../helpers/core-harness';
import { createScriptedEngine, type ScriptedEngine } from '../helpers/scripted-engine';
import { listSuggestions, setReviewEnabled } from '../../src/memory/long-term/review';

const cores = useTestCores();
let core: Core;
let db: RecallDB;

const lastUser = (request: ChatRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

/**
 * Chat turns answer `Reply <n>: <user text>` (n counts chat turns); extraction (JSON mode) turns a
 * message naming Shenzhen / Hangzhou / tea into that fact; a decision between "Lives in Hangzhou"
 * and "Lives in Shenzhen" closes Shenzhen (DELETE = invalidate), every other decision is unusable
 * (the consolidation then ADDs). `failNext` makes the next chat turn fail at the engine.
 */
function scripted(): ScriptedEngine & { state: { failNext: boolean } } {
  let turn = 0;
  const state = { failNext: false };
  const engine = createScriptedEngine({
    fallback: (request) => {
      const all = JSON.stringify(request.messages);
      if (request.responseFormat?.type !== 'json_object') {
        if (state.failNext) {
          state.failNext = false;
          throw new EngineError('generation', 'The engine crashed');
        }
        turn += 1;
        return `Reply ${turn}: ${lastUser(request)}`;
      }
      if (all.includes('Lives in Hangzhou') && all.includes('Lives in Shenzhen')) return '{"event": "DELETE", "id": "0"}';
      const fact = /Shenzhen/.test(all) ? 'Lives in Shenzhen' : /Hangzhou/.test(all) ? 'Lives in Hangzhou' : /green tea/.test(all) ? 'Likes green tea' : null;
      return JSON.stringify({ topic: 'home', facts: fact ? [{ kind: 'fact', text: fact }] : [], preferences: [] });
    },
  });
  return Object.assign(engine, { state });
}

async function startWith(engine: ScriptedEngine) {
  ({ core, db } = await cores.start({ chat: () => engine }));
  return core.conversations.create({ strategy: { kind: 'full-buffer' } });
}

const memoriesOf = async () => (await db.memories.toArray()).map((m) => ({ kind: m.kind, text: m.text, current: m.current }));

describe('replacing turns', () => {
  it('regenerate replaces the last reply: old messages, trace, round and fact gone with history, no tombstone; the new turn is learned', async () => {
    const engine = scripted();
    const conversation = await startWith(engine);
    await core.chat.send({ conversationId: conversation.id, text: 'Hello there', requestId: 'r1' });
    const first = await core.chat.send({ conversationId: conversation.id, text: 'I live in Shenzhen', requestId: 'r2' });
    await core.jobs.drain();
    expect((await memoriesOf()).filter((m) => m.kind === 'fact')).toEqual([{ kind: 'fact', text: 'Lives in Shenzhen', current: 1 }]);
    const oldFact = (await db.memories.toArray()).find((m) => m.text === 'Lives in Shenzhen')!;
    const oldRound = (await db.memories.toArray()).find((m) => m.kind === 'episodic' && m.text.includes('Shenzhen'))!;

    const again = await core.chat.regenerate({ conversationId: conversation.id, requestId: 'r3' });
    expect(again.userMessage.content).toBe('I live in Shenzhen');
    expect(again.assistantMessage.content).toBe('Reply 3: I live in Shenzhen');
    const messages = await core.conversations.messages(conversation.id);
    expect(messages.map((m) => [m.seq, m.role, m.content])).toEqual([
      [0, 'user', 'Hello there'],
      [1, 'assistant', 'Reply 1: Hello there'],
      [2, 'user', 'I live in Shenzhen'],
      [3, 'assistant', 'Reply 3: I live in Shenzhen'],
    ]);
    expect(await db.messages.get(first.assistantMessage.id)).toBeUndefined();
    expect(await db.promptTraces.get(first.assistantMessage.id)).toBeUndefined();
    expect(await db.promptTraces.get(again.assistantMessage.id)).toBeDefined();
    // The replaced turn's fact and round are removed with a DELETE in their history, by the revision, and no tombstone.
    expect(await db.memories.get(oldFact.id)).toBeUndefined();
    expect(await db.memories.get(oldRound.id)).toBeUndefined();
    const history = await db.memoryHistory.where('memoryId').anyOf([oldFact.id, oldRound.id]).toArray();
    expect(
      history
        .filter((h) => h.event === 'DELETE')
        .map((h) => [h.memoryId, h.source])
        .sort(),
    ).toEqual(
      [
        [oldFact.id, `revision:${conversation.id}`],
        [oldRound.id, `revision:${conversation.id}`],
      ].sort(),
    );
    expect(await db.tombstones.count()).toBe(0);

    await core.jobs.drain();
    // The new turn is learned again (not blocked by a tombstone): one fact, from the new message.
    const facts = (await db.memories.toArray()).filter((m) => m.kind === 'fact');
    expect(facts.map((m) => [m.text, m.sourceMessageIds])).toEqual([['Lives in Shenzhen', [again.userMessage.id]]]);
    const rounds = (await db.memories.toArray()).filter((m) => m.kind === 'episodic').map((m) => m.text);
    expect(rounds.sort()).toEqual(['User: Hello there\nAssistant: Reply 1: Hello there', 'User: I live in Shenzhen\nAssistant: Reply 3: I live in Shenzhen']);
  });

  it('with review before saving on, a suggestion waiting from the replaced turn is dropped with it; the new turn suggests it again from the new message', async () => {
    const engine = scripted();
    const conversation = await startWith(engine);
    await setReviewEnabled(db, 'default', true);
    const tea = await core.chat.send({ conversationId: conversation.id, text: 'I like green tea', requestId: 'r1' });
    const first = await core.chat.send({ conversationId: conversation.id, text: 'I live in Shenzhen', requestId: 'r2' });
    await core.jobs.drain();
    const pending = async () => (await listSuggestions(db, 'default')).map((s) => [s.text, s.sourceMessageIds]);
    expect(await pending()).toEqual([
      ['Likes green tea', [tea.userMessage.id]],
      ['Lives in Shenzhen', [first.userMessage.id]],
    ]);

    // One from both turns (as a later extraction over two messages would make it) keeps the earlier source.
    const [shenzhen] = await listSuggestions(db, 'default').then((rows) => rows.filter((r) => r.text === 'Lives in Shenzhen'));
    await db.suggestions.add({
      ...shenzhen!,
      id: 'both',
      hash: 'both',
      text: 'Drinks tea in Shenzhen',
      sourceMessageIds: [tea.userMessage.id, first.userMessage.id],
      createdAt: shenzhen!.createdAt + 1,
    });

    const again = await core.chat.regenerate({ conversationId: conversation.id, requestId: 'r3' });
    expect(await pending()).toEqual([
      ['Likes green tea', [tea.userMessage.id]],
      ['Drinks tea in Shenzhen', [tea.userMessage.id]],
    ]);
    await core.jobs.drain();
    expect(await pending()).toEqual([
      ['Likes green tea', [tea.userMessage.id]],
      ['Drinks tea in Shenzhen', [tea.userMessage.id]],
      ['Lives in Shenzhen', [again.userMessage.id]],
    ]);
    expect((await db.memories.toArray()).filter((m) => m.kind === 'fact')).toEqual([]); // still waiting for review
  });

  it('edit replaces the message and every later turn; a fact they superseded is valid again', async () => {
    const engine = scripted();
    const conversation = await startWith(engine);
    await core.chat.send({ conversationId: conversation.id, text: 'I live in Shenzhen', requestId: 'r1' });
    await core.jobs.drain();
    const moved = await core.chat.send({ conversationId: conversation.id, text: 'I moved to Hangzhou', requestId: 'r2' });
    await core.chat.send({ conversationId: conversation.id, text: 'Nice weather', requestId: 'r3' });
    await core.jobs.drain();
    expect((await memoriesOf()).filter((m) => m.kind === 'fact').sort((a, b) => a.text.localeCompare(b.text))).toEqual([
      { kind: 'fact', text: 'Lives in Hangzhou', current: 1 },
      { kind: 'fact', text: 'Lives in Shenzhen', current: 0 },
    ]);

    const edited = await core.chat.edit({ conversationId: conversation.id, messageId: moved.userMessage.id, text: 'I like green tea', requestId: 'r4' });
    expect(edited.userMessage).toMatchObject({ content: 'I like green tea', seq: 2 });
    const messages = await core.conversations.messages(conversation.id);
    expect(messages.map((m) => m.content)).toEqual(['I live in Shenzhen', 'Reply 1: I live in Shenzhen', 'I like green tea', 'Reply 4: I like green tea']);
    const shenzhen = (await db.memories.toArray()).find((m) => m.text === 'Lives in Shenzhen')!;
    expect(shenzhen).toMatchObject({ current: 1, validUntil: null });
    expect(shenzhen.supersededBy).toBeUndefined();
    expect((await db.memories.toArray()).some((m) => m.text.includes('Hangzhou') || m.text.includes('Nice weather'))).toBe(false);
    await core.jobs.drain();
    expect((await memoriesOf()).filter((m) => m.kind === 'fact').sort((a, b) => a.text.localeCompare(b.text))).toEqual([
      { kind: 'fact', text: 'Likes green tea', current: 1 },
      { kind: 'fact', text: 'Lives in Shenzhen', current: 1 },
    ]);
    await expect(core.chat.edit({ conversationId: conversation.id, messageId: moved.userMessage.id, text: 'again', requestId: 'r5' })).rejects.toMatchObject({
      code: 'message_not_found',
    });
  });

  it('a memory the replaced turn updated gets its earlier text back and loses the replaced source id', async () => {
    const engine = scripted();
    const conversation = await startWith(engine);
    const first = await core.chat.send({ conversationId: conversation.id, text: 'I live in Shenzhen', requestId: 'r1' });
    await core.jobs.drain();
    const fact = (await db.memories.toArray()).find((m) => m.text === 'Lives in Shenzhen')!;
    const second = await core.chat.send({ conversationId: conversation.id, text: 'Shenzhen, near the bay', requestId: 'r2' });
    // What consolidation does when the second message refines the fact (an UPDATE by this conversation).
    await core.store.update(
      fact.id,
      { text: 'Lives in Shenzhen near the bay', sourceMessageIds: [first.userMessage.id, second.userMessage.id] },
      `conversation:${conversation.id}`,
    );
    await core.chat.regenerate({ conversationId: conversation.id, requestId: 'r3' });
    const revised = (await db.memories.get(fact.id))!;
    expect(revised.text).toBe('Lives in Shenzhen');
    expect(revised.sourceMessageIds).toEqual([first.userMessage.id]);
  });

  it('retry sends the failed turn again with the same text; a reply that did not fail cannot be retried', async () => {
    const engine = scripted();
    const conversation = await startWith(engine);
    engine.state.failNext = true;
    const failed = await core.chat.send({ conversationId: conversation.id, text: 'Tell me a story', requestId: 'r1' });
    expect(failed.assistantMessage.status).toBe('error');
    const retried = await core.chat.retry({ conversationId: conversation.id, messageId: failed.assistantMessage.id, requestId: 'r2' });
    expect(retried.assistantMessage).toMatchObject({ status: 'complete', content: 'Reply 1: Tell me a story' });
    expect((await core.conversations.messages(conversation.id)).map((m) => [m.role, m.status, m.content])).toEqual([
      ['user', 'complete', 'Tell me a story'],
      ['assistant', 'complete', 'Reply 1: Tell me a story'],
    ]);
    await expect(core.chat.retry({ conversationId: conversation.id, messageId: retried.assistantMessage.id, requestId: 'r3' })).rejects.toMatchObject({
      code: 'message_not_found',
    });
  });

  it('a summary that folded a replaced message is reset, so the new messages (same seqs) are folded', async () => {
    const engine = scripted();
    const conversation = await startWith(engine);
    await core.chat.send({ conversationId: conversation.id, text: 'Hello there', requestId: 'r1' });
    const second = await core.chat.send({ conversationId: conversation.id, text: 'I live in Shenzhen', requestId: 'r2' });
    const older = { conversationId: conversation.id, strategy: 'summary' as const, updatedAt: 1 };
    await db.strategyState.bulkPut([
      { ...older, state: { summary: 'Greeted; lives in Shenzhen.', coveredSeq: 3, folds: 1, lastError: null, rejectedReplies: 0, updatedAt: 1 } },
      { ...older, strategy: 'summary-buffer', state: { summary: 'Greeted.', coveredSeq: 1, folds: 1, lastError: null, rejectedReplies: 0, updatedAt: 1 } },
    ]);
    await core.chat.edit({ conversationId: conversation.id, messageId: second.userMessage.id, text: 'I like green tea', requestId: 'r3' });
    const states = await db.strategyState.where('conversationId').equals(conversation.id).toArray();
    expect(states.map((s) => s.strategy)).toEqual(['summary-buffer']); // covered seq 1 < 2: kept
  });
});

describe('measuring a message before it is sent', () => {
  it('says whether it fits, with the numbers assembly would report, and how much fits cut at a sentence end', async () => {
    const engine = createScriptedEngine({ fallback: 'ok', contextWindow: 512 });
    ({ core, db } = await cores.start({ chat: () => engine }));
    const short = await core.chat.measure({ text: 'Hello there' });
    expect(short).toMatchObject({ fits: true, chars: 11, fitChars: 11 });
    const sentence = 'The quick brown fox jumps over the lazy dog again. ';
    const long = sentence.repeat(200).trim();
    const fit = (await core.chat.measure({ text: long }))!;
    expect(fit.fits).toBe(false);
    expect(fit.neededTokens).toBeGreaterThan(fit.availableTokens);
    // The same numbers the turn's failure states.
    const conversation = await core.conversations.create({ strategy: { kind: 'full-buffer' } });
    const failed = await core.chat.send({ conversationId: conversation.id, text: long, requestId: 'r1' });
    expect(failed.assistantMessage.errorInfo).toMatchObject({
      code: 'prompt_too_long',
      params: { neededTokens: fit.neededTokens, availableTokens: fit.availableTokens },
    });
    // The start that fits ends at a sentence end and fits; one more sentence would not.
    const kept = long.slice(0, fit.fitChars);
    expect(kept.endsWith('again.')).toBe(true);
    expect((await core.chat.measure({ text: kept }))!.fits).toBe(true);
    expect((await core.chat.measure({ text: `${kept} ${sentence.trim()}` }))!.fits).toBe(false);
  });

  it('answers null while no chat model is loaded', async () => {
    ({ core, db } = await cores.start({ chat: () => null }));
    expect(await core.chat.measure({ text: 'Hello' })).toBeNull();
  });
});
