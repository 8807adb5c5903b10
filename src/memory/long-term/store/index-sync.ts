/**
 * Index sync of the long-term store: the live block index (`../retrieval/blocks.ts`) and lexical
 * index (`../retrieval/lexical.ts`), kept equal to the memory rows and persisted in
 * `db.memoryIndex` — opening from the persisted layout, repairing it from the rows, the write
 * transaction that changes rows and blocks together, and the idle lexical snapshot (written when
 * idle, loaded in the background after an open: `lexicalReady`). The store (`./index.ts`) owns
 * the rows; it calls `writeIndexed` for every write.
 * Over 300 lines: open, repair, the write transaction and the snapshot share one invariant (the
 * live and persisted indexes equal the rows at `gen`); cutting them apart would spread it.
 */
import Dexie, { type Table } from 'dexie';
import type { RecallDB } from '../../../db/schema';
import type { MemoryRecord } from '../../../model/records';
import type { CatalogEntry, StoreOpenStats } from '../types';
import { LexicalIndex, LEXICAL_SNAPSHOT_VERSION, OutdatedLexicalSnapshotError } from '../retrieval/lexical';
import { LEXICAL_CHUNK_DOCS, LEXICAL_CHUNK_KEY_PREFIX, TornLexicalSnapshotError, type LexicalChunks } from '../retrieval/lexical-snapshot';
import { l2normalize } from '../retrieval/vector';
import {
  BlockIndex,
  decodeVectorBlock,
  indexedOf,
  isVectorRecord,
  layoutFromRows,
  META_KEY_PREFIX,
  VECTOR_KEY_PREFIX,
  type DirtyIdsRecord,
  type IndexBatch,
  type IndexHeaderRecord,
  type LayoutRow,
  type LexicalManifestRecord,
  type LexicalSnapshotRecord,
  type MemoryIndexRecord,
  type VectorBlockRecord,
} from '../retrieval/blocks';
import { holdsEmbedding, toRow } from './rows';
import { INDEXED_TEXT_VERSION, indexedMemoryText } from '../text';

/** Key of the lexical snapshot record (its manifest, or an older build's single record) in `db.memoryIndex`. */
const SNAPSHOT_KEY: LexicalManifestRecord['key'] = 'lexical';

/**
 * Key prefix of the dirty-id records in `db.memoryIndex` (`DirtyIdsRecord`, `d|<gen>`): it sorts
 * below `header`, `lexical`, `lexical|…`, the meta blocks (`m|…`) and the vector blocks (`v|…`), so
 * none of their key ranges reads one.
 */
export const DIRTY_KEY_PREFIX = 'd|';
/** Upper bound of the dirty-id records' key range (every `d|<digits>` key sorts below it). */
const DIRTY_KEY_END = 'd|\uffff';
/** Key of the dirty-id record of the write that committed generation `gen` (zero-padded: keys sort by generation). */
export const dirtyKey = (gen: number): string => `${DIRTY_KEY_PREFIX}${String(gen).padStart(12, '0')}`;

/** Idle time after the last write before the lexical snapshot is written (ms). */
export const SNAPSHOT_DELAY_MS = 1500;
/**
 * Dirty ids after which the snapshot is written without waiting for idle: this many, or a
 * quarter of the memories (`SNAPSHOT_DIRTY_SHARE`) when that is more. A snapshot serializes the
 * whole lexical index, so a fixed threshold made a stream of N writes cost O(N²) (at 10k memories
 * in Node, 3.8 s of a 15 s ingestion went to ~20 snapshots); with the share, the snapshots of a
 * stream grow geometrically and cost O(N) together, while the replay at the next open stays
 * bounded (at most a quarter of the rows, only when the context dies before the idle snapshot).
 */
const SNAPSHOT_DIRTY_MAX = 512;
/** See `SNAPSHOT_DIRTY_MAX`. */
const SNAPSHOT_DIRTY_SHARE = 0.25;
/** Vector blocks read per IndexedDB request at open (`loadVectors`): 4 × 256 × 384-d f16 ≈ 0.8 MB. */
const VECTOR_BLOCKS_PER_READ = 4;
/** CPU time (ms) of vector decoding between two yields to the event loop at open (`loadVectors`). */
const DECODE_SLICE_MS = 8;

/**
 * Lets queued tasks run (message handlers, searches): `scheduler.yield()` where the browser has it
 * (Chromium; no 4 ms clamp as for nested timers), else a 0 ms timer (Node).
 */
function yieldToEventLoop(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler;
  return scheduler?.yield ? scheduler.yield() : new Promise((resolve) => setTimeout(resolve, 0));
}

/** Foreground work background index work steps aside for (`MemoryStoreDeps.foreground`). */
export interface ForegroundWork {
  /** Whether foreground work runs now. */
  active(): boolean;
  /** Resolves once none runs. */
  idle(): Promise<void>;
}

