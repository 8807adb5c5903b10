/**
 * Maintenance on the real store (Dexie + MiniSearch + Voy): expiry of events, retention of
 * episodic memories, merging of near-duplicates. Vectors come from a table-driven TEST embedder
 * (texts → chosen vectors), so the cosine of each pair is known exactly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecallDB } from '../../src/db/schema';
import type { MemoryKind } from '../../src/model/memory';
import type { Embedder } from '../../src/engines/types';
import { runMaintenance } from '../../src/memory/long-term/maintenance';
import type { LongTermStore } from '../../src/memory/long-term/store';
import { openTestStore } from '../helpers/ltm-test-store';

const DAY = 86_400_000;
const T0 = new Date(2024, 4, 10, 12).getTime();

let db: RecallDB;
afterEach(async () => db?.delete());

/**
 * TEST embedder: 32-d vectors; texts in `table` get the given first components (L2-normalized by
 * the store); every other text gets a one-hot vector of its own (dimensions 4…31, in order of
 * first use), orthogonal to everything else.
 */
function tableEmbedder(table: Record<string, number[]>): Embedder {
  const own = new Map<string, number>();
  return {
    modelId: 'test:table',
    dimension: 32,
    async embed(texts) {
      return texts.map((t) => {
        const v = new Float32Array(32);
        const given = table[t];
        if (given) v.set(given);
        else {
          if (!own.has(t)) own.set(t, 4 + own.size);
          v[own.get(t)!] = 1;
        }
        return v;
      });
    },
  };
}

async function setup(table: Record<string, number[]> = {}) {
  const opened = await openTestStore({ now: T0, embedder: tableEmbedder(table), name: 'maintenance' });
  db = opened.db;
  return opened;
}

async function add(store: LongTermStore, text: string, kind: MemoryKind, extra: Record<string, unknown> = {}) {
  return (await store.add({ namespace: 'default', kind, text, ...extra }, 'conversation:c1')).memory;
}

const events = async (id: string) => (await db.memoryHistory.where('memoryId').equals(id).toArray()).map((h) => [h.event, h.source]);

