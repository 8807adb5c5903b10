/**
 * Chat and conversations stores (src/ui/state/chat.svelte.ts, conversations.svelte.ts) against a
 * fake messaging api (tests/helpers/fake-api.ts): the core is the faked boundary; the stores,
 * the transcript helpers and the notices are the real ones.
 */
import { describe, expect, it } from 'vitest';
import type { ConversationRecord, MessageRecord } from '../../src/model/records';
import { DEFAULT_STRATEGY } from '../../src/model/strategies';
import type { ChatTurnResult } from '../../src/messaging/protocol';
import { createChatStore } from '../../src/ui/state/chat.svelte';
import { createConversationsStore } from '../../src/ui/state/conversations.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createViewStore } from '../../src/ui/state/view.svelte';
import { createFakeApi, deferred } from '../helpers/fake-api';
import { DEFAULT_NAMESPACE } from '../../src/model/memory';

const conv = (id: string): ConversationRecord => ({ id, title: '', namespace: 'default', strategy: DEFAULT_STRATEGY, createdAt: 1, updatedAt: 1 });
const msg = (id: string, seq: number, role: 'user' | 'assistant', content: string, conversationId = 'c1'): MessageRecord => ({
  id,
  conversationId,
  seq,
  role,
  content,
  createdAt: 1,
  status: 'complete',
});
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function setup() {
  const api = createFakeApi();
  const notices = createNoticesStore();
  const view = createViewStore();
  const conversations = createConversationsStore({ ...api, notices, view, namespace: () => DEFAULT_NAMESPACE });
  let chatState: 'ready' | 'idle' = 'ready';
  const chat = createChatStore({ ...api, notices, conversations, chatState: () => chatState });
  api.on('conversations.list', () => []);
  api.on('conversations.get', ({ id }) => conv(id));
  api.on('chat.live', () => null);
  api.on('trace.get', () => null);
  return { api, notices, view, conversations, chat, setChatState: (s: typeof chatState) => (chatState = s) };
}

