/**
 * The memory manager's list and search (`createMemoryAdmin`) over the real long-term store
 * (Dexie on fake-indexeddb, MiniSearch, Voy) with the hashed n-gram TEST embedder.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryAdmin } from '../../src/core/memory-admin';
import type { RecallDB } from '../../src/db/schema';
import { openTestStore } from '../helpers/ltm-test-store';

let db: RecallDB | undefined;
afterEach(async () => db?.delete());

// 29 Nov 2026, 10:00 local: "in May" / "5月" as a time filter would mean May 2026.
const NOW = new Date(2026, 10, 29, 10).getTime();

async function setup() {
  const opened = await openTestStore({ now: NOW, name: 'admin' });
  db = opened.db;
  const admin = createMemoryAdmin(opened.db, opened.store);
  // Created in November, so a "May" date range would exclude all of them.
  const dentist = await admin.add({ namespace: 'default', kind: 'event', text: 'Dentist appointment in May', pinned: false });
  const birthday = await admin.add({ namespace: 'default', kind: 'profile', text: '我的生日是五月三日', pinned: false });
  const cat = await admin.add({ namespace: 'default', kind: 'fact', text: 'My cat is called Mochi', pinned: false });
  const city = await admin.add({ namespace: 'default', kind: 'profile', text: '我住在杭州', pinned: true });
  return { admin, dentist, birthday, cat, city };
}

describe('memory manager search', () => {
  it('reads dates in the search box as words, not as a time range', async () => {
    const { admin, dentist, birthday } = await setup();
    expect((await admin.list({ namespace: 'default', search: 'in May' })).map((m) => m.id)).toEqual([dentist.id]);
    expect((await admin.list({ namespace: 'default', search: '五月' })).map((m) => m.id)).toEqual([birthday.id]);
  });

  it('matches part of a word, in English and in Chinese', async () => {
    const { admin, cat, city } = await setup();
    expect((await admin.list({ namespace: 'default', search: 'Moch' })).map((m) => m.id)).toEqual([cat.id]);
    expect((await admin.list({ namespace: 'default', search: 'MOCHI' })).map((m) => m.id)).toEqual([cat.id]);
    expect((await admin.list({ namespace: 'default', search: '杭' })).map((m) => m.id)).toEqual([city.id]);
  });

  it('says "no match" for text no memory holds (no nearest-neighbour filler)', async () => {
    const { admin } = await setup();
    expect(await admin.list({ namespace: 'default', search: 'Zanzibar' })).toEqual([]);
    expect(await admin.list({ namespace: 'default', search: '？' })).toEqual([]);
  });

  it('lists pinned first, then newest, without a search', async () => {
    const { admin, dentist, birthday, cat, city } = await setup();
    // Same clock for all four: ties on updatedAt keep no order, so only the pinned one's place is fixed.
    const ids = (await admin.list({ namespace: 'default' })).map((m) => m.id);
    expect(ids[0]).toBe(city.id);
    expect(new Set(ids)).toEqual(new Set([dentist.id, birthday.id, cat.id, city.id]));
  });
});
