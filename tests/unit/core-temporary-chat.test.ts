/**
 * Temporary chats (issue 14 item 5) and "not relevant here" under a reply (item 1) through the
 * whole core (tests/helpers/core-harness.ts: real Dexie, jobs, store, fixture embedder). The chat
 * model is scripted (an instruction-following LLM cannot run here): it answers "Noted." and its
 * extraction reply would store the planted fact, so a test that finds no memory shows that no
 * extraction ran, not that the model found nothing.
 */
import { describe, expect, it } from 'vitest';
import { noteTakingEngine, useTestCores } from '../helpers/core-harness';
import { MessagingError } from '../../src/model/errors';
import { exportChunks } from '../../src/backup/writer';

const cores = useTestCores();
const FACT = 'Journal code is swordfish';
const engine = () => noteTakingEngine('swordfish', FACT);
const STRATEGY = { kind: 'full-buffer' } as const;

describe('temporary chat', () => {
  it('learns nothing (no round, no extraction, no long-term job), is neither listed nor found, and still retrieves existing memory', async () => {
    const chat = engine();
    const { core, db } = await cores.start({ chat: () => chat });
    await core.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'My cat is called Miso' });
    const temp = await core.conversations.create({ strategy: STRATEGY, temporary: true });
    expect(temp.temporary).toBe(true);
    await core.chat.send({ conversationId: temp.id, text: 'The code of my journal is swordfish', requestId: 'r1' });
    const turn = await core.chat.send({ conversationId: temp.id, text: 'What is my cat called?', requestId: 'r2' });
    await core.jobs.drain();
    expect((await db.memories.toArray()).map((m) => m.text)).toEqual(['My cat is called Miso']);
    expect((await db.jobs.toArray()).filter((j) => j.type.startsWith('ltm.') && j.type !== 'ltm.maintenance' && j.type !== 'ltm.reembed')).toEqual([]);
    // Retrieval from existing memory works inside it.
    const trace = (await db.promptTraces.get(turn.assistantMessage.id))!.trace;
    expect(trace.memories.map((m) => m.text)).toContain('My cat is called Miso');
    expect((await core.conversations.list()).map((c) => c.id)).toEqual([]);
    expect(await core.conversations.search('swordfish')).toEqual([]);

    // The same turn in a normal chat is learned from (the control: the scripted extraction does store the fact).
    const normal = await core.conversations.create({ strategy: STRATEGY });
    await core.chat.send({ conversationId: normal.id, text: 'The code of my journal is swordfish', requestId: 'r3' });
    await core.jobs.drain();
    expect((await db.memories.toArray()).map((m) => m.text)).toContain(FACT);
    expect((await core.conversations.list()).map((c) => c.id)).toEqual([normal.id]);
  });

  it('"remember …" is refused with a message saying why, and nothing is stored; "forget …" still acts on existing memory', async () => {
    const { core, db } = await cores.start({ chat: () => engine() });
    const temp = await core.conversations.create({ strategy: STRATEGY, temporary: true });
    const en = await core.chat.send({ conversationId: temp.id, text: 'remember that my locker is 42', requestId: 'a' });
    expect(en.assistantMessage.content).toContain('This is a temporary chat');
    expect(en.assistantMessage.content).toContain('did not remember');
    const zh = await core.chat.send({ conversationId: temp.id, text: '记住：我的储物柜是42号', requestId: 'b' });
    expect(zh.assistantMessage.content).toContain('这是临时聊天');
    expect(await db.memories.count()).toBe(0);
    await core.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'My locker is 17' });
    const forget = await core.chat.send({ conversationId: temp.id, text: 'forget my locker', requestId: 'c' });
    expect(forget.assistantMessage.command?.affected?.map((a) => a.text)).toEqual(['My locker is 17']);
    expect(await db.memories.count()).toBe(0);
  });

  it('is deleted, with its messages and traces, once no panel shows it; a normal conversation never is', async () => {
    const { core, db } = await cores.start({ chat: () => engine() });
    const temp = await core.conversations.create({ strategy: STRATEGY, temporary: true });
    const normal = await core.conversations.create({ strategy: STRATEGY });
    const turn = await core.chat.send({ conversationId: temp.id, text: 'hello there', requestId: 'a' });
    const keeper = core.temporaryChats;
    await keeper.show('A', temp.id);
    await keeper.show('B', temp.id);
    await keeper.show('A', normal.id); // B still shows it
    expect(await db.conversations.get(temp.id)).toBeDefined();
    await keeper.close('B'); // B closed: nobody shows it
    expect(await db.conversations.get(temp.id)).toBeUndefined();
    expect(await db.messages.where('conversationId').equals(temp.id).count()).toBe(0);
    expect(await db.promptTraces.get(turn.assistantMessage.id)).toBeUndefined();
    await keeper.show('A', null);
    await keeper.close('A');
    expect(await db.conversations.get(normal.id)).toBeDefined();
    // Switching from one to a new chat deletes it too.
    const second = await core.conversations.create({ strategy: STRATEGY, temporary: true });
    await keeper.show('C', second.id);
    await keeper.show('C', null);
    expect(await db.conversations.get(second.id)).toBeUndefined();
  });

  it('left while its panel had no port (the core restarted): deleted on the reconnect unless a panel shows it; normal conversations never are', async () => {
    const { core, db } = await cores.start({ chat: () => engine() });
    const left = await core.conversations.create({ strategy: STRATEGY, temporary: true });
    const shownElsewhere = await core.conversations.create({ strategy: STRATEGY, temporary: true });
    const normal = await core.conversations.create({ strategy: STRATEGY });
    const keeper = core.temporaryChats;
    await keeper.show('B', shownElsewhere.id);
    // Panel A reconnects, shows nothing, and says it left all three while its port was down.
    await keeper.show('A', null);
    await keeper.left([left.id, shownElsewhere.id, normal.id, left.id]);
    expect(await db.conversations.get(left.id)).toBeUndefined();
    expect(await db.conversations.get(shownElsewhere.id)).toBeDefined();
    expect(await db.conversations.get(normal.id)).toBeDefined();
  });

  it('is left out of a backup made while it is open (with its messages); the progress total leaves it out too', async () => {
    const { core, db } = await cores.start({ chat: () => engine() });
    const temp = await core.conversations.create({ strategy: STRATEGY, temporary: true });
    const normal = await core.conversations.create({ strategy: STRATEGY });
    await core.chat.send({ conversationId: temp.id, text: 'my temporary secret is tangerine', requestId: 'a' });
    await core.chat.send({ conversationId: normal.id, text: 'hello there', requestId: 'b' });
    await core.jobs.drain();
    const progress: { done: number; total: number }[] = [];
    let file = '';
    for await (const chunk of exportChunks(db, { pageSize: 1, onProgress: (p) => progress.push(p) })) file += chunk;
    const parsed = JSON.parse(file) as { conversations: { id: string }[]; messages: { conversationId: string }[] };
    expect(parsed.conversations.map((c) => c.id)).toEqual([normal.id]);
    expect(new Set(parsed.messages.map((m) => m.conversationId))).toEqual(new Set([normal.id]));
    expect(file).not.toContain('tangerine');
    expect(progress.at(-1)!.done).toBe(progress.at(-1)!.total);
  });

  it('does not outlive a restart of the core', async () => {
    const first = await cores.start({ chat: () => engine() });
    const temp = await first.core.conversations.create({ strategy: STRATEGY, temporary: true });
    const normal = await first.core.conversations.create({ strategy: STRATEGY });
    await first.core.chat.send({ conversationId: temp.id, text: 'hello there', requestId: 'a' });
    await first.core.stop();
    const second = await cores.start({ chat: () => engine(), db: first.db });
    expect(await second.db.conversations.get(temp.id)).toBeUndefined();
    expect(await second.db.messages.where('conversationId').equals(temp.id).count()).toBe(0);
    expect(await second.db.conversations.get(normal.id)).toBeDefined();
  });
});

