/**
 * Which index blocks a write rewrites (`retrieval/blocks/batch.ts`): a re-index that leaves a
 * memory's vector slot as it is (a flag such as `supersededBy` changed; the vector read back
 * through the reading hook) writes its meta block only, not its 256-slot vector block again —
 * the cost of every supersession mark during an ingestion. A change of the vector or of its
 * validity still rewrites the vector block. Real Dexie on fake-indexeddb, seeded random unit
 * vectors and the hashed n-gram TEST embedder (no semantics); nothing is faked.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { createMemoryStore } from '../../src/memory/long-term/store';
import { BlockIndex, indexedOf, isVectorRecord, META_KEY_PREFIX, VECTOR_KEY_PREFIX } from '../../src/memory/long-term/retrieval/blocks';
import type { MemoryRecord } from '../../src/model/records';
import { DIRTY_KEY_PREFIX } from '../../src/memory/long-term/store/index-sync';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { randomUnitVectors } from '../../bench/data/prng';
import { memoryRecord } from '../helpers/memory-record';

const T0 = Date.UTC(2025, 4, 1, 12);
const DIM = 16;

function memory(i: number): MemoryRecord {
  return memoryRecord({ id: `m${i}`, kind: 'episodic', text: `round ${i}`, importance: 0.3, createdAt: T0 + i, hash: `h${i}` });
}

/** An index holding 300 memories (two blocks) with seeded random vectors of model `m`. */
function filledIndex(): BlockIndex {
  const index = new BlockIndex();
  const vectors = randomUnitVectors(300, DIM, 7);
  const batch = index.batch();
  for (let i = 0; i < 300; i += 1) batch.put(indexedOf(memory(i)), vectors.subarray(i * DIM, (i + 1) * DIM), 'm');
  batch.commit();
  return index;
}

describe('index batch: blocks rewritten by a re-index', () => {
  it('a flag change with the vector read back from the index writes the meta block only', () => {
    const index = filledIndex();
    const stored = index.vector('m260')!;
    const batch = index.batch();
    expect(batch.put(indexedOf({ ...memory(260), current: 0 }), stored.vector, stored.model)).toBe(true);
    const records = batch.records();
    expect(records.map((r) => r.key)).toEqual([records.find((r) => !isVectorRecord(r))!.key]);
    batch.commit();
    // The vector is kept (same floats) and the search still reads the memory's new meta.
    expect(index.vector('m260')!.vector).toEqual(stored.vector);
    const hits = index.search('m', 'default', stored.vector, 1, { now: T0 + 1000 });
    expect(hits[0]!.id).toBe('m260');
  });

  it('a new vector, or a new validity, rewrites the vector block', () => {
    const index = filledIndex();
    const stored = index.vector('m5')!;
    const other = index.vector('m6')!.vector;
    const moved = index.batch();
    moved.put(indexedOf(memory(5)), other, stored.model);
    expect(moved.records().filter(isVectorRecord)).toHaveLength(1);
    const ended = index.batch();
    ended.put(indexedOf({ ...memory(5), validUntil: T0 + 50 }), stored.vector, stored.model);
    expect(ended.records().filter(isVectorRecord)).toHaveLength(1);
    const otherModel = index.batch();
    otherModel.put(indexedOf(memory(5)), stored.vector, 'another-model');
    // Dropped from model m's block, written into a new block of the other model.
    expect(otherModel.records().filter(isVectorRecord)).toHaveLength(2);
  });
});

describe('store: what an update writes to memoryIndex', () => {
  const dbs: RecallDB[] = [];
  afterEach(async () => {
    for (const d of dbs.splice(0)) await d.delete();
  });

  /** A store over a database whose `memoryIndex` writes are recorded (keys per mutate call). */
  async function recordingStore() {
    const db = new RecallDB(`ltm-block-writes-${crypto.randomUUID()}`);
    dbs.push(db);
    const written: string[][] = [];
    db.use({
      stack: 'dbcore',
      name: 'record-index-writes',
      create: (down) => ({
        ...down,
        table(name) {
          const table = down.table(name);
          if (name !== 'memoryIndex') return table;
          return {
            ...table,
            mutate: (req) => {
              if (req.type === 'put') written.push(req.values.map((v) => (v as { key: string }).key));
              return table.mutate(req);
            },
          };
        },
      }),
    });
    const store = await createMemoryStore({ db, embedder: () => createHashedEmbedder(DIM), now: () => T0, loadVoyWasm: nodeVoyWasm });
    return { store, written };
  }

  it('marking a memory superseded rewrites its meta block, the header and its dirty-id record, not its vector block', async () => {
    const { store, written } = await recordingStore();
    const [a, b] = await store.addMany(
      [
        { namespace: 'default', kind: 'episodic', text: 'User: my sister lives in Lyon' },
        { namespace: 'default', kind: 'episodic', text: 'User: my sister lives in Porto now' },
      ],
      'test',
    );
    written.length = 0;
    await store.update(a!.memory.id, { supersededBy: b!.memory.id }, 'test', 'UPDATE');
    expect(written).toHaveLength(1);
    expect(written[0]!.filter((key) => key.startsWith(VECTOR_KEY_PREFIX))).toEqual([]);
    expect(written[0]!.filter((key) => key.startsWith(META_KEY_PREFIX))).toHaveLength(1);
    expect(written[0]).toContain('header');
    // The write's own dirty-id record (`d|<gen>`, the ids it changed), in the same request.
    expect(written[0]!.filter((key) => key.startsWith(DIRTY_KEY_PREFIX))).toHaveLength(1);
    // The vector is still there and found.
    const hits = await store.search({ text: 'my sister lives in Lyon', namespace: 'default', k: 2 }, { mode: 'vector' });
    expect(hits.map((h) => h.memory.id)).toContain(a!.memory.id);
    // A text change does rewrite the vector block.
    written.length = 0;
    await store.update(a!.memory.id, { text: 'User: my sister lives in Nantes' }, 'test', 'UPDATE');
    expect(written[0]!.filter((key) => key.startsWith(VECTOR_KEY_PREFIX))).toHaveLength(1);
  });
});
