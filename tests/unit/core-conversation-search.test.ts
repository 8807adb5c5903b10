/**
 * Issue 12 items 3 and 8, the core side: conversation search over titles and message text (English
 * and Chinese), a rename that leaves the conversation's place in the list and its time alone, and
 * messages in brief for a memory's source line.
 * Real Dexie over fake-indexeddb, the real conversation store; no model involved.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { searchTerms, snippetAround } from '../../src/core/conversation-search';
import { createConversationStore, type ConversationStore } from '../../src/core/conversations';
import { RecallDB } from '../../src/db/schema';
import { MESSAGE_SNIPPET_CHARS } from '../../src/model/records';

let db: RecallDB;
afterEach(async () => db?.delete());

const STRATEGY = { kind: 'full-buffer' } as const;

/** A store on a fresh database whose clock is `clock.t` (ms). */
function setup(): { store: ConversationStore; clock: { t: number } } {
  db = new RecallDB(`search-${crypto.randomUUID()}`);
  const clock = { t: 1_000 };
  return { store: createConversationStore(db, () => clock.t), clock };
}

async function conversation(store: ConversationStore, clock: { t: number }, title: string, messages: string[]) {
  const c = await store.create({ title, strategy: STRATEGY });
  const ids: string[] = [];
  for (const [i, content] of messages.entries()) {
    clock.t += 10;
    const m = await store.append({
      id: `${c.id}-${i}`,
      conversationId: c.id,
      role: i % 2 ? 'assistant' : 'user',
      content,
      createdAt: clock.t,
      status: 'complete',
    });
    ids.push(m.id);
  }
  clock.t += 100;
  return { id: c.id, ids };
}

describe('conversation search', () => {
  it('finds message text and titles, English and Chinese, title matches first, with the matching message', async () => {
    const { store, clock } = setup();
    const trip = await conversation(store, clock, 'Weekend plans', ['I am going to Hangzhou next week', 'Hangzhou is lovely in spring.']);
    const zh = await conversation(store, clock, '周末', ['我下周去杭州出差', '杭州的西湖很美。']);
    const titled = await conversation(store, clock, 'Hangzhou hotels', ['Which area is quiet?']);
    await conversation(store, clock, 'Rust', ['How do lifetimes work?']);

    // Title match first, then the message match; the newest message with the term is named.
    expect((await store.search('hangzhou')).map((h) => [h.id, h.messageId])).toEqual([
      [titled.id, null],
      [trip.id, trip.ids[1]],
    ]);
    const [hit] = await store.search('西湖');
    expect(hit).toMatchObject({ id: zh.id, title: '周末', messageId: zh.ids[1], snippet: '杭州的西湖很美。', messageCount: 2 });
    // Every word must occur somewhere in the conversation (title or messages); case and width do not matter.
    expect((await store.search('WEEKEND spring')).map((h) => h.id)).toEqual([trip.id]);
    expect((await store.search('ｈａｎｇｚｈｏｕ lifetimes')).map((h) => h.id)).toEqual([]);
    expect(await store.search('   ')).toEqual([]);
  });

  it('cuts a snippet around the first matched term, marking both cuts', () => {
    // The term starts at code point 61: 40 before it (39 a's and the space), 40 after it (the space and 39 b's).
    const text = `${'a'.repeat(60)} Hangzhou ${'b'.repeat(60)}`;
    expect(snippetAround(text, 'hangzhou')).toBe(`…${'a'.repeat(39)} Hangzhou ${'b'.repeat(39)}…`);
    expect(searchTerms('  Hangzhou  HANGZHOU 杭州 ')).toEqual(['hangzhou', '杭州']);
  });

  it('a rename does not move the conversation to the top nor change its time', async () => {
    const { store, clock } = setup();
    const older = await conversation(store, clock, 'Older', ['first']);
    const newer = await conversation(store, clock, 'Newer', ['second']);
    const before = (await store.list()).map((c) => [c.id, c.updatedAt]);
    clock.t += 60_000;
    const renamed = await store.update(older.id, { title: 'Renamed' });
    expect(renamed.title).toBe('Renamed');
    const after = (await store.list()).map((c) => [c.id, c.updatedAt]);
    expect(after).toEqual(before);
    expect(after.map(([id]) => id)).toEqual([newer.id, older.id]);
    // A new message does move it up.
    await store.append({ id: 'x', conversationId: older.id, role: 'user', content: 'again', createdAt: clock.t, status: 'complete' });
    expect((await store.list())[0]!.id).toBe(older.id);
  });
});

describe('messages in brief (a memory\'s "From …" line, issue 12 item 8)', () => {
  it('returns the messages that exist, whitespace collapsed and cut at a word boundary, with role and time', async () => {
    const { store, clock } = setup();
    const long = `I moved to Hangzhou\n\nlast spring. ${'We walk by the lake every evening and '.repeat(4)}`;
    const c = await conversation(store, clock, 'Unrelated first message', ['hello', long]);
    const [hello, moved] = c.ids as [string, string];
    const found = await store.snippets([moved, 'gone', hello]);
    expect(found.map((m) => [m.id, m.role, m.conversationId])).toEqual([
      [moved, 'assistant', c.id],
      [hello, 'user', c.id],
    ]);
    expect(found[0]!.createdAt).toBe(1_020);
    expect(Array.from(found[0]!.snippet).length).toBeLessThanOrEqual(MESSAGE_SNIPPET_CHARS);
    expect(found[0]!.snippet.startsWith('I moved to Hangzhou last spring. We walk')).toBe(true);
    // Ends on a whole word of the text, then "…".
    const words = new Set(long.split(/\s+/u));
    expect(found[0]!.snippet.endsWith('…')).toBe(true);
    expect(words.has(found[0]!.snippet.slice(0, -1).split(' ').pop()!)).toBe(true);
    await expect(store.snippets(Array.from({ length: 501 }, (_, i) => `m${i}`))).rejects.toMatchObject({ code: 'bad_request' });
  });
});
