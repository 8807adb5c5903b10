/**
 * Records of the persisted long-term index layout (see `../blocks.ts` for the layout): the
 * record shapes of the `memoryIndex` table, their keys, empty / copy-on-write constructors of
 * meta and vector blocks, the in-memory segment shape, and the scan's hit and filter types.
 */
import { SLOT_CLASSIFIER_VERSION } from '../../slots';

import { decodeBlock, encodeSlot, quantizeSlot } from './f16';

/** Slots per block (a 384-d vector block is 384 KiB). */
export const BLOCK_SLOTS = 256;

/** Header record: generation, row count, ids changed since the lexical snapshot. */
export interface IndexHeaderRecord {
  key: 'header';
  /** Incremented by every committed write of the store (and by every repair). */
  gen: number;
  /** Number of rows in `db.memories` the blocks describe. */
  count: number;
  /** Memory ids an older build kept here (all of them since the lexical snapshot, rewritten whole on every write); this build never appends to it (a `DirtyIdsRecord` per write instead), replays it on open and clears it with the snapshot. */
  dirty: string[];
  /**
   * `INDEXED_TEXT_VERSION` the vectors were embedded from (absent: version 1, the bare text). An
   * older one makes the store re-embed every vector once (`IndexSync.staleVectors`).
   */
  textVersion?: number;
}

/**
 * Lexical snapshot record in its single-record form: `LexicalIndex.toJSON()` as a string, taken at
 * header generation `gen`. Written before chunked snapshots (`LexicalManifestRecord`); still read
 * (`LexicalIndex.fromJSONAsync`), and replaced by a chunked snapshot at the next snapshot write.
 */
export interface LexicalSnapshotRecord {
  key: 'lexical';
  gen: number;
  json: string;
  /** `INDEXED_TEXT_VERSION` of its documents (absent: version 1); another version is rebuilt from the rows. */
  textVersion?: number;
}

/**
 * Lexical snapshot record in its chunked form (`../lexical-snapshot.ts`): MiniSearch's scalar fields
 * (`head`) and the list of chunk records that hold its documents and postings, each with the
 * generation it was written at. Taken at header generation `gen`; a chunk that is missing or has
 * another generation than listed here makes the snapshot torn (`TornLexicalSnapshotError`), and the
 * store rebuilds the lexical index from the rows.
 */
export interface LexicalManifestRecord {
  key: 'lexical';
  gen: number;
  /** `INDEXED_TEXT_VERSION` of its documents; another version is rebuilt from the rows. */
  textVersion: number;
  /** `LEXICAL_SNAPSHOT_VERSION` of the index it was taken from (fields, tokenizer); another one is rebuilt. */
  version: number;
  /** Short document ids per chunk: chunk `c` holds the documents (and their postings) with short ids in `[c·chunkDocs, (c+1)·chunkDocs)`. */
  chunkDocs: number;
  /** MiniSearch's scalar fields (`LexicalSnapshotHead`). */
  head: LexicalSnapshotHead;
  /** `[chunk number, generation it was written at]`, ascending by chunk number; empty chunks are not stored. */
  chunks: Array<[number, number]>;
}

/** MiniSearch 7.2's scalar serialized fields (the part of its `toJSON` that is not per document or per term). */
export interface LexicalSnapshotHead {
  documentCount: number;
  nextId: number;
  fieldIds: Record<string, number>;
  averageFieldLength: number[];
  dirtCount: number;
}

/** One chunk of a chunked lexical snapshot (key `lexicalChunkKey(chunk)`), written at generation `gen`; `json` is described in `../lexical-snapshot.ts`. */
export interface LexicalChunkRecord {
  key: string;
  type: 'lexical-chunk';
  gen: number;
  json: string;
}