/** No foreground work ever (tests, the Node benches without a job queue). */
const NO_FOREGROUND: ForegroundWork = { active: () => false, idle: () => Promise.resolve() };

/** CPU time (ms) of the idle lexical snapshot's serialization between two yields (a turn waits at most about this long for it). */
const SNAPSHOT_SLICE_MS = 4;

/** Thrown inside the idle snapshot's write when foreground work started: it stops, writes nothing and is scheduled again. */
class SnapshotPreempted extends Error {}

/** Rows indexed lexically between two yields to the event loop during a rebuild. */
const REBUILD_SLICE = 256;

/** Runs async functions one at a time, in call order (a failure does not stop the chain). */
export type Serial = <T>(fn: () => Promise<T>) => Promise<T>;

/** A new `Serial` queue. */
export function createSerial(): Serial {
  let chain: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
}

/**
 * What a write inside `writeIndexed` reports: the change of the row count, what to apply to the
 * lexical index (and catalog) once committed, and extra ids for the header's `dirty` list.
 */
export interface IndexedWrite {
  countDelta: number;
  lexical: () => void;
  dirty?: string[];
}

/** The fields of a memory its lexical document is made of. */
export type LexicalSource = Pick<MemoryRecord, 'id' | 'kind' | 'text' | 'topic' | 'createdAt' | 'speakers'>;

/** Whether two versions of a memory make the same lexical document (the fields `indexLexical` reads). */
function sameLexicalSource(a: LexicalSource, b: LexicalSource): boolean {
  return a.id === b.id && a.kind === b.kind && a.text === b.text && a.topic === b.topic && a.createdAt === b.createdAt && sameSpeakers(a.speakers, b.speakers);
}

/** Whether two speaker maps name the same speakers (absent = no names). */
function sameSpeakers(a: MemoryRecord['speakers'], b: MemoryRecord['speakers']): boolean {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]) as Set<keyof NonNullable<MemoryRecord['speakers']>>;
  for (const key of keys) if (a?.[key] !== b?.[key]) return false;
  return true;
}

/**
 * Indexes (or re-indexes) memory `r` in `lexical`: its document is `indexedMemoryText(r)` (date,
 * speakers, resolved relative dates) and its topic. Every lexical write of the store goes through here.
 * With `previous` (the version indexed so far), an update that leaves the document as it was
 * (supersededBy, validity, importance, sources, accesses) is not re-indexed: a re-index discards the
 * document's postings, which sends every later query whose terms it holds through MiniSearch's
 * `Map`s again until the discard is vacuumed (`../retrieval/postings.ts`).
 */
export function indexLexical(lexical: LexicalIndex, r: LexicalSource, previous?: LexicalSource): void {
  if (previous && sameLexicalSource(previous, r) && lexical.has(r.id)) return;
  lexical.set(r.id, indexedMemoryText(r), r.topic);
}

/** Ids of the memories of `index` that have a vector (of any model). */
function withVectors(index: BlockIndex): Set<string> {
  const out = new Set<string>();
  for (const id of index.ids()) if (index.vector(id) !== null) out.add(id);
  return out;
}

/** Builds the lexical index from rows. */
function lexicalFrom(rows: Iterable<LexicalSource>): LexicalIndex {
  const out = new LexicalIndex();
  for (const r of rows) indexLexical(out, r);
  return out;
}

/**
 * The live indexes of one store and their persistence. `index`, `lexical` and `gen` are replaced
 * by a repair; read them through this object, never keep a reference across an `await`.
 * Not thread-safe by itself: every mutation runs inside the store's `serial`.
 */
export class IndexSync {
  /** The live block index (meta and vector blocks). */
  index = new BlockIndex();
  /** The live lexical index. */
  lexical = new LexicalIndex();
  /** Generation of the header the live index matches. */
  gen = 0;
  /**
   * Ids whose vector was embedded from an older format of `embeddingInput` (`INDEXED_TEXT_VERSION`): set at open when the
   * header's `textVersion` is older than `INDEXED_TEXT_VERSION`. Those vectors are still searched;
   * `reembed` embeds them again (the id leaves the set when its new vector is committed), and once
   * none is left `markTextVersionCurrent` records the current version in the header. Until then
   * every header keeps the old version, so a restart in between marks them again.
   */
  staleVectors = new Set<string>();
  /**
   * Every memory id changed since the lexical snapshot the store opened from or last wrote: the
   * header's `dirty` and the dirty-id records (`DirtyIdsRecord`) as the live set. Its size decides
   * when the snapshot is written without waiting for idle (`scheduleSnapshot`).
   */
  private dirty = new Set<string>();
  private snapshotTimer: ReturnType<typeof setTimeout> | null = null;
  private snapshotRun: Promise<void> = Promise.resolve();
  /** An idle (preemptible) snapshot write is in flight: it may be waiting for a turn to end. */
  private idleRun = false;

