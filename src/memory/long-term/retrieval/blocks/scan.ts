/**
 * The exact vector scan's kernels: the dot product over a contiguous `Float32Array`, a typed-array
 * top-k, the reference `exactTopK`, and the per-slot filter check on the meta columns.
 */

import type { MetaBlockRecord, ScanFilter } from './records';

/** Dot product of `q` with `dim` floats of `data` from `offset`, four accumulators. */
export function dotAt(q: Float32Array, data: Float32Array, offset: number, dim: number): number {
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
export class TopK {
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
 * The candidate selection of the quantized scan (`BlockIndex.search` / `searchAmong` with a
 * `QuantizedMirror`): every accepted slot is offered with its bounds `lo ≤ q·v ≤ hi`
 * (`kernel/quantize.ts`); τ is the k-th largest `lo` offered. The k best exact scores are all ≥ τ
 * (k slots have a score ≥ their `lo` ≥ τ), so every slot of the exact top-k has `hi` ≥ τ: rescoring
 * exactly the offered slots with `hi ≥ τ`, in the order offered, gives the plain scan's top-k, ties
 * included. Slots are kept against the running τ (never above the final one) and filtered once more
 * by `rescore`.
 */
export class BoundedCandidates {
  private readonly lows: TopK;
  private tau = -Infinity;
  private readonly slots: number[] = [];
  private readonly highs: number[] = [];
  constructor(private readonly k: number) {
    this.lows = new TopK(k);
  }
  /** Offers an accepted slot (`block · BLOCK_SLOTS + slot`) with its score bounds. */
  offer(slot: number, lo: number, hi: number): void {
    if (hi < this.tau) return;
    this.slots.push(slot);
    this.highs.push(hi);
    if (lo > this.tau) {
      this.lows.push(0, lo);
      this.tau = this.lows.floor;
    }
  }
  /**
   * The exact top-k: `score(slot)` (the f32 dot product) of every kept slot whose `hi` reaches the
   * final τ, in the order offered.
   * @returns `[block, slot in block, score]`, best first (ties: first offered first), as `TopK.result`.
   */
  rescore(score: (slot: number) => number, blockSlots: number): [number, number, number][] {
    const top = new TopK(this.k);
    for (let i = 0; i < this.slots.length; i += 1) {
      if (this.highs[i]! < this.tau) continue;
      const slot = this.slots[i]!;
      top.push(Math.floor(slot / blockSlots), score(slot), slot % blockSlots);
    }
    return top.result();
  }
}

/** Whether every component of `v` is finite (the quantized path codes only finite queries). */
export function allFinite(v: Float32Array): boolean {
  for (let i = 0; i < v.length; i += 1) if (!Number.isFinite(v[i]!)) return false;
  return true;
}

/**
 * Keeps the `k` first of a stream of `(pinned, updatedAt, slot)` in the memory manager's order —
 * pinned first, then higher `updatedAt`, then lower slot — in a binary heap whose root is the
 * worst kept entry: O(log k) per push, O(k) memory (a sorted insertion costs O(k) per push when
 * the stream comes oldest first, as slots usually do).
 */
export class RecencyHeap {
  private readonly keys: Float64Array;
  private readonly slots: Int32Array;
  private n = 0;
  constructor(private readonly k: number) {
    this.keys = new Float64Array(Math.max(1, k));
    this.slots = new Int32Array(Math.max(1, k));
  }
  /** Whether entry `i` comes after entry `j` in the order (is worse). */
  private worse(i: number, j: number): boolean {
    const ki = this.keys[i]!;
    const kj = this.keys[j]!;
    return ki < kj || (ki === kj && this.slots[i]! > this.slots[j]!);
  }
  private swap(i: number, j: number): void {
    const k = this.keys[i]!;
    const s = this.slots[i]!;
    this.keys[i] = this.keys[j]!;
    this.slots[i] = this.slots[j]!;
    this.keys[j] = k;
    this.slots[j] = s;
  }
  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < this.n && this.worse(l, w)) w = l;
      if (r < this.n && this.worse(r, w)) w = r;
      if (w === i) return;
      this.swap(i, w);
      i = w;
    }
  }
  /** Offers one entry (`updatedAt` in ms epoch; `slot` a non-negative integer, unique in the stream). */
  push(pinned: boolean, updatedAt: number, slot: number): void {
    if (this.k <= 0) return;
    // Pinned ranks above every unpinned time: ms epochs stay far below 2^52 − 2^50.
    const key = pinned ? updatedAt + 2 ** 50 : updatedAt;
    if (this.n < this.k) {
      let i = this.n++;
      this.keys[i] = key;
      this.slots[i] = slot;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.worse(i, p)) break;
        this.swap(i, p);
        i = p;
      }
      return;
    }
    const root = this.keys[0]!;
    if (key < root || (key === root && slot > this.slots[0]!)) return;
    this.keys[0] = key;
    this.slots[0] = slot;
    this.down(0);
  }
  /** The kept slots, first in the order first. */
  sorted(): number[] {
    const order = Array.from({ length: this.n }, (_, i) => i);
    order.sort((i, j) => this.keys[j]! - this.keys[i]! || this.slots[i]! - this.slots[j]!);
    return order.map((i) => this.slots[i]!);
  }
}

/** Whether slot `s` of meta block `b` passes `filter`. */
export function acceptsSlot(b: MetaBlockRecord, s: number, filter: ScanFilter): boolean {
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
