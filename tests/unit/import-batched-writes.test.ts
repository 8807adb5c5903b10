/**
 * The import's write pass looks up the conversations and messages of a batch together (one
 * bulkGet of ids, one anyOf over [conversationId+seq]) and adds them with one bulkAdd per table
 * (issue 9, import throughput). These tests pin down that the batched lookups decide exactly as
 * the per-record ones did, across batch boundaries, and that a failing bulk write is undone whole.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { flushStoreOf, storeOf } from '../helpers/ltm-test-store';
import type { ConversationRecord, MessageRecord } from '../../src/model/records';
import { importAll } from '../../src/backup';

const dbs: RecallDB[] = [];
const open = () => {
  const db = new RecallDB(`import-batched-${crypto.randomUUID()}`);
  dbs.push(db);
  return db;
};
afterEach(async () => {
  await Promise.all(dbs.map(flushStoreOf));
  await Promise.all(dbs.splice(0).map((d) => d.delete()));
});

const T0 = Date.UTC(2025, 5, 1);

const conversation = (id: string, updatedAt = T0): ConversationRecord => ({
  id,
  title: `Title ${id}`,
  namespace: 'default',
  strategy: { kind: 'full-buffer' },
  createdAt: T0,
  updatedAt,
});
const message = (id: string, conversationId: string, seq: number): MessageRecord => ({
  id,
  conversationId,
  seq,
  role: seq % 2 ? 'assistant' : 'user',
  content: `text of ${id}`,
  createdAt: T0 + seq,
  status: 'complete',
});
const file = (conversations: ConversationRecord[], messages: MessageRecord[]) =>
  new Blob([JSON.stringify({ format: 'recall-export', version: 1, exportedAt: T0, memories: [], memoryHistory: [], conversations, messages })]);

const contents = async (db: RecallDB) => ({
  conversations: (await db.conversations.orderBy(':id').toArray()).map((c) => [c.id, c.title, c.updatedAt]),
  messages: (await db.messages.orderBy('[conversationId+seq]').toArray()).map((m) => [m.id, m.conversationId, m.seq]),
  settings: (await db.settings.toArray()).map((r) => r.key),
});

describe('batched conversation and message writes', () => {
  it('adds new records, updates a newer conversation, skips stored messages and older conversations, across batches of 2', async () => {
    const db = open();
    await db.conversations.bulkAdd([
      { ...conversation('a'), title: 'local a' },
      { ...conversation('b', T0 + 10), title: 'local b' },
    ]);
    await db.messages.bulkAdd([message('a0', 'a', 0), message('b0', 'b', 0)]);
    // 3 conversations (a newer than stored, b older, c new) + 5 messages (a0 and b0 stored) = 8 records, 4 batches of 2.
    const source = file(
      [{ ...conversation('a', T0 + 5), title: 'file a' }, { ...conversation('b', T0 + 1), title: 'file b' }, conversation('c')],
      [message('a0', 'a', 0), message('a1', 'a', 1), message('b0', 'b', 0), message('c0', 'c', 0), message('c1', 'c', 1)],
    );
    const report = await importAll(db, await storeOf(db), source, { now: () => T0, batchSize: 2 });
    // added: conversation c, messages a1, c0, c1 = 4; updated: conversation a = 1; skipped: conversation b, messages a0, b0 = 3.
    expect(report).toEqual({ added: 4, updated: 1, skipped: 3, errors: [], needsEmbedding: 0, vectorsDropped: 0, forgotten: 0 });
    expect(await contents(db)).toEqual({
      conversations: [
        ['a', 'file a', T0 + 5],
        ['b', 'local b', T0 + 10],
        ['c', 'Title c', T0],
      ],
      messages: [
        ['a0', 'a', 0],
        ['a1', 'a', 1],
        ['b0', 'b', 0],
        ['c0', 'c', 0],
        ['c1', 'c', 1],
      ],
      settings: [],
    });
  });

  it('a position taken by a stored message in a later batch refuses the file and undoes the earlier batches', async () => {
    const db = open();
    await db.conversations.add(conversation('a', T0 + 10));
    await db.messages.add(message('local', 'a', 3));
    const source = file([conversation('a'), conversation('n')], [message('n0', 'n', 0), message('n1', 'n', 1), message('a2', 'a', 2), message('a3', 'a', 3)]);
    await expect(importAll(db, await storeOf(db), source, { now: () => T0, batchSize: 2 })).rejects.toThrow(
      'Message a3 cannot be imported: position 3 of conversation a already holds another message (local). Nothing was imported.',
    );
    expect(await contents(db)).toEqual({ conversations: [['a', 'Title a', T0 + 10]], messages: [['local', 'a', 3]], settings: [] });
  });

  it('a stored message between two wanted positions is no clash; a stored one at a far wanted position is (range and exact lookups)', async () => {
    const db = open();
    await db.conversations.add(conversation('a', T0 + 10));
    await db.messages.bulkAdd([message('local1', 'a', 1), message('local5', 'a', 5)]);
    // Wanted seqs 0, 2 and 4: the range 0..4 holds local1 at seq 1, which no file message wants.
    const near = await importAll(db, await storeOf(db), file([], [message('a0', 'a', 0), message('a2', 'a', 2), message('a4', 'a', 4)]), { now: () => T0 });
    expect(near).toMatchObject({ added: 3, updated: 0, skipped: 0 });
    // Wanted seqs 3 and 500: the span (498) exceeds 4 × 2 positions, so the exact positions are looked up; 3 is free, 500 is not.
    await db.messages.add(message('local500', 'a', 500));
    await expect(importAll(db, await storeOf(db), file([], [message('a3', 'a', 3), message('b500', 'a', 500)]), { now: () => T0 })).rejects.toThrow(
      'Message b500 cannot be imported: position 500 of conversation a already holds another message (local500). Nothing was imported.',
    );
    expect((await contents(db)).messages).toEqual([
      ['a0', 'a', 0],
      ['local1', 'a', 1],
      ['a2', 'a', 2],
      ['a4', 'a', 4],
      ['local5', 'a', 5],
      ['local500', 'a', 500],
    ]);
  });

  it('a write that fails in a later batch reaches the caller as that failure (not a BulkError) after every batch is undone', async () => {
    const db = open();
    let created = 0;
    db.messages.hook('creating', () => {
      created += 1;
      if (created === 3) throw new Error('QuotaExceededError (simulated)');
    });
    const source = file([conversation('a')], [message('a0', 'a', 0), message('a1', 'a', 1), message('a2', 'a', 2), message('a3', 'a', 3)]);
    const failure = await importAll(db, await storeOf(db), source, { now: () => T0, batchSize: 2 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).not.toBe('BulkError');
    expect((failure as Error).message).toContain('QuotaExceededError (simulated)');
    expect(await contents(db)).toEqual({ conversations: [], messages: [], settings: [] });
  });
});
