/**
 * The live block index (see `../blocks.ts` for the layout it reads and the copy-on-write rule).
 * Over 300 lines: every read of the live index (lookups, catalog and listing, slot members, the
 * scans) walks the same private segment maps; cutting them apart would expose those maps.
 */

import type { MemoryKind } from '../../../../model/memory';
import type { CatalogEntry } from '../../types';
import { SLOT_CLASSIFIER_VERSION } from '../../slots';
import { addSlotMember, IndexBatch } from './batch';
import {
  type BlockIndexInternals,
  BLOCK_SLOTS,
  decodeVectorBlock,
  emptyMetaBlock,
  isVectorRecord,
  emptyVectorBlock,
  fromCol,
  segmentKey,
  type BlockHit,
  type MemoryIndexRecord,
  type MemoryMeta,
  type MetaBlockRecord,
  type MetaSegment,
  type ScanFilter,
  type Segment,
  type VectorBlockRecord,
  type VectorSegment,
} from './records';
import { QuantizedMirror } from './kernel/mirror';
import { scanKernelModule } from './kernel/kernel';
import { acceptsSlot, allFinite, BoundedCandidates, dotAt, RecencyHeap, TopK } from './scan';
import { mayHoldRange, timeBounds } from './time-bounds';

/**
 * Vectors a segment needs before `search` takes the quantized path (`QuantizedMirror`): below it
 * the plain f32 scan costs well under a millisecond (1k × 384-d: ~1 ms in Node), and each mirror
 * holds a WebAssembly memory of its own.
 */
export const KERNEL_MIN_VECTORS = 1024;

/**
 * The store's order of memory ids where scores or times are equal: `String.prototype.localeCompare`
 * with the default locale, without building a collator per call. Declared once: the store's ranking
 * (`store/search.ts`) and the slot-only bound (`store/slot-only.ts`) must break ties alike.
 */
