/**
 * The persisted layout of the long-term index (Dexie table `memoryIndex`, schema v3): what a
 * search needs about every memory, in a few fixed-size binary blocks that open without a rebuild.
 *
 * - Meta blocks (`m|<namespace>|<n>`): per namespace, `BLOCK_SLOTS` slots of columns aligned by
 *   slot — memory id, createdAt / updatedAt / validFrom / validUntil (ms epoch as float64; `NaN`
 *   for `null`), importance (float32), pinned (uint8), the row's `current` flag (uint8), kind, slot label
 *   (`memorySlotLabel`) and the normalized text (`normalizeMemoryText`). Filtering (namespace, validity, time
 *   range), recency/importance weighting and the memory manager's catalog (`BlockIndex.catalog`:
 *   list, filter, substring match) read these columns, never the memory rows. A meta block written
 *   before the `current` / `normalized` columns existed is detected on open (`BlockIndex.outdated`)
 *   and the layout repaired from the rows.
 * - Vector blocks (`v|<model>|<namespace>|<n>`): per embedding model and namespace, `BLOCK_SLOTS`
 *   slots of L2-normalized f32 vectors in one contiguous `Float32Array` (`slot · dim` floats),
 *   the memory id of each slot, the slot's meta slot, and `validUntil` again, aligned with the
 *   vectors (the validity mask of the scan; time ranges are read through the meta slot).
 *   f32 is kept (not int8/f16): the exact dot product over it is what makes recall@10 = 1.0.
 * - The header (`header`): a generation counter bumped by every write, the number of memory rows
 *   the blocks describe, and the ids changed since the lexical snapshot (`dirty`).
 * - The lexical snapshot (`lexical`): MiniSearch's JSON at a generation (see `LexicalIndex`).
 *
 * In memory the blocks are the very objects read from IndexedDB: a search scans them in place.
 * Writes are copy-on-write per block (`IndexBatch`): the blocks a change touches are copied,
 * changed, written in the caller's Dexie transaction together with the memory row, and swapped
 * in only by `commit()` after that transaction committed. A failed transaction leaves the live
 * index as it was, and the persisted blocks can never disagree with the rows they were written
 * with. (Disagreement from writers that bypass the store — an import, a cleared table — is
 * detected on open by the row count and repaired: see `../store/index-sync.ts`.)
 */

import type { MemoryKind } from '../../../model/memory';
import { memorySlot } from '../slots';
import { normalizeMemoryText } from '../text';
import type { CatalogEntry } from '../types';
import { isUsableVector } from './vector';

/** Slots per block (a 384-d vector block is 384 KiB). */
export const BLOCK_SLOTS = 256;

/** Header record: generation, row count, ids changed since the lexical snapshot. */
export interface IndexHeaderRecord {
  key: 'header';
  /** Incremented by every committed write of the store (and by every repair). */
  gen: number;
  /** Number of rows in `db.memories` the blocks describe. */
  count: number;
  /** Memory ids written (added, changed, removed) since the lexical snapshot was taken. */
  dirty: string[];
}

/** Lexical snapshot record: `MiniSearch.toJSON()` as a string, taken at header generation `gen`. */
export interface LexicalSnapshotRecord {
  key: 'lexical';
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
}

/** One vector block (see module doc). */
export interface VectorBlockRecord {
  key: string;
  type: 'vector';
  namespace: string;
  model: string;
  block: number;
  /** Floats per vector. */
  dim: number;
  ids: (string | null)[];
  /** `BLOCK_SLOTS · dim` floats; slot `s` is `vectors[s·dim … (s+1)·dim)`. */
  vectors: Float32Array;
  /** Meta slot (in the namespace's meta segment) of each vector slot, −1 when free. */
  meta: Int32Array;
  /** The memory's `validUntil` (ms epoch, `NaN` = none) aligned with the slots: the validity mask the scan reads. */
  validUntil: Float64Array;
}

/** Any record of the `memoryIndex` table. */
export type MemoryIndexRecord = IndexHeaderRecord | LexicalSnapshotRecord | MetaBlockRecord | VectorBlockRecord;

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
  /** `normalizeMemoryText` of the text. */
  normalized: string;
}

