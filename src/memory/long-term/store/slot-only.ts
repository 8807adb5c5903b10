/**
 * The asked slot's members that no retriever listed ("slot-only", see `boundSlotOnly`), ranked on
 * the index's meta columns: a slot asked about can hold tens of thousands of memories
 * (`user:residence`), and only the few that can reach the top k enter the store's candidates.
 */
import { compareIds, type BlockIndex, type ScanFilter } from '../retrieval/blocks';
import { boundSlotOnlyColumns, SLOT_MATCH_WEIGHT, weightedScore, type SlotOnlyColumns, type WeightingOptions } from '../retrieval/fusion';
import { aboutAnotherPerson, SUBJECT_MISMATCH_PENALTY } from '../retrieval/subject';
import { TIME_MATCH_WEIGHT } from '../retrieval/time-filter';
import { acceptsSlot } from '../retrieval/blocks/scan';

/** What `slotOnlyMembers` ranks by: the query's side of the store's scoring. */
export interface SlotOnlyQuery {
  namespace: string;
  /** The asked slot (`memorySlotLabel` of the query text). */
  label: string;
  /** Query time (ms epoch): members whose validity ended by then are not candidates. */
  now: number;
  /** Ids a retriever listed (the fused lists' keys): those members are ranked with the listed candidates, not here. */
  listed: ReadonlyMap<string, unknown>;
  /** Whom the query asks about (`querySubject`): a member about another person loses `SUBJECT_MISMATCH_PENALTY`. */
  asked: string;
  /** The query's time window as a scan filter (`range` set), or `null`: members in it gain `TIME_MATCH_WEIGHT` and are `dated`. */
  window: ScanFilter | null;
  /** The slot members' weighting (`weightingForCandidate(weighting, true, true)`). */
  weighting: WeightingOptions;
  /** Places to keep (`boundSlotOnly`'s `head`). */
  head: number;
  /** Same-slot near-tie margin (`boundSlotOnly`'s `margin`). */
  margin: number;
}

/** What `slotOnlyMembers` found. */
export interface SlotOnlyResult {
  /** Slot-only members (valid at `now`, not listed), kept or not. */
  count: number;
  /** Of them, those in the window (0 without one): `applyTimeBoost`'s held-out count. */
  inWindow: number;
  /** The kept members (`boundSlotOnly`'s subset) with their final scores, in no particular order. */
  kept: { id: string; score: number }[];
}

/**
 * The slot-only members of `query.label` in `query.namespace` and the ones among them that can reach
 * the first `head` places, on the meta columns (`BlockIndex.forEachInSlot`): the store's scoring of
 * such a member, written out — relevance `0 + SLOT_MATCH_WEIGHT`, `− SUBJECT_MISMATCH_PENALTY` when
 * it is about another person (`aboutAnotherPerson` of its `subject` column), `+ TIME_MATCH_WEIGHT`
 * when in the window (`applyTimeBoost`), in that order (the same floating-point sums), then
 * `weightedScore` with its `updatedAt`, importance (1 when pinned) and the slot weighting — and the
 * tie-break's keys (in the window; current: the `current` flag set and still valid; stated at
 * `validFrom`, else `createdAt`) go into typed columns; `boundSlotOnlyColumns` picks the kept ones
 * (rank order: score desc, then the store's id order; `boundSlotOnly`'s docstring says why the rest
 * cannot reach the first `head` places). O(slot size) column reads and O(slot size · log head)
 * comparisons; no object per member: the columns are reused from query to query, and only the
 * kept members (all of them when the bound does not apply) are returned as objects.
 */
export function slotOnlyMembers(index: BlockIndex, query: SlotOnlyQuery): SlotOnlyResult {
  const { namespace, label, now, listed, asked, window, weighting, head, margin } = query;
  const columns = scratchColumns(index.slotSize(namespace, label));
  const { score, dated, current, time, slots } = columns;
  // The listed members by meta slot (a number compare per member, not a string-keyed lookup).
  const listedSlots = new Set<number>();
  for (const id of listed.keys()) {
    const slot = index.metaSlot(id, namespace);
    if (slot >= 0) listedSlots.add(slot);
  }
  let inWindow = 0;
  // Most members share a subject ("user"): the penalty is decided once per run of equal subjects.
  let lastSubject: string | null | undefined;
  let lastPenalized = false;
  index.forEachInSlot(namespace, label, now, (_id, b, s, slot) => {
    if (listedSlots.has(slot)) return;
    const i = columns.size++;
    let relevance = 0 + SLOT_MATCH_WEIGHT;
    const subject = b.subjects?.[s] ?? null;
    if (subject !== lastSubject) [lastSubject, lastPenalized] = [subject, aboutAnotherPerson(asked, subject)];
    if (lastPenalized) relevance -= SUBJECT_MISMATCH_PENALTY;
    const inside = window !== null && acceptsSlot(b, s, window);
    if (inside) {
      relevance += TIME_MATCH_WEIGHT;
      inWindow += 1;
    }
    score[i] = weightedScore(relevance, now - b.updatedAt[s]!, b.pinned[s] === 1 ? 1 : b.importance[s]!, weighting);
    dated[i] = inside ? 1 : 0;
    const until = b.validUntil[s]!;
    current[i] = b.current?.[s] === 1 && (Number.isNaN(until) || until > now) ? 1 : 0;
    const from = b.validFrom[s]!;
    time[i] = Number.isNaN(from) ? b.createdAt[s]! : from;
    slots[i] = slot;
  });
  const n = columns.size;
  const idOf = (i: number) => index.idAt(namespace, slots[i]!)!;
  const rankBefore = (a: number, b: number) => score[a]! > score[b]! || (score[a] === score[b] && compareIds(idOf(a), idOf(b)) < 0);
  const picked = boundSlotOnlyColumns(columns, head, margin, rankBefore) ?? Array.from({ length: n }, (_, i) => i);
  return { count: n, inWindow, kept: picked.map((i) => ({ id: idOf(i), score: score[i]! })) };
}

/** `SlotOnlyColumns` plus each member's meta slot. */
interface ScratchColumns extends SlotOnlyColumns {
  slots: Int32Array;
}

/**
 * Columns reused from one query to the next (`slotOnlyMembers` is synchronous and copies out what
 * it keeps), grown to the largest slot seen: no per-query allocation of a slot's size.
 */
let scratch: ScratchColumns = emptyColumns(0);

function emptyColumns(capacity: number): ScratchColumns {
  return {
    size: 0,
    score: new Float64Array(capacity),
    dated: new Uint8Array(capacity),
    current: new Uint8Array(capacity),
    time: new Float64Array(capacity),
    slots: new Int32Array(capacity),
  };
}

/** The scratch columns with room for `capacity` members, `size` 0. */
function scratchColumns(capacity: number): ScratchColumns {
  if (scratch.score.length < capacity) scratch = emptyColumns(Math.max(capacity, 2 * scratch.score.length));
  scratch.size = 0;
  return scratch;
}
