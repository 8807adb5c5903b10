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
  const conversations = createConversationsStore({ ...api, notices, view });
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

  it('does not put the text back when the core stored the user message', async () => {
    const { api, conversations, chat } = setup();
    conversations.current = conv('c1');
    api.on('chat.send', () => {
      throw new Error('stopped');
    });
    api.on('messages.list', () => [{ ...msg('u1', 0, 'user', 'hi'), createdAt: Date.now() }]); // stored just now
    chat.draft = 'hi';
    await chat.send();
    expect(chat.draft).toBe('');
    expect(conversations.messages[0]).toMatchObject({ id: 'u1', content: 'hi' });
  });

  it('creates the conversation on the first send with the strategy picked before, and keeps the text when that fails', async () => {
    const { api, conversations, chat, notices } = setup();
    api.on('conversations.create', () => {
      throw new Error('disk gone');
    });
    conversations.pendingStrategy = { kind: 'token-buffer', maxTokens: 500 };
    chat.draft = 'hello';
    await chat.send();
    expect(api.callsOf('conversations.create')).toEqual([{ strategy: { kind: 'token-buffer', maxTokens: 500 } }]);
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
    conversations.active = { requestId: 'r0', conversationId: 'c1' }; // a turn of this panel runs
    expect(chat.canSend).toBe(false);
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