  /**
   * @param chunkDocs short ids per chunk of the lexical snapshot (`LEXICAL_CHUNK_DOCS`; tests pass a
   *   small one to get several chunks from a few memories).
   * @param foreground the work the idle snapshot steps aside for (`writeSnapshot`).
   */
  constructor(
    private readonly db: RecallDB,
    private readonly serial: Serial,
    private readonly chunkDocs = LEXICAL_CHUNK_DOCS,
    private readonly foreground: ForegroundWork = NO_FOREGROUND,
  ) {}

  /**
   * See `LongTermStore.catalog`: from the live meta columns (kind, flags, time and normalized text
   * are kept there, written in the same transaction as the rows), so no row is read.
   */
  catalog(namespace: string): CatalogEntry[] {
    return this.index.catalog(namespace);
  }

  /**
   * Runs `write` in one transaction over the rows, the history and the index: `write` puts rows
   * and history and records its index changes in the batch; the touched blocks, the new header
   * (generation + 1, row count + `countDelta`) and a `DirtyIdsRecord` of `ids` and the write's own
   * `dirty` (none when both are empty) are written in the same transaction: what a write adds to
   * the index's bookkeeping is proportional to what it changed. The live index and the lexical index change only after the commit.
   * @param options.tables further tables the transaction holds (a bulk import also writes
   *   conversations, messages and its undo rows in it).
   * @param options.idleSnapshot the lexical snapshot waits for `SNAPSHOT_DELAY_MS` of idle even
   *   when many ids are dirty (a bulk import: one snapshot after its last batch, not one per batch).
   * @throws what `write` or Dexie throws; nothing changes then.
   */
  async writeIndexed(
    ids: string[],
    write: (batch: IndexBatch) => Promise<IndexedWrite>,
    options: { tables?: readonly Table[]; idleSnapshot?: boolean } = {},
  ): Promise<void> {
    const { db } = this;
    const batch = this.index.batch();
    let after: IndexedWrite | null = null;
    let header: IndexHeaderRecord | null = null;
    let changed: string[] = [];
    await db.transaction('rw', [db.memories, db.memoryHistory, db.memoryIndex, db.tombstones, ...(options.tables ?? [])], async () => {
      after = await write(batch);
      const old = (await db.memoryIndex.get('header')) as IndexHeaderRecord | undefined;
      changed = [...new Set([...ids, ...(after.dirty ?? [])])];
      header = {
        key: 'header',
        gen: (old?.gen ?? this.gen) + 1,
        count: (old?.count ?? 0) + after.countDelta,
        // An older build's list, kept as it is until the next snapshot clears it (never appended to).
        dirty: old?.dirty ?? [],
        ...this.textVersionField(old),
      };
      // One request: the blocks, the header and this write's dirty-id record (when it changed any id).
      const dirtyIds = changed.length > 0 ? [{ key: dirtyKey(header.gen), gen: header.gen, ids: changed } satisfies DirtyIdsRecord] : [];
      await db.memoryIndex.bulkPut([...batch.records(), header, ...dirtyIds]);
    });
    batch.commit();
    after!.lexical();
    this.gen = header!.gen;
    for (const id of changed) this.dirty.add(id);
    this.scheduleSnapshot(options.idleSnapshot ? 0 : this.dirty.size);
  }

  /** The header's `textVersion`: the current one when no vector is stale, else the one `old` had. */
  private textVersionField(old: IndexHeaderRecord | undefined): { textVersion?: number } {
    if (this.staleVectors.size === 0) return { textVersion: INDEXED_TEXT_VERSION };
    return old?.textVersion !== undefined ? { textVersion: old.textVersion } : {};
  }

  /**
   * Drops from `staleVectors` the ids that no longer have a vector (removed meanwhile) and, when
   * none is left, writes `INDEXED_TEXT_VERSION` into the persisted header (same generation: nothing
   * else changed). Call inside the store's `serial`.
   * @returns how many stale vectors are left.
   */
  async markTextVersionCurrent(): Promise<number> {
    for (const id of this.staleVectors) if (this.index.vector(id) === null) this.staleVectors.delete(id);
    if (this.staleVectors.size > 0) return this.staleVectors.size;
    const { db } = this;
    await db.transaction('rw', db.memoryIndex, async () => {
      const header = (await db.memoryIndex.get('header')) as IndexHeaderRecord | undefined;
      if (header && header.textVersion !== INDEXED_TEXT_VERSION) await db.memoryIndex.put({ ...header, textVersion: INDEXED_TEXT_VERSION });
    });
    return 0;
  }