/** Metadata of one memory read back from the columns. */
export type MemoryMeta = Omit<IndexedMemory, 'id'>;

const metaKey = (namespace: string, block: number) => `m|${encodeURIComponent(namespace)}|${block}`;
/**
 * Key prefix of the vector blocks. Every other record's key sorts below it (`header`, `lexical`,
 * `m|…`), so the store can read everything but the vectors first (`where('key').below(…)`).
 */
export const VECTOR_KEY_PREFIX = 'v|';
const vectorKey = (model: string, namespace: string, block: number) => `${VECTOR_KEY_PREFIX}${encodeURIComponent(model)}|${encodeURIComponent(namespace)}|${block}`;
const segmentKey = (model: string, namespace: string) => `${model}\u0000${namespace}`;
const toCol = (v: number | null) => (v === null ? NaN : v);
const fromCol = (v: number) => (Number.isNaN(v) ? null : v);

function emptyMetaBlock(namespace: string, block: number): MetaBlockRecord {
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
  };
}

function copyMetaBlock(b: MetaBlockRecord): MetaBlockRecord {
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
  };
}

function emptyVectorBlock(model: string, namespace: string, block: number, dim: number): VectorBlockRecord {
  return {
    key: vectorKey(model, namespace, block),
    type: 'vector',
    namespace,
    model,
    block,
    dim,
    ids: new Array<string | null>(BLOCK_SLOTS).fill(null),
    vectors: new Float32Array(BLOCK_SLOTS * dim),
    meta: new Int32Array(BLOCK_SLOTS).fill(-1),
    validUntil: new Float64Array(BLOCK_SLOTS).fill(NaN),
  };
}

const copyVectorBlock = (b: VectorBlockRecord): VectorBlockRecord => ({ ...b, ids: b.ids.slice(), vectors: b.vectors.slice(), meta: b.meta.slice(), validUntil: b.validUntil.slice() });

/** The slots of one namespace (meta) or one model + namespace (vectors). */
interface Segment<B> {
  blocks: B[];
  /** Free slots below `next` (a stack). */
  free: number[];
  /** One past the highest slot ever used. */
  next: number;
  /** Occupied slots. */
  live: number;
}

type MetaSegment = Segment<MetaBlockRecord> & { namespace: string };
type VectorSegment = Segment<VectorBlockRecord> & { namespace: string; model: string; dim: number };

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

/** Dot product of `q` with `dim` floats of `data` from `offset`, four accumulators. */
function dotAt(q: Float32Array, data: Float32Array, offset: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < dim; j += 4) {
    s0 += q[j]! * data[offset + j]!;
    s1 += q[j + 1]! * data[offset + j + 1]!;
    s2 += q[j + 2]! * data[offset + j + 2]!;
    s3 += q[j + 3]! * data[offset + j + 3]!;
  }
  for (; j < dim; j += 1) s0 += q[j]! * data[offset + j]!;
  return s0 + s1 + s2 + s3;
}

/**
 * Exact top-k over one contiguous `Float32Array` of `n` vectors of `dim` floats: the reference the
 * block scan is measured against (bench) and checked against (tests).
 * @returns `[index, similarity]` pairs, best first (ties: lower index first).
 */
export function exactTopK(q: Float32Array, data: Float32Array, n: number, dim: number, k: number): [number, number][] {
  const top = new TopK(k);
  let floor = -Infinity;
  for (let i = 0; i < n; i += 1) {
    const score = dotAt(q, data, i * dim, dim);
    if (score > floor) {
      top.push(i, score);
      floor = top.floor;
    }
  }
  return top.result().map(([i, , s]) => [i, s]);
}

