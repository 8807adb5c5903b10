/**
 * A backup file up to `PARSE_ONCE_MAX_BYTES` is parsed and validated once: the check pass keeps
 * its records for the write pass instead of the write pass streaming the file again (issue 9,
 * import throughput). It must import exactly what the two-stream path imports (same report, same
 * rows, same batches) and refuse the same files. Real Dexie on fake-indexeddb, the real store;
 * the file is a real export file (`bench/data/memory-file.ts`, seeded random vectors).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { importAll, PARSE_ONCE_MAX_BYTES } from '../../src/backup/import';
import { flushStoreOf, storeOf } from '../helpers/ltm-test-store';
import { importFileJson, seedMemories } from '../../bench/data/memory-file';

const T0 = Date.UTC(2025, 5, 1);
const dbs: RecallDB[] = [];
const open = () => {
  const db = new RecallDB(`import-parse-once-${crypto.randomUUID()}`);
  dbs.push(db);
  return db;
};
afterEach(async () => {
  await Promise.all(dbs.map(flushStoreOf));
  await Promise.all(dbs.splice(0).map((d) => d.delete()));
});

/** A Blob that counts how often it is read as a stream. */
class CountingBlob extends Blob {
  streams = 0;
  override stream(): ReturnType<Blob['stream']> {
    this.streams += 1;
    return super.stream();
  }
}

const memories = seedMemories(45, { dimension: 8, embeddingModel: 'test/model' });

const contents = async (db: RecallDB) => ({
  memories: (await db.memories.orderBy(':id').toArray()).map((m) => [m.id, m.text, m.current, m.embeddingModel, m.embedding ? Array.from(m.embedding) : null]),
  history: (await db.memoryHistory.orderBy('memoryId').toArray()).map((h) => [h.memoryId, h.event]),
  settings: (await db.settings.toArray()).map((r) => r.key).sort(),
});

describe('import: a small file is parsed once', () => {
  it('reads a small file as one stream and imports what the two-stream path imports, batch for batch', async () => {
    const json = importFileJson(memories);
    expect(json.length).toBeLessThan(PARSE_ONCE_MAX_BYTES);
    const once = open();
    const twice = open();
    // One stored memory (newer in the file: updated) so the merge decisions are exercised too.
    for (const db of [once, twice]) await db.memories.add({ ...memories[3]!, embedding: null, embeddingModel: null, updatedAt: memories[3]!.updatedAt - 1 });
    const progress: Record<string, string[]> = { once: [], twice: [] };
    const a = new CountingBlob([json]);
    const b = new CountingBlob([json]);
    const reportOnce = await importAll(once, await storeOf(once), a, {
      now: () => T0,
      batchSize: 10,
      onProgress: (p) => progress.once!.push(`${p.phase}:${p.done}`),
    });
    const reportTwice = await importAll(twice, await storeOf(twice), b, {
      now: () => T0,
      batchSize: 10,
      parseOnceMaxBytes: 0,
      onProgress: (p) => progress.twice!.push(`${p.phase}:${p.done}`),
    });
    expect([a.streams, b.streams]).toEqual([1, 2]);
    // 44 memories added, 1 updated (45 IMPORT history rows are not counted as records).
    expect(reportOnce).toEqual({ added: 44, updated: 1, skipped: 0, errors: [], needsEmbedding: 0, vectorsDropped: 0, forgotten: 0 });
    expect(reportTwice).toEqual(reportOnce);
    // The same write batches (progress after each of the 5 batches of 10, 10, 10, 10, 5).
    expect(progress.once!.filter((p) => p.startsWith('write'))).toEqual(['write:10', 'write:20', 'write:30', 'write:40', 'write:45']);
    expect(progress.twice!.filter((p) => p.startsWith('write'))).toEqual(progress.once!.filter((p) => p.startsWith('write')));
    expect(await contents(once)).toEqual(await contents(twice));
    expect((await contents(once)).memories).toHaveLength(45);
  });

  it('refuses an inconsistent small file whole, with nothing written', async () => {
    const db = open();
    const json = importFileJson([...memories.slice(0, 5), { ...memories[6]!, id: memories[2]!.id }]);
    const source = new CountingBlob([json]);
    await expect(importAll(db, await storeOf(db), source, { now: () => T0 })).rejects.toThrow(/two memories with the id "seed-2"/);
    expect(source.streams).toBe(1);
    expect(await db.memories.count()).toBe(0);
    expect(await db.settings.count()).toBe(0);
  });
});
