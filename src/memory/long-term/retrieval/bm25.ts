// One file (over ~300 lines): the scorer and its typed-array scratch and heap are one hot loop, kept
// together so the allocation-free scoring path reads in one place (postings access is in postings.ts).
/**
 * BM25+ scoring of a query straight from MiniSearch's postings (minisearch 7.2.0, pinned: this
 * reads its private fields), with the results of `MiniSearch.search` for the options
 * `LexicalIndex` uses (OR, no prefix or fuzzy matching, field boosts, BM25+ k1 = 1.2, b = 0.7,
 * δ = 0.5): the same ids, the same scores bit for bit, the same order, the same matched terms.
 *
 * What makes it cheaper than MiniSearch's own search:
 * - the posting lists are walked as typed-array copies (`./postings.ts`); a list that holds a
 *   discarded document not yet vacuumed is walked in MiniSearch's `Map` the way MiniSearch does
 *   (it removes the posting and lowers the document frequency mid-walk) and is not copied;
 * - per-query state lives in typed arrays indexed by short id, allocated once per index and reset
 *   only where a query wrote (no O(N) allocation or clearing per query); a term found in one
 *   field only (the usual case) is added to the totals in the same pass;
 * - top-k selection: documents are visited in first-match order and kept in a bounded heap by
 *   (score desc, first-match order asc) — the order of MiniSearch's stable sort —, and `filter`
 *   is called only for a document that would enter the heap, not for every match.
 * Every posting of every query term is still scored (no pruning bounds), so the results cannot
 * depend on an approximation.
 */
import { EMPTY_I32, EMPTY_U32, NO_LENGTH, PostingsCache, type FieldPostings, type MiniSearchInternals, type TermPostings } from './postings';

export type { MiniSearchInternals } from './postings';

/** BM25+ parameters: MiniSearch's defaults (the index is built with them). */
export const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;

/** One scored document: memory id, BM25+ score (higher = better) and the distinct query terms it matched. */
export interface Bm25Hit {
  id: string;
  score: number;
  /** Distinct query terms found in the document, in the order of their first occurrence in the query. */
  terms: string[];
}

/** Per-query state, by short document id (see module doc). */
class Scratch {
  capacity = 0;
  total = new Float64Array(0);
  termScore = new Float64Array(0);
  seenInTerm = new Uint8Array(0);
  /** Distinct query terms matched (0 = not matched by this query yet). */
  matchedCount = new Int32Array(0);
  /** Bit j set: distinct query term j (< 32) matched. */
  matchedMask = new Uint32Array(0);
  /** Documents touched by the current term. */
  touched = new Int32Array(0);
  /** Documents in first-match order. */
  order = new Int32Array(0);

  ensure(size: number): void {
    if (size <= this.capacity) return;
    const capacity = Math.max(size, Math.ceil(this.capacity * 1.5), 64);
    this.capacity = capacity;
    this.total = new Float64Array(capacity);
    this.termScore = new Float64Array(capacity);
    this.seenInTerm = new Uint8Array(capacity);
    this.matchedCount = new Int32Array(capacity);
    this.matchedMask = new Uint32Array(capacity);
    this.touched = new Int32Array(capacity);
    this.order = new Int32Array(capacity);
  }
}