/** Keeps the `k` best (highest score) of a stream of `(a, b)` positions, in typed arrays. */
class TopK {
  private readonly scores: Float64Array;
  private readonly as: Int32Array;
  private readonly bs: Int32Array;
  private n = 0;
  constructor(private readonly k: number) {
    this.scores = new Float64Array(Math.max(1, k));
    this.as = new Int32Array(Math.max(1, k));
    this.bs = new Int32Array(Math.max(1, k));
  }
  /** The lowest kept score once full (−∞ before). */
  get floor(): number {
    return this.n === this.k ? this.scores[this.n - 1]! : -Infinity;
  }
  push(a: number, score: number, b = 0): void {
    if (this.k <= 0 || (this.n === this.k && score <= this.scores[this.n - 1]!)) return;
    let i = this.n < this.k ? this.n++ : this.n - 1;
    while (i > 0 && this.scores[i - 1]! < score) {
      this.scores[i] = this.scores[i - 1]!;
      this.as[i] = this.as[i - 1]!;
      this.bs[i] = this.bs[i - 1]!;
      i -= 1;
    }
    this.scores[i] = score;
    this.as[i] = a;
    this.bs[i] = b;
  }
  /** `[a, b, score]`, best first. */
  result(): [number, number, number][] {
    const out: [number, number, number][] = [];
    for (let i = 0; i < this.n; i += 1) out.push([this.as[i]!, this.bs[i]!, this.scores[i]!]);
    return out;
  }
}

/**
 * The live index: meta and vector segments built from the persisted blocks, plus id → slot maps.
 * Not thread-safe: the store serializes writes; reads (search) never await in between.
 */
export class BlockIndex {
  private readonly metas = new Map<string, MetaSegment>();
  private readonly vectorSegs = new Map<string, VectorSegment>();
  /** id → namespace + meta slot. */
  private readonly metaLoc = new Map<string, { namespace: string; slot: number }>();
  /** id → model + namespace + vector slot. */
  private readonly vecLoc = new Map<string, { model: string; namespace: string; slot: number }>();
  /**
   * Whether some meta block read by `fromRecords` lacks the `current` / `normalized` columns
   * (written by an older version): the layout must be repaired from the rows before it is used.
   */
  outdated = false;

  /** Builds the live index from the records of the `memoryIndex` table (header and snapshot are ignored). */
  static fromRecords(records: Iterable<MemoryIndexRecord>): BlockIndex {
    const index = new BlockIndex();
    const metas: MetaBlockRecord[] = [];
    const vectors: VectorBlockRecord[] = [];
    for (const r of records) {
      if ('type' in r && r.type === 'meta') metas.push(r);
      else if ('type' in r && r.type === 'vector') vectors.push(r);
    }
    for (const b of metas) {
      if (!b.current || !b.normalized) index.outdated = true;
      const seg = index.metaSegment(b.namespace);
      seg.blocks[b.block] = b;
    }
    for (const b of vectors) {
      const seg = index.vectorSegment(b.model, b.namespace, b.dim);
      if (b.dim !== seg.dim) continue; // cannot happen for blocks this module wrote
      seg.blocks[b.block] = b;
    }
    for (const seg of index.metas.values()) {
      index.finish(seg, (b) => emptyMetaBlock(seg.namespace, b), (id, slot) => index.metaLoc.set(id, { namespace: seg.namespace, slot }));
    }
    for (const seg of index.vectorSegs.values()) {
      index.finish(seg, (b) => emptyVectorBlock(seg.model, seg.namespace, b, seg.dim), (id, slot) => index.vecLoc.set(id, { model: seg.model, namespace: seg.namespace, slot }));
    }
    return index;
  }

  /** Fills holes, computes `next`, `live`, the free list and the id maps of a loaded segment. */
  private finish<B extends { ids: (string | null)[] }>(seg: Segment<B>, empty: (block: number) => B, put: (id: string, slot: number) => void): void {
    for (let b = 0; b < seg.blocks.length; b += 1) seg.blocks[b] ??= empty(b);
    let next = 0;
    for (let b = 0; b < seg.blocks.length; b += 1) {
      const ids = seg.blocks[b]!.ids;
      for (let s = 0; s < BLOCK_SLOTS; s += 1) {
        const id = ids[s];
        if (id) {
          put(id, b * BLOCK_SLOTS + s);
          seg.live += 1;
          next = b * BLOCK_SLOTS + s + 1;
        }
      }
    }
    seg.next = next;
    for (let slot = next - 1; slot >= 0; slot -= 1) if (!seg.blocks[slot >> 8]!.ids[slot & 255]) seg.free.push(slot);
  }

