/**
 * Per-block time bounds of the meta columns: lets a time-range walk (`BlockIndex.idsWhere`) skip
 * a meta block whose memories all lie outside the range, without reading its slots.
 */
import { BLOCK_SLOTS, type MetaBlockRecord } from './records';

/** Lowest and highest `createdAt` and `validFrom` (ms epoch) of a meta block's used slots; `NaN` when none. */
export interface TimeBounds {
  createdMin: number;
  createdMax: number;
  fromMin: number;
  fromMax: number;
}

/**
 * Time bounds per meta block object, computed on first use. Blocks are copy-on-write (a write
 * swaps in a new object), so a cached entry can never describe a changed block.
 */
const boundsCache = new WeakMap<MetaBlockRecord, TimeBounds>();

/** The time bounds of meta block `b` (see `boundsCache`): one pass over its slots, then cached. */
export function timeBounds(b: MetaBlockRecord): TimeBounds {
  let bounds = boundsCache.get(b);
  if (bounds) return bounds;
  bounds = { createdMin: NaN, createdMax: NaN, fromMin: NaN, fromMax: NaN };
  for (let s = 0; s < BLOCK_SLOTS; s += 1) {
    if (!b.ids[s]) continue;
    // A NaN time never enters a range (`acceptsSlot` compares it), so it never widens the bounds.
    const created = b.createdAt[s]!;
    if (Number.isNaN(bounds.createdMin) || created < bounds.createdMin) bounds.createdMin = created;
    if (Number.isNaN(bounds.createdMax) || created > bounds.createdMax) bounds.createdMax = created;
    const from = b.validFrom[s]!;
    if (Number.isNaN(bounds.fromMin) || from < bounds.fromMin) bounds.fromMin = from;
    if (Number.isNaN(bounds.fromMax) || from > bounds.fromMax) bounds.fromMax = from;
  }
  boundsCache.set(b, bounds);
  return bounds;
}

/** Whether a block with these bounds may hold a slot `acceptsSlot` lets through `range` (its validFrom or its createdAt in `[start, end)`). */
export function mayHoldRange(t: TimeBounds, range: { start: number; end: number }): boolean {
  const overlaps = (min: number, max: number) => !Number.isNaN(min) && max >= range.start && min < range.end;
  return overlaps(t.createdMin, t.createdMax) || overlaps(t.fromMin, t.fromMax);
}