describe('maintenance', () => {
  it('expires ended and stale events, and nothing else', async () => {
    const { store, setNow } = await setup();
    const dentist = await add(store, 'Dentist on 2024-05-15', 'event', { validUntil: new Date(2024, 4, 16).getTime() });
    const stale = await add(store, 'Looking for a new flat', 'event', { createdAt: T0 });
    const pinnedStale = await add(store, 'Renovation going on', 'event', { createdAt: T0, pinned: true });
    const touched = await add(store, 'Training for a marathon', 'event', { createdAt: T0 });
    const profile = await add(store, 'Lives in Lisbon', 'profile', { createdAt: T0 });
    const later = T0 + 40 * DAY;
    await db.memories.update(touched.id, { lastAccessedAt: later - 2 * DAY });
    setNow(later);

    const report = await runMaintenance(db, store, { now: later, episodicRetentionDays: null });
    expect(report).toEqual({ expired: 2, dropped: 0, merged: 0 });
    expect(await store.get(dentist.id)).toMatchObject({ current: 0, validUntil: new Date(2024, 4, 16).getTime() });
    expect(await store.get(stale.id)).toMatchObject({ current: 0, validUntil: later });
    for (const kept of [pinnedStale, touched, profile]) expect(await store.get(kept.id)).toMatchObject({ current: 1, validUntil: null });
    expect(await events(stale.id)).toEqual([
      ['ADD', 'conversation:c1'],
      ['EXPIRE', 'maintenance'],
    ]);
    // Expired memories are out of default retrieval, still there with includeInvalid.
    expect((await store.search({ text: 'new flat', namespace: 'default', now: later })).map((r) => r.memory.id)).not.toContain(stale.id);
    expect((await store.search({ text: 'new flat', namespace: 'default', now: later, includeInvalid: true })).map((r) => r.memory.id)).toContain(stale.id);
    // A second run finds nothing to do.
    expect(await runMaintenance(db, store, { now: later, episodicRetentionDays: null })).toEqual({ expired: 0, dropped: 0, merged: 0 });
  });

  it('drops episodic memories older than the retention unless pinned; null keeps everything', async () => {
    const { store } = await setup();
    const old = await add(store, 'User: hello from long ago', 'episodic', { createdAt: T0 - 100 * DAY });
    const oldPinned = await add(store, 'User: keep this one', 'episodic', { createdAt: T0 - 100 * DAY, pinned: true });
    const recent = await add(store, 'User: hello from last week', 'episodic', { createdAt: T0 - 7 * DAY });
    const oldFact = await add(store, 'Has a brother', 'profile', { createdAt: T0 - 100 * DAY });

    expect(await runMaintenance(db, store, { now: T0, episodicRetentionDays: null, staleEventDays: null })).toMatchObject({ dropped: 0 });
    const report = await runMaintenance(db, store, { now: T0, episodicRetentionDays: 30 });
    expect(report.dropped).toBe(1);
    expect(await store.get(old.id)).toBeUndefined();
    for (const kept of [oldPinned, recent, oldFact]) expect(await store.get(kept.id)).toBeDefined();
    expect((await events(old.id)).at(-1)).toEqual(['DELETE', 'maintenance:retention']);
    expect(store.indexStats()).toMatchObject({ memories: 3, lexical: 3 });
  });

  it('merges near-duplicates of the same kind into the best survivor, keeping the richer text and every source', async () => {
    const { store } = await setup({
      'Likes green tea': [1, 0, 0, 0],
      'Likes green tea, especially sencha': [0.99, 0.05, 0, 0],
      'Really likes green tea': [1, 0.01, 0, 0],
      'Green tea shop on 5th street': [0.98, 0.1, 0, 0],
      'Likes coffee': [0, 1, 0, 0],
    });
    const a = await add(store, 'Likes green tea', 'preference', { importance: 0.9, sourceMessageIds: ['m1'] });
    const b = await add(store, 'Likes green tea, especially sencha', 'preference', { importance: 0.5, sourceMessageIds: ['m2'] });
    const c = await add(store, 'Really likes green tea', 'preference', { importance: 0.6, sourceMessageIds: ['m3'] });
    const otherKind = await add(store, 'Green tea shop on 5th street', 'fact');
    const coffee = await add(store, 'Likes coffee', 'preference');

    const report = await runMaintenance(db, store, { now: T0, episodicRetentionDays: null });
    expect(report.merged).toBe(2);
    // The most important one survives, with the text that says the most and all sources.
    const survivor = await store.get(a.id);
    expect(survivor).toMatchObject({ text: 'Likes green tea, especially sencha', importance: 0.9, pinned: false, current: 1 });
    expect([...survivor!.sourceMessageIds].sort()).toEqual(['m1', 'm2', 'm3']);
    expect(await store.get(b.id)).toBeUndefined();
    expect(await store.get(c.id)).toBeUndefined();
    expect((await events(b.id)).at(-1)).toEqual(['DELETE', `maintenance:merged-into:${a.id}`]);
    expect((await events(a.id)).at(-1)).toEqual(['MERGE', 'maintenance']);
    for (const kept of [otherKind, coffee]) expect(await store.get(kept.id)).toBeDefined();
    const found = await store.search({ text: 'green tea', namespace: 'default', k: 10, now: T0 });
    expect(found.map((r) => r.memory.id)).toEqual(expect.arrayContaining([a.id, otherKind.id]));
    expect(found.map((r) => r.memory.id)).not.toEqual(expect.arrayContaining([b.id]));
    expect(found.map((r) => r.memory.id)).not.toEqual(expect.arrayContaining([c.id]));
    expect((await runMaintenance(db, store, { now: T0, episodicRetentionDays: null })).merged).toBe(0);
  });

  it('with mergeSince, only memories changed since then seed a merge (older pairs were checked before)', async () => {
    const { store, setNow } = await setup({ 'Likes green tea': [1, 0, 0, 0], 'Likes green tea a lot': [1, 0.02, 0, 0], 'Enjoys green tea': [1, 0.01, 0, 0] });
    setNow(T0 - DAY);
    const oldA = await add(store, 'Likes green tea', 'preference', { importance: 0.9, createdAt: T0 - DAY });
    const oldB = await add(store, 'Likes green tea a lot', 'preference', { importance: 0.4, createdAt: T0 - DAY });
    setNow(T0);
    expect((await runMaintenance(db, store, { now: T0, episodicRetentionDays: null, mergeSince: T0 })).merged).toBe(0);
    const fresh = await add(store, 'Enjoys green tea', 'preference', { importance: 0.5, createdAt: T0 });
    // The new memory seeds a merge with its neighbours, whatever their age; the best of the group survives.
    expect((await runMaintenance(db, store, { now: T0, episodicRetentionDays: null, mergeSince: T0 })).merged).toBe(2);
    expect(await store.get(oldA.id)).toMatchObject({ current: 1, text: 'Likes green tea a lot', importance: 0.9 });
    expect(await store.get(fresh.id)).toBeUndefined();
    expect(await store.get(oldB.id)).toBeUndefined();
  });

  it('a pinned survivor keeps its own words', async () => {
    const { store } = await setup({ 我喜欢绿茶: [1, 0, 0, 0], '我喜欢绿茶，尤其是龙井': [0.99, 0.05, 0, 0] });
    const pinned = await add(store, '我喜欢绿茶', 'preference', { pinned: true, importance: 0.9 });
    const richer = await add(store, '我喜欢绿茶，尤其是龙井', 'preference', { importance: 0.95 });
    expect((await runMaintenance(db, store, { now: T0, episodicRetentionDays: null })).merged).toBe(1);
    expect(await store.get(pinned.id)).toMatchObject({ text: '我喜欢绿茶', pinned: true, importance: 0.95 });
    expect(await store.get(richer.id)).toBeUndefined();
  });

  it('reports merge progress every 100 seeds (oldest change first) so a preempted run can resume', async () => {
    const opened = await openTestStore({ now: T0, embedder: null, name: 'maintenance' });
    db = opened.db;
    const times: number[] = [];
    for (let i = 0; i < 150; i++) {
      const at = T0 - (150 - i) * 60_000;
      times.push(at);
      await opened.store.add({ namespace: 'default', kind: 'fact', text: `Fact number ${i}`, createdAt: at }, 'test');
    }
    const controller = new AbortController();
    const progress: number[] = [];
    const run = runMaintenance(db, opened.store, {
      now: T0,
      episodicRetentionDays: null,
      signal: controller.signal,
      onMergeProgress: (through) => {
        progress.push(through);
        controller.abort();
      },
    });
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    // Seeds 0…99 were compared: the resume point is the 100th oldest change.
    expect(progress).toEqual([times[99]]);
    const resumed: number[] = [];
    await runMaintenance(db, opened.store, { now: T0, episodicRetentionDays: null, mergeSince: progress[0]!, onMergeProgress: (t) => void resumed.push(t) });
    // 51 seeds left (99…149): fewer than 100, no checkpoint needed.
    expect(resumed).toEqual([]);
  });

  it('stops when aborted', async () => {
    const { store } = await setup();
    await add(store, 'Looking for a new flat', 'event', { createdAt: T0 - 60 * DAY });
    const controller = new AbortController();
    controller.abort();
    await expect(runMaintenance(db, store, { now: T0, episodicRetentionDays: null, signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});