  private metaSegment(namespace: string): MetaSegment {
    let seg = this.metas.get(namespace);
    if (!seg) this.metas.set(namespace, (seg = { namespace, blocks: [], free: [], next: 0, live: 0 }));
    return seg;
  }

  private vectorSegment(model: string, namespace: string, dim: number): VectorSegment {
    const key = segmentKey(model, namespace);
    let seg = this.vectorSegs.get(key);
    if (!seg) this.vectorSegs.set(key, (seg = { namespace, model, dim, blocks: [], free: [], next: 0, live: 0 }));
    return seg;
  }

  /** Number of memories indexed (all namespaces). */
  get size(): number {
    return this.metaLoc.size;
  }

  /** Every indexed memory id. */
  ids(): IterableIterator<string> {
    return this.metaLoc.keys();
  }

  /** Whether `id` is indexed. */
  has(id: string): boolean {
    return this.metaLoc.has(id);
  }

  /** Number of memories indexed in `namespace`. */
  count(namespace: string): number {
    return this.metas.get(namespace)?.live ?? 0;
  }

  /** Metadata of `id` from the columns, or `undefined`. */
  meta(id: string): MemoryMeta | undefined {
    const loc = this.metaLoc.get(id);
    if (!loc) return undefined;
    const b = this.metas.get(loc.namespace)!.blocks[loc.slot >> 8]!;
    const s = loc.slot & 255;
    return {
      namespace: loc.namespace,
      createdAt: b.createdAt[s]!,
      updatedAt: b.updatedAt[s]!,
      validFrom: fromCol(b.validFrom[s]!),
      validUntil: fromCol(b.validUntil[s]!),
      importance: b.importance[s]!,
      pinned: b.pinned[s] === 1,
      current: b.current?.[s] === 1 ? 1 : 0,
      kind: b.kinds[s]!,
      slot: b.slots[s] ?? null,
      normalized: b.normalized?.[s] ?? '',
    };
  }

  /**
   * What the memory manager lists and filters by, for every memory of `namespace`, from the meta
   * columns (no row is read): O(namespace size). Order: by slot.
   */
  catalog(namespace: string): CatalogEntry[] {
    const seg = this.metas.get(namespace);
    if (!seg) return [];
    const out: CatalogEntry[] = [];
    for (const b of seg.blocks) {
      for (let s = 0; s < BLOCK_SLOTS; s += 1) {
        const id = b.ids[s];
        if (!id) continue;
        out.push({ id, kind: b.kinds[s] as MemoryKind, current: b.current?.[s] === 1 ? 1 : 0, pinned: b.pinned[s] === 1, updatedAt: b.updatedAt[s]!, normalized: b.normalized?.[s] ?? '' });
      }
    }
    return out;
  }

  /**
   * Currently valid memories of `namespace` whose slot label is `label` (and kind in `kinds`),
   * newest (`updatedAt`) first, ties by id. O(namespace size) on the columns, no row read.
   */
  inSlot(namespace: string, label: string, now: number, kinds: ReadonlySet<string> | null): { id: string; updatedAt: number }[] {
    const seg = this.metas.get(namespace);
    if (!seg) return [];
    const out: { id: string; updatedAt: number }[] = [];
    for (const b of seg.blocks) {
      for (let s = 0; s < BLOCK_SLOTS; s += 1) {
        if (b.slots[s] !== label || !b.ids[s] || !acceptsSlot(b, s, { now })) continue;
        if (kinds && !kinds.has(b.kinds[s]!)) continue;
        out.push({ id: b.ids[s]!, updatedAt: b.updatedAt[s]! });
      }
    }
    return out.sort((x, y) => y.updatedAt - x.updatedAt || x.id.localeCompare(y.id));
  }

