/**
 * The idle lexical snapshot steps aside for foreground work (`IndexSync.writeSnapshot`,
 * `MemoryStoreDeps.foreground`): it starts only once no chat turn runs, a turn that starts while it
 * serializes makes it stop without writing anything (and it is written later), and `flushSnapshot`
 * writes at once even while a turn runs. Real Dexie on fake-indexeddb, the real job queue for the
 * turn (`runForeground`), real timers (the snapshot waits `SNAPSHOT_DELAY_MS` of idle).
 * "Written" is read from the database: the dirty-id records a write leaves are deleted by the snapshot.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { createJobQueue } from '../../src/jobs/queue';
import { createMemoryStore } from '../../src/memory/long-term/store';
import { DIRTY_KEY_PREFIX, SNAPSHOT_DELAY_MS, type ForegroundWork } from '../../src/memory/long-term/store/index-sync';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';

const T0 = Date.UTC(2025, 4, 1, 12);
const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const d of dbs.splice(0)) await d.delete();
});
const embedder = createHashedEmbedder();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function setup(foreground: ForegroundWork) {
  const db = new RecallDB(`ltm-snapshot-fg-${crypto.randomUUID()}`);
  dbs.push(db);
  const store = await createMemoryStore({ db, embedder: () => embedder, now: () => T0, loadVoyWasm: nodeVoyWasm, foreground });
  await store.add({ namespace: 'default', kind: 'fact', text: 'My cat is called Mochi' }, 'test');
  await store.flushSnapshot();
  /** Dirty-id records: one per write since the last snapshot. */
  const pending = async () => (await db.memoryIndex.where('key').startsWith(DIRTY_KEY_PREFIX).count()) > 0;
  expect(await pending()).toBe(false);
  return { db, store, pending };
}

describe('the idle lexical snapshot and chat turns', () => {
  it('waits while a turn runs and is written once it has ended', async () => {
    const db0 = new RecallDB(`ltm-snapshot-jobs-${crypto.randomUUID()}`);
    dbs.push(db0);
    const jobs = createJobQueue(db0);
    await jobs.start();
    const { store, pending } = await setup({ active: () => jobs.foregroundActive(), idle: () => jobs.whenForegroundIdle() });
    await store.add({ namespace: 'default', kind: 'fact', text: 'I live in Hangzhou near the West Lake' }, 'test');
    expect(await pending()).toBe(true);
    // A turn longer than the idle delay: the snapshot's timer fires during it, and nothing is written.
    await jobs.runForeground(async () => {
      await sleep(SNAPSHOT_DELAY_MS + 400);
      expect(await pending()).toBe(true);
    });
    // After the turn it is written (it was waiting for the turn's end, not for another delay).
    for (let i = 0; i < 20 && (await pending()); i++) await sleep(50);
    expect(await pending()).toBe(false);
    expect(await store.search({ text: 'Where do I live?', namespace: 'default' }, { mode: 'lexical' })).not.toHaveLength(0);
    await jobs.stop();
  });

  it('stops without writing when a turn starts while it serializes, and is written after the turn', async () => {
    let armed = false;
    let turn = false;
    let release: () => void = () => undefined;
    let ended = Promise.resolve();
    const foreground: ForegroundWork = {
      // Once armed, the turn starts right after the snapshot's first check (on entering the write
      // queue, which says "no turn"): its next check, during or after serializing, sees the turn.
      active: () => {
        const now = turn;
        if (armed && !turn) {
          turn = true;
          ended = new Promise<void>((resolve) => (release = resolve));
        }
        return now;
      },
      idle: () => ended,
    };
    const { store, pending } = await setup(foreground);
    armed = true;
    await store.add({ namespace: 'default', kind: 'fact', text: 'My sister Ana works as a nurse in Lisbon' }, 'test');
    for (let i = 0; i < 60 && !turn; i++) await sleep(50);
    expect(turn).toBe(true); // the idle snapshot started and checked
    await sleep(200);
    expect(await pending()).toBe(true); // it stepped aside: nothing written
    // A write during the turn is not blocked by the snapshot (it left the write queue).
    await store.add({ namespace: 'default', kind: 'fact', text: 'I am allergic to peanuts' }, 'test');
    armed = false;
    turn = false;
    release();
    for (let i = 0; i < 80 && (await pending()); i++) await sleep(50);
    expect(await pending()).toBe(false);
  });

  it('flushSnapshot writes at once while a turn runs', async () => {
    let release: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (release = resolve));
    const { store, pending } = await setup({ active: () => true, idle: () => ended });
    await store.add({ namespace: 'default', kind: 'fact', text: 'My bike is green' }, 'test');
    await sleep(SNAPSHOT_DELAY_MS + 200); // the idle snapshot is now waiting for the turn to end
    expect(await pending()).toBe(true);
    await store.flushSnapshot();
    expect(await pending()).toBe(false);
    release();
  });
});
