/**
 * The side panel's page store (src/ui/state/page.svelte.ts) over the fake api: attaching the
 * current tab, a refusal as a translated notice, what a context menu or the shortcut left, and the
 * attachment going with exactly one message (through the chat store's `takePage`).
 */
import { describe, expect, it } from 'vitest';
import type { ConversationRecord, MessageRecord } from '../../src/model/records';
import type { PageAttachment } from '../../src/model/page';
import { DEFAULT_STRATEGY } from '../../src/model/strategies';
import { PageError } from '../../src/model/errors';
import { createChatStore } from '../../src/ui/state/chat.svelte';
import { createConversationsStore } from '../../src/ui/state/conversations.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createPageStore } from '../../src/ui/state/page.svelte';
import { createViewStore } from '../../src/ui/state/view.svelte';
import { createFakeApi } from '../helpers/fake-api';

const page: PageAttachment = { url: 'https://news.example/a', title: 'News', blocks: [{ kind: 'text', text: 'Hello.' }] };
const conv = (id: string): ConversationRecord => ({ id, title: '', namespace: 'default', strategy: DEFAULT_STRATEGY, createdAt: 1, updatedAt: 1 });
const msg = (id: string, seq: number, role: 'user' | 'assistant', content: string): MessageRecord => ({
  id,
  conversationId: 'c1',
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
  const store = createPageStore({ ...api, notices, whereAmI: async () => ({ windowId: 3, panelTabId: 9 }) });
  return { api, notices, store };
}

describe('page store', () => {
  it("attaches the tab of the panel's window; a refusal becomes a notice and attaches nothing", async () => {
    const { api, notices, store } = setup();
    api.on('page.read', () => page);
    await store.attachCurrent();
    expect(api.callsOf('page.read')).toEqual([{ windowId: 3, panelTabId: 9 }]);
    expect(store.attached).toEqual(page);

    store.clear();
    api.on('page.read', () => {
      throw new PageError('blocked', 'news.example is on the list', { params: { host: 'news.example', pattern: 'news.example' } });
    });
    await store.attachCurrent();
    expect(store.attached).toBeNull();
    expect(notices.list.at(-1)).toMatchObject({ kind: 'error' });
    expect(notices.list.at(-1)!.detail).toContain('news.example');
  });

  it('takes what the service worker left on event.page, once; a left error becomes a notice', async () => {
    const { api, notices, store } = setup();
    const left = [
      { attachment: { ...page, blocks: [], selection: 'two tides' } },
      { error: { code: 'unreadable', message: 'no', params: { host: '' } } },
      null,
    ];
    api.on('page.takePending', () => left.shift() ?? null);
    store.listen();
    api.emit('event.page', { at: 1 });
    await flush();
    expect(store.attached).toMatchObject({ selection: 'two tides' });
    api.emit('event.page', { at: 2 });
    await flush();
    expect(notices.list.at(-1)).toMatchObject({ kind: 'error' });
    expect(store.attached).toMatchObject({ selection: 'two tides' }); // an error leaves the attachment as it was
  });

  it('the attachment goes with the next message only', async () => {
    const { api, notices, store } = setup();
    const conversations = createConversationsStore({ ...api, notices, view: createViewStore() });
    const chat = createChatStore({ ...api, notices, conversations, chatState: () => 'ready', takePage: () => store.take() });
    api.on('conversations.list', () => []);
    api.on('conversations.get', ({ id }) => conv(id));
    api.on('page.read', () => page);
    let n = 0;
    api.on('chat.send', ({ text }) => ({ userMessage: msg(`u${n}`, n * 2, 'user', text), assistantMessage: msg(`a${n++}`, n * 2 + 1, 'assistant', 'ok') }));
    conversations.current = conv('c1');
    await store.attachCurrent();
    chat.draft = 'What does it say?';
    await chat.send();
    chat.draft = 'And then?';
    await chat.send();
    const sent = api.callsOf('chat.send');
    expect(sent[0]).toMatchObject({ text: 'What does it say?', page });
    expect(sent[1]!.page).toBeUndefined();
    expect(store.attached).toBeNull();
  });
});