export const compareIds = new Intl.Collator().compare;

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
   * namespace → slot label → the meta slots (positions in the namespace's meta segment) that hold
   * that label: the same-slot lookups (`inSlot`, `slotMembers`, `forEachInSlot`) read it instead of
   * walking every meta block, and reach each member's columns without an id lookup. Built on load
   * (`fromRecords`) and kept by `IndexBatch.commit`.
   */
  private readonly slotIds = new Map<string, Map<string, Set<number>>>();
  /**
   * Whether some meta block read by `fromRecords` lacks the `current` / `normalized` / `subjects`
   * columns or has slot labels and subjects of another `SLOT_CLASSIFIER_VERSION` (written by an older
   * version): the layout must be repaired from the rows before it is used.
   */
  outdated = false;

  /**
   * Which scan `search` runs: `'auto'` the quantized WebAssembly path (`searchBounded`) when the
   * kernel compiles here, the segment holds at least `kernelMinVectors` vectors and its dimension
   * is a multiple of 16 (`QuantizedMirror.supports`), else the plain f32 scan; `'js'` always the
   * plain scan (tests and benches compare the two).
   */
  scanPath: 'auto' | 'js' = 'auto';
  /** See `KERNEL_MIN_VECTORS`. */
  kernelMinVectors = KERNEL_MIN_VECTORS;
  /** The quantized mirror of each vector segment that has one (made by the first search that needs it, or by `attachVectors`). */
  private readonly mirrors = new WeakMap<VectorSegment, QuantizedMirror>();
  /** Segments whose mirror could not grow (WebAssembly memory refused): they stay on the plain scan. */
  private readonly mirrorless = new WeakSet<VectorSegment>();

  /**
   * Builds the live index from the records of the `memoryIndex` table (header and snapshot are
   * ignored); vector blocks are decoded from their stored f16 form (`decodeVectorBlock`). Records
   * without vector blocks give an index of metadata only; `attachVectors` adds them later.
   */
  static fromRecords(records: Iterable<MemoryIndexRecord>): BlockIndex {
    const index = new BlockIndex();
    const metas: MetaBlockRecord[] = [];
    const vectors: VectorBlockRecord[] = [];
    for (const r of records) {
      if ('type' in r && r.type === 'meta') metas.push(r);
      // A v3 block (f32, no `halves`) cannot be read here: the v4 upgrade converted every one.
      else if (isVectorRecord(r) && 'halves' in r) vectors.push(decodeVectorBlock(r));
    }
    for (const b of metas) {
      if (!b.current || !b.normalized || !b.subjects || (b.slotsVersion ?? 1) !== SLOT_CLASSIFIER_VERSION) index.outdated = true;
      const seg = index.metaSegment(b.namespace);
      seg.blocks[b.block] = b;
    }
    for (const seg of index.metas.values()) {
      index.finish(
        seg,
        (b) => emptyMetaBlock(seg.namespace, b),
        (id, slot) => {
          index.metaLoc.set(id, { namespace: seg.namespace, slot });
          const label = seg.blocks[slot >> 8]!.slots[slot & 255];
          if (label) addSlotMember(index.slotIds, seg.namespace, label, slot);
        },
      );
    }
    index.attachVectors(vectors);
    return index;
  }

  /**
   * Adds decoded vector blocks (`decodeVectorBlock` of the stored records) to an index that has
   * none yet (the second step of a store's open: metadata first, vectors in the background).
   * @throws Error when the index already holds vectors (a write happened before: the store runs
   *   this first in its write queue, so it cannot).
   */
  attachVectors(vectors: readonly VectorBlockRecord[]): void {
    if (this.vectorSegs.size > 0) throw new Error('attachVectors: the index already holds vectors');
    for (const b of vectors) {
      const seg = this.vectorSegment(b.model, b.namespace, b.dim);
      if (b.dim !== seg.dim) continue; // cannot happen for blocks this module wrote
      seg.blocks[b.block] = b;
    }
    for (const seg of this.vectorSegs.values()) {
      this.finish(
        seg,
        (b) => emptyVectorBlock(seg.model, seg.namespace, b, seg.dim),
        (id, slot) => this.vecLoc.set(id, { model: seg.model, namespace: seg.namespace, slot }),
      );
      // Coded now, with the rest of the vectors' open, rather than by the first search.
      this.syncMirror(seg);
    }
  }

  /** The segment's quantized mirror when `search` should use it (see `scanPath`), else `null`. */
  private mirrorOf(seg: VectorSegment): QuantizedMirror | null {
    if (this.scanPath !== 'auto' || seg.live < this.kernelMinVectors || !QuantizedMirror.supports(seg.dim) || this.mirrorless.has(seg)) return null;
    let m = this.mirrors.get(seg);
    if (!m) {
      if (!scanKernelModule()) return null;
      this.mirrors.set(seg, (m = new QuantizedMirror(seg.dim)));
    }
    return m;
  }

  /**
   * Brings the segment's mirror up to date (`QuantizedMirror.sync`); `null` when it has none or its
   * WebAssembly memory cannot grow (a `RangeError`): the segment then stays on the plain scan, and
   * the mirror's memory is let go.
   */
  private syncMirror(seg: VectorSegment): QuantizedMirror | null {
    const mirror = this.mirrorOf(seg);
    if (!mirror) return null;
    try {
      mirror.sync(seg.blocks);
      return mirror;
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      this.mirrors.delete(seg);
      this.mirrorless.add(seg);
      return null;
    }
  }

  /** Bytes of WebAssembly memory the quantized mirrors of the live segments hold (0 on the plain path). */
  mirrorBytes(): number {
    let sum = 0;
    for (const seg of this.vectorSegs.values()) sum += this.mirrors.get(seg)?.bytes ?? 0;
    return sum;
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
      subject: b.subjects?.[s] ?? null,
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
        out.push({
          id,
          kind: b.kinds[s] as MemoryKind,
          current: b.current?.[s] === 1 ? 1 : 0,
          pinned: b.pinned[s] === 1,
          updatedAt: b.updatedAt[s]!,
          normalized: b.normalized?.[s] ?? '',
        });
      }
    }
    return out;
  }

  /**
   * The memory manager's listing on the meta columns, without building a catalog: the ids of
   * `namespace` whose columns pass `where` — `current` flag set (unless `includeInvalid`), kind in
   * `kinds` (`null`: any), normalized text containing `contains` (`null`: any), not in `exclude` —
   * the first `limit` in the manager's order: pinned first, then newest `updatedAt` (ms epoch),
   * ties in slot order (what a stable sort of `catalog` gives). O(namespace size) column reads,
   * O(limit) memory and O(log limit) per kept id (a heap): no object per memory, no sort of all.
   */
  listIds(
    namespace: string,
    where: { includeInvalid: boolean; kinds: ReadonlySet<string> | null; contains: string | null; exclude?: ReadonlySet<string>; limit: number },
  ): string[] {
    const seg = this.metas.get(namespace);
    const limit = Math.max(0, Math.floor(where.limit));
    if (!seg || limit === 0) return [];
    const { includeInvalid, kinds, contains, exclude } = where;
    const top = new RecencyHeap(limit);
    for (let b = 0; b < seg.blocks.length; b += 1) {
      const block = seg.blocks[b]!;
      const current = block.current;
      const normalized = block.normalized;
      for (let s = 0; s < BLOCK_SLOTS; s += 1) {
        const id = block.ids[s];
        if (!id) continue;
        if (!includeInvalid && current?.[s] !== 1) continue;
        if (kinds && !kinds.has(block.kinds[s]!)) continue;
        if (contains !== null && !(normalized?.[s] ?? '').includes(contains)) continue;
        if (exclude?.has(id)) continue;
        top.push(block.pinned[s] === 1, block.updatedAt[s]!, b * BLOCK_SLOTS + s);
      }
    }
    return top.sorted().map((slot) => seg.blocks[slot >> 8]!.ids[slot & 255]!);
  }

  /**
   * Calls `visit` with each memory of `namespace` (slot order) and its normalized text and
   * `updatedAt` (ms epoch), read from the meta columns: the catalog's walk without an object per memory.
   */
  forEachText(namespace: string, visit: (id: string, normalized: string, updatedAt: number) => void): void {
    const seg = this.metas.get(namespace);
    if (!seg) return;
    for (const b of seg.blocks) {
      for (let s = 0; s < BLOCK_SLOTS; s += 1) {
        const id = b.ids[s];
        if (id) visit(id, b.normalized?.[s] ?? '', b.updatedAt[s]!);
      }
    }
  }

  /**
   * Currently valid memories of `namespace` whose slot label is `label` (and kind in `kinds`),
   * newest (`updatedAt`) first, ties by id. O(memories about that slot) on the columns (the
   * per-slot id list), no row read.
   */
  inSlot(namespace: string, label: string, now: number, kinds: ReadonlySet<string> | null): { id: string; updatedAt: number }[] {
    const out: { id: string; updatedAt: number }[] = [];
    this.forEachInSlot(namespace, label, now, (id, b, s) => {
      if (!kinds || kinds.has(b.kinds[s]!)) out.push({ id, updatedAt: b.updatedAt[s]! });
    });
    return out.sort((x, y) => y.updatedAt - x.updatedAt || compareIds(x.id, y.id));
  }

  /**
   * Ids of the currently valid memories of `namespace` whose slot label is `label`, in no
   * particular order (what `inSlot` sorts): O(memories about that slot), no sort, no row read.
   */
  slotMembers(namespace: string, label: string, now: number): string[] {
    const out: string[] = [];
    this.forEachInSlot(namespace, label, now, (id) => out.push(id));
    return out;
  }

  /**
   * Calls `visit` with each currently valid (`validUntil` unset or after `now`) member of the slot
   * `label` in `namespace` (in no particular order): its id, its meta block, its position in the
   * block (`b.createdAt[s]`, … are its columns) and its meta slot (`metaSlot`, `idAt`). O(memories
   * about that slot), no object per member: the per-slot lists hold meta slots, so no id is looked up.
   */
  forEachInSlot(namespace: string, label: string, now: number, visit: (id: string, b: MetaBlockRecord, s: number, slot: number) => void): void {
    const slots = this.slotIds.get(namespace)?.get(label);
    const seg = this.metas.get(namespace);
    if (!slots || !seg) return;
    const blocks = seg.blocks;
    for (const slot of slots) {
      const b = blocks[slot >> 8]!;
      const s = slot & 255;
      const until = b.validUntil[s]!;
      if (Number.isNaN(until) || until > now) visit(b.ids[s]!, b, s, slot);
    }
  }

  /** The meta slot of `id` (its position in `namespace`'s meta segment), or −1 when it is not indexed in `namespace`. */
  metaSlot(id: string, namespace: string): number {
    const loc = this.metaLoc.get(id);
    return loc && loc.namespace === namespace ? loc.slot : -1;
  }

  /** The id in meta slot `slot` of `namespace`, or `null` when the slot is free or out of range. */
  idAt(namespace: string, slot: number): string | null {
    return this.metas.get(namespace)?.blocks[slot >> 8]?.ids[slot & 255] ?? null;
  }

  /** Number of memories of `namespace` whose slot label is `label`, valid or not (an upper bound on what `forEachInSlot` visits). */
  slotSize(namespace: string, label: string): number {
    return this.slotIds.get(namespace)?.get(label)?.size ?? 0;
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

  /**
   * Ids of `namespace` that pass `filter`, in slot order. With a time range, a meta block whose
   * times all lie outside it (`timeBounds`) is skipped without reading its slots: memories are
   * written roughly in time order, so a query's window (a day, a week) reads a few blocks, not the
   * namespace. Without a range: O(namespace size).
   */
  idsWhere(namespace: string, filter: ScanFilter): string[] {
    const seg = this.metas.get(namespace);
    if (!seg) return [];
    const out: string[] = [];
    const range = filter.range ?? null;
    for (const b of seg.blocks) {
      if (range && !mayHoldRange(timeBounds(b), range)) continue;
      for (let s = 0; s < BLOCK_SLOTS; s += 1) if (b.ids[s] && acceptsSlot(b, s, filter)) out.push(b.ids[s]!);
    }
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
   * time range read from the meta columns per slot. O(1) set-up. With the WebAssembly kernel
   * (`scanPath`), an int8 pass bounds every score and only the slots that may be in the top-k are
   * rescored in f32 (`searchBounded`); the result is the plain scan's, bit for bit.
   * @returns at most `k` hits, best first (ties: lower slot first); `[]` when the dimension differs.
   */
  search(model: string, namespace: string, q: Float32Array, k: number, filter: ScanFilter): BlockHit[] {
    const seg = this.vectorSegs.get(segmentKey(model, namespace));
    const metaSeg = this.metas.get(namespace);
    if (!seg || !metaSeg || seg.live === 0 || q.length !== seg.dim || k <= 0) return [];
    const mirror = allFinite(q) ? this.syncMirror(seg) : null;
    return mirror ? this.searchBounded(seg, metaSeg, mirror, q, k, filter) : this.searchPlain(seg, metaSeg, q, k, filter);
  }

  /** The plain f32 scan of `search`: one `dotAt` per accepted slot. */
  private searchPlain(seg: VectorSegment, metaSeg: MetaSegment, q: Float32Array, k: number, filter: ScanFilter): BlockHit[] {
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
    return this.hitsOf(seg, top.result());
  }

  /**
   * The quantized path of `search` (`mirror` synced with the segment, `q` finite), with the same
   * hits, scores and order as `searchPlain`: the kernel bounds every slot's exact score and only the
   * accepted slots that may be in the top-k are rescored in f32 (`BoundedCandidates`).
   */
  private searchBounded(seg: VectorSegment, metaSeg: MetaSegment, mirror: QuantizedMirror, q: Float32Array, k: number, filter: ScanFilter): BlockHit[] {
    mirror.score(q, seg.next);
    const dim = seg.dim;
    const picked = new BoundedCandidates(k);
    const checkValidity = filter.includeInvalid !== true;
    const now = filter.now;
    const range = filter.range ?? null;
    for (let b = 0; b < seg.blocks.length; b += 1) {
      const block = seg.blocks[b]!;
      const meta = block.meta;
      const until = block.validUntil;
      const bounds = mirror.boundsOf(b);
      const end = Math.min(BLOCK_SLOTS, seg.next - b * BLOCK_SLOTS);
      for (let s = 0; s < end; s += 1) {
        const m = meta[s]!;
        if (m < 0) continue;
        if (checkValidity) {
          const u = until[s]!;
          if (u <= now) continue; // NaN (no end) compares false: valid
        }
        if (range && !acceptsSlot(metaSeg.blocks[m >> 8]!, m & 255, filter)) continue;
        picked.offer(b * BLOCK_SLOTS + s, bounds[2 * s]!, bounds[2 * s + 1]!);
      }
    }
    return this.hitsOf(
      seg,
      picked.rescore((slot) => dotAt(q, seg.blocks[slot >> 8]!.vectors, (slot & 255) * dim, dim), BLOCK_SLOTS),
    );
  }

  /** `[block, slot, similarity]` triples (`TopK.result`) as hits of `seg`. */
  private hitsOf(seg: VectorSegment, top: [number, number, number][]): BlockHit[] {
    return top.map(([b, s, similarity]) => ({ id: seg.blocks[b]!.ids[s]!, similarity }));
  }

  /**
   * `search` restricted to the memories `ids` (which should already pass the caller's filter; ids
   * without a vector of `model` in `namespace` are skipped): the same hits, scores and order as
   * `search` with a filter that accepts exactly them — ties by vector slot, as the full scan
   * meets them — at O(|ids| · dim + |ids| log |ids|) instead of a pass over every vector. From
   * `kernelMinVectors` members, on the quantized path like `search` (bounds for the members' blocks
   * only, f32 rescoring of the members that can be in the top-k): the same hits. For a
   * query's time window, whose members `idsWhere` lists.
   */
  searchAmong(model: string, namespace: string, q: Float32Array, k: number, ids: readonly string[]): BlockHit[] {
    const seg = this.vectorSegs.get(segmentKey(model, namespace));
    if (!seg || seg.live === 0 || q.length !== seg.dim || k <= 0) return [];
    const slots: number[] = [];
    for (const id of ids) {
      const loc = this.vecLoc.get(id);
      if (loc && loc.model === model && loc.namespace === namespace) slots.push(loc.slot);
    }
    slots.sort((a, b) => a - b);
    const mirror = slots.length >= this.kernelMinVectors && allFinite(q) ? this.syncMirror(seg) : null;
    const dim = seg.dim;
    const dotOf = (slot: number): number => dotAt(q, seg.blocks[slot >> 8]!.vectors, (slot & 255) * dim, dim);
    if (!mirror) {
      const top = new TopK(k);
      for (const slot of slots) top.push(slot >> 8, dotOf(slot), slot & 255);
      return this.hitsOf(seg, top.result());
    }
    // The quantized path (as `searchBounded`, over the members' blocks only).
    const blocks: number[] = [];
    for (const slot of slots) if (blocks.at(-1) !== slot >> 8) blocks.push(slot >> 8);
    mirror.scoreBlocks(q, blocks);
    const picked = new BoundedCandidates(k);
    let current = slots[0]! >> 8;
    let bounds = mirror.boundsOf(current);
    for (const slot of slots) {
      if (slot >> 8 !== current) bounds = mirror.boundsOf((current = slot >> 8));
      picked.offer(slot, bounds[2 * (slot & 255)]!, bounds[2 * (slot & 255) + 1]!);
    }
    return this.hitsOf(seg, picked.rescore(dotOf, BLOCK_SLOTS));
  }

  /** Starts a batch of changes (see `IndexBatch`). */
  batch(): IndexBatch {
    return new IndexBatch(this);
  }

  /** @internal used by `IndexBatch`. */
  _internals(): BlockIndexInternals {
    return {
      metas: this.metas,
      vectorSegs: this.vectorSegs,
      metaLoc: this.metaLoc,
      vecLoc: this.vecLoc,
      slotMembers: this.slotIds,
      metaSegment: (ns: string) => this.metaSegment(ns),
      vectorSegment: (m: string, ns: string, d: number) => this.vectorSegment(m, ns, d),
      // With the write (a background job, between turns), so the next search finds the codes current.
      refreshMirror: (seg: VectorSegment) => {
        if (this.mirrors.has(seg)) this.syncMirror(seg);
      },
    };
  }
}