describe('not relevant here, through the core', () => {
  it('the next similar question ranks the memory last; an undo brings it back; no feedback in a temporary chat', async () => {
    const { core, db } = await cores.start({ chat: () => engine() });
    for (const text of ['My favourite colour is green', 'The colour of my car is red', 'My sister lives in Porto'])
      await core.memoryAdmin.add({ namespace: 'default', kind: 'fact', text });
    const conversation = await core.conversations.create({ strategy: STRATEGY });
    const ask = async (text: string) => {
      const turn = await core.chat.send({ conversationId: conversation.id, text, requestId: crypto.randomUUID() });
      return { turn, memories: (await db.promptTraces.get(turn.assistantMessage.id))!.trace.memories.map((m) => m.text) };
    };
    const first = await ask('What is my favourite colour?');
    expect(first.memories[0]).toBe('My favourite colour is green');
    const green = (await db.memories.toArray()).find((m) => m.text === 'My favourite colour is green')!;
    const row = await core.feedback.mark({ messageId: first.turn.assistantMessage.id, memoryId: green.id });
    expect(row).toMatchObject({ memoryId: green.id, messageId: first.turn.assistantMessage.id });
    expect((await db.feedback.get(row.id))!.query).toBe('What is my favourite colour?');
    expect(await core.feedback.list(first.turn.assistantMessage.id)).toEqual([row]);

    const second = await ask('What is my favourite colour?');
    expect(second.memories[0]).not.toBe('My favourite colour is green');
    expect(second.memories.indexOf('My favourite colour is green')).toBeGreaterThan(first.memories.indexOf('My favourite colour is green'));

    expect(await core.feedback.undo(row.id)).toBe(true);
    expect((await ask('What is my favourite colour?')).memories[0]).toBe('My favourite colour is green');

    const temp = await core.conversations.create({ strategy: STRATEGY, temporary: true });
    const inTemp = await core.chat.send({ conversationId: temp.id, text: 'What is my favourite colour?', requestId: 't' });
    await expect(core.feedback.mark({ messageId: inTemp.assistantMessage.id, memoryId: green.id })).rejects.toBeInstanceOf(MessagingError);
    // Forgetting the memory takes its feedback with it.
    await core.feedback.mark({ messageId: first.turn.assistantMessage.id, memoryId: green.id });
    await core.memoryAdmin.delete(green.id);
    expect(await db.feedback.count()).toBe(0);
  });
});

