/**
 * A cache of ingested benchmark databases for the retrieval bench (`RETRIEVAL_BENCH_DB_CACHE=DIR`):
 * ingesting the 10k-round benchmark takes minutes here, and ranking work re-asks the same stored
 * memories many times. After an ingestion, every table of the `RecallDB` is written to one file
 * (Node's structured-clone serialization, `v8.serialize`, which keeps typed arrays: the vector and
 * meta blocks); a later run with the same key restores the rows with `bulkPut` into a fresh database
 * and opens the store over them, as a restart does.
 *
 * The key names what decides the stored rows: size, seed, the embedder whose vectors are made at
 * ingestion, and a SHA-256 of the write-time sources (`WRITE_TIME_SOURCES`: the generator, the
 * episodic path, write-time supersession, slots, the tokenizer). Supersession also asks the
 * store's lexical search for its candidates (depth 10), so a change to ranking code reuses rows
 * whose supersession marks were decided by the older ranking: numbers to report come from a run
 * without the cache. Read-time versions (the lexical snapshot's tokenizer version, the slot column's
 * classifier version) are rebuilt on open by the store's own mechanism.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import type { RecallDB } from '../../src/db/schema';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** Files and folders (relative to the repository) whose content decides the ingested rows. */
export const WRITE_TIME_SOURCES = [
  'bench/data/generate.ts',
  'bench/data/templates.ts',
  'bench/data/dialog-templates.ts',
  'bench/data/bilingual-conversation.ts',
  'src/memory/long-term/index.ts',
  'src/memory/long-term/slots.ts',
  'src/memory/long-term/consolidation',
  'src/memory/long-term/retrieval/tokenize.ts',
  'src/memory/long-term/retrieval/evaluate.ts',
  'src/text',
] as const;

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(join(path, name)));
}

/** SHA-256 (hex, first 16 characters) of the write-time sources' paths and contents. */
export function writeTimeHash(): string {
  const hash = createHash('sha256');
  for (const file of WRITE_TIME_SOURCES.flatMap((p) => filesUnder(join(root, p)))) {
    hash.update(file.slice(root.length));
    hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

/** What a cache file holds besides the rows. */
export interface CachedIngest {
  /** Wall time of the original ingestion (ms). */
  ingestMs: number;
  memories: number;
}

/** The cache file of one ingestion in `dir`. */
export function cacheFile(dir: string, key: { rounds: number; seed: number; embedder: string }): string {
  // RETRIEVAL_BENCH_DB_CACHE_KEY names the hash by hand: to re-ask a database ingested by other
  // write-time code on purpose (a read-time change that touched a listed file).
  return join(dir, `retrieval-${key.rounds}-seed${key.seed}-${key.embedder}-${process.env.RETRIEVAL_BENCH_DB_CACHE_KEY ?? writeTimeHash()}.v8`);
}

/**
 * Writes every table of `db` to `file` (memory rows without the `embedding` the store's reading
 * hook puts back: the vectors are in `memoryIndex`).
 */
export async function saveDatabase(db: RecallDB, file: string, meta: CachedIngest): Promise<void> {
  const tables: Record<string, unknown[]> = {};
  for (const table of db.tables) {
    const rows = (await table.toArray()) as Record<string, unknown>[];
    tables[table.name] = table.name === 'memories' ? rows.map(({ embedding: _embedding, ...row }) => row) : rows;
    if (table.schema.primKey.keyPath === null) throw new Error(`db-cache: table ${table.name} has outbound keys, which this cache does not keep`);
  }
  mkdirSync(resolve(file, '..'), { recursive: true });
  writeFileSync(file, serialize({ meta, tables }));
}

/**
 * Restores a file of `saveDatabase` into `db` (empty, not yet used by a store).
 * @returns the file's metadata, or `null` when the file does not exist.
 */
export async function loadDatabase(db: RecallDB, file: string): Promise<CachedIngest | null> {
  if (!existsSync(file)) return null;
  const { meta, tables } = deserialize(readFileSync(file)) as { meta: CachedIngest; tables: Record<string, unknown[]> };
  for (const [name, rows] of Object.entries(tables)) if (rows.length > 0) await db.table(name).bulkPut(rows);
  return meta;
}
