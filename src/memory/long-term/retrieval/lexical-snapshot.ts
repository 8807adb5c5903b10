// Over 300 lines: the chunk writer and the restorer share one record format and one notion of
// "what was written" (`Persisted`); they are kept side by side so they cannot drift apart.
/**
 * The lexical snapshot in chunks (issue 9): MiniSearch's index stored as several `memoryIndex`
 * records, so that loading it never blocks the thread in one long task and a write after a few
 * changes rewrites only the chunks they touched.
 *
 * Chunk `c` holds the documents whose MiniSearch short id is in `[c·chunkDocs, (c+1)·chunkDocs)` —
 * their ids and field lengths — and, for every term, the postings of those documents (discarded
 * documents' postings that MiniSearch has not vacuumed yet included, so a restored index is the
 * live one). Short ids only grow (a re-indexed memory is discarded and added again under a new
 * one), so an add touches the last chunk only and a discard the chunk of the old short id; the
 * scalar fields (document count, average field lengths, …) live in the manifest record
 * (`LexicalManifestRecord`, key `lexical`), rewritten by every write.
 *
 * A chunk's `json` is `{"d":[shortId,"memory id",[field lengths],…],"t":[["term",fieldId,[shortId,tf,…],fieldId,[…]],…]}`:
 * flat arrays (no `parseInt` of object keys when restored), postings ascending by short id and
 * fields ascending by field id within a term, as MiniSearch's own JSON restores them.
 *
 * Which chunks changed is known without comparing contents: per chunk, the number of documents it
 * holds. A chunk entirely below the previous write's `nextId` can only lose documents (discards),
 * which changes that number; a chunk reaching past it changes when `nextId` moved; a vacuum (which
 * removes discarded documents' postings anywhere) is seen as a `dirtCount` lower than the discards
 * since the previous write imply, and makes the write a full one. What was written is remembered
 * per MiniSearch instance (`commit`), so a new index (a rebuild, `clear`) is always written in full.
 *
 * Crash safety: the store writes the changed chunks, the manifest and the index header in one
 * IndexedDB transaction (all or nothing). Independently of that, the manifest lists every chunk
 * with the generation it was written at, and a restore refuses (`TornLexicalSnapshotError`) a
 * missing chunk, a chunk of another generation or a document count that disagrees with the
 * manifest: the store then rebuilds the lexical index from the rows.
 */
import type MiniSearch from 'minisearch';
import type { LexicalChunkRecord, LexicalManifestRecord, LexicalSnapshotHead, MemoryIndexRecord } from './blocks/records';

/** Short document ids per chunk (at ~300 B of JSON per short memory: ~0.3 MB per chunk, a few ms of `JSON.parse`). */
export const LEXICAL_CHUNK_DOCS = 1024;

/** Key prefix of the chunk records: `lexical|000000`, `lexical|000001`, … (below `m|`, the meta blocks' range). */
export const LEXICAL_CHUNK_KEY_PREFIX = 'lexical|';

/** Key of chunk `chunk` (zero-padded, so keys sort by chunk number). */
export function lexicalChunkKey(chunk: number): string {
  return `${LEXICAL_CHUNK_KEY_PREFIX}${String(chunk).padStart(6, '0')}`;
}

/** Chunk records read per IndexedDB request while restoring. */
const CHUNKS_PER_READ = 4;

/**
 * Chunks read before any of them is parsed (`CHUNKS_PER_READ` per request, all requests issued at
 * once and awaited together; ~6 MB of JSON at most). A read issued while chunks are parsed is not
 * answered until the parse is done (Chromium, 10k memories, loaded machine: the parse's
 * `scheduler.yield` continuations outrank the read's answer, so each read ahead still cost its
 * 150–430 ms, one after the other); read together first, the waits overlap (7–30 ms for 4 chunks).
 */
const CHUNKS_PER_WINDOW = 32;

/** A chunked snapshot whose chunks disagree with its manifest (missing, another generation, another document count). */
export class TornLexicalSnapshotError extends Error {
  constructor(detail: string) {
    super(`The lexical snapshot is torn: ${detail}`);
    this.name = 'TornLexicalSnapshotError';
  }
}

/** Term → field id → short id → term frequency (MiniSearch 7.2's `_index` entries). */
type TermFields = Map<number, Map<number, number>>;