  /**
   * Whether `id` passes a scan filter and is in `namespace`: O(1), on the columns.
   */
  accepts(id: string, namespace: string, filter: ScanFilter): boolean {
    const loc = this.metaLoc.get(id);
    if (!loc || loc.namespace !== namespace) return false;
    const b = this.metas.get(namespace)!.blocks[loc.slot >> 8]!;
    return acceptsSlot(b, loc.slot & 255, filter);
  }

  /** Ids of `namespace` that pass `filter` (O(namespace size): only for the rare time-range-only answer). */
  idsWhere(namespace: string, filter: ScanFilter): string[] {
    const seg = this.metas.get(namespace);
    if (!seg) return [];
    const out: string[] = [];
    for (const b of seg.blocks) for (let s = 0; s < BLOCK_SLOTS; s += 1) if (b.ids[s] && acceptsSlot(b, s, filter)) out.push(b.ids[s]!);
    return out;
  }

  /** The model and a copy of the vector of `id`, or `null`. */
  vector(id: string): { model: string; vector: Float32Array } | null {
    const loc = this.vecLoc.get(id);
    if (!loc) return null;
    const seg = this.vectorSegs.get(segmentKey(loc.model, loc.namespace))!;
    const offset = (loc.slot & 255) * seg.dim;
    return { model: loc.model, vector: seg.blocks[loc.slot >> 8]!.vectors.slice(offset, offset + seg.dim) };
  }

  /** Number of vectors per model (all namespaces). */
  vectorCounts(): Map<string, { count: number; dim: number }> {
    const out = new Map<string, { count: number; dim: number }>();
    for (const seg of this.vectorSegs.values()) {
      if (seg.live === 0) continue;
      const c = out.get(seg.model);
      out.set(seg.model, { count: (c?.count ?? 0) + seg.live, dim: seg.dim });
    }
    return out;
  }

  /** Whether `id` has a vector of `model`. */
  hasVector(id: string, model: string): boolean {
    return this.vecLoc.get(id)?.model === model;
  }

  /**
   * Exact nearest neighbours of `q` (unit length, `model`'s dimension) among the vectors of
   * `model` in `namespace` that pass `filter`: one pass over the contiguous blocks, validity and
   * time range read from the meta columns per slot. O(1) set-up.
   * @returns at most `k` hits, best first (ties: lower slot first); `[]` when the dimension differs.
   */
  search(model: string, namespace: string, q: Float32Array, k: number, filter: ScanFilter): BlockHit[] {
    const seg = this.vectorSegs.get(segmentKey(model, namespace));
    const metaSeg = this.metas.get(namespace);
    if (!seg || !metaSeg || seg.live === 0 || q.length !== seg.dim || k <= 0) return [];
    const dim = seg.dim;
    const top = new TopK(k);
    const checkValidity = filter.includeInvalid !== true;
    const now = filter.now;
    const range = filter.range ?? null;
    let floor = -Infinity;
    for (let b = 0; b < seg.blocks.length; b += 1) {
      const block = seg.blocks[b]!;
      const data = block.vectors;
      const meta = block.meta;
      const until = block.validUntil;
      const end = Math.min(BLOCK_SLOTS, seg.next - b * BLOCK_SLOTS);
      for (let s = 0; s < end; s += 1) {
        const m = meta[s]!;
        if (m < 0) continue;
        if (checkValidity) {
          const u = until[s]!;
          if (u <= now) continue; // NaN (no end) compares false: valid
        }
        if (range && !acceptsSlot(metaSeg.blocks[m >> 8]!, m & 255, filter)) continue;
        const score = dotAt(q, data, s * dim, dim);
        if (score > floor) {
          top.push(b, score, s);
          floor = top.floor;
        }
      }
    }
    return top.result().map(([b, s, similarity]) => ({ id: seg.blocks[b]!.ids[s]!, similarity }));
  }

  /** Starts a batch of changes (see `IndexBatch`). */
  batch(): IndexBatch {
    return new IndexBatch(this);
  }

