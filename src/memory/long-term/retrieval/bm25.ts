/**
 * BM25+ scoring of a query straight from MiniSearch's postings (minisearch 7.2.0, pinned: this
 * reads its private fields), with the results of `MiniSearch.search` for the options
 * `LexicalIndex` uses (OR, no prefix or fuzzy matching, field boosts, BM25+ k1 = 1.2, b = 0.7,
 * δ = 0.5): the same ids, the same scores bit for bit, the same order, the same matched terms.
 *
 * What makes it cheaper than walking MiniSearch's `Map`s each query:
 * - Postings cache. The first query that uses a term copies its posting lists (per field:
 *   short document id, term frequency, field length) into typed arrays; later queries walk those.
 *   A cached list is used only while it provably equals MiniSearch's: the same `Map` object with
 *   the same size, and no document discarded since it was copied (a discard — re-index or delete —
 *   drops the whole cache). Adding a document only appends postings (new short ids come last in
 *   a `Map`'s order), and `appendDocument` appends them to the cached lists of the added
 *   document's terms, so a memory stored after each chat turn does not send the next query back
 *   to the `Map`s. A list that holds a discarded document not yet vacuumed is scored the way
 *   MiniSearch does (it removes the posting and lowers the document frequency mid-walk) and is not
 *   cached. The cache holds at most `MAX_CACHED_POSTINGS` postings (least recently used terms go).
 * - Per-query state lives in typed arrays indexed by short id, allocated once per index and reset
 *   only where a query wrote (no O(N) allocation or clearing per query).
 * - Top-k selection: documents are visited in first-match order and kept in a bounded heap by
 *   (score desc, first-match order asc) — the order of MiniSearch's stable sort —, and `filter`
 *   is called only for a document that would enter the heap, not for every match.
 * The scan over a term's postings itself stays exhaustive (every matching document is scored),
 * so results never depend on pruning bounds.
 */

/** BM25+ parameters: MiniSearch's defaults (the index is built with them). */
export const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;

/** Most postings (document, term frequency, field length) the cache keeps, all terms together (12 bytes each). */
export const MAX_CACHED_POSTINGS = 1 << 20;

/** One scored document: memory id, BM25+ score (higher = better) and the distinct query terms it matched. */
export interface Bm25Hit {
  id: string;
  score: number;
  /** Distinct query terms found in the document, in the order of their first occurrence in the query. */
  terms: string[];
}

/** The private MiniSearch state the scorer reads (minisearch 7.2.0). */
export interface MiniSearchInternals {
  _index: { get(term: string): Map<number, Map<number, number>> | undefined };
  _fieldIds: Record<string, number>;
  _documentIds: Map<number, unknown>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
  /** The next short document id (every short id is below it). */
  _nextId: number;
  removeTerm(fieldId: number, docId: number, term: string): void;
}

/** A copy of one field's posting list of one term (`map` is MiniSearch's, `undefined` when the term is absent from the field). */
interface FieldPostings {
  map: Map<number, number> | undefined;
  n: number;
  docs: Int32Array;
  tfs: Uint32Array;
  lengths: Uint32Array;
}

/** A cached term: one entry per indexed field, in field order. */
type TermPostings = FieldPostings[];