describe('chat store', () => {
  it('shows the user message at once and appends the deltas of its own request only', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    chat.listen();
    const reply = deferred<ChatTurnResult>();
    api.on('chat.send', () => reply.promise);
    chat.draft = '  你好  ';
    const sending = chat.send();
    await flush();
    const [sent] = api.callsOf('chat.send');
    expect(sent).toMatchObject({ conversationId: 'c1', text: '你好' });
    expect(chat.draft).toBe('');
    expect(conversations.messages.map((m) => [m.role, m.content, m.status])).toEqual([
      ['user', '你好', 'complete'],
      ['assistant', '', 'streaming'],
    ]);
    api.emit('event.chatDelta', { requestId: sent!.requestId, conversationId: 'c1', messageId: 'a1', delta: 'Hel' });
    api.emit('event.chatDelta', { requestId: 'someone-else', conversationId: 'c1', messageId: 'x', delta: 'NOISE' });
    api.emit('event.chatDelta', { requestId: sent!.requestId, conversationId: 'c1', messageId: 'a1', delta: 'lo' });
    expect(conversations.messages[1]!.content).toBe('Hello');
    reply.resolve({ userMessage: msg('u1', 0, 'user', '你好'), assistantMessage: msg('a1', 1, 'assistant', 'Hello') });
    await sending;
    expect(conversations.messages.map((m) => [m.id, m.content, m.pending ?? false])).toEqual([
      ['u1', '你好', false],
      ['a1', 'Hello', false],
    ]);
    expect(conversations.active).toBeNull();
  });

  it('keeps the typed text when the send fails before the core stored it, and shows the error in the reply', async () => {
    const { api, conversations, chat, notices } = setup();
    conversations.current = conv('c1');
    api.on('chat.send', () => {
      throw new Error('engine crashed');
    });
    api.on('messages.list', () => []); // nothing stored
    chat.draft = 'remember my cat is Mochi please';
    await chat.send();
    expect(chat.draft).toBe('remember my cat is Mochi please');
    const reply = conversations.messages.find((m) => m.role === 'assistant');
    expect(reply).toMatchObject({ status: 'error', error: 'engine crashed' });
    expect(notices.list).toEqual([]); // the reply says it; no extra notice
  });

  it('puts the text back also when the core stored the user message (any failure keeps what was typed)', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    api.on('chat.send', () => {
      throw new Error('stopped');
    });
    api.on('messages.list', () => [{ ...msg('u1', 0, 'user', 'hi'), createdAt: Date.now() }]); // stored just now
    chat.draft = 'hi';
    await chat.send();
    expect(chat.draft).toBe('hi');
    expect(conversations.messages[0]).toMatchObject({ id: 'u1', content: 'hi' });
  });

  it('puts the text back when the core stored a failed reply (the turn resolved with an error reply)', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    const failed: MessageRecord = {
      ...msg('a1', 1, 'assistant', ''),
      status: 'error',
      error: 'The message needs 8915 tokens but the model has room for 1907.',
    };
    api.on('chat.send', () => ({ userMessage: msg('u1', 0, 'user', 'long text'), assistantMessage: failed }));
    chat.draft = 'long text';
    await chat.send();
    expect(chat.draft).toBe('long text');
    expect(conversations.messages.map((m) => [m.id, m.status])).toEqual([
      ['u1', 'complete'],
      ['a1', 'error'],
    ]);
  });

  it('does not send a text the core measured too long; shortens it to the part that fits', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    const text = 'First sentence here. Second sentence that does not fit.';
    api.on('chat.measure', ({ text: t }) =>
      t === text
        ? { neededTokens: 900, availableTokens: 500, fits: false, chars: text.length, maxChars: 32000, fitChars: 20 }
        : { neededTokens: 300, availableTokens: 500, fits: true, chars: t.length, maxChars: 32000, fitChars: t.length },
    );
    api.on('chat.send', ({ text: t }) => ({ userMessage: msg('u1', 0, 'user', t), assistantMessage: msg('a1', 1, 'assistant', 'ok') }));
    chat.draft = text;
    await chat.send();
    expect(api.callsOf('chat.send')).toEqual([]);
    expect(chat.draft).toBe(text);
    expect(chat.tooLong).toMatchObject({ neededTokens: 900, availableTokens: 500, fitChars: 20 });
    chat.shorten();
    expect(chat.draft).toBe('First sentence here.');
    expect(chat.tooLong).toBeNull();
    await chat.send();
    expect(api.callsOf('chat.send').map((d) => d.text)).toEqual(['First sentence here.']);
  });

  it('measures again when sending: a text too long for one model is sent once a larger one is loaded', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    let room = 500;
    api.on('chat.measure', ({ text }) => ({ neededTokens: 900, availableTokens: room, fits: 900 <= room, chars: text.length, maxChars: 32000, fitChars: 10 }));
    api.on('chat.send', ({ text }) => ({ userMessage: msg('u1', 0, 'user', text), assistantMessage: msg('a1', 1, 'assistant', 'ok') }));
    chat.draft = 'a long text';
    await chat.send();
    expect(api.callsOf('chat.send')).toEqual([]);
    room = 4000; // another model, with a larger window
    await chat.send();
    expect(api.callsOf('chat.send').map((d) => d.text)).toEqual(['a long text']);
  });

  it('a message sent while its own reply streams waits (queued bubble) and is sent when that reply ends', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    const first = deferred<ChatTurnResult>();
    api.on('chat.send', ({ text }) =>
      text === 'one' ? first.promise : { userMessage: msg('u2', 2, 'user', 'two'), assistantMessage: msg('a2', 3, 'assistant', 'second') },
    );
    chat.draft = 'one';
    const sending = chat.send();
    await flush();
    chat.draft = 'two';
    expect(chat.canSend).toBe(true);
    await chat.send();
    expect(api.callsOf('chat.send').map((d) => d.text)).toEqual(['one']);
    expect(conversations.messages.map((m) => [m.role, m.content, m.status, m.queued ?? false])).toEqual([
      ['user', 'one', 'complete', false],
      ['assistant', '', 'streaming', false],
      ['user', 'two', 'complete', true],
    ]);
    first.resolve({ userMessage: msg('u1', 0, 'user', 'one'), assistantMessage: msg('a1', 1, 'assistant', 'first') });
    await sending;
    expect(api.callsOf('chat.send').map((d) => d.text)).toEqual(['one', 'two']);
    expect(conversations.messages.map((m) => [m.id, m.queued ?? false])).toEqual([
      ['u1', false],
      ['a1', false],
      ['u2', false],
      ['a2', false],
    ]);
  });

  it('a waiting message can be cancelled: it is never sent and its text comes back', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    const first = deferred<ChatTurnResult>();
    api.on('chat.send', () => first.promise);
    chat.draft = 'one';
    const sending = chat.send();
    await flush();
    chat.draft = 'two';
    await chat.send();
    const waiting = conversations.messages.find((m) => m.queued)!;
    chat.cancelQueued(waiting.requestId!);
    expect(chat.draft).toBe('two');
    first.resolve({ userMessage: msg('u1', 0, 'user', 'one'), assistantMessage: msg('a1', 1, 'assistant', 'first') });
    await sending;
    expect(api.callsOf('chat.send').map((d) => d.text)).toEqual(['one']);
    expect(conversations.messages.map((m) => m.id)).toEqual(['u1', 'a1']);
  });

  it('regenerate and edit replace the later turns on screen at once and show the stored result', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    conversations.messages = [
      msg('u1', 0, 'user', 'hi'),
      msg('a1', 1, 'assistant', 'hello'),
      msg('u2', 2, 'user', 'tea?'),
      msg('a2', 3, 'assistant', 'yes'),
    ].map((m) => ({ id: m.id, role: m.role, content: m.content, status: m.status, createdAt: m.createdAt }));
    const regenerated = deferred<ChatTurnResult>();
    api.on('chat.regenerate', () => regenerated.promise);
    const regenerating = chat.regenerate();
    await flush();
    expect(api.callsOf('chat.regenerate')).toMatchObject([{ conversationId: 'c1' }]);
    expect(conversations.messages.map((m) => [m.content, m.status])).toEqual([
      ['hi', 'complete'],
      ['hello', 'complete'],
      ['tea?', 'complete'],
      ['', 'streaming'],
    ]);
    regenerated.resolve({ userMessage: msg('u3', 2, 'user', 'tea?'), assistantMessage: msg('a3', 3, 'assistant', 'no') });
    await regenerating;
    expect(conversations.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u3', 'a3']);

    api.on('chat.edit', ({ text }) => ({ userMessage: msg('u4', 0, 'user', text), assistantMessage: msg('a4', 1, 'assistant', 'ok') }));
    await chat.edit('u1', '  good morning ');
    expect(api.callsOf('chat.edit')).toMatchObject([{ conversationId: 'c1', messageId: 'u1', text: 'good morning' }]);
    expect(conversations.messages.map((m) => [m.id, m.content])).toEqual([
      ['u4', 'good morning'],
      ['a4', 'ok'],
    ]);
  });

  it('Retry resends a stored failed turn with chat.retry, and a failure stored before its reply with chat.regenerate', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    conversations.messages = [
      { id: 'u1', role: 'user', content: 'story?', status: 'complete', createdAt: 1 },
      { id: 'a1', role: 'assistant', content: '', status: 'error', error: 'crashed', createdAt: 1 },
    ];
    api.on('chat.retry', () => ({ userMessage: msg('u2', 0, 'user', 'story?'), assistantMessage: msg('a2', 1, 'assistant', 'Once…') }));
    await chat.retry('a1');
    expect(api.callsOf('chat.retry')).toMatchObject([{ conversationId: 'c1', messageId: 'a1' }]);
    expect(conversations.messages.map((m) => [m.id, m.content])).toEqual([
      ['u2', 'story?'],
      ['a2', 'Once…'],
    ]);
    // The reply failed before it was stored (its user message was): the last turn runs again.
    conversations.messages = [
      { id: 'u2', role: 'user', content: 'story?', status: 'complete', createdAt: 1 },
      { id: 'pending-assistant:x', role: 'assistant', content: '', status: 'error', error: 'gone', pending: true, createdAt: 1 },
    ];
    api.on('chat.regenerate', () => ({ userMessage: msg('u3', 0, 'user', 'story?'), assistantMessage: msg('a3', 1, 'assistant', 'Twice…') }));
    await chat.retry('pending-assistant:x');
    expect(api.callsOf('chat.regenerate')).toHaveLength(1);
    expect(conversations.messages.map((m) => m.id)).toEqual(['u3', 'a3']);
  });

  it('creates the conversation on the first send with the strategy picked before, and keeps the text when that fails', async () => {
    const { api, conversations, chat, notices } = setup();
    api.on('conversations.create', () => {
      throw new Error('disk gone');
    });
    conversations.pendingStrategy = { kind: 'token-buffer', maxTokens: 500 };
    chat.draft = 'hello';
    await chat.send();
    expect(api.callsOf('conversations.create')).toEqual([{ namespace: 'default', strategy: { kind: 'token-buffer', maxTokens: 500 } }]);
    expect(chat.draft).toBe('hello');
    expect(notices.list.map((n) => [n.kind, n.detail])).toEqual([['error', 'disk gone']]);
    expect(api.callsOf('chat.send')).toEqual([]);
  });

  it('sends nothing without a ready model except memory commands', async () => {
    const { api, conversations, chat, setChatState } = setup();
    conversations.current = conv('c1');
    setChatState('idle');
    api.on('chat.send', () => ({ userMessage: msg('u1', 0, 'user', 'x'), assistantMessage: msg('a1', 1, 'assistant', 'ok') }));
    chat.draft = '   ';
    expect(chat.canSend).toBe(false);
    chat.draft = 'what is the weather';
    expect(chat.canSend).toBe(false);
    await chat.send();
    expect(api.callsOf('chat.send')).toEqual([]);
    expect(chat.draft).toBe('what is the weather');
    setChatState('ready');
    expect(chat.canSend).toBe(true);
    conversations.active = { requestId: 'r0', conversationId: 'c1', followed: true }; // a reply another panel started
    expect(chat.canSend).toBe(false);
    conversations.active = { requestId: 'r0', conversationId: 'c1' }; // this panel's own: the message would wait
    expect(chat.canSend).toBe(true);
    conversations.active = null;
    setChatState('idle');
    chat.draft = '记住：我住在杭州';
    expect(chat.canSend).toBe(true);
    await chat.send();
    expect(api.callsOf('chat.send').map((d) => d.text)).toEqual(['记住：我住在杭州']);
  });

  it('follows a reply another panel streams in the open conversation', () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    chat.listen();
    api.emit('event.chatDelta', { requestId: 'r9', conversationId: 'c2', messageId: 'x', delta: 'other chat' });
    expect(conversations.messages).toEqual([]);
    api.emit('event.chatDelta', { requestId: 'r9', conversationId: 'c1', messageId: 'a9', delta: 'Hi' });
    api.emit('event.chatDelta', { requestId: 'r9', conversationId: 'c1', messageId: 'a9', delta: ' there' });
    expect(conversations.active).toMatchObject({ requestId: 'r9', followed: true });
    expect(conversations.messages.map((m) => [m.role, m.content])).toEqual([['assistant', 'Hi there']]);
  });
});