/** One meta block (see module doc). Times are ms epoch, `NaN` = `null`. */
export interface MetaBlockRecord {
  key: string;
  type: 'meta';
  namespace: string;
  block: number;
  ids: (string | null)[];
  createdAt: Float64Array;
  updatedAt: Float64Array;
  validFrom: Float64Array;
  validUntil: Float64Array;
  importance: Float32Array;
  pinned: Uint8Array;
  /** The row's `current` flag per slot (0 when free). Absent in blocks written before it existed. */
  current?: Uint8Array;
  /** `normalizeMemoryText` of the text per slot (`null` when free). Absent in blocks written before it existed. */
  normalized?: (string | null)[];
  /** Memory kind per slot (`null` when free). */
  kinds: (string | null)[];
  /** `subject:slot` label of the text per slot (`memorySlotLabel`), `null` when about no slot or free. */
  slots: (string | null)[];
  /**
   * Whom the memory's statements are about per slot (`memorySubject` of `../subject.ts`: a relation
   * label or `user`), `null` when it states nothing or the slot is free. Computed when the memory is
   * written, so a search reads it instead of classifying every candidate. Absent in blocks written
   * before it existed (the store then rebuilds the layout from the rows).
   */
  subjects?: (string | null)[];
  /**
   * `SLOT_CLASSIFIER_VERSION` the `slots` and `subjects` columns were computed with (absent: version 1);
   * another version makes the store rebuild the layout from the rows.
   */
  slotsVersion?: number;
}

/** One vector block as the index holds it in memory (see module doc). */
export interface VectorBlockRecord {
  key: string;
  type: 'vector';
  namespace: string;
  model: string;
  block: number;
  /** Floats per vector. */
  dim: number;
  ids: (string | null)[];
  /** `BLOCK_SLOTS · dim` floats; slot `s` is `vectors[s·dim … (s+1)·dim)`. Unit vectors decoded from f16 (`./f16.ts`). */
  vectors: Float32Array;
  /** Per slot, the factor that turns the slot's f16 components into its unit vector (`quantizeSlot`; 0 when free). */
  scales: Float32Array;
  /** Meta slot (in the namespace's meta segment) of each vector slot, −1 when free. */
  meta: Int32Array;
  /** The memory's `validUntil` (ms epoch, `NaN` = none) aligned with the slots: the validity mask the scan reads. */
  validUntil: Float64Array;
}

/** A vector block as schema v3 stored it: f32 vectors, no scales (read once by the v4 upgrade). */
export type V3VectorBlockRecord = Omit<VectorBlockRecord, 'scales'>;

/**
 * A vector block as stored since schema v4: the vectors as f16 bit patterns (`halves`) with one
 * f32 factor per slot (`scales`) instead of f32 components — half the bytes on disk; decoded to the
 * in-memory `VectorBlockRecord` when read (`decodeVectorBlock`). The other columns are the same.
 */
export interface StoredVectorBlockRecord extends Omit<VectorBlockRecord, 'vectors'> {
  /** `BLOCK_SLOTS · dim` IEEE 754 binary16 bit patterns; slot `s` is `halves[s·dim … (s+1)·dim)`. */
  halves: Uint16Array;
}

/**
 * Any record of the `memoryIndex` table. A vector block is stored as a `StoredVectorBlockRecord`
 * (v4); a `V3VectorBlockRecord` (f32 `vectors`) is what v3 stored, converted by the v4 upgrade.
 */
/**
 * The ids one write changed (added, changed, removed) since the lexical snapshot: one record per
 * committed write (`writeIndexed` of `store/index-sync.ts`), written in its transaction and deleted with the others when the
 * snapshot is written (`writeSnapshot`) or the layout rebuilt (`writeLayout` clears the table). The
 * open replays the union of every record's `ids` and the header's `dirty` (where an older build kept
 * them all, rewritten whole on every write: at 20k memories after an import, 1 MB a write).
 */
export interface DirtyIdsRecord {
  key: string;
  /** The generation the write committed. */
  gen: number;
  /** The memory ids it changed, each once. */
  ids: string[];
}

export type MemoryIndexRecord =
  | IndexHeaderRecord
  | DirtyIdsRecord
  | LexicalSnapshotRecord
  | LexicalManifestRecord
  | LexicalChunkRecord
  | MetaBlockRecord
  | StoredVectorBlockRecord
  | V3VectorBlockRecord;

/** Whether a `memoryIndex` record is a vector block (stored f16, or v3 f32). */
export const isVectorRecord = (r: MemoryIndexRecord): r is StoredVectorBlockRecord | V3VectorBlockRecord => 'type' in r && r.type === 'vector';

/**
 * The stored form (v4) of a vector block: its vectors as f16 bits (`encodeSlot` per used slot).
 * The vectors the index holds were quantized when put (`IndexBatch.put` → `quantizeSlot`), so
 * nothing is lost: `decodeVectorBlock` gives the same floats back. A v3 block (f32, no scales) is
 * quantized here (the v4 upgrade). The other columns are shared with `b` (IndexedDB copies on write).
 */