/** Bounded heap of (score, first-match position) keeping the best `k`: worst at the root. */
class TopHeap {
  readonly scores: Float64Array;
  readonly positions: Int32Array;
  size = 0;
  constructor(readonly k: number) {
    this.scores = new Float64Array(k);
    this.positions = new Int32Array(k);
  }
  /** Whether (a) ranks below (b): lower score, or the same score and a later first match. */
  private worse(sa: number, pa: number, sb: number, pb: number): boolean {
    return sa < sb || (sa === sb && pa > pb);
  }
  /** Whether a candidate would be kept (called before the filter is). */
  admits(score: number, position: number): boolean {
    return this.size < this.k || this.worse(this.scores[0]!, this.positions[0]!, score, position);
  }
  push(score: number, position: number): void {
    const { scores, positions } = this;
    let i: number;
    if (this.size < this.k) {
      i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(score, position, scores[parent]!, positions[parent]!)) break;
        scores[i] = scores[parent]!;
        positions[i] = positions[parent]!;
        i = parent;
      }
    } else {
      i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= this.size) break;
        if (child + 1 < this.size && this.worse(scores[child + 1]!, positions[child + 1]!, scores[child]!, positions[child]!)) child += 1;
        if (!this.worse(scores[child]!, positions[child]!, score, position)) break;
        scores[i] = scores[child]!;
        positions[i] = positions[child]!;
        i = child;
      }
    }
    scores[i] = score;
    positions[i] = position;
  }
}

/**
 * Adds one cached posting list's BM25+ contributions (`fieldBoost · idf · (δ + tf·(k1+1) /
 * (tf + k1·(1 − b + b·len/avgLength)))`, MiniSearch's expression and order of operations) to
 * `termScore`, noting first-touched documents in `touched` from `touchedLength` on.
 * @returns the new length of `touched`.
 */
function scorePostings(
  rec: FieldPostings,
  idf: number,
  fieldBoost: number,
  avgLength: number,
  termScore: Float64Array,
  seenInTerm: Uint8Array,
  touched: Int32Array,
  touchedLength: number,
): number {
  const { k: k1, b, d } = BM25;
  const { n, docs, tfs, lengths } = rec;
  let t = touchedLength;
  for (let i = 0; i < n; i += 1) {
    const docId = docs[i]!;
    const tf = tfs[i]!;
    const raw = idf * (d + (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[i]!) / avgLength)));
    const weighted = fieldBoost * raw;
    if (seenInTerm[docId]) termScore[docId] = termScore[docId]! + weighted;
    else {
      seenInTerm[docId] = 1;
      termScore[docId] = weighted;
      touched[t++] = docId;
    }
  }
  return t;
}

/** The index of the only field with postings in `entry`, or −1 (none, or several). */
function singleField(entry: TermPostings): number {
  let only = -1;
  for (let f = 0; f < entry.length; f += 1) {
    if (entry[f]!.n === 0) continue;
    if (only >= 0) return -1;
    only = f;
  }
  return only;
}

/**
 * `scorePostings` for a term found in one field only, with the per-document totals updated in the
 * same pass: a first match sets the total and joins `order`; a later one adds to the total and,
 * for a distinct term not matched before (`bit`, one of the first 32), counts it.
 * @returns the new length of `order`.
 */
function scoreSingleField(rec: FieldPostings, idf: number, fieldBoost: number, avgLength: number, bit: number, s: Scratch, orderLength: number): number {
  const { k: k1, b, d } = BM25;
  const { n, docs, tfs, lengths } = rec;
  const { total, matchedCount, matchedMask, order } = s;
  let o = orderLength;
  for (let i = 0; i < n; i += 1) {
    const docId = docs[i]!;
    const tf = tfs[i]!;
    const weighted = fieldBoost * (idf * (d + (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[i]!) / avgLength))));
    if (matchedCount[docId] === 0) {
      matchedCount[docId] = 1;
      matchedMask[docId] = bit;
      total[docId] = weighted;
      order[o++] = docId;
    } else {
      total[docId] = total[docId]! + weighted;
      if ((matchedMask[docId]! & bit) === 0) {
        matchedMask[docId] = matchedMask[docId]! | bit;
        matchedCount[docId] = matchedCount[docId]! + 1;
      }
    }
  }
  return o;
}

/**
 * Scores queries over one MiniSearch index (see module doc). One per `LexicalIndex`; tell it about
 * every change: `appendDocument` after an `add`, `discarded` after a `discard`.
 */
export class Bm25Scorer {
  private readonly postings: PostingsCache;
  private readonly scratch = new Scratch();