  /** @internal used by `IndexBatch`. */
  _internals() {
    return { metas: this.metas, vectorSegs: this.vectorSegs, metaLoc: this.metaLoc, vecLoc: this.vecLoc, metaSegment: (ns: string) => this.metaSegment(ns), vectorSegment: (m: string, ns: string, d: number) => this.vectorSegment(m, ns, d) };
  }
}

/** Whether slot `s` of meta block `b` passes `filter`. */
function acceptsSlot(b: MetaBlockRecord, s: number, filter: ScanFilter): boolean {
  if (!filter.includeInvalid) {
    const until = b.validUntil[s]!;
    if (!Number.isNaN(until) && until <= filter.now) return false;
  }
  const range = filter.range;
  if (range) {
    const from = b.validFrom[s]!;
    const created = b.createdAt[s]!;
    const fromIn = !Number.isNaN(from) && from >= range.start && from < range.end;
    if (!fromIn && !(created >= range.start && created < range.end)) return false;
  }
  return true;
}

/**
 * A set of changes to the index, prepared without touching the live index: `put` / `remove`
 * copy the blocks they change; `records()` are the blocks to write (in the same Dexie
 * transaction as the memory rows); `commit()` swaps them into the live index after that
 * transaction committed. Segments' free lists and slot maps change only on `commit()` too.
 */
export class IndexBatch {
  private readonly touched = new Map<string, MetaBlockRecord | VectorBlockRecord>();
  private readonly heads = new Map<object, { free: number[]; next: number; live: number }>();
  private readonly metaLoc = new Map<string, { namespace: string; slot: number } | null>();
  private readonly vecLoc = new Map<string, { model: string; namespace: string; slot: number } | null>();
  private readonly newSegs: { meta: MetaSegment[]; vec: VectorSegment[] } = { meta: [], vec: [] };
  private readonly live: ReturnType<BlockIndex['_internals']>;

  constructor(index: BlockIndex) {
    this.live = index._internals();
  }

  private head(seg: Segment<unknown>) {
    let h = this.heads.get(seg);
    if (!h) this.heads.set(seg, (h = { free: seg.free.slice(), next: seg.next, live: seg.live }));
    return h;
  }

  private getMetaLoc(id: string) {
    return this.metaLoc.has(id) ? this.metaLoc.get(id)! : (this.live.metaLoc.get(id) ?? null);
  }

  private getVecLoc(id: string) {
    return this.vecLoc.has(id) ? this.vecLoc.get(id)! : (this.live.vecLoc.get(id) ?? null);
  }

  private metaSeg(namespace: string): MetaSegment {
    const existing = this.live.metas.get(namespace) ?? this.newSegs.meta.find((s) => s.namespace === namespace);
    if (existing) return existing;
    const seg: MetaSegment = { namespace, blocks: [], free: [], next: 0, live: 0 };
    this.newSegs.meta.push(seg);
    return seg;
  }

  private vecSeg(model: string, namespace: string, dim: number): VectorSegment {
    const existing = this.live.vectorSegs.get(segmentKey(model, namespace)) ?? this.newSegs.vec.find((s) => s.model === model && s.namespace === namespace);
    if (existing) return existing;
    const seg: VectorSegment = { namespace, model, dim, blocks: [], free: [], next: 0, live: 0 };
    this.newSegs.vec.push(seg);
    return seg;
  }

  private metaBlock(seg: MetaSegment, block: number): MetaBlockRecord {
    const key = metaKey(seg.namespace, block);
    let b = this.touched.get(key) as MetaBlockRecord | undefined;
    if (!b) {
      const live = seg.blocks[block];
      b = live ? copyMetaBlock(live) : emptyMetaBlock(seg.namespace, block);
      this.touched.set(key, b);
    }
    return b;
  }

  private vecBlock(seg: VectorSegment, block: number): VectorBlockRecord {
    const key = vectorKey(seg.model, seg.namespace, block);
    let b = this.touched.get(key) as VectorBlockRecord | undefined;
    if (!b) {
      const live = seg.blocks[block];
      b = live ? copyVectorBlock(live) : emptyVectorBlock(seg.model, seg.namespace, block, seg.dim);
      this.touched.set(key, b);
    }
    return b;
  }