  /** Schedules the lexical snapshot: after `SNAPSHOT_DELAY_MS` of idle, or at once when `dirty` (ids it lacks) reaches `SNAPSHOT_DIRTY_MAX`'s threshold. */
  private scheduleSnapshot(dirty: number, preempted = false): void {
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer);
    this.snapshotTimer = setTimeout(
      () => {
        this.snapshotTimer = null;
        this.idleRun = true;
        this.snapshotRun = this.writeSnapshot(true).finally(() => {
          this.idleRun = false;
        });
      },
      // After a preemption: the idle delay again, counted once the turn is over (`writeSnapshot` waits for it).
      !preempted && dirty >= Math.max(SNAPSHOT_DIRTY_MAX, SNAPSHOT_DIRTY_SHARE * this.index.size) ? 0 : SNAPSHOT_DELAY_MS,
    );
  }

  /**
   * Writes the lexical snapshot at the live generation and clears the dirty ids (the header's
   * `dirty` and every `DirtyIdsRecord`), in one transaction: the chunks that changed since the last
   * write (`LexicalIndex.snapshotChunks`, serialized in slices before it), the manifest and the
   * header — all or nothing, so a crash never leaves chunks of two
   * writes under one manifest (and a restore would refuse them: `TornLexicalSnapshotError`).
   * `preemptible` (the idle snapshot): it waits until no foreground work runs before it queues, and
   * when a turn starts while it serializes (checked at each slice and before the transaction) it
   * stops without writing anything — leaving the store's write queue, which the turn may need for a
   * memory command — and is scheduled again (`scheduleSnapshot`).
   */
  private writeSnapshot(preemptible: boolean): Promise<void> {
    const stepAside = () => {
      if (preemptible && this.foreground.active()) throw new SnapshotPreempted();
    };
    return (preemptible ? this.foreground.idle() : Promise.resolve())
      .then(() =>
        this.serial(async () => {
          stepAside();
          const at = this.gen;
          const lexical = this.lexical;
          // Serialized in slices with yields between (no long task); nothing writes meanwhile (inside `serial`).
          const pause = async () => {
            await yieldToEventLoop();
            stepAside();
          };
          const chunks = await lexical.snapshotChunks(pause, { chunkDocs: this.chunkDocs, sliceMs: SNAPSHOT_SLICE_MS });
          stepAside();
          await this.putSnapshot(chunks, at);
        }),
      )
      .catch((error: unknown) => {
        if (error instanceof SnapshotPreempted) return this.scheduleSnapshot(0, true);
        if (error instanceof Dexie.DatabaseClosedError) return; // the context is going away; `dirty` covers it
        console.warn('[ltm] could not write the lexical snapshot (changes are replayed on the next open):', error);
      });
  }

  /** `writeSnapshot`'s transaction: the chunks at generation `at`, the header without dirty ids, the dirty-id records deleted. */
  private async putSnapshot(chunks: LexicalChunks, at: number): Promise<void> {
    const { db } = this;
    const written = await db.transaction('rw', db.memoryIndex, async () => {
      const header = (await db.memoryIndex.get('header')) as IndexHeaderRecord | undefined;
      if (!header || header.gen !== at) return false; // changed behind the store's back: the next open repairs
      await this.putChunks(chunks, at, [{ ...header, dirty: [] }]);
      await db.memoryIndex.where('key').between(DIRTY_KEY_PREFIX, DIRTY_KEY_END).delete();
      return true;
    });
    if (written) {
      chunks.commit(at);
      this.dirty.clear();
    }
    performance.mark('recall:store.snapshot.end');
  }

  /**
   * Puts a chunked snapshot's records at generation `gen` with `also` (inside a read-write
   * transaction over `memoryIndex`): a full write first deletes every stored chunk.
   */
  private async putChunks(chunks: LexicalChunks, gen: number, also: MemoryIndexRecord[]): Promise<void> {
    const { db } = this;
    const { put, remove, clearChunks } = chunks.records(gen, INDEXED_TEXT_VERSION, LEXICAL_SNAPSHOT_VERSION);
    if (clearChunks) await db.memoryIndex.where('key').startsWith(LEXICAL_CHUNK_KEY_PREFIX).delete();
    if (remove.length > 0) await db.memoryIndex.bulkDelete(remove);
    await db.memoryIndex.bulkPut([...put, ...also]);
  }

  /** Writes the lexical snapshot now if changes are pending (otherwise done when idle). */
  async flushSnapshot(): Promise<void> {
    // Also when an idle snapshot is in flight: it may wait for a turn to end, or step aside for one.
    if (this.snapshotTimer || this.idleRun) {
      if (this.snapshotTimer) clearTimeout(this.snapshotTimer);
      this.snapshotTimer = null;
      this.snapshotRun = this.writeSnapshot(false);
    }
    await this.snapshotRun;
  }

  /**
   * Full repair from the rows (raw: a row's own `embedding` field, if any, wins; otherwise the
   * vector comes from the live index, when its model is the row's): the whole layout, the header
   * and the lexical snapshot are written, and `embedding` is stripped from the rows that had one.
   * Built in two steps so searches are not blocked for the rebuild's duration: the rows are read
   * in a read-only transaction and the layout and lexical index are built outside any transaction
   * (searches keep answering from the live index and read their rows meanwhile); then one short
   * read-write transaction checks that the table still holds the same rows (same count, same
   * `pending` marks) and writes everything. When it changed in between (a writer behind the store),
   * the rebuild is done again in one read-write transaction over a fresh read. Call inside the
   * store's `serial`.
   */
  async rebuild(): Promise<void> {
    const { db } = this;
    const rows = await db.transaction('r', db.memories, () => db.memories.toCollection().raw().toArray() as Promise<MemoryRecord[]>);
    const built = await this.layoutOf(rows);
    let committed = false;
    await db.transaction('rw', db.memories, db.memoryIndex, async () => {
      const [count, pending] = await Promise.all([db.memories.count(), db.memories.where('pending').equals(1).count()]);
      if (count !== rows.length || pending !== rows.filter((r) => r.pending !== undefined).length) return;
      await this.writeLayout(rows, built, true);
      committed = true;
    });
    if (!committed) {
      await db.transaction('rw', db.memories, db.memoryIndex, async () => {
        const fresh = (await db.memories.toCollection().raw().toArray()) as MemoryRecord[];
        await this.writeLayout(fresh, await this.layoutOf(fresh, false), false);
      });
    }
    const done = this.built!;
    this.built = null;
    this.index = done.index;
    this.lexical = done.lexical;
    this.gen = done.gen;
    // `writeLayout` cleared the table (dirty-id records included) and wrote the snapshot at `gen`.
    this.dirty.clear();
  }

  /** What `rebuild` committed last (set inside its write transaction, applied after the commit). */
  private built: { index: BlockIndex; lexical: LexicalIndex; gen: number } | null = null;

  /**
   * The layout and lexical index of `rows` (CPU only: no transaction needed). With `yielding`, the
   * lexical index is built in slices of `REBUILD_SLICE` rows with a macrotask between them, so
   * searches (on the live index) are answered while a large store is rebuilt.
   */
  private async layoutOf(
    rows: MemoryRecord[],
    yielding = true,
  ): Promise<{ layout: ReturnType<typeof layoutFromRows>; lexical: LexicalIndex; chunks: LexicalChunks }> {
    const live = this.index;
    const vectorOf = (r: LayoutRow) => {
      if (holdsEmbedding(r)) return r.embedding ? l2normalize(r.embedding) : null;
      const v = live.vector(r.id);
      return v && v.model === r.embeddingModel ? v.vector : null;
    };
    // The generation is set when written (`writeLayout`).
    const layout = layoutFromRows(rows, 0, vectorOf);
    if (!yielding) {
      const lexical = lexicalFrom(rows);
      return { layout, lexical, chunks: lexical.snapshotChunksSync(this.chunkDocs) };
    }
    const lexical = new LexicalIndex();
    for (let i = 0; i < rows.length; i += REBUILD_SLICE) {
      for (const r of rows.slice(i, i + REBUILD_SLICE)) indexLexical(lexical, r);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    // Its snapshot is serialized here, in slices, not inside the write transaction.
    return { layout, lexical, chunks: await lexical.snapshotChunks(yieldToEventLoop, { chunkDocs: this.chunkDocs }) };
  }

  /**
   * Writes a layout built from `rows` (inside a read-write transaction over rows and index): the
   * blocks, a header at the next generation, the lexical snapshot; and strips `embedding` from the
   * rows that had one (re-read by id when `reread`, so fields written meanwhile — accesses — are kept).
   */
  private async writeLayout(rows: MemoryRecord[], built: Awaited<ReturnType<IndexSync['layoutOf']>>, reread: boolean): Promise<void> {
    const { db } = this;
    const { layout, lexical, chunks } = built;
    const old = (await db.memoryIndex.get('header')) as IndexHeaderRecord | undefined;
    const nextGen = Math.max(old?.gen ?? 0, this.gen) + 1;
    const header: IndexHeaderRecord = { ...layout.header, gen: nextGen, ...this.textVersionField(old) };
    await db.memoryIndex.clear();
    // No memory, no index: an empty store leaves nothing behind (erase everything).
    if (rows.length > 0) {
      await this.putChunks(chunks, nextGen, [...layout.records.filter((r) => r.key !== 'header'), header]);
      // Applied with `built` only if this transaction commits (else `lexical` is dropped with it).
      chunks.commit(nextGen);
    }
    const changed = rows.filter(
      (r) => holdsEmbedding(r) || r.pending !== undefined || (r.embeddingModel !== null && !layout.index.hasVector(r.id, r.embeddingModel)),
    );
    if (changed.length > 0) {
      const current = reread ? ((await db.memories.bulkGet(changed.map((r) => r.id))) as (MemoryRecord | undefined)[]) : changed;
      const byId = new Map(current.flatMap((r) => (r ? [[r.id, r] as const] : [])));
      await db.memories.bulkPut(
        changed.map((r) => {
          // The read row's vector fields (what the layout placed), the current row's other fields.
          const row = toRow({ ...(byId.get(r.id) ?? r), embedding: null, embeddingModel: r.embeddingModel });
          return layout.index.hasVector(r.id, r.embeddingModel ?? '') ? row : { ...row, embeddingModel: null };
        }),
      );
    }
    this.built = { index: layout.index, lexical, gen: nextGen };
  }

  /**
   * Re-indexes the rows marked `pending` (written behind the store with an inline vector, e.g. a
   * bulk `modify` or an import's undo while the store is open), in one transaction: the row's own
   * `embedding` field wins, the rows lose it (and the mark), and the blocks take it. Rows removed
   * behind the store are not seen here (the next open's row count catches them). Cheap when there
   * are none: one count on a sparse index. Call inside the store's `serial`.
   * @returns how many rows were re-indexed.
   */
  async reconcilePending(): Promise<number> {
    const { db } = this;
    if ((await db.memories.where('pending').equals(1).count()) === 0) return 0;
    let n = 0;
    await this.writeIndexed([], async (batch) => {
      const rows = (await db.memories.where('pending').equals(1).raw().toArray()) as MemoryRecord[];
      let added = 0;
      for (const r of rows) {
        if (!this.index.has(r.id)) added += 1;
        const own = holdsEmbedding(r) ? (r.embedding ? l2normalize(r.embedding) : null) : (this.index.vector(r.id)?.vector ?? null);
        const indexed = own !== null && r.embeddingModel !== null && batch.put(indexedOf(r), own, r.embeddingModel);
        if (!indexed) batch.put(indexedOf(r), null, null);
        await db.memories.put(indexed ? toRow(r) : { ...toRow(r), embeddingModel: null });
      }
      n = rows.length;
      return {
        countDelta: added,
        dirty: rows.map((r) => r.id),
        lexical: () =>
          rows.forEach((r) => {
            indexLexical(this.lexical, r);
          }),
      };
    });
    return n;
  }

  /**
   * Opens from the persisted index, or repairs (see the store's module doc), in two steps. The
   * open itself reads, in one read-only transaction, the header and the meta blocks only (no
   * vector block, no lexical snapshot, no row: one row key only when there is no header); the
   * store is then searchable — the catalog and lexical searches answer. In the background, once
   * `background` settles, as the first tasks of `serial` (so every write waits for them):
   * `vectorLoad` reads the vector blocks and decodes them in slices (`loadVectors`; searches that
   * need vectors await it); `lexicalLoad` reads and parses the lexical snapshot and replays the
   * header's `dirty` ids; then the persisted index is checked against the rows (`verifyRows`: row
   * count, rows `pending`) and repaired from them when they disagree. Until the snapshot is loaded
   * `lexicalReady` is `false` and searches take their lexical list from the catalog (see
   * `search.ts`). Only a missing header over stored rows or an older layout is repaired before
   * this resolves (reading the vector blocks first: they hold the vectors of the rows).
   * @param background when the background part may start (the core: after its own start-up).
   *
   * Why the vectors come second (measured in Chromium at 10k memories, 384-d, a loaded 2-core
   * machine): reading the vector blocks and decoding their f16 took ~130 + ~130 ms of the 830 ms to
   * the first answered search, and the first search at a cold start does not need them — the
   * memory manager's search is lexical, and a chat turn's vector search needs a query embedding,
   * which waits for the embedder to load (seconds).
   *
   * Why the row check is not on the open path: IndexedDB's `count()` walks the whole store in
   * Chromium (measured at 10k memories: 90–300 ms for `memories.count()` and 300–380 ms for the
   * sparse `pending` index, whose entries of rows rewritten since — an import then its rebuild —
   * stay behind until LevelDB compacts them), against 14–45 ms for the meta blocks. A search
   * answered meanwhile sees the index as of the last write through the store; rows deleted behind
   * it are skipped when the top-k rows are read.
   */
  async open(background: PromiseLike<unknown> = Promise.resolve()): Promise<Omit<StoreOpenStats, 'ms' | 'at' | 'repairedAfterOpen'>> {
    const { db } = this;
    performance.mark('recall:store.read.start');
    // The header and the meta blocks (not the lexical snapshot: the large string read later). Two
    // plain reads — a key get and one key range, which IndexedDB answers with one `getAll` — not
    // Dexie's `inAnyRange`, which walks a cursor: one request and one task per block (at 100k
    // memories, 391 blocks, that walk was the 1.8 s meta read).
    // The dirty-id records (one per write since the last snapshot) in the same read: a third key range.
    const [head, dirtyRecords] = await db.transaction('r', db.memoryIndex, async () => {
      const [header, metas, dirtyIds] = await Promise.all([
        db.memoryIndex.get('header'),
        db.memoryIndex.where('key').between(META_KEY_PREFIX, VECTOR_KEY_PREFIX).toArray(),
        db.memoryIndex
          .where('key')
          .between(DIRTY_KEY_PREFIX, DIRTY_KEY_END)
          .toArray()
          .then((rs) => rs.filter((r): r is DirtyIdsRecord => r.key.startsWith(DIRTY_KEY_PREFIX))),
      ]);
      return [header ? [header, ...metas] : metas, dirtyIds] as const;
    });
    performance.mark('recall:store.read.end');
    const header = head.find((r): r is IndexHeaderRecord => r.key === 'header');
    // No header: an empty store, unless a row exists (one key read).
    if (!header && (await db.memories.limit(1).primaryKeys()).length === 0) return { via: 'empty', replayed: 0 };
    const metaOnly = BlockIndex.fromRecords(head);
    performance.mark('recall:store.decode.end');
    const staleInput = (header?.textVersion ?? 1) !== INDEXED_TEXT_VERSION;
    if (!header || metaOnly.outdated) {
      if (metaOnly.outdated) console.info('[ltm] the persisted memory index has an older layout; rebuilding it');
      else console.warn('[ltm] the persisted memory index is missing over stored memories; rebuilding it');
      // The persisted blocks are where the vectors of rows without an `embedding` field are.
      this.index = BlockIndex.fromRecords([...head, ...(await this.readVectorBlocks())]);
      // Vectors embedded from an older indexed-text format stay searchable until `reembed` replaces them.
      if (staleInput) this.staleVectors = withVectors(this.index);
      await this.rebuild();
      if (staleInput) this.staleVectors = withVectors(this.index);
      return { via: 'rebuilt', replayed: 0 };
    }
    this.index = metaOnly;
    this.gen = header.gen;
    // An older build's header list, then every write's record since the snapshot.
    this.dirty = new Set([...header.dirty, ...dirtyRecords.flatMap((r) => r.ids)]);
    const dirty = [...this.dirty];
    this.lexicalReady = false;
    this.vectorsReady = false;
    // The background part, in the write queue (every write waits for it): vectors, then the
    // lexical snapshot, then the row check. It starts once `background` settles (the core passes
    // a promise of its own start-up, so none of this competes with it).
    this.vectorLoad = this.serial(async () => {
      await background;
      await this.loadVectors(staleInput);
    }).catch((error: unknown) => {
      if (!(error instanceof Dexie.DatabaseClosedError)) console.warn('[ltm] could not load the vector blocks (searches are lexical only):', error);
    });
    this.lexicalLoad = this.serial(async () => {
      await this.loadLexical(dirty);
      performance.mark('recall:store.lexical.end');
      await this.verifyRows();
      performance.mark('recall:store.verify.end');
    }).catch((error: unknown) => {
      // The database closed under the load (the context is going away): nothing to keep.
      if (!(error instanceof Dexie.DatabaseClosedError)) console.warn('[ltm] could not load the lexical index (searches use the catalog):', error);
    });
    return { via: 'blocks', replayed: dirty.length };
  }

  /**
   * `true` once the vector blocks are in the live index (always, except between a store opening
   * from the persisted index and `loadVectors`). While `false` the index has metadata only: no
   * vector is searched, read by the rows' reading hook or counted; searches that need vectors
   * await `vectorLoad` first (see the store's `search`).
   */
  vectorsReady = true;

  /** Settles when the background vector load of `open` is done (resolved also when it failed). */
  vectorLoad: Promise<void> = Promise.resolve();

  /** Every stored vector block (one read-only transaction). */
  private readVectorBlocks(): Promise<MemoryIndexRecord[]> {
    const { db } = this;
    return db.transaction('r', db.memoryIndex, () => db.memoryIndex.where('key').aboveOrEqual(VECTOR_KEY_PREFIX).toArray());
  }

  /**
   * The second step of `open` (first task of `serial`): reads the vector blocks
   * (`VECTOR_BLOCKS_PER_READ` per request) and decodes them (f16 → f32, `decodeVectorBlock`) in
   * slices of about `DECODE_SLICE_MS`, yielding between
   * slices so messages (searches) are answered meanwhile, then adds them to the live index at once
   * (a search sees all of them or none). With `staleInput`, marks them stale (see `staleVectors`).
   */
  private async loadVectors(staleInput: boolean): Promise<void> {
    const { db } = this;
    // The keys first, then a few blocks per read: one read of every block made the renderer
    // deserialize them in one long task (~8 MB at 10k memories), which a search then waited behind.
    // Nothing writes meanwhile (inside `serial`), so the reads see one state.
    const keys = (await db.memoryIndex.where('key').aboveOrEqual(VECTOR_KEY_PREFIX).primaryKeys()) as string[];
    const decoded: VectorBlockRecord[] = [];
    for (let i = 0; i < keys.length; i += VECTOR_BLOCKS_PER_READ) {
      const stored = await db.memoryIndex.bulkGet(keys.slice(i, i + VECTOR_BLOCKS_PER_READ));
      let sliceStart = performance.now();
      for (const r of stored) {
        // A v3 block (f32, no `halves`) cannot be read here: the v4 upgrade converted every one.
        if (r && isVectorRecord(r) && 'halves' in r) decoded.push(decodeVectorBlock(r));
        if (performance.now() - sliceStart >= DECODE_SLICE_MS) {
          await yieldToEventLoop();
          sliceStart = performance.now();
        }
      }
    }
    performance.mark('recall:store.vectors.read');
    this.index.attachVectors(decoded);
    if (staleInput) this.staleVectors = withVectors(this.index);
    this.vectorsReady = true;
    performance.mark('recall:store.vectors.end');
  }

  /** `true` once `verifyRows` found the persisted index disagreeing with the rows and rebuilt it. */
  repairedAfterOpen = false;

  /**
   * The row check of `open` (inside `serial`, after the lexical load): when the header's row count
   * differs from `db.memories`, the blocks hold another number of memories, or rows are marked
   * `pending` (written behind the store with an inline vector), the index is rebuilt from the rows
   * (`rebuild`: searches keep answering from the live index meanwhile) and `repairedAfterOpen` set.
   */
  private async verifyRows(): Promise<void> {
    const { db } = this;
    const [header, rowCount, pending] = await db.transaction('r', db.memories, db.memoryIndex, () =>
      Promise.all([
        db.memoryIndex.get('header') as Promise<IndexHeaderRecord | undefined>,
        db.memories.count(),
        db.memories.where('pending').equals(1).count(),
      ]),
    );
    if (header && header.count === rowCount && this.index.size === rowCount && pending === 0) return;
    console.warn(`[ltm] the persisted memory index disagrees with the ${rowCount} stored memories (${pending} written behind it); rebuilding it`);
    await this.rebuild();
    if ((header?.textVersion ?? 1) !== INDEXED_TEXT_VERSION) this.staleVectors = withVectors(this.index);
    this.lexicalReady = true;
    this.repairedAfterOpen = true;
  }

  /**
   * `true` once the lexical index answers (always, except between a store opening from the
   * persisted index and its lexical snapshot being loaded). While `false`, `lexical` is an empty
   * placeholder that must not be searched or written.
   */
  lexicalReady = true;

  /** Settles when the background lexical load of `open` is done (resolved also when it failed). */
  lexicalLoad: Promise<void> = Promise.resolve();

  /**
   * The background part of `open` (inside `serial`): reads and parses the lexical snapshot
   * (`LexicalIndex.fromJSONAsync`, in slices), re-indexes `dirty` (changes the snapshot had not
   * caught) and marks the lexical index ready. Without a snapshot, or with an unreadable one,
   * the lexical index is built from the rows and a snapshot is scheduled.
   */
  private async loadLexical(dirty: string[]): Promise<void> {
    const { db } = this;
    const snapshot = (await db.memoryIndex.get(SNAPSHOT_KEY)) as LexicalManifestRecord | LexicalSnapshotRecord | undefined;
    performance.mark('recall:store.lexical.read');
    let lexical: LexicalIndex | null = null;
    // A snapshot of another document format is rebuilt from the rows (below), once.
    if (snapshot && (snapshot.textVersion ?? 1) === INDEXED_TEXT_VERSION) {
      try {
        if ('chunks' in snapshot) {
          const read = (keys: string[]) => db.memoryIndex.bulkGet(keys);
          lexical = await LexicalIndex.fromChunks(snapshot, read, yieldToEventLoop);
        } else {
          // A single-record snapshot (an older build): loaded as before, written back in chunks when idle.
          lexical = await LexicalIndex.fromJSONAsync(snapshot.json, yieldToEventLoop);
          this.scheduleSnapshot(0);
        }
      } catch (error) {
        if (error instanceof OutdatedLexicalSnapshotError) console.info('[ltm] the lexical snapshot has an older format; rebuilding it from the rows');
        else if (error instanceof TornLexicalSnapshotError) console.warn('[ltm] the lexical snapshot is torn; rebuilding it from the rows:', error.message);
        else console.warn('[ltm] the lexical snapshot is unreadable; rebuilding it from the rows:', error);
      }
    }
    if (lexical && dirty.length > 0) {
      const rows = (await db.memories.bulkGet(dirty)).filter((r): r is MemoryRecord => r !== undefined);
      const present = new Set(rows.map((r) => r.id));
      for (const r of rows) indexLexical(lexical, r);
      for (const id of dirty) if (!present.has(id)) lexical.delete(id);
      this.scheduleSnapshot(dirty.length);
    }
    if (!lexical) {
      lexical = lexicalFrom((await db.memories.toCollection().raw().toArray()) as MemoryRecord[]);
      this.scheduleSnapshot(Infinity); // no snapshot at all: write one now
    }
    this.lexical = lexical;
    this.lexicalReady = true;
  }
}