/** The private fields of MiniSearch 7.2.0 read and written here (the version is pinned, see `./bm25.ts`). */
interface Internals {
  _index: Iterable<[string, TermFields]> & { get(term: string): TermFields | undefined; set(term: string, fields: TermFields): void };
  _documentIds: Map<number, string>;
  _idToShortId: Map<string, number>;
  _fieldLength: Map<number, number[]>;
  _documentCount: number;
  _nextId: number;
  _fieldIds: Record<string, number>;
  _avgFieldLength: number[];
  _dirtCount: number;
  _currentVacuum: Promise<void> | null;
}

/** What the last committed write (or the restore) left in the database, for one MiniSearch instance. */
interface Persisted {
  chunkDocs: number;
  nextId: number;
  documentCount: number;
  dirtCount: number;
  /** Chunk number → documents it holds (absent: none). */
  docs: Map<number, number>;
  /** Chunk number → generation it was written at (stored chunks only). */
  gens: Map<number, number>;
}

const persisted = new WeakMap<object, Persisted>();

/** What one snapshot write puts and deletes (`LexicalChunks.records`). */
export interface LexicalChunkWrite {
  /** The changed chunk records and the manifest. */
  put: Array<LexicalChunkRecord | LexicalManifestRecord>;
  /** Keys of stored chunks that are now empty. */
  remove: string[];
  /** Delete every chunk record first (a full write: records of another snapshot may be stored). */
  clearChunks: boolean;
}

/** The content of one snapshot write, from `serializeChunks`; nothing is remembered until `commit`. */
export interface LexicalChunks {
  /** Whether every chunk was serialized (no committed write of this index to build on, or a vacuum ran). */
  readonly full: boolean;
  /** Changed (or, when `full`, every non-empty) chunk → its JSON. */
  readonly changed: ReadonlyMap<number, string>;
  /** MiniSearch's scalar fields now. */
  readonly head: LexicalSnapshotHead;
  /**
   * The records of a write at header generation `gen`.
   * @param textVersion `INDEXED_TEXT_VERSION` of the documents; @param version `LEXICAL_SNAPSHOT_VERSION`.
   */
  records(gen: number, textVersion: number, version: number): LexicalChunkWrite;
  /** Call once the write of `records(gen, …)` committed: later writes of this index build on it. */
  commit(gen: number): void;
}

/**
 * Serializes the chunks of `ms` that changed since its last committed write, as a generator that
 * yields whenever `due()` says a slice is over (the drivers below pause there).
 */