export function encodeVectorBlock(b: VectorBlockRecord | V3VectorBlockRecord): StoredVectorBlockRecord {
  const { vectors, ...rest } = b;
  const halves = new Uint16Array(vectors.length);
  if (!('scales' in b)) {
    const scales = new Float32Array(BLOCK_SLOTS);
    const out = new Float32Array(vectors.length);
    for (let s = 0; s < BLOCK_SLOTS; s += 1) if (b.ids[s]) quantizeSlot(vectors.subarray(s * b.dim, (s + 1) * b.dim), s, b.dim, halves, scales, out);
    return { ...rest, scales, halves };
  }
  for (let s = 0; s < BLOCK_SLOTS; s += 1) if (b.ids[s]) encodeSlot(vectors, s, b.dim, b.scales, halves);
  return { ...rest, scales: b.scales, halves };
}

/** The in-memory form of a stored vector block (f16 bits decoded with their scales, `decodeBlock`; free slots are zeros). */
export function decodeVectorBlock(r: StoredVectorBlockRecord): VectorBlockRecord {
  const { halves, ...rest } = r;
  return { ...rest, vectors: decodeBlock(halves, r.scales) };
}

/** What the index keeps about one memory (a subset of `MemoryRecord`). */
export interface IndexedMemory {
  id: string;
  namespace: string;
  createdAt: number;
  updatedAt: number;
  validFrom: number | null;
  validUntil: number | null;
  importance: number;
  pinned: boolean;
  /** The row's `current` flag (1 while valid at its last write). */
  current: 0 | 1;
  kind: string;
  /** `memorySlotLabel` of the text. */
  slot: string | null;
  /** `memorySubject` of the normalized text (`null`: it states nothing). */
  subject: string | null;
  /** `normalizeMemoryText` of the text. */
  normalized: string;
}

/** Metadata of one memory read back from the columns. */
export type MemoryMeta = Omit<IndexedMemory, 'id'>;

/** Key prefix of the meta blocks: their keys sort between it and `VECTOR_KEY_PREFIX` (one key range reads them all). */
export const META_KEY_PREFIX = 'm|';
/** Key of meta block `block` of `namespace` (`m|<namespace>|<block>`). */
export const metaKey = (namespace: string, block: number) => `${META_KEY_PREFIX}${encodeURIComponent(namespace)}|${block}`;
/**
 * Key prefix of the vector blocks. Every other record's key sorts below it (`header`, `lexical`,
 * `m|…`), so the store can read everything but the vectors first (`where('key').below(…)`).
 */
export const VECTOR_KEY_PREFIX = 'v|';
/** Key of vector block `block` of `model` + `namespace` (`v|<model>|<namespace>|<block>`). */
export const vectorKey = (model: string, namespace: string, block: number) =>
  `${VECTOR_KEY_PREFIX}${encodeURIComponent(model)}|${encodeURIComponent(namespace)}|${block}`;
/** Map key of the vector segment of `model` + `namespace`. */
export const segmentKey = (model: string, namespace: string) => `${model}\u0000${namespace}`;
/** A nullable time (ms epoch) as a float column value (`NaN` for `null`). */
export const toCol = (v: number | null) => (v === null ? NaN : v);
/** A float column value back to a nullable time (ms epoch). */
export const fromCol = (v: number) => (Number.isNaN(v) ? null : v);

/** An empty meta block (`BLOCK_SLOTS` free slots). */
export function emptyMetaBlock(namespace: string, block: number): MetaBlockRecord {
  return {
    key: metaKey(namespace, block),
    type: 'meta',
    namespace,
    block,
    ids: new Array<string | null>(BLOCK_SLOTS).fill(null),
    createdAt: new Float64Array(BLOCK_SLOTS),
    updatedAt: new Float64Array(BLOCK_SLOTS),
    validFrom: new Float64Array(BLOCK_SLOTS).fill(NaN),
    validUntil: new Float64Array(BLOCK_SLOTS).fill(NaN),
    importance: new Float32Array(BLOCK_SLOTS),
    pinned: new Uint8Array(BLOCK_SLOTS),
    current: new Uint8Array(BLOCK_SLOTS),
    normalized: new Array<string | null>(BLOCK_SLOTS).fill(null),
    kinds: new Array<string | null>(BLOCK_SLOTS).fill(null),
    slots: new Array<string | null>(BLOCK_SLOTS).fill(null),
    subjects: new Array<string | null>(BLOCK_SLOTS).fill(null),
    slotsVersion: SLOT_CLASSIFIER_VERSION,
  };
}

