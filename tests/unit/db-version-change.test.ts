/**
 * A schema upgrade while an older context holds the database open (an old offscreen core when a
 * newer build opens `RecallDB` at version + 1). fake-indexeddb implements IndexedDB's
 * `versionchange`/`blocked` protocol; the newer schema is a test-only subclass (the real next
 * version will be added in src/db/schema.ts by whoever changes the schema).
 *
 * Finding (not a defect): Dexie 4's default `versionchange` handler closes the old connection at
 * once, so the upgrade is never blocked, and the old instance reopens by itself on its next query
 * (Dexie 4 opens a database whose installed version is higher than the declared one), so the old
 * core does not fail silently: it keeps reading and writing the same data.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';

/** The current schema plus one table, one version higher (what a future build would declare). */
class NextRecallDB extends RecallDB {
  constructor(name: string) {
    super(name);
    this.version(this.verno + 1).stores({ testOnlyNewTable: 'id' });
  }
}

const opened: RecallDB[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) db.close();
});

describe('schema upgrade while an older connection is open', () => {
  it('the newer version opens without being blocked; the old connection closes and reopens on its next query', async () => {
    const name = `upgrade-${crypto.randomUUID()}`;
    const old = new RecallDB(name);
    opened.push(old);
    await old.conversations.add({ id: 'c1', title: 'before', namespace: 'default', strategy: { kind: 'full-buffer' }, createdAt: 1, updatedAt: 1 } as never);
    expect(old.isOpen()).toBe(true);
    const oldVersion = old.verno;

    let versionChanges = 0;
    old.on('versionchange', () => void (versionChanges += 1));
    const next = new NextRecallDB(name);
    opened.push(next);
    let blocked = 0;
    next.on('blocked', () => void (blocked += 1));
    await next.open();

    expect(next.verno).toBe(oldVersion + 1);
    expect(versionChanges).toBe(1);
    expect(blocked).toBe(0);
    expect(old.isOpen()).toBe(false); // closed for the upgrade, not left holding it

    // The old context's next request reopens the database and sees (and adds to) the same data.
    expect((await old.conversations.get('c1'))?.title).toBe('before');
    await old.conversations.update('c1', { title: 'after' });
    expect(old.isOpen()).toBe(true);
    expect((await next.conversations.get('c1'))?.title).toBe('after');
    expect(next.tables.map((t) => t.name)).toContain('testOnlyNewTable');
  });
});