describe('the sources of a reply (trace.sources)', () => {
  it('lists the memories the prompt used, says which one was cut to fit and which was forgotten since, and the feedback under it', async () => {
    const { core, db } = await cores.start({ chat: () => engine() });
    const long = `My garden plan: ${Array.from({ length: 200 }, (_, i) => `bed ${i} holds tomatoes`).join(', ')}.`;
    await core.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: long });
    await core.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'I grow tomatoes in the garden' });
    const conversation = await core.conversations.create({ strategy: STRATEGY });
    const turn = await core.chat.send({ conversationId: conversation.id, text: 'What grows in my garden? tomatoes?', requestId: 'g' });
    const id = turn.assistantMessage.id;
    const trace = (await db.promptTraces.get(id))!.trace;
    const cut = trace.memories.find((m) => m.text === long)!;
    const whole = trace.memories.find((m) => m.text === 'I grow tomatoes in the garden')!;
    // The long one's line in the prompt is a prefix of it ("…"), the short one is there whole.
    expect(trace.sections.find((s) => s.kind === 'memories')!.text).not.toContain(long);
    expect([cut.shortened, whole.shortened]).toEqual([true, undefined]);

    await core.feedback.mark({ messageId: id, memoryId: whole.memoryId });
    await core.memoryAdmin.delete(cut.memoryId);
    const got = await core.feedback.sources([id, 'no-such-reply']);
    expect(Object.keys(got)).toEqual([id]);
    expect(got[id]!.memories.map((m) => [m.memoryId, m.shortened === true, m.exists])).toEqual(
      trace.memories.map((m) => [m.memoryId, m.memoryId === cut.memoryId, m.memoryId !== cut.memoryId]),
    );
    expect(got[id]!.feedback.map((f) => f.memoryId)).toEqual([whole.memoryId]);
    expect(got[id]!.dropped).toBe(trace.sections.find((s) => s.kind === 'memories')!.dropped);
    await expect(core.feedback.sources(Array.from({ length: 501 }, (_, i) => `x${i}`))).rejects.toBeInstanceOf(MessagingError);
  });
});
