/** Copy-on-write batches of changes to the live block index (see `../blocks.ts`). */

import { isUsableVector } from '../vector-math';
import { quantizeSlot } from './f16';
import {
  BLOCK_SLOTS,
  encodeVectorBlock,
  type StoredVectorBlockRecord,
  copyMetaBlock,
  type BlockIndexInternals,
  copyVectorBlock,
  emptyMetaBlock,
  emptyVectorBlock,
  metaKey,
  segmentKey,
  toCol,
  vectorKey,
  type IndexedMemory,
  type MetaBlockRecord,
  type MetaSegment,
  type Segment,
  type VectorBlockRecord,
  type VectorSegment,
} from './records';

/** Adds meta slot `slot` (a position in `namespace`'s meta segment) to the members of `label` there (see `BlockIndex.slotIds`). */
export function addSlotMember(members: Map<string, Map<string, Set<number>>>, namespace: string, label: string, slot: number): void {
  let labels = members.get(namespace);
  if (!labels) members.set(namespace, (labels = new Map()));
  let slots = labels.get(label);
  if (!slots) labels.set(label, (slots = new Set()));
  slots.add(slot);
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
  private readonly live: BlockIndexInternals;

  /** @param index the live index (a `BlockIndex`; only its `_internals()` are used). */
  constructor(index: { _internals(): BlockIndexInternals }) {
    this.live = index._internals();
  }

  private bits: Uint16Array | null = null;

  /** Scratch room for the f16 bits of one slot (`quantizeSlot` writes them at `slot·dim`: sized for the largest slot). */
  private scratch(dim: number): Uint16Array {
    if (!this.bits || this.bits.length < BLOCK_SLOTS * dim) this.bits = new Uint16Array(BLOCK_SLOTS * dim);
    return this.bits;
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
    b.subjects![s] = m.subject;
    this.metaLoc.set(m.id, { namespace: m.namespace, slot });

    const old = this.getVecLoc(m.id);
    let target: VectorSegment | null = vector && model && isUsableVector(vector) ? this.vecSeg(model, m.namespace, vector.length) : null;
    if (target && target.dim !== vector!.length) target = null;
    if (old && (!target || old.model !== target.model || old.namespace !== target.namespace)) this.dropVector(m.id, old);
    if (!target) return false;
    const kept = old && old.model === target.model && old.namespace === target.namespace;
    // A re-index that leaves the slot as it is (a flag changed, the vector read back through the
    // reading hook): the vector block is neither copied nor written again.
    if (kept && this.slotUnchanged(target, old.slot, m, vector!, slot)) {
      this.vecLoc.set(m.id, { model: target.model, namespace: target.namespace, slot: old.slot });
      return true;
    }
    const vslot = kept ? old.slot : this.alloc(target);
    const vb = this.vecBlock(target, vslot >> 8);
    const vs = vslot & 255;
    vb.ids[vs] = m.id;
    // Stored as f16 (v4): the block holds what a restart reads back (`quantizeSlot`).
    quantizeSlot(vector!, vs, target.dim, this.scratch(vector!.length), vb.scales, vb.vectors);
    vb.meta[vs] = slot;
    vb.validUntil[vs] = toCol(m.validUntil);
    this.vecLoc.set(m.id, { model: target.model, namespace: target.namespace, slot: vslot });
    return true;
  }

  /**
   * Whether vector slot `vslot` of `seg` (as this batch sees it) already holds exactly what `put`
   * would write there: the same id, meta slot and `validUntil`, and the same f16 bits and scale
   * once `vector` is quantized (compared through their decoded floats, which the bits determine).
   */
  private slotUnchanged(seg: VectorSegment, vslot: number, m: IndexedMemory, vector: Float32Array, metaSlot: number): boolean {
    const key = vectorKey(seg.model, seg.namespace, vslot >> 8);
    const b = (this.touched.get(key) as VectorBlockRecord | undefined) ?? seg.blocks[vslot >> 8];
    const vs = vslot & 255;
    if (!b || b.ids[vs] !== m.id || b.meta[vs] !== metaSlot || !Object.is(b.validUntil[vs], toCol(m.validUntil))) return false;
    const dim = seg.dim;
    const scale = new Float32Array(1);
    const out = new Float32Array(dim);
    quantizeSlot(vector, 0, dim, this.scratch(dim), scale, out);
    if (scale[0] !== b.scales[vs]) return false;
    for (let i = 0, base = vs * dim; i < dim; i += 1) if (out[i] !== b.vectors[base + i]) return false;
    return true;
  }

  private dropVector(id: string, loc: { model: string; namespace: string; slot: number }): void {
    const seg =
      this.live.vectorSegs.get(segmentKey(loc.model, loc.namespace)) ?? this.newSegs.vec.find((s) => s.model === loc.model && s.namespace === loc.namespace)!;
    const vb = this.vecBlock(seg, loc.slot >> 8);
    const vs = loc.slot & 255;
    vb.ids[vs] = null;
    vb.vectors.fill(0, vs * seg.dim, (vs + 1) * seg.dim);
    vb.scales[vs] = 0;
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
    b.subjects![s] = null;
    this.release(seg, loc.slot);
    this.metaLoc.set(id, null);
  }

  /** The blocks to write, in their stored form (vector blocks as f16: `encodeVectorBlock`; safe to hand to Dexie). */
  records(): (MetaBlockRecord | StoredVectorBlockRecord)[] {
    return [...this.touched.values()].map((b) => (b.type === 'vector' ? encodeVectorBlock(b) : b));
  }

  /** Applies the batch to the live index. Call once, after the blocks were committed. */
  commit(): void {
    // The per-slot member lists: each changed id's old meta slot leaves its old label (read from
    // the live blocks before they are swapped), its new one joins its new label (read after).
    const slotOf = (loc: { namespace: string; slot: number }) => this.live.metas.get(loc.namespace)?.blocks[loc.slot >> 8]?.slots[loc.slot & 255] ?? null;
    for (const id of this.metaLoc.keys()) {
      const old = this.live.metaLoc.get(id);
      const label = old ? slotOf(old) : null;
      const members = old && label ? this.live.slotMembers.get(old.namespace) : undefined;
      if (members?.get(label!)?.delete(old!.slot) && members.get(label!)!.size === 0) members.delete(label!);
    }
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
      const label = loc ? slotOf(loc) : null;
      if (loc && label) addSlotMember(this.live.slotMembers, loc.namespace, label, loc.slot);
    }
    for (const [id, loc] of this.vecLoc) {
      if (loc) this.live.vecLoc.set(id, loc);
      else this.live.vecLoc.delete(id);
    }
    // The changed segments' quantized mirrors are recoded now, with the write, not by the next search.
    const changed = new Set<VectorSegment>();
    for (const b of this.touched.values()) if (b.type === 'vector') changed.add(this.live.vectorSegs.get(segmentKey(b.model, b.namespace))!);
    for (const seg of changed) this.live.refreshMirror(seg);
  }
}