function* build(ms: Internals, chunkDocs: number, due: () => boolean): Generator<void, LexicalChunks, void> {
  const before = persisted.get(ms);
  const nextId = ms._nextId;
  const chunkCount = Math.ceil(nextId / chunkDocs);
  const docs = new Map<number, number>();
  for (const shortId of ms._documentIds.keys()) {
    const c = Math.floor(shortId / chunkDocs);
    docs.set(c, (docs.get(c) ?? 0) + 1);
  }
  const discards = before ? nextId - before.nextId - (ms._documentCount - before.documentCount) : 0;
  const full = !before || before.chunkDocs !== chunkDocs || ms._dirtCount !== before.dirtCount + discards;
  const isDirty = new Uint8Array(chunkCount);
  const dirty: number[] = [];
  for (let c = 0; c < chunkCount; c += 1) {
    const changed = full || (docs.get(c) ?? 0) !== (before.docs.get(c) ?? 0) || ((c + 1) * chunkDocs > before.nextId && nextId !== before.nextId);
    if (changed) {
      isDirty[c] = 1;
      dirty.push(c);
    }
  }
  // Documents of the dirty chunks, ascending.
  const docParts = new Map<number, string[]>();
  let probeCost = 0;
  for (const c of dirty) {
    const parts: string[] = [];
    const end = Math.min((c + 1) * chunkDocs, nextId);
    probeCost += end - c * chunkDocs;
    for (let s = c * chunkDocs; s < end; s += 1) {
      const id = ms._documentIds.get(s);
      if (id !== undefined) parts.push(`${s},${JSON.stringify(id)},${JSON.stringify(ms._fieldLength.get(s) ?? [])}`);
    }
    docParts.set(c, parts);
    if (due()) yield;
  }
  // Postings: a list no longer than the dirty ranges is walked; a longer one is probed per dirty short id.
  const termParts = new Map<number, string[]>(dirty.map((c) => [c, []]));
  const ofTerm = new Map<number, string[]>();
  const flush = (c: number, fieldId: number, buf: number[]) => {
    if (buf.length === 0) return;
    let parts = ofTerm.get(c);
    if (!parts) ofTerm.set(c, (parts = []));
    parts.push(`${fieldId},[${buf.join(',')}]`);
  };
  if (dirty.length > 0) {
    for (const [term, fields] of ms._index) {
      const fieldIds = [...fields.keys()].sort((a, b) => a - b);
      for (const fieldId of fieldIds) {
        const postings = fields.get(fieldId)!;
        if (full || postings.size <= probeCost) {
          let current = -1;
          let buf: number[] | null = null;
          for (const [s, tf] of postings) {
            const c = Math.floor(s / chunkDocs);
            if (c !== current) {
              if (buf) flush(current, fieldId, buf);
              current = c;
              buf = isDirty[c] ? [] : null;
            }
            if (buf) buf.push(s, tf);
          }
          if (buf) flush(current, fieldId, buf);
        } else {
          for (const c of dirty) {
            const buf: number[] = [];
            const end = Math.min((c + 1) * chunkDocs, nextId);
            for (let s = c * chunkDocs; s < end; s += 1) {
              const tf = postings.get(s);
              if (tf !== undefined) buf.push(s, tf);
            }
            flush(c, fieldId, buf);
          }
        }
      }
      if (ofTerm.size > 0) {
        const name = JSON.stringify(term);
        for (const [c, parts] of ofTerm) termParts.get(c)!.push(`[${name},${parts.join(',')}]`);
        ofTerm.clear();
      }
      if (due()) yield;
    }
  }
  const changed = new Map<number, string>();
  const emptied: number[] = [];
  for (const c of dirty) {
    const d = docParts.get(c)!;
    const t = termParts.get(c)!;
    if (d.length === 0 && t.length === 0) emptied.push(c);
    else changed.set(c, `{"d":[${d.join(',')}],"t":[${t.join(',')}]}`);
    if (due()) yield;
  }
  const head: LexicalSnapshotHead = {
    documentCount: ms._documentCount,
    nextId,
    fieldIds: { ...ms._fieldIds },
    averageFieldLength: [...ms._avgFieldLength],
    dirtCount: ms._dirtCount,
  };
  const gensAt = (gen: number) => {
    const gens = new Map(full ? [] : before!.gens);
    for (const c of emptied) gens.delete(c);
    for (const c of changed.keys()) gens.set(c, gen);
    return gens;
  };
  return {
    full,
    changed,
    head,
    records(gen, textVersion, version) {
      const chunks = [...gensAt(gen)].sort((a, b) => a[0] - b[0]);
      const manifest: LexicalManifestRecord = { key: 'lexical', gen, textVersion, version, chunkDocs, head, chunks };
      return {
        put: [...[...changed].map(([c, json]): LexicalChunkRecord => ({ key: lexicalChunkKey(c), type: 'lexical-chunk', gen, json })), manifest],
        remove: full ? [] : emptied.filter((c) => before!.gens.has(c)).map(lexicalChunkKey),
        clearChunks: full,
      };
    },
    commit(gen) {
      persisted.set(ms, { chunkDocs, nextId, documentCount: head.documentCount, dirtCount: head.dirtCount, docs, gens: gensAt(gen) });
    },
  };
}

/**
 * The chunks of `ms` to write (see module doc), serialized in slices of about `sliceMs` of CPU
 * time with `await pause()` between them. Waits for a vacuum MiniSearch is running first. The index
 * must not change until it resolves (the store runs it inside its write queue).
 * @param ms a `LexicalIndex`'s MiniSearch (7.2.0).
 * @param chunkDocs short ids per chunk (`LEXICAL_CHUNK_DOCS`; another value than the last write's makes a full write).
 */
export async function serializeChunks(
  ms: MiniSearch<never>,
  pause: () => Promise<void>,
  sliceMs: number,
  chunkDocs = LEXICAL_CHUNK_DOCS,
): Promise<LexicalChunks> {
  const internals = ms as unknown as Internals;
  while (internals._currentVacuum) await internals._currentVacuum;
  let deadline = performance.now() + sliceMs;
  const steps = build(internals, chunkDocs, () => performance.now() >= deadline);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
    deadline = performance.now() + sliceMs;
  }
}

/**
 * `serializeChunks` in one synchronous step (inside a Dexie transaction: a rebuild writes a freshly
 * built index, which no vacuum can be running on).
 */
