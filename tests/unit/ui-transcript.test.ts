/** Chat transcript with streaming (src/ui/lib/transcript.ts). */
import { describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../src/model/records';
import type { ChatTurnResult } from '../../src/messaging/protocol';
import {
  applyDelta,
  beginTurn,
  commandCard,
  completeTurn,
  failTurn,
  followTurn,
  fromRecord,
  lastStoredAssistant,
  pendingIds,
  queueTurn,
  reconcileFailedTurn,
  truncateBefore,
  truncatedAt,
  unqueueTurn,
  type UiMessage,
} from '../../src/ui/lib/transcript';

const record = (over: Partial<MessageRecord> & Pick<MessageRecord, 'id' | 'seq' | 'role' | 'content'>): MessageRecord => ({
  conversationId: 'c1',
  createdAt: 1_000,
  status: 'complete',
  ...over,
});

const history: UiMessage[] = [
  fromRecord(record({ id: 'u0', seq: 0, role: 'user', content: '你好' })),
  fromRecord(record({ id: 'a0', seq: 1, role: 'assistant', content: '你好！有什么可以帮你？', modelId: 'm' })),
];

describe('a streamed turn', () => {
  it('shows the user message and an empty streaming reply at once', () => {
    const list = beginTurn(history, { requestId: 'r1', text: '我喜欢什么运动？', now: 5_000 });
    expect(list).toHaveLength(4);
    expect(list[2]).toMatchObject({ role: 'user', content: '我喜欢什么运动？', status: 'complete', pending: true });
    expect(list[3]).toMatchObject({ id: pendingIds('r1').assistant, role: 'assistant', content: '', status: 'streaming' });
  });

  it('appends deltas of its own request only, in order', () => {
    let list: readonly UiMessage[] = beginTurn(history, { requestId: 'r1', text: 'hi', now: 5_000 });
    list = applyDelta(list, { requestId: 'r1', delta: '你喜欢' });
    list = applyDelta(list, { requestId: 'other', delta: 'XXX' });
    list = applyDelta(list, { requestId: 'r1', delta: '打篮球。' });
    expect(list[3]!.content).toBe('你喜欢打篮球。');
    expect(history[1]!.content).toBe('你好！有什么可以帮你？'); // inputs are not mutated
  });

  it('returns the same list for a delta it ignores (no needless re-render)', () => {
    const list = beginTurn(history, { requestId: 'r1', text: 'hi', now: 5_000 });
    expect(applyDelta(list, { requestId: 'nope', delta: 'x' })).toBe(list);
    expect(applyDelta(list, { requestId: 'r1', delta: '' })).toBe(list);
  });

  it('replaces the temporary messages with the stored ones when the turn completes', () => {
    let list: readonly UiMessage[] = beginTurn(history, { requestId: 'r1', text: 'hi', now: 5_000 });
    list = applyDelta(list, { requestId: 'r1', delta: 'Hel' });
    const result: ChatTurnResult = {
      userMessage: record({ id: 'u1', seq: 2, role: 'user', content: 'hi' }),
      assistantMessage: record({ id: 'a1', seq: 3, role: 'assistant', content: 'Hello!', status: 'aborted' }),
    };
    const done = completeTurn(list, 'r1', result);
    expect(done.map((m) => [m.id, m.status, m.content])).toEqual([
      ['u0', 'complete', '你好'],
      ['a0', 'complete', '你好！有什么可以帮你？'],
      ['u1', 'complete', 'hi'],
      ['a1', 'aborted', 'Hello!'],
    ]);
    expect(done.some((m) => m.pending)).toBe(false);
    // a late delta after completion changes nothing
    expect(applyDelta(done, { requestId: 'r1', delta: 'late' })).toBe(done);
  });

  it('attaches an explicit memory command to the reply', () => {
    const list = beginTurn([], { requestId: 'r2', text: '记住我住在杭州', now: 1 });
    const command = { kind: 'remember' as const, affected: [{ id: 'm1', kind: 'profile' as const, text: '住在杭州' }] };
    const done = completeTurn(list, 'r2', {
      userMessage: record({ id: 'u', seq: 0, role: 'user', content: '记住我住在杭州' }),
      assistantMessage: record({ id: 'a', seq: 1, role: 'assistant', content: '好的，我记住了。' }),
      command,
    });
    expect(done[1]!.command).toEqual(command);
  });
});

describe('a failed turn', () => {
  it('keeps the streamed text and shows the error on the reply', () => {
    let list: readonly UiMessage[] = beginTurn(history, { requestId: 'r1', text: 'hi', now: 5_000 });
    list = applyDelta(list, { requestId: 'r1', delta: 'partial' });
    const failed = failTurn(list, 'r1', 'generation crashed');
    expect(failed[3]).toMatchObject({ status: 'error', error: 'generation crashed', content: 'partial' });
    expect(failed[2]!.pending).toBe(true);
  });

  it('reports the user text as not stored when the core has no trace of it', () => {
    const local = failTurn(beginTurn(history, { requestId: 'r1', text: '新问题', now: 5_000 }), 'r1', 'worker killed');
    const stored = [
      record({ id: 'u0', seq: 0, role: 'user', content: '你好' }),
      record({ id: 'a0', seq: 1, role: 'assistant', content: '你好！有什么可以帮你？' }),
    ];
    const { list, userStored } = reconcileFailedTurn(local, stored, 'r1');
    expect(userStored).toBe(false);
    expect(list).toEqual(local);
  });

  it('shows the stored messages, keeping the local error under a stored question with no reply', () => {
    const local = failTurn(beginTurn(history, { requestId: 'r1', text: '新问题', now: 5_000 }), 'r1', 'model unloaded');
    const stored = [
      record({ id: 'u0', seq: 0, role: 'user', content: '你好' }),
      record({ id: 'a0', seq: 1, role: 'assistant', content: '你好！有什么可以帮你？' }),
      record({ id: 'u1', seq: 2, role: 'user', content: '新问题', createdAt: 5_010 }),
    ];
    const { list, userStored } = reconcileFailedTurn(local, stored, 'r1');
    expect(userStored).toBe(true);
    expect(list.map((m) => [m.id, m.status])).toEqual([
      ['u0', 'complete'],
      ['a0', 'complete'],
      ['u1', 'complete'],
      [pendingIds('r1').assistant, 'error'],
    ]);
  });

  it('uses the stored error reply when the core stored one', () => {
    const local = failTurn(beginTurn([], { requestId: 'r1', text: 'q', now: 5_000 }), 'r1', 'boom');
    const stored = [
      record({ id: 'u1', seq: 0, role: 'user', content: 'q', createdAt: 5_001 }),
      record({ id: 'a1', seq: 1, role: 'assistant', content: '', status: 'error', error: 'boom', createdAt: 5_002 }),
    ];
    const { list, userStored } = reconcileFailedTurn(local, stored, 'r1');
    expect(userStored).toBe(true);
    expect(list.map((m) => [m.id, m.status, m.error])).toEqual([
      ['u1', 'complete', undefined],
      ['a1', 'error', 'boom'],
    ]);
  });
});

describe('lastStoredAssistant', () => {
  it('skips pending and streaming replies', () => {
    const list = beginTurn(history, { requestId: 'r1', text: 'hi', now: 5_000 });
    expect(lastStoredAssistant(list)?.id).toBe('a0');
    expect(lastStoredAssistant([])).toBeUndefined();
  });
});

describe('memory commands, from the stored messages', () => {
  const affected = [{ id: 'mem1', kind: 'fact' as const, text: 'my sister is called Ana' }];

  it('reads the command from the stored reply, so the card survives a reload', () => {
    const stored = [
      record({ id: 'u1', seq: 0, role: 'user', content: 'Remember that my sister is called Ana', command: { kind: 'remember' } }),
      record({ id: 'a1', seq: 1, role: 'assistant', content: 'Got it.', command: { kind: 'remember', affected } }),
    ];
    const [user, reply] = stored.map(fromRecord);
    expect(reply!.command).toEqual({ kind: 'remember', affected });
    expect(commandCard(reply!)).toEqual({ title: 'chat.command.remembered', items: affected });
    // the user's own command message carries the kind only, and gets no card
    expect(user!.command).toEqual({ kind: 'remember' });
    expect(commandCard(user!)).toBeNull();
  });

  it('shows no card for a forget that removed nothing, or a message that is no command', () => {
    expect(
      commandCard(fromRecord(record({ id: 'a', seq: 1, role: 'assistant', content: 'Nothing matched.', command: { kind: 'forget', affected: [] } }))),
    ).toBeNull();
    expect(commandCard(fromRecord(record({ id: 'a', seq: 1, role: 'assistant', content: 'Nothing matched.', command: { kind: 'forget' } })))).toBeNull();
    expect(commandCard(fromRecord(record({ id: 'a', seq: 1, role: 'assistant', content: 'hi' })))).toBeNull();
    const removed = commandCard(fromRecord(record({ id: 'a', seq: 1, role: 'assistant', content: '已删除', command: { kind: 'forget', affected } })));
    expect(removed?.title).toBe('chat.command.forgot');
  });

  it('prefers the stored command over the turn result, and falls back to the result for an older core', () => {
    const stored = { kind: 'forget' as const, affected };
    const done = completeTurn(beginTurn([], { requestId: 'r', text: 'forget Ana', now: 1 }), 'r', {
      userMessage: record({ id: 'u', seq: 0, role: 'user', content: 'forget Ana' }),
      assistantMessage: record({ id: 'a', seq: 1, role: 'assistant', content: 'Removed.', command: stored }),
      command: { kind: 'forget', affected: [] },
    });
    expect(done[1]!.command).toEqual(stored);
  });
});

describe('truncated replies', () => {
  const truncated = fromRecord(
    record({ id: 'a', seq: 1, role: 'assistant', content: 'Once upon a', truncated: true, usage: { promptTokens: 300, completionTokens: 512 } }),
  );

  it('copies the flag and the usage from the stored message', () => {
    expect(truncated.truncated).toBe(true);
    expect(truncated.usage).toEqual({ promptTokens: 300, completionTokens: 512 });
    expect(fromRecord(record({ id: 'b', seq: 1, role: 'assistant', content: 'x' })).truncated).toBeUndefined();
  });

  it("names the limit from the prompt trace first, then from the engine's completion count", () => {
    expect(truncatedAt(truncated, 600)).toBe(600);
    expect(truncatedAt(truncated, null)).toBe(512);
    expect(truncatedAt(truncated)).toBe(512);
    expect(truncatedAt({ truncated: true })).toBeNull();
    expect(truncatedAt({ truncated: true, usage: { promptTokens: 1, completionTokens: 0 } }, 0)).toBeNull();
    expect(truncatedAt({ truncated: false, usage: { promptTokens: 1, completionTokens: 512 } }, 512)).toBeNull();
  });
});

describe('failed replies', () => {
  it('keep the engine error code so the panel can translate the failure', () => {
    const failed = fromRecord(
      record({ id: 'f', seq: 1, role: 'assistant', content: '', status: 'error', error: 'No language model is loaded.', errorCode: 'not_loaded' }),
    );
    expect(failed).toMatchObject({ status: 'error', error: 'No language model is loaded.', errorCode: 'not_loaded' });
    expect(fromRecord(record({ id: 'g', seq: 1, role: 'assistant', content: '', status: 'error', error: 'x' })).errorCode).toBeUndefined();
  });
});

describe('followTurn (a reply this panel did not start)', () => {
  it('shows the text so far after the stored messages, then appends streamed pieces', () => {
    const stored = [fromRecord(record({ id: 'u1', seq: 0, role: 'user', content: 'Tell me a story' }))];
    const opened = followTurn(stored, { requestId: 'r9', content: 'Once upon', now: 5 });
    expect(opened).toEqual([
      stored[0],
      { id: pendingIds('r9').assistant, role: 'assistant', content: 'Once upon', status: 'streaming', pending: true, requestId: 'r9', createdAt: 5 },
    ]);
    const more = followTurn(opened, { requestId: 'r9', delta: ' a time', now: 6 });
    expect(more[1]!.content).toBe('Once upon a time');
    // A fresher snapshot replaces the text (no doubled pieces); other requests' pieces are not mixed in.
    expect(followTurn(more, { requestId: 'r9', content: 'Once upon a time there', now: 7 })[1]!.content).toBe('Once upon a time there');
    // Reopened mid-reply: pieces came in before the snapshot answered; the snapshot fills in the beginning,
    // and an older (shorter) one does not cut what is shown.
    const early = followTurn(stored, { requestId: 'r9', delta: 'dragon', now: 5 });
    expect(followTurn(early, { requestId: 'r9', content: 'Once there was a dragon', now: 6 })[1]!.content).toBe('Once there was a dragon');
    expect(followTurn(more, { requestId: 'r9', content: 'Once', now: 7 })[1]!.content).toBe('Once upon a time');
    expect(followTurn(more, { requestId: 'other', delta: 'x', now: 7 })).toHaveLength(3);
    // A second panel that sees the reply from its first piece.
    expect(followTurn(stored, { requestId: 'r9', delta: 'Once', now: 5 })[1]).toMatchObject({ content: 'Once', status: 'streaming' });
  });
});

describe('waiting and replaced turns', () => {
  it('a waiting message stays below the running turn; its own turn replaces it when it is sent', () => {
    const running = beginTurn(history, { requestId: 'r1', text: 'one', now: 2 });
    const waiting = queueTurn(running, { requestId: 'r2', text: 'two', now: 3 });
    expect(waiting.map((m) => [m.id, m.queued ?? false])).toEqual([
      ['u0', false],
      ['a0', false],
      [pendingIds('r1').user, false],
      [pendingIds('r1').assistant, false],
      [pendingIds('r2').user, true],
    ]);
    // A third turn started meanwhile (a regenerate) goes above the waiting message.
    expect(
      beginTurn(waiting, { requestId: 'r3', text: 'three', now: 4 })
        .map((m) => m.id)
        .slice(-3),
    ).toEqual([pendingIds('r3').user, pendingIds('r3').assistant, pendingIds('r2').user]);
    const sent = beginTurn(waiting, { requestId: 'r2', text: 'two', now: 5 });
    expect(sent.filter((m) => m.queued)).toEqual([]);
    expect(sent.map((m) => m.id).slice(-2)).toEqual([pendingIds('r2').user, pendingIds('r2').assistant]);
    expect(unqueueTurn(waiting, 'r2')).toEqual(running);
    expect(unqueueTurn(running, 'r2')).toBe(running);
  });

  it('truncateBefore drops a replaced message and everything after it, but not waiting messages', () => {
    const waiting = queueTurn(history, { requestId: 'r2', text: 'two', now: 3 });
    expect(truncateBefore(waiting, 'a0').map((m) => m.id)).toEqual(['u0', pendingIds('r2').user]);
    expect(truncateBefore(waiting, 'u0').map((m) => m.id)).toEqual([pendingIds('r2').user]);
    expect(truncateBefore(history, 'missing')).toBe(history);
  });
});
