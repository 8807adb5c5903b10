/**
 * A cache of MiniSearch's posting lists as typed arrays (minisearch 7.2.0, pinned: this reads its
 * private fields), for `./bm25.ts`. The first query that uses a term copies its posting lists (per
 * field: short document id, term frequency, field length); later queries walk the copies. A copy
 * is used only while it provably equals MiniSearch's list: the same `Map` object with the same
 * size, and none of its documents discarded. A discard (re-index or delete) leaves the document's
 * postings in MiniSearch's `Map`s until they are vacuumed or a search meets them, so it marks the
 * document's short id (`discarding`, a byte per short id); the first use of a copy after a
 * discard checks its documents against those marks (a typed-array walk, no `Map` read) and drops
 * only a copy that holds one — the lists of the discarded document's terms —, so re-indexing one
 * memory does not send every later query back to the `Map`s. Adding a document only appends postings (new short ids come last in a `Map`'s order),
 * and `appendDocument` appends them to the copies of the added document's terms, so a memory
 * stored after each chat turn does not send the next query back to the `Map`s. At most
 * `MAX_CACHED_POSTINGS` postings are kept (least recently used terms go first).
 */

/** Most postings (document, term frequency, field length) the cache keeps, all terms together (12 bytes each). */
export const MAX_CACHED_POSTINGS = 1 << 20;

/** The private MiniSearch state the scorer reads (minisearch 7.2.0). */
export interface MiniSearchInternals {
  _index: { get(term: string): Map<number, Map<number, number>> | undefined };
  _fieldIds: Record<string, number>;
  _documentIds: Map<number, unknown>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
  /** Memory id → short document id (only for documents not discarded). */
  _idToShortId: Map<unknown, number>;
  /** The next short document id (every short id is below it). */
  _nextId: number;
  removeTerm(fieldId: number, docId: number, term: string): void;
}

/** A copy of one field's posting list of one term (`map` is MiniSearch's, `undefined` when the term is absent from the field). */
export interface FieldPostings {
  map: Map<number, number> | undefined;
  n: number;
  docs: Int32Array;
  tfs: Uint32Array;
  lengths: Uint32Array;
}

/** A cached term: one entry per indexed field, in field order. */
export type TermPostings = FieldPostings[];

/** A field length that MiniSearch does not hold (`PostingsCache.lengthsOf`). */
export const NO_LENGTH = 0xffffffff;

/** Empty arrays of a list with no posting. */
export const EMPTY_I32 = new Int32Array(0);
export const EMPTY_U32 = new Uint32Array(0);

/** The copies of posting lists (see module doc). One per MiniSearch index; tell it about every `add` (`appendDocument`) and every `discard` (`discarding`, before it). */
export class PostingsCache {
  private readonly cache = new Map<string, TermPostings>();
  private cachedPostings = 0;
  /** Byte per short document id: 1 once the document was discarded (short ids are never reused). */
  private discardedIds = new Uint8Array(0);
  /** Discards so far; a copy is checked against `discardedIds` once per new value. */
  private epoch = 0;
  /** Term → the `epoch` at which its copy was known to hold no discarded document. */
  private readonly checkedAt = new Map<string, number>();
  /**
   * Field lengths by short id, one array per field id (`NO_LENGTH` for a short id with no
   * lengths: discarded, or never used), equal to MiniSearch's `_fieldLength` once built: the walk
   * of a list not cached yet reads them instead of one `Map` lookup per posting. Built on first
   * use (O(documents), once), kept by `appendDocument` and `discarding`; `null` until then.
   */
  private fieldLengths: Uint32Array[] | null = null;

  /** @param fields indexed fields in MiniSearch's order (only the names are read). */
  constructor(private readonly fields: ReadonlyArray<readonly [string, number]>) {}

  /** Drops every cached list. */
  clear(): void {
    this.cache.clear();
    this.checkedAt.clear();
    this.cachedPostings = 0;
  }

  /**
   * The field lengths of every short id below `ms._nextId` for field id `fieldId` (`NO_LENGTH`
   * where MiniSearch has none: a discarded document), as MiniSearch's `_fieldLength` holds them.
   */
  lengthsOf(ms: MiniSearchInternals, fieldId: number): Uint32Array {
    let tables = this.fieldLengths;
    if (tables === null || tables[0]!.length < ms._nextId) tables = this.buildLengths(ms);
    return tables[fieldId]!;
  }