export function serializeChunksSync(ms: MiniSearch<never>, chunkDocs = LEXICAL_CHUNK_DOCS): LexicalChunks {
  const steps = build(ms as unknown as Internals, chunkDocs, () => false);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Reads records of `memoryIndex` by key (`undefined` for a missing one), in the order asked. */
export type ChunkReader = (keys: string[]) => Promise<Array<MemoryIndexRecord | undefined>>;

/** Inserts `fieldId` into `fields` keeping the field ids ascending (as MiniSearch's JSON restores them). */
function insertField(fields: TermFields, fieldId: number, postings: Map<number, number>): void {
  let ordered = true;
  for (const f of fields.keys()) if (f > fieldId) ordered = false;
  fields.set(fieldId, postings);
  if (ordered) return;
  const entries = [...fields].sort((a, b) => a[0] - b[0]);
  fields.clear();
  for (const [f, p] of entries) fields.set(f, p);
}

/**
 * Fills `ms` — a MiniSearch restored from `manifest.head` with no document and no term — from the
 * chunks `manifest` lists, read through `read` (`CHUNKS_PER_READ` per request, `CHUNKS_PER_WINDOW`
 * read together before they are parsed), each parsed and merged
 * in slices of about `sliceMs` of CPU time with `await pause()` between them. Afterwards a write of
 * `ms` rewrites only what changes from here (`serializeChunks`).
 * @throws TornLexicalSnapshotError (rejects) when a chunk is missing, was written at another
 *   generation than the manifest lists, or the documents disagree with `head.documentCount`;
 *   SyntaxError when a chunk is not JSON. `ms` is unusable then.
 */
export async function restoreChunks(
  ms: MiniSearch<never>,
  manifest: LexicalManifestRecord,
  read: ChunkReader,
  pause: () => Promise<void>,
  sliceMs: number,
): Promise<void> {
  const m = ms as unknown as Internals;
  const { chunks, chunkDocs } = manifest;
  const keys = chunks.map(([c]) => lexicalChunkKey(c));
  const docs = new Map<number, number>();
  let deadline = performance.now() + sliceMs;
  const readFrom = (i: number) => {
    const p = read(keys.slice(i, i + CHUNKS_PER_READ));
    p.catch(() => undefined); // awaited below; no unhandled rejection if a torn chunk stops the restore first
    return p;
  };
  let window: Array<MemoryIndexRecord | undefined> = [];
  let windowStart = 0;
  for (let i = 0; i < keys.length; i += CHUNKS_PER_READ) {
    if (i >= windowStart + window.length) {
      const reads: Promise<Array<MemoryIndexRecord | undefined>>[] = [];
      for (let j = i; j < Math.min(keys.length, i + CHUNKS_PER_WINDOW); j += CHUNKS_PER_READ) reads.push(readFrom(j));
      window = (await Promise.all(reads)).flat();
      windowStart = i;
    }
    const records = window.slice(i - windowStart, i - windowStart + CHUNKS_PER_READ);
    for (let j = 0; j < records.length; j += 1) {
      const [chunk, gen] = chunks[i + j]!;
      const r = records[j];
      if (!r || !('type' in r) || r.type !== 'lexical-chunk') throw new TornLexicalSnapshotError(`chunk ${chunk} is missing`);
      if (r.gen !== gen) throw new TornLexicalSnapshotError(`chunk ${chunk} is of generation ${r.gen}, not ${gen}`);
      const parsed = JSON.parse(r.json) as { d: Array<number | string | number[]>; t: Array<Array<string | number | number[]>> };
      const d = parsed.d;
      for (let k = 0; k < d.length; k += 3) {
        const shortId = d[k] as number;
        const id = d[k + 1] as string;
        m._documentIds.set(shortId, id);
        m._idToShortId.set(id, shortId);
        m._fieldLength.set(shortId, d[k + 2] as number[]);
      }
      if (d.length > 0) docs.set(chunk, d.length / 3);
      if (performance.now() >= deadline) {
        await pause();
        deadline = performance.now() + sliceMs;
      }
      for (const entry of parsed.t) {
        const term = entry[0] as string;
        let fields = m._index.get(term);
        if (!fields) m._index.set(term, (fields = new Map()));
        for (let k = 1; k < entry.length; k += 2) {
          const fieldId = entry[k] as number;
          const list = entry[k + 1] as number[];
          let postings = fields.get(fieldId);
          if (!postings) insertField(fields, fieldId, (postings = new Map()));
          for (let q = 0; q < list.length; q += 2) postings.set(list[q]!, list[q + 1]!);
        }
        if (performance.now() >= deadline) {
          await pause();
          deadline = performance.now() + sliceMs;
        }
      }
    }
  }
  if (m._documentIds.size !== manifest.head.documentCount) {
    throw new TornLexicalSnapshotError(`${m._documentIds.size} documents in the chunks, ${manifest.head.documentCount} in the manifest`);
  }
  persisted.set(ms, {
    chunkDocs,
    nextId: manifest.head.nextId,
    documentCount: manifest.head.documentCount,
    dirtCount: manifest.head.dirtCount,
    docs,
    gens: new Map(chunks),
  });
}