  private alloc(seg: Segment<unknown>): number {
    const h = this.head(seg);
    h.live += 1;
    return h.free.length > 0 ? h.free.pop()! : h.next++;
  }

  private release(seg: Segment<unknown>, slot: number): void {
    const h = this.head(seg);
    h.live -= 1;
    h.free.push(slot);
  }

  /**
   * Indexes (or re-indexes) a memory with its vector (`null`: none). A vector of another
   * dimension than the model's existing vectors in this namespace, or one with a non-finite
   * component or a zero norm (`isUsableVector`), is not indexed.
   * @returns whether the vector was indexed.
   */
  put(m: IndexedMemory, vector: Float32Array | null, model: string | null): boolean {
    let loc = this.getMetaLoc(m.id);
    if (loc && loc.namespace !== m.namespace) {
      this.remove(m.id);
      loc = null;
    }
    const seg = this.metaSeg(m.namespace);
    const slot = loc ? loc.slot : this.alloc(seg);
    const b = this.metaBlock(seg, slot >> 8);
    const s = slot & 255;
    b.ids[s] = m.id;
    b.createdAt[s] = m.createdAt;
    b.updatedAt[s] = m.updatedAt;
    b.validFrom[s] = toCol(m.validFrom);
    b.validUntil[s] = toCol(m.validUntil);
    b.importance[s] = m.importance;
    b.pinned[s] = m.pinned ? 1 : 0;
    b.current![s] = m.current;
    b.normalized![s] = m.normalized;
    b.kinds[s] = m.kind;
    b.slots[s] = m.slot;
    this.metaLoc.set(m.id, { namespace: m.namespace, slot });

    const old = this.getVecLoc(m.id);
    let target: VectorSegment | null = vector && model && isUsableVector(vector) ? this.vecSeg(model, m.namespace, vector.length) : null;
    if (target && target.dim !== vector!.length) target = null;
    if (old && (!target || old.model !== target.model || old.namespace !== target.namespace)) this.dropVector(m.id, old);
    if (!target) return false;
    const vslot = old && old.model === target.model && old.namespace === target.namespace ? old.slot : this.alloc(target);
    const vb = this.vecBlock(target, vslot >> 8);
    const vs = vslot & 255;
    vb.ids[vs] = m.id;
    vb.vectors.set(vector!, vs * target.dim);
    vb.meta[vs] = slot;
    vb.validUntil[vs] = toCol(m.validUntil);
    this.vecLoc.set(m.id, { model: target.model, namespace: target.namespace, slot: vslot });
    return true;
  }

  private dropVector(id: string, loc: { model: string; namespace: string; slot: number }): void {
    const seg = this.live.vectorSegs.get(segmentKey(loc.model, loc.namespace)) ?? this.newSegs.vec.find((s) => s.model === loc.model && s.namespace === loc.namespace)!;
    const vb = this.vecBlock(seg, loc.slot >> 8);
    const vs = loc.slot & 255;
    vb.ids[vs] = null;
    vb.vectors.fill(0, vs * seg.dim, (vs + 1) * seg.dim);
    vb.meta[vs] = -1;
    vb.validUntil[vs] = NaN;
    this.release(seg, loc.slot);
    this.vecLoc.set(id, null);
  }

  /** Removes a memory and its vector (unknown ids are ignored). */
  remove(id: string): void {
    const vloc = this.getVecLoc(id);
    if (vloc) this.dropVector(id, vloc);
    const loc = this.getMetaLoc(id);
    if (!loc) return;
    const seg = this.metaSeg(loc.namespace);
    const b = this.metaBlock(seg, loc.slot >> 8);
    const s = loc.slot & 255;
    b.ids[s] = null;
    b.createdAt[s] = 0;
    b.updatedAt[s] = 0;
    b.validFrom[s] = NaN;
    b.validUntil[s] = NaN;
    b.importance[s] = 0;
    b.pinned[s] = 0;
    b.current![s] = 0;
    b.normalized![s] = null;
    b.kinds[s] = null;
    b.slots[s] = null;
    this.release(seg, loc.slot);
    this.metaLoc.set(id, null);
  }