  /** (Re)builds `fieldLengths` from `ms._fieldLength` with room to grow. O(documents). */
  private buildLengths(ms: MiniSearchInternals): Uint32Array[] {
    const fields = Object.keys(ms._fieldIds).length;
    const size = Math.max(64, Math.ceil(ms._nextId * 1.25));
    const tables = Array.from({ length: fields }, () => new Uint32Array(size).fill(NO_LENGTH));
    for (const [docId, lengths] of ms._fieldLength) for (let f = 0; f < fields; f += 1) tables[f]![docId] = lengths[f] ?? NO_LENGTH;
    this.fieldLengths = tables;
    return tables;
  }

  /** Whether `term`'s lists are cached (not checked against discards: `get` does that). */
  has(term: string): boolean {
    return this.cache.has(term);
  }

  /**
   * Memory `id` is about to be discarded from `ms` (call before `MiniSearch.discard`): its short
   * id is marked, so a cached copy that holds it is dropped at its next use (see module doc).
   * Unknown ids are ignored. O(1) (amortized: the marks grow with the short ids).
   */
  discarding(ms: MiniSearchInternals, id: string): void {
    const docId = ms._idToShortId.get(id);
    if (docId === undefined) return;
    if (docId >= this.discardedIds.length) {
      const grown = new Uint8Array(Math.max(docId + 1, ms._nextId, this.discardedIds.length * 2, 64));
      grown.set(this.discardedIds);
      this.discardedIds = grown;
    }
    this.discardedIds[docId] = 1;
    this.epoch += 1;
    if (this.fieldLengths !== null && docId < this.fieldLengths[0]!.length) for (const table of this.fieldLengths) table[docId] = NO_LENGTH;
  }

  /** Whether some posting of `entry` is a discarded document. O(postings), typed arrays only. */
  private holdsDiscarded(entry: TermPostings): boolean {
    const marks = this.discardedIds;
    const size = marks.length;
    for (const rec of entry) {
      const { n, docs } = rec;
      for (let i = 0; i < n; i += 1) {
        const docId = docs[i]!;
        if (docId < size && marks[docId] === 1) return true;
      }
    }
    return false;
  }

  /**
   * Document `docId` (short id, the newest) was just added; `terms` gives its terms (every term
   * of every field; repeats allowed; called only while something is cached): appends its postings
   * to the cached lists of those terms, or drops a list that no longer matches MiniSearch's. A
   * term left out is caught later (its cached list's size no longer matches and it is re-read).
   */
  appendDocument(ms: MiniSearchInternals, docId: number, terms: () => Iterable<string>): void {
    const lengths = ms._fieldLength.get(docId);
    const tables = this.fieldLengths;
    if (tables !== null) {
      if (docId < tables[0]!.length) tables.forEach((table, f) => (table[docId] = lengths?.[f] ?? NO_LENGTH));
      else this.fieldLengths = null; // rebuilt, larger, at its next use
    }
    if (this.cache.size === 0) return;
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

  /** Forgets `term`'s lists. */
  private drop(term: string, entry: TermPostings): void {
    this.cache.delete(term);
    this.checkedAt.delete(term);
    for (const rec of entry) this.cachedPostings -= rec.n;
  }

  /** The copies of `term`'s lists when they still equal MiniSearch's (`data` = its current entry; refreshed as most recently used), else `null` (and forgotten). */
  get(ms: MiniSearchInternals, term: string, data: Map<number, Map<number, number>>): TermPostings | null {
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
    if (this.checkedAt.get(term) !== this.epoch) {
      if (this.holdsDiscarded(entry)) {
        this.drop(term, entry);
        return null;
      }
      this.checkedAt.set(term, this.epoch);
    }
    this.cache.delete(term);
    this.cache.set(term, entry);
    return entry;
  }

  /** Keeps `entry` (lists made from a `Map` with no discarded document) for `term`, evicting the least recently used terms beyond `MAX_CACHED_POSTINGS`. */
  put(term: string, entry: TermPostings): void {
    let n = 0;
    for (const rec of entry) n += rec.n;
    if (n > MAX_CACHED_POSTINGS) return;
    this.cache.set(term, entry);
    // Made from MiniSearch's lists with no discarded document met (the caller's `clean`).
    this.checkedAt.set(term, this.epoch);
    this.cachedPostings += n;
    for (const [oldest, old] of this.cache) {
      if (this.cachedPostings <= MAX_CACHED_POSTINGS) break;
      this.drop(oldest, old);
    }
  }
}