  /** @param fields indexed fields in MiniSearch's order, with their query boosts. */
  constructor(private readonly fields: ReadonlyArray<readonly [string, number]>) {
    this.postings = new PostingsCache(fields);
  }

  /**
   * Memory `id` is about to be discarded from `ms` (re-indexed or deleted; call before
   * `MiniSearch.discard`): only the cached lists that hold it are dropped, at their next use
   * (`PostingsCache.discarding`).
   */
  discarding(ms: MiniSearchInternals, id: string): void {
    this.postings.discarding(ms, id);
  }

  /** Whether the posting lists of `term` are cached (diagnostics and tests). */
  caches(term: string): boolean {
    return this.postings.has(term);
  }

  /** Document `docId` (the newest short id) was just added; see `PostingsCache.appendDocument`. */
  appendDocument(ms: MiniSearchInternals, docId: number, terms: () => Iterable<string>): void {
    this.postings.appendDocument(ms, docId, terms);
  }

  /**
   * The best `limit` documents for the query `terms` (the query's analysed terms in order;
   * duplicates count again, as in MiniSearch), best first, among those `filter` keeps (called
   * with the memory id, at most once per document, only for documents that would rank).
   */
  search(ms: MiniSearchInternals, terms: readonly string[], limit: number, filter?: (id: string) => boolean): Bm25Hit[] {
    if (limit <= 0 || terms.length === 0 || ms._documentCount === 0) return [];
    const s = this.scratch;
    s.ensure(ms._nextId);
    const { total, termScore, seenInTerm, matchedCount, matchedMask, touched, order } = s;
    const distinct: string[] = [];
    const distinctOf = terms.map((t) => {
      const j = distinct.indexOf(t);
      if (j >= 0) return j;
      distinct.push(t);
      return distinct.length - 1;
    });
    /** Matches of distinct terms 32 and up (rare: a very long query), by document. */
    const extra = new Map<number, Set<number>>();
    let orderLength = 0;
    const { k: k1, b, d } = BM25;
    const count = ms._documentCount;
    for (let t = 0; t < terms.length; t += 1) {
      const term = terms[t]!;
      const data = ms._index.get(term);
      if (data == null) continue;
      let touchedLength = 0;
      const entry = this.postings.get(ms, term, data);
      const j = distinctOf[t]!;
      const bit = j < 32 ? 1 << j : 0;
      const only = entry && bit !== 0 ? singleField(entry) : -1;
      if (only >= 0) {
        // One field only (the usual case): its contribution is the term's score, added to the
        // totals in the same pass (the same sums, in the same order, as the two passes below).
        const [field, fieldBoost] = this.fields[only]!;
        const rec = entry![only]!;
        const fieldId = ms._fieldIds[field]!;
        orderLength = scoreSingleField(rec, Math.log(1 + (count - rec.n + 0.5) / (rec.n + 0.5)), fieldBoost, ms._avgFieldLength[fieldId]!, bit, s, orderLength);
        continue;
      }
      const fresh: TermPostings | null = entry ? null : [];
      let clean = true;
      for (let f = 0; f < this.fields.length; f += 1) {
        const [field, fieldBoost] = this.fields[f]!;
        const fieldId = ms._fieldIds[field]!;
        const avgLength = ms._avgFieldLength[fieldId]!;
        if (entry) {
          const rec = entry[f]!;
          const n = rec.n;
          if (n === 0) continue;
          touchedLength = scorePostings(rec, Math.log(1 + (count - n + 0.5) / (n + 0.5)), fieldBoost, avgLength, termScore, seenInTerm, touched, touchedLength);
          continue;
        }
        // MiniSearch's own walk over its `Map` (also copies the list for the cache).
        const freqs = data.get(fieldId);
        const rec: FieldPostings = { map: freqs, n: 0, docs: EMPTY_I32, tfs: EMPTY_U32, lengths: EMPTY_U32 };
        fresh!.push(rec);
        if (freqs == null) continue;
        let matching = freqs.size;
        rec.docs = new Int32Array(matching);
        rec.tfs = new Uint32Array(matching);
        rec.lengths = new Uint32Array(matching);
        let idf = Math.log(1 + (count - matching + 0.5) / (matching + 0.5));
        const fieldLengths = this.postings.lengthsOf(ms, fieldId);
        for (const [docId, tf] of freqs) {
          // `discard` deletes a document's id and field lengths together, so one lookup tells both
          // (`lengthsOf` mirrors `_fieldLength`; a short id beyond it is read from the Map).
          const fieldLength = docId < fieldLengths.length ? fieldLengths[docId]! : (ms._fieldLength.get(docId)?.[fieldId] ?? NO_LENGTH);
          if (fieldLength === NO_LENGTH) {
            // A discarded document not yet vacuumed: MiniSearch drops the posting here too.
            ms.removeTerm(fieldId, docId, term);
            matching -= 1;
            idf = Math.log(1 + (count - matching + 0.5) / (matching + 0.5));
            clean = false;
            continue;
          }
          if (clean) {
            rec.docs[rec.n] = docId;
            rec.tfs[rec.n] = tf;
            rec.lengths[rec.n] = fieldLength;
            rec.n += 1;
          }
          const raw = idf * (d + (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * fieldLength) / avgLength)));
          const weighted = fieldBoost * raw;
          if (seenInTerm[docId]) termScore[docId] = termScore[docId]! + weighted;
          else {
            seenInTerm[docId] = 1;
            termScore[docId] = weighted;
            touched[touchedLength++] = docId;
          }
        }
      }
      if (fresh && clean) this.postings.put(term, fresh);
      for (let i = 0; i < touchedLength; i += 1) {
        const docId = touched[i]!;
        seenInTerm[docId] = 0;
        if (matchedCount[docId] === 0) {
          matchedCount[docId] = 1;
          matchedMask[docId] = bit;
          if (bit === 0) extra.set(docId, new Set([j]));
          total[docId] = termScore[docId]!;
          order[orderLength++] = docId;
        } else {
          total[docId] = total[docId]! + termScore[docId]!;
          if (bit !== 0) {
            if ((matchedMask[docId]! & bit) === 0) {
              matchedMask[docId] = matchedMask[docId]! | bit;
              matchedCount[docId] = matchedCount[docId]! + 1;
            }
          } else {
            let set = extra.get(docId);
            if (!set) extra.set(docId, (set = new Set()));
            if (!set.has(j)) {
              set.add(j);
              matchedCount[docId] = matchedCount[docId]! + 1;
            }
          }
        }
      }
    }
    // Documents in first-match order into the bounded heap; the filter only for those that would enter.
    const heap = new TopHeap(Math.min(limit, orderLength) || 1);
    for (let p = 0; p < orderLength; p += 1) {
      const docId = order[p]!;
      const score = total[docId]! * matchedCount[docId]!;
      if (!heap.admits(score, p)) continue;
      if (filter && !filter(ms._documentIds.get(docId) as string)) continue;
      heap.push(score, p);
    }
    const ranked = Array.from({ length: heap.size }, (_, i) => i).sort((x, y) => heap.scores[y]! - heap.scores[x]! || heap.positions[x]! - heap.positions[y]!);
    const hits: Bm25Hit[] = ranked.map((i) => {
      const docId = order[heap.positions[i]!]!;
      const mask = matchedMask[docId]!;
      const more = extra.get(docId);
      return {
        id: ms._documentIds.get(docId) as string,
        score: heap.scores[i]!,
        terms: distinct.filter((_, j) => (j < 32 ? (mask & (1 << j)) !== 0 : more?.has(j) === true)),
      };
    });
    for (let p = 0; p < orderLength; p += 1) {
      const docId = order[p]!;
      matchedCount[docId] = 0;
      matchedMask[docId] = 0;
    }
    return hits;
  }
}