describe('conversations store', () => {
  it('delete of the open conversation starts a new chat without an error notice, also when the core announces it first', async () => {
    const { api, conversations, notices, view } = setup();
    conversations.listen();
    conversations.current = conv('c1');
    conversations.messages = [{ id: 'u1', role: 'user', content: 'hi', status: 'complete', createdAt: 1 }];
    view.contextMessageId = 'a1';
    const gone = new Set<string>();
    api.on('conversations.get', ({ id }) => (gone.has(id) ? null : conv(id)));
    api.on('messages.list', () => []);
    api.on('conversations.delete', ({ id }) => {
      gone.add(id);
      // The core's change event goes out before its reply (core/conversations.ts withChangeEvents).
      api.emit('event.conversations', { conversationId: id });
    });
    await conversations.remove('c1');
    await flush();
    await flush();
    expect(conversations.current).toBeNull();
    expect(conversations.messages).toEqual([]);
    expect(view.contextMessageId).toBeNull();
    expect(notices.list).toEqual([]);
  });

  it('a conversation deleted elsewhere becomes a new chat with an error notice', async () => {
    const { api, conversations, notices } = setup();
    conversations.current = conv('c1');
    api.on('conversations.get', () => null);
    api.on('messages.list', () => []);
    await conversations.select('c1');
    expect(conversations.current).toBeNull();
    expect(notices.list.map((n) => n.kind)).toEqual(['error']);
  });

  it('a failed delete keeps the conversation open and says so', async () => {
    const { api, conversations, notices } = setup();
    conversations.current = conv('c1');
    api.on('conversations.delete', () => {
      throw new Error('locked');
    });
    await conversations.remove('c1');
    expect(conversations.current?.id).toBe('c1');
    expect(notices.list.map((n) => n.detail)).toEqual(['locked']);
  });

  it('a burst of refreshes costs at most two list reads', async () => {
    const { api, conversations } = setup();
    const first = deferred<[]>();
    let reads = 0;
    api.on('conversations.list', () => (++reads === 1 ? first.promise : []));
    const a = conversations.refresh();
    const b = conversations.refresh();
    const c = conversations.refresh();
    first.resolve([]);
    await Promise.all([a, b, c]);
    expect(reads).toBe(2);
  });

  it('opening a conversation shows its messages and closes the drawer', async () => {
    const { api, conversations, view } = setup();
    view.drawerOpen = true;
    api.on('messages.list', () => [msg('u1', 0, 'user', 'a'), msg('a1', 1, 'assistant', 'b')]);
    await conversations.select('c1', ['u1']);
    expect(conversations.current?.id).toBe('c1');
    expect(conversations.messages.map((m) => m.id)).toEqual(['u1', 'a1']);
    expect(conversations.highlighted).toEqual(['u1']);
    expect(view.drawerOpen).toBe(false);
    expect(api.callsOf('trace.get')).toEqual([{ messageId: 'a1' }]);
  });

  it("shows the open conversation's strategy, else the one picked for the new chat, else the default", async () => {
    const { conversations } = setup();
    const fallback = { kind: 'full-buffer' } as const;
    expect(conversations.strategyShown(fallback)).toEqual(fallback);
    await conversations.setStrategy({ kind: 'buffer-window', k: 3 }); // a new chat: kept for its creation
    expect(conversations.strategyShown(fallback)).toEqual({ kind: 'buffer-window', k: 3 });
    conversations.current = { ...conv('c1'), strategy: { kind: 'summary' } };
    expect(conversations.strategyShown(fallback)).toEqual({ kind: 'summary' });
  });
});