const EMPTY_I32 = new Int32Array(0);
const EMPTY_U32 = new Uint32Array(0);

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
function scorePostings(rec: FieldPostings, idf: number, fieldBoost: number, avgLength: number, termScore: Float64Array, seenInTerm: Uint8Array, touched: Int32Array, touchedLength: number): number {
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
  private readonly cache = new Map<string, TermPostings>();
  private cachedPostings = 0;
  private readonly scratch = new Scratch();

  /** @param fields indexed fields in MiniSearch's order, with their query boosts. */
  constructor(private readonly fields: ReadonlyArray<readonly [string, number]>) {}

  /** A document was discarded (re-indexed or deleted): no cached list can be trusted. */
  discarded(): void {
    this.cache.clear();
    this.cachedPostings = 0;
  }

  /**
   * Document `docId` (short id, the newest) was just added; `terms` gives its terms (every term
   * of every field; repeats allowed; called only while something is cached): appends its postings
   * to the cached lists of those terms, or drops a list that no longer matches MiniSearch's. A
   * term left out is caught later (its cached list's size no longer matches and it is re-read).
   */
  appendDocument(ms: MiniSearchInternals, docId: number, terms: () => Iterable<string>): void {
    if (this.cache.size === 0) return;
    const lengths = ms._fieldLength.get(docId);
    for (const term of new Set(terms())) {
      const entry = this.cache.get(term);
      if (!entry) continue;
      const data = ms._index.get(term);
      let keep = true;
      for (let f = 0; f < this.fields.length && keep; f += 1) {
        const fieldId = ms._fieldIds[this.fields[f]![0]]!;
        const map = data?.get(fieldId);
        const rec = entry[f]!;
        if (rec.map === map && (map?.size ?? 0) === rec.n) continue; // the document does not have the term in this field
        const tf = map?.get(docId);
        if (rec.map !== map || map === undefined || map.size !== rec.n + 1 || tf === undefined || lengths === undefined) {
          keep = false;
          break;
        }
        if (rec.n === rec.docs.length) {
          const capacity = Math.max(8, rec.n * 2);
          const docs = new Int32Array(capacity);
          docs.set(rec.docs);
          const tfs = new Uint32Array(capacity);
          tfs.set(rec.tfs);
          const lens = new Uint32Array(capacity);
          lens.set(rec.lengths);
          rec.docs = docs;
          rec.tfs = tfs;
          rec.lengths = lens;
        }
        rec.docs[rec.n] = docId;
        rec.tfs[rec.n] = tf;
        rec.lengths[rec.n] = lengths[fieldId]!;
        rec.n += 1;
        this.cachedPostings += 1;
      }
      if (!keep) this.drop(term, entry);
    }
  }

  private drop(term: string, entry: TermPostings): void {
    this.cache.delete(term);
    for (const rec of entry) this.cachedPostings -= rec.n;
  }

  /** The cached lists of `term` when they still equal MiniSearch's (refreshed as most recently used), else `null`. */
  private cached(ms: MiniSearchInternals, term: string, data: Map<number, Map<number, number>>): TermPostings | null {
    const entry = this.cache.get(term);
    if (!entry) return null;
    for (let f = 0; f < this.fields.length; f += 1) {
      const map = data.get(ms._fieldIds[this.fields[f]![0]]!);
      const rec = entry[f]!;
      if (rec.map !== map || (map?.size ?? 0) !== rec.n) {
        this.drop(term, entry);
        return null;
      }
    }
    this.cache.delete(term);
    this.cache.set(term, entry);
    return entry;
  }

  /** Caches `entry` for `term`, evicting the least recently used terms beyond `MAX_CACHED_POSTINGS`. */
  private remember(term: string, entry: TermPostings): void {
    let n = 0;
    for (const rec of entry) n += rec.n;
    if (n > MAX_CACHED_POSTINGS) return;
    this.cache.set(term, entry);
    this.cachedPostings += n;
    for (const [oldest, old] of this.cache) {
      if (this.cachedPostings <= MAX_CACHED_POSTINGS) break;
      this.drop(oldest, old);
    }
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
      const entry = this.cached(ms, term, data);
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
        for (const [docId, tf] of freqs) {
          // `discard` deletes a document's id and field lengths together, so one lookup tells both.
          const docLengths = ms._fieldLength.get(docId);
          if (docLengths === undefined) {
            // A discarded document not yet vacuumed: MiniSearch drops the posting here too.
            ms.removeTerm(fieldId, docId, term);
            matching -= 1;
            idf = Math.log(1 + (count - matching + 0.5) / (matching + 0.5));
            clean = false;
            continue;
          }
          const fieldLength = docLengths[fieldId]!;
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
      if (fresh && clean) this.remember(term, fresh);
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
      return { id: ms._documentIds.get(docId) as string, score: heap.scores[i]!, terms: distinct.filter((_, j) => (j < 32 ? (mask & (1 << j)) !== 0 : more?.has(j) === true)) };
    });
    for (let p = 0; p < orderLength; p += 1) {
      const docId = order[p]!;
      matchedCount[docId] = 0;
      matchedMask[docId] = 0;
    }
    return hits;
  }
}
