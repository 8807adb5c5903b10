/**
 * Schema v8 (issue 14, review before saving) adds the `suggestions` table only. A database written
 * by v4 — a memory row, a conversation, a tombstone, a setting — opens with the live schema with
 * every row unchanged and an empty, usable `suggestions` table, which "Erase everything" clears.
 */
import 'fake-indexeddb/auto';
import Dexie from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB, TABLE_DATA } from '../../src/db/schema';
import { eraseUserData } from '../../src/db/erase';
import { V1_STORES } from '../helpers/published-schemas';

const dbs: Dexie[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) {
    db.close();
    await Dexie.delete(db.name);
  }
});

/** Schema v1–v4 exactly as published (src/db/schema.ts). */
function v4Database(name: string): Dexie {
  const db = new Dexie(name);
  db.version(1).stores(V1_STORES);
  db.version(2).stores({ tombstones: '[namespace+hash], deletedAt' });
  db.version(3).stores({ memories: 'id, namespace, kind, hash, current, *sourceMessageIds, pending', memoryIndex: 'key' });
  db.version(4).stores({ memories: 'id, hash, *sourceMessageIds, pending' });
  dbs.push(db);
  return db;
}

const MEMORY = {
  id: 'm1',
  namespace: 'default',
  kind: 'fact',
  text: 'Keeps bees',
  embeddingModel: null,
  importance: 0.5,
  createdAt: 1,
  updatedAt: 1,
  validFrom: null,
  validUntil: null,
  current: 1,
  lastAccessedAt: null,
  accessCount: 0,
  sourceConversationId: null,
  sourceMessageIds: ['u1'],
  pinned: false,
  hash: 'h1',
};

describe('schema v8', () => {
  it('upgrades a v4 database with data: rows unchanged, an empty suggestions table that works and is erased', async () => {
    const name = `v8-upgrade-${crypto.randomUUID()}`;
    const old = v4Database(name);
    await old.open();
    await old.table('memories').put(MEMORY);
    await old.table('conversations').put({ id: 'c1', title: 't', namespace: 'default', createdAt: 1, updatedAt: 1 });
    await old.table('tombstones').put({ namespace: 'default', hash: 'h2', deletedAt: 1, reason: 'DELETE' });
    await old.table('settings').put({ key: 'review.default', value: true });
    old.close();

    const db = new RecallDB(name);
    dbs.push(db);
    await db.open();
    expect(db.verno).toBeGreaterThanOrEqual(8);
    expect(await db.memories.get('m1')).toEqual(MEMORY);
    expect(await db.conversations.count()).toBe(1);
    expect(await db.tombstones.count()).toBe(1);
    expect(await db.suggestions.count()).toBe(0);
    expect(TABLE_DATA.suggestions).toBe('user');

    const row = {
      id: 's1',
      namespace: 'default',
      hash: 'h3',
      status: 'pending' as const,
      kind: 'fact' as const,
      text: 'Has a dog',
      importance: 0.5,
      validFrom: null,
      validUntil: null,
      sourceConversationId: 'c1',
      sourceMessageIds: ['u2'],
      messageTime: 2,
      createdAt: 2,
    };
    await db.suggestions.add(row);
    expect(await db.suggestions.where('[namespace+status]').equals(['default', 'pending']).toArray()).toEqual([row]);
    expect(await db.suggestions.where('[namespace+hash]').equals(['default', 'h3']).count()).toBe(1);

    await eraseUserData(db);
    expect(await db.suggestions.count()).toBe(0);
  });
});
