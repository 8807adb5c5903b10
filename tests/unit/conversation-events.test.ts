/**
 * `withChangeEvents` (src/core/conversations.ts): every change is announced once it is stored,
 * and `holdEvents` defers the announcements (a chat turn holds them while it builds its prompt)
 * to the last release, once per conversation, in first-change order. Real store on fake-indexeddb.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { createConversationStore, withChangeEvents } from '../../src/core/conversations';
import { RecallDB } from '../../src/db/schema';

const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.delete();
});

function setup() {
  const db = new RecallDB(`conversation-events-${crypto.randomUUID()}`);
  dbs.push(db);
  const told: string[] = [];
  const store = withChangeEvents(
    createConversationStore(db, () => 1_000),
    (id) => void told.push(id),
  );
  return { store, told };
}

const message = (conversationId: string, content: string) =>
  ({ id: crypto.randomUUID(), conversationId, role: 'user', content, createdAt: 1_000, status: 'complete' }) as const;

describe('conversation change events', () => {
  it('announces each change at once without a hold', async () => {
    const { store, told } = setup();
    const a = await store.create({ strategy: { kind: 'full-buffer' } });
    await store.append(message(a.id, 'hi'));
    expect(told).toEqual([a.id, a.id]);
  });

  it('holds them until the last release, once per conversation in first-change order; a second release does nothing', async () => {
    const { store, told } = setup();
    const a = await store.create({ strategy: { kind: 'full-buffer' } });
    const b = await store.create({ strategy: { kind: 'full-buffer' } });
    told.length = 0;
    const outer = store.holdEvents();
    await store.append(message(b.id, 'one'));
    const inner = store.holdEvents();
    await store.append(message(a.id, 'two'));
    await store.append(message(b.id, 'three'));
    inner();
    expect(told).toEqual([]); // the outer hold is still in force
    inner(); // idempotent: does not release the outer hold
    await store.update(a.id, { title: 'A' });
    expect(told).toEqual([]);
    outer();
    expect(told).toEqual([b.id, a.id]);
    outer();
    await store.append(message(a.id, 'four'));
    expect(told).toEqual([b.id, a.id, a.id]);
  });
});