  /** The blocks to write (copies; safe to hand to Dexie). */
  records(): (MetaBlockRecord | VectorBlockRecord)[] {
    return [...this.touched.values()];
  }

  /** Applies the batch to the live index. Call once, after the blocks were committed. */
  commit(): void {
    for (const seg of this.newSegs.meta) this.live.metas.set(seg.namespace, seg);
    for (const seg of this.newSegs.vec) this.live.vectorSegs.set(segmentKey(seg.model, seg.namespace), seg);
    for (const b of this.touched.values()) {
      if (b.type === 'meta') this.live.metas.get(b.namespace)!.blocks[b.block] = b;
      else this.live.vectorSegs.get(segmentKey(b.model, b.namespace))!.blocks[b.block] = b;
    }
    for (const [seg, h] of this.heads) Object.assign(seg, h);
    for (const seg of [...this.live.metas.values()]) {
      for (let i = 0; i < seg.blocks.length; i += 1) seg.blocks[i] ??= emptyMetaBlock(seg.namespace, i);
    }
    for (const seg of [...this.live.vectorSegs.values()]) {
      for (let i = 0; i < seg.blocks.length; i += 1) seg.blocks[i] ??= emptyVectorBlock(seg.model, seg.namespace, i, seg.dim);
    }
    for (const [id, loc] of this.metaLoc) {
      if (loc) this.live.metaLoc.set(id, loc);
      else this.live.metaLoc.delete(id);
    }
    for (const [id, loc] of this.vecLoc) {
      if (loc) this.live.vecLoc.set(id, loc);
      else this.live.vecLoc.delete(id);
    }
  }
}

/** The `subject:slot` label of a memory text (`memorySlot` of `slots.ts`), `null` when it is about no slot. */
export function memorySlotLabel(text: string): string | null {
  const key = memorySlot(text);
  return key ? `${key.subject}:${key.slot}` : null;
}

/** What the index keeps about a memory row (`IndexedMemory` with the slot label and normalized text computed from the text). */
export function indexedOf(r: LayoutRow): IndexedMemory {
  return {
    id: r.id,
    namespace: r.namespace,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    validFrom: r.validFrom,
    validUntil: r.validUntil,
    importance: r.importance,
    pinned: r.pinned,
    current: r.current,
    kind: r.kind,
    slot: memorySlotLabel(r.text),
    normalized: normalizeMemoryText(r.text),
  };
}

/** The fields of a memory row that the layout reads (`MemoryRecord` satisfies it). */
export interface LayoutRow extends Omit<IndexedMemory, 'slot' | 'normalized'> {
  text: string;
  embedding?: Float32Array | null;
  embeddingModel: string | null;
}

/**
 * The whole persisted layout for `rows` (repair and the v1 → v3 migration): blocks, and a header
 * at generation `gen` describing `rows.length` rows. Each row's vector is `vectorOf(row)`
 * (default: its `embedding` field). Rows keep their order within a namespace. `unindexed` holds
 * the ids whose vector could not be placed (another dimension than the other vectors of the same
 * model and namespace: not comparable); their rows should lose `embeddingModel` so re-embedding
 * gives them a vector.
 */
export function layoutFromRows(
  rows: Iterable<LayoutRow>,
  gen: number,
  vectorOf: (row: LayoutRow) => Float32Array | null = (r) => r.embedding ?? null,
): { index: BlockIndex; records: MemoryIndexRecord[]; header: IndexHeaderRecord; unindexed: Set<string> } {
  const index = new BlockIndex();
  const batch = index.batch();
  const unindexed = new Set<string>();
  let count = 0;
  for (const r of rows) {
    const vector = vectorOf(r);
    if (!batch.put(indexedOf(r), vector, r.embeddingModel) && vector) unindexed.add(r.id);
    count += 1;
  }
  const records: MemoryIndexRecord[] = batch.records();
  batch.commit();
  const header: IndexHeaderRecord = { key: 'header', gen, count, dirty: [] };
  return { index, records: [...records, header], header, unindexed };
}