/** A copy of a meta block for copy-on-write; adds the `current` / `normalized` / `subjects` columns an older block lacks. */
export function copyMetaBlock(b: MetaBlockRecord): MetaBlockRecord {
  return {
    ...b,
    ids: b.ids.slice(),
    createdAt: b.createdAt.slice(),
    updatedAt: b.updatedAt.slice(),
    validFrom: b.validFrom.slice(),
    validUntil: b.validUntil.slice(),
    importance: b.importance.slice(),
    pinned: b.pinned.slice(),
    current: b.current?.slice() ?? new Uint8Array(BLOCK_SLOTS),
    normalized: b.normalized?.slice() ?? new Array<string | null>(BLOCK_SLOTS).fill(null),
    kinds: b.kinds.slice(),
    slots: b.slots.slice(),
    subjects: b.subjects?.slice() ?? new Array<string | null>(BLOCK_SLOTS).fill(null),
  };
}

/** An empty vector block of `dim`-float slots. */
export function emptyVectorBlock(model: string, namespace: string, block: number, dim: number): VectorBlockRecord {
  return {
    key: vectorKey(model, namespace, block),
    type: 'vector',
    namespace,
    model,
    block,
    dim,
    ids: new Array<string | null>(BLOCK_SLOTS).fill(null),
    vectors: new Float32Array(BLOCK_SLOTS * dim),
    scales: new Float32Array(BLOCK_SLOTS),
    meta: new Int32Array(BLOCK_SLOTS).fill(-1),
    validUntil: new Float64Array(BLOCK_SLOTS).fill(NaN),
  };
}

/** A copy of a vector block for copy-on-write. */
export const copyVectorBlock = (b: VectorBlockRecord): VectorBlockRecord => ({
  ...b,
  ids: b.ids.slice(),
  vectors: b.vectors.slice(),
  scales: b.scales.slice(),
  meta: b.meta.slice(),
  validUntil: b.validUntil.slice(),
});

/** The slots of one namespace (meta) or one model + namespace (vectors). */
export interface Segment<B> {
  blocks: B[];
  /** Free slots below `next` (a stack). */
  free: number[];
  /** One past the highest slot ever used. */
  next: number;
  /** Occupied slots. */
  live: number;
}

/** The meta segment of one namespace. */
export type MetaSegment = Segment<MetaBlockRecord> & { namespace: string };
/** The vector segment of one model + namespace (all vectors `dim` floats). */
export type VectorSegment = Segment<VectorBlockRecord> & { namespace: string; model: string; dim: number };

/** A vector hit: memory id and cosine similarity (dot product of unit vectors, −1..1). */
export interface BlockHit {
  id: string;
  similarity: number;
}

/** Which memories a vector scan may return; checked per slot on the meta columns (no id sets). */
export interface ScanFilter {
  /** Reference time (ms epoch): a memory is valid when `validUntil` is null or after it. */
  now: number;
  /** Also memories whose validity ended. */
  includeInvalid?: boolean;
  /** Only memories whose validFrom or createdAt is in `[start, end)` (ms epoch). */
  range?: { start: number; end: number } | null;
}

/**
 * The live index's state an `IndexBatch` reads and, on `commit()`, changes (`BlockIndex._internals()`):
 * the segments by namespace / model + namespace, the id → slot maps, and the segment getters.
 */
export interface BlockIndexInternals {
  metas: Map<string, MetaSegment>;
  vectorSegs: Map<string, VectorSegment>;
  metaLoc: Map<string, { namespace: string; slot: number }>;
  vecLoc: Map<string, { model: string; namespace: string; slot: number }>;
  /** namespace → slot label (`memorySlotLabel`) → meta slots (positions in the namespace's meta segment) of the memories about it (kept on load and commit). */
  slotMembers: Map<string, Map<string, Set<number>>>;
  metaSegment: (namespace: string) => MetaSegment;
  vectorSegment: (model: string, namespace: string, dim: number) => VectorSegment;
  /** Recodes the changed slots of the segment's quantized mirror, when it has one (after a commit swapped its blocks). */
  refreshMirror: (seg: VectorSegment) => void;
}
