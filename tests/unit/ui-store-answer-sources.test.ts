/**
 * The side panel's answer-sources store (chips under a reply) and the temporary-chat actions of
 * the conversations store, against a fake messaging api (tests/helpers/fake-api.ts: the core
 * cannot run behind the panel's messaging in Node). The notices, view and conversations stores are
 * the real ones.
 */
import { describe, expect, it } from 'vitest';
import type { ConversationRecord, FeedbackView, MemoryView } from '../../src/model/records';
import type { AnswerSources } from '../../src/messaging/protocol';
import { DEFAULT_STRATEGY } from '../../src/model/strategies';
import { createAnswerSourcesStore } from '../../src/ui/state/answer-sources.svelte';
import { createConversationsStore } from '../../src/ui/state/conversations.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createViewStore } from '../../src/ui/state/view.svelte';
import { createFakeApi } from '../helpers/fake-api';

const sources = (memoryIds: string[], feedback: FeedbackView[] = []): AnswerSources => ({
  memories: memoryIds.map((memoryId) => ({ memoryId, kind: 'fact', text: `text of ${memoryId}`, exists: true })),
  dropped: 0,
  feedback,
});

function setup() {
  const api = createFakeApi();
  const notices = createNoticesStore();
  const view = createViewStore();
  return { api, notices, view, store: createAnswerSourcesStore({ ...api, notices, view }) };
}

describe('answer sources store', () => {
  it('reads the sources of many replies in one request; a reply without a trace is null; read once', async () => {
    const { api, store } = setup();
    api.on('trace.sources', ({ messageIds }) => Object.fromEntries(messageIds.filter((id) => id !== 'cmd').map((id) => [id, sources([`m-${id}`])])));
    await Promise.all([store.load(['a1']), store.load(['a2', 'cmd'])]);
    expect(api.callsOf('trace.sources')).toEqual([{ messageIds: ['a1', 'a2', 'cmd'] }]);
    expect(store.byMessage['a1']!.memories.map((m) => m.memoryId)).toEqual(['m-a1']);
    expect(store.byMessage['cmd']).toBeNull();
    await store.load(['a1', 'cmd']);
    expect(api.callsOf('trace.sources')).toHaveLength(1);
  });

  it('not relevant here is stored and shown on the chip; undo removes exactly that row', async () => {
    const { api, store } = setup();
    api.on('trace.sources', () => ({ a1: sources(['m1', 'm2']) }));
    const row: FeedbackView = { id: 'f1', memoryId: 'm1', messageId: 'a1', createdAt: 5 };
    api.on('memory.feedback', () => row);
    api.on('memory.feedbackUndo', () => true);
    await store.load(['a1']);
    await store.notRelevant('a1', 'm1');
    expect(api.callsOf('memory.feedback')).toEqual([{ messageId: 'a1', memoryId: 'm1' }]);
    expect(store.notRelevantRow('a1', 'm1')).toEqual(row);
    expect(store.notRelevantRow('a1', 'm2')).toBeUndefined();
    await store.undoNotRelevant('a1', 'm1');
    expect(api.callsOf('memory.feedbackUndo')).toEqual([{ id: 'f1' }]);
    expect(store.notRelevantRow('a1', 'm1')).toBeUndefined();
    expect(store.busy).toBeNull();
  });

  it('forget deletes the memory once and marks it forgotten under every reply that used it; a failure is a notice', async () => {
    const { api, notices, store } = setup();
    api.on('trace.sources', () => ({ a1: sources(['m1', 'm2']), a2: sources(['m1']) }));
    api.on('memory.delete', () => ({ rounds: [] }));
    await store.load(['a1', 'a2']);
    await store.forget('a2', 'm1');
    expect(api.callsOf('memory.delete')).toEqual([{ id: 'm1' }]);
    expect(store.byMessage['a1']!.memories.map((m) => [m.memoryId, m.exists])).toEqual([
      ['m1', false],
      ['m2', true],
    ]);
    expect(store.byMessage['a2']!.memories[0]!.exists).toBe(false);
    api.on('memory.delete', () => {
      throw new Error('disk full');
    });
    await store.forget('a1', 'm2');
    expect(notices.list.map((n) => n.kind)).toEqual(['error']);
    expect(store.byMessage['a1']!.memories[1]!.exists).toBe(true);
  });

  it('open shows the Memory tab with that memory first (edit opens its editor); a memory that is gone is a notice and a forgotten chip', async () => {
    const { api, notices, view, store } = setup();
    const memory = { id: 'm1', text: 'text of m1' } as MemoryView;
    api.on('trace.sources', () => ({ a1: sources(['m1', 'gone']) }));
    api.on('memory.get', ({ id }) => (id === 'm1' ? memory : null));
    await store.load(['a1']);
    view.contextMessageId = 'a1';
    await store.open('a1', 'm1', true);
    expect([view.tab, view.contextMessageId, store.focused]).toEqual(['memory', null, { memory, edit: true }]);
    view.tab = 'chat';
    await store.open('a1', 'gone');
    expect(view.tab).toBe('chat');
    expect(notices.list.map((n) => n.kind)).toEqual(['error']);
    expect(store.byMessage['a1']!.memories[1]!.exists).toBe(false);
    // Re-read after the list changed: deleted meanwhile → no longer focused.
    api.on('memory.get', () => null);
    await store.refreshFocused();
    expect(store.focused).toBeNull();
  });
});

describe('temporary chat in the conversations store', () => {
  const record = (id: string, temporary = false): ConversationRecord => ({
    id,
    title: '',
    namespace: 'default',
    strategy: DEFAULT_STRATEGY,
    createdAt: 1,
    updatedAt: 1,
    ...(temporary ? { temporary: true as const } : {}),
  });

  it('creates a temporary conversation; "new chat" from an empty temporary chat leaves it (a normal empty chat stays)', async () => {
    const api = createFakeApi();
    const notices = createNoticesStore();
    const view = createViewStore();
    const conversations = createConversationsStore({ ...api, notices, view });
    let n = 0;
    api.on('conversations.create', (data) => record(`c${++n}`, data?.temporary === true));
    api.on('conversations.list', () => []);
    await conversations.startTemporary();
    expect(api.callsOf('conversations.create')).toEqual([{ temporary: true }]);
    expect([conversations.current?.id, conversations.temporary]).toEqual(['c1', true]);
    await conversations.startTemporary(); // already in an empty one: no second
    expect(api.callsOf('conversations.create')).toHaveLength(1);
    await conversations.startNew();
    expect([conversations.current?.id, conversations.temporary]).toEqual(['c2', false]);
    await conversations.startNew(); // an empty normal chat: stays
    expect(conversations.current?.id).toBe('c2');
  });
});
