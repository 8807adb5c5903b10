/**
 * `mergeFeedback` (src/backup/feedback.ts), the import's merge of "not relevant here" rows and
 * rejected suggestions' hashes, on a real Dexie database (fake-indexeddb): no duplicates, no
 * feedback for a memory that is not stored, a pending suggestion of a rejected text becomes
 * rejected, a query vector of another dimension than its model's is dropped (terms kept).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { mergeFeedback } from '../../src/backup/feedback';
import { vectorToBase64, type FileFeedback, type FileRejectedSuggestion } from '../../src/backup/format';
import type { MemoryRecord, SuggestionRecord } from '../../src/model/records';
import { retrievedMemory } from '../helpers/retrieved-memory';

const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.delete();
});

const memory = (id: string): MemoryRecord => ({ ...retrievedMemory(id, `memory ${id}`).memory, embedding: null });

const feedback = (id: string, memoryId: string, messageId: string, embedding: Float32Array | null = null): FileFeedback => ({
  id,
  memoryId,
  namespace: 'default',
  query: 'what is my favourite colour?',
  terms: ['favourite', 'colour'],
  embedding: embedding ? vectorToBase64(embedding) : null,
  embeddingModel: embedding ? 'model-a' : null,
  messageId,
  conversationId: 'c',
  createdAt: 5,
});

async function merge(file: { feedback?: FileFeedback[]; rejectedSuggestions?: FileRejectedSuggestion[] }, setup?: (db: RecallDB) => Promise<void>) {
  const db = new RecallDB(`backup-feedback-${Math.random()}`);
  dbs.push(db);
  await db.memories.bulkAdd([memory('m1'), memory('m2')]);
  await setup?.(db);
  const result = await db.transaction('rw', [db.feedback, db.suggestions, db.memories], () =>
    mergeFeedback(db, { feedback: file.feedback ?? [], rejectedSuggestions: file.rejectedSuggestions ?? [] }, new Map([['model-a', 2]])),
  );
  return { db, result };
}

describe('mergeFeedback', () => {
  it('adds feedback of stored memories once; skips a stored id, a second mark of one memory under one reply, and a memory that is not stored', async () => {
    const { db, result } = await merge(
      {
        feedback: [
          feedback('f1', 'm1', 'r1', new Float32Array([3, 4])),
          feedback('f2', 'm1', 'r1'), // the same memory under the same reply
          feedback('f3', 'gone', 'r1'), // its memory was not imported
          feedback('f4', 'm2', 'r2', new Float32Array([1, 2, 2])), // 3 dimensions, model-a has 2
          feedback('f0', 'm2', 'r3'), // stored already
        ],
      },
      async (db) => {
        await db.feedback.add({ ...feedback('f0', 'm2', 'r3'), embedding: null });
      },
    );
    expect(result).toEqual({ added: 2, skipped: 3 });
    const rows = (await db.feedback.toArray()).sort((a, b) => a.id.localeCompare(b.id));
    expect(rows.map((r) => r.id)).toEqual(['f0', 'f1', 'f4']);
    expect(Array.from(rows[1]!.embedding!)).toEqual([0.6000000238418579, 0.800000011920929]); // (3, 4) / 5, as float32
    expect([rows[2]!.embedding, rows[2]!.embeddingModel, rows[2]!.terms]).toEqual([null, null, ['favourite', 'colour']]);
  });

  it('adds a rejected hash once per namespace, keeps one rejected already, and turns a pending suggestion of that text into a rejected one', async () => {
    const pending: SuggestionRecord = {
      id: 'p1',
      namespace: 'default',
      hash: 'hp',
      status: 'pending',
      kind: 'fact',
      text: 'I collect stamps',
      importance: 0.5,
      validFrom: null,
      validUntil: null,
      sourceConversationId: 'c',
      sourceMessageIds: ['u1'],
      messageTime: 1,
      createdAt: 2,
    };
    const rejected = (id: string, namespace: string, hash: string): FileRejectedSuggestion => ({ id, namespace, hash, kind: 'fact', createdAt: 9 });
    const { db, result } = await merge(
      {
        rejectedSuggestions: [
          rejected('s1', 'default', 'ha'),
          rejected('s2', 'default', 'ha'),
          rejected('s3', 'work', 'ha'),
          rejected('s4', 'default', 'hp'),
          rejected('s5', 'default', 'hr'),
        ],
      },
      async (db) => {
        await db.suggestions.bulkAdd([pending, { ...pending, id: 'r0', hash: 'hr', status: 'rejected', text: '', sourceMessageIds: [] }]);
      },
    );
    expect(result).toEqual({ added: 3, skipped: 2 });
    const rows = (await db.suggestions.toArray()).sort((a, b) => a.id.localeCompare(b.id));
    expect(rows.map((r) => [r.id, r.namespace, r.hash, r.status, r.text])).toEqual([
      ['p1', 'default', 'hp', 'rejected', ''],
      ['r0', 'default', 'hr', 'rejected', ''],
      ['s1', 'default', 'ha', 'rejected', ''],
      ['s3', 'work', 'ha', 'rejected', ''],
    ]);
  });
});
