/**
 * The block index's per-slot id lists (`BlockIndex.inSlot` / `slotMembers` read them instead of
 * walking every meta block): after random batches of puts (new memories, a changed slot label,
 * a moved namespace, a validity that ended) and removes, each slot's members must be exactly
 * those a walk over every indexed memory's columns finds, in the live index and in one loaded
 * again from the blocks written (`fromRecords`).
 */
import { describe, expect, it } from 'vitest';
import { BlockIndex, type IndexedMemory, type MemoryIndexRecord } from '../../src/memory/long-term/retrieval/blocks';
import { mulberry32 } from '../../bench/data/prng';
import { indexedMemory } from '../helpers/memory-record';

const T0 = Date.UTC(2025, 0, 1);
const LABELS = ['user:residence', 'user:work', 'user:pet', null] as const;
const NAMESPACES = ['default', 'work'];

/** What a walk over every memory's columns finds: valid members of `label` in `ns`, newest first, ties by id. */
function walk(index: BlockIndex, ns: string, label: string, now: number): string[] {
  return [...index.ids()]
    .map((id) => ({ id, m: index.meta(id)! }))
    .filter(({ m }) => m.namespace === ns && m.slot === label && (m.validUntil === null || m.validUntil > now))
    .sort((a, b) => b.m.updatedAt - a.m.updatedAt || a.id.localeCompare(b.id))
    .map(({ id }) => id);
}

function check(index: BlockIndex, now: number): void {
  for (const ns of NAMESPACES)
    for (const label of LABELS) {
      if (!label) continue;
      const expected = walk(index, ns, label, now);
      expect(index.inSlot(ns, label, now, null).map((x) => x.id)).toEqual(expected);
      expect(index.slotMembers(ns, label, now).sort()).toEqual([...expected].sort());
    }
}

describe('BlockIndex per-slot id lists', () => {
  it('match a walk over the columns after random puts, label changes, namespace moves and removes, and after a reload', () => {
    const rand = mulberry32(5);
    const index = new BlockIndex();
    const written = new Map<string, MemoryIndexRecord>();
    const memory = (i: number): IndexedMemory =>
      indexedMemory({
        id: `m${i}`,
        namespace: NAMESPACES[Math.floor(rand() * NAMESPACES.length)]!,
        createdAt: T0,
        updatedAt: T0 + Math.floor(rand() * 50) * 1000, // many equal times: the id tie-break counts
        validUntil: rand() < 0.2 ? T0 + 10_000 : null,
        kind: rand() < 0.5 ? 'fact' : 'episodic',
        slot: LABELS[Math.floor(rand() * LABELS.length)]!,
        normalized: `text ${i}`,
      });
    for (let round = 0; round < 30; round += 1) {
      const batch = index.batch();
      for (let op = 0; op < 40; op += 1) {
        const i = Math.floor(rand() * 600); // ids repeat: re-puts change label, namespace, validity
        if (rand() < 0.25) batch.remove(`m${i}`);
        else batch.put(memory(i), null, null);
      }
      for (const r of batch.records()) written.set(r.key, r);
      batch.commit();
      check(index, T0 + 5_000);
      check(index, T0 + 20_000); // the ended validities drop out
    }
    const reloaded = BlockIndex.fromRecords(written.values());
    check(reloaded, T0 + 5_000);
    expect(reloaded.inSlot('default', 'user:work', T0, null)).toEqual(index.inSlot('default', 'user:work', T0, null));
  });

  it('filters inSlot by kind and answers [] for an unknown namespace or label', () => {
    const index = new BlockIndex();
    const batch = index.batch();
    const base = {
      namespace: 'default',
      createdAt: T0,
      validFrom: null,
      validUntil: null,
      importance: 0.5,
      pinned: false,
      current: 1 as const,
      subject: null,
      normalized: '',
    };
    batch.put({ ...base, id: 'a', updatedAt: T0 + 2, kind: 'fact', slot: 'user:work' }, null, null);
    batch.put({ ...base, id: 'b', updatedAt: T0 + 1, kind: 'episodic', slot: 'user:work' }, null, null);
    batch.commit();
    expect(index.inSlot('default', 'user:work', T0, new Set(['fact']))).toEqual([{ id: 'a', updatedAt: T0 + 2 }]);
    expect(index.inSlot('default', 'user:work', T0, null).map((x) => x.id)).toEqual(['a', 'b']);
    expect(index.inSlot('other', 'user:work', T0, null)).toEqual([]);
    expect(index.slotMembers('default', 'user:pet', T0)).toEqual([]);
  });
});
