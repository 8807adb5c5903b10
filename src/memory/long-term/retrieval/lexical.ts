/**
 * Lexical (full-text) index of long-term memories over MiniSearch (BM25+ ranking, MiniSearch's
 * defaults k1 = 1.2, b = 0.7, δ = 0.5), with the CJK-aware tokenizer of `./tokenize`.
 * It holds only ids and terms: texts and metadata stay in Dexie.
 *
 * Fields: `text` (the memory text), `topic` (boosted ×0.5) and `phrases`, the first-person terms
 * of the text (`firstPersonTerms`: "my cat" → `1p:cat`; boost 1). Queries are tokenized the same
 * way (words, Han bigrams and unigrams, first-person terms). MiniSearch multiplies a document's
 * summed BM25+ score by the number of query terms it matched, so a memory that matches
 * `1p:cat` as well as `cat` ranks well above one about someone else's cat.
 */
import MiniSearch, { type Options } from 'minisearch';
import { firstPersonTerms, tokenize } from './tokenize';

/** One lexical hit: memory id, its BM25+ score (higher = better, unbounded) and the query terms it matched. */
export interface LexicalHit {
  id: string;
  score: number;
  /** Distinct query terms (as `tokenize` / `firstPersonTerms` produce them) found in this memory. */
  terms: string[];
}

interface LexicalDoc {
  id: string;
  text: string;
  topic: string;
  /** The text again, tokenized into its first-person terms. */
  phrases: string;
}

/** Query terms: index terms plus first-person terms (the same analysis as the indexed fields). */
function queryTerms(text: string): string[] {
  return [...tokenize(text), ...firstPersonTerms(text)];
}

/** BM25+ parameters: MiniSearch's defaults (the index is built with them). */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;

/** The private MiniSearch state `LexicalIndex.search` reads (minisearch 7.x). */
interface MiniSearchInternals {
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

/** A MiniSearch index of memory texts (and topics, boosted ×0.5) keyed by memory id. */
export class LexicalIndex {
  private index = LexicalIndex.create();

  /**
   * Restores an index saved with `toJSON` (MiniSearch's own serialization; no re-tokenization).
   * @throws Error when `json` is not a MiniSearch snapshot.
   */
  static fromJSON(json: string): LexicalIndex {
    const index = new LexicalIndex();
    index.index = MiniSearch.loadJSON<LexicalDoc>(json, LexicalIndex.options());
    return index;
  }

  /**
   * `fromJSON` in slices: MiniSearch's `loadJSONAsync` (the `JSON.parse` is one step; the index
   * is then filled 1,000 terms at a time with a macrotask between), so a store opening in the
   * background keeps answering messages while a large snapshot loads. Same result as `fromJSON`.
   * @throws Error (rejects) when `json` is not a MiniSearch snapshot.
   */
  static async fromJSONAsync(json: string): Promise<LexicalIndex> {
    const index = new LexicalIndex();
    index.index = await MiniSearch.loadJSONAsync<LexicalDoc>(json, LexicalIndex.options());
    return index;
  }

  /** The index as MiniSearch JSON (a string; at 10k short memories ≈ 1–2 MB), for `fromJSON`. */
  toJSON(): string {
    return JSON.stringify(this.index);
  }

  private static create(): MiniSearch<LexicalDoc> {
    return new MiniSearch<LexicalDoc>(LexicalIndex.options());
  }

  /** Indexed fields in MiniSearch's order, with their query boosts. */
  private static readonly fields: ReadonlyArray<readonly [string, number]> = [
    ['text', 1],
    ['topic', 0.5],
    ['phrases', 1],
  ];

  private static options(): Options<LexicalDoc> {
    return {
      idField: 'id',
      fields: ['text', 'topic', 'phrases'],
      storeFields: [],
      tokenize: (text: string, field?: string) => (field === 'phrases' ? firstPersonTerms(text) : tokenize(text)),
      // Terms are already normalized by `tokenize`.
      processTerm: (term: string) => term,
      searchOptions: { boost: { text: 1, topic: 0.5, phrases: 1 }, combineWith: 'OR', tokenize: queryTerms },
    };
  }

  /** Number of indexed memories. */
  get size(): number {
    return this.index.documentCount;
  }

  /** Whether `id` is indexed. */
  has(id: string): boolean {
    return this.index.has(id);
  }

  /** Indexes (or re-indexes) one memory. */
  set(id: string, text: string, topic?: string): void {
    if (this.index.has(id)) this.index.discard(id);
    this.index.add({ id, text, topic: topic ?? '', phrases: text });
  }

  /** Removes one memory; unknown ids are ignored. */
  delete(id: string): void {
    if (this.index.has(id)) this.index.discard(id);
  }

  /** Drops everything. */
  clear(): void {
    this.index = LexicalIndex.create();
  }

  /**
   * BM25+ search. A document matches when it shares at least one term with the query (OR
   * semantics). No prefix or fuzzy matching: word forms are conflated by the stemmer ("moved",
   * "moving" → "move"), so "live" no longer matches "Liverpool".
   * @param text query in any language.
   * @param limit maximum hits returned (after `filter`).
   * @param filter keeps a hit when it returns true (applied to every match before `limit`, so
   *   filtering never starves the result).
   * @returns hits, best first.
   */
  search(text: string, limit: number, filter?: (id: string) => boolean): LexicalHit[] {
    if (!text.trim() || this.index.documentCount === 0) return [];
    // The scoring of `MiniSearch.search` with these options (OR, no prefix/fuzzy, field boosts,
    // BM25+ defaults), bit for bit and in the same order, without its per-hit objects and maps:
    // per query term (duplicates count again, as in MiniSearch) the fields' scores are summed in
    // field order, then added to the document's total; ties keep first-match order (stable sort).
    const ms = this.index as unknown as MiniSearchInternals;
    const terms = queryTerms(text).filter((t) => !!t);
    // Dense per-document state indexed by MiniSearch's short ids (0 … _nextId − 1).
    const size = ms._nextId;
    const total = new Float64Array(size);
    const termScore = new Float64Array(size);
    const seenInTerm = new Uint8Array(size);
    const matched: (string[] | undefined)[] = new Array(size);
    const order: number[] = []; // documents in first-match order
    const touched: number[] = [];
    const { k: k1, b, d } = BM25;
    const count = ms._documentCount;
    for (const term of terms) {
      const data = ms._index.get(term);
      if (data == null) continue;
      touched.length = 0;
      for (const [field, fieldBoost] of LexicalIndex.fields) {
        const fieldId = ms._fieldIds[field]!;
        const freqs = data.get(fieldId);
        if (freqs == null) continue;
        let matching = freqs.size;
        let idf = Math.log(1 + (count - matching + 0.5) / (matching + 0.5));
        const avgLength = ms._avgFieldLength[fieldId]!;
        for (const [docId, tf] of freqs) {
          // `discard` deletes a document's id and field lengths together, so one lookup tells both.
          const lengths = ms._fieldLength.get(docId);
          if (lengths === undefined) {
            // A discarded document not yet vacuumed: MiniSearch drops the posting here too.
            ms.removeTerm(fieldId, docId, term);
            matching -= 1;
            idf = Math.log(1 + (count - matching + 0.5) / (matching + 0.5));
            continue;
          }
          const fieldLength = lengths[fieldId]!;
          const raw = idf * (d + (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * fieldLength) / avgLength)));
          const weighted = fieldBoost * raw;
          if (seenInTerm[docId]) termScore[docId] = termScore[docId]! + weighted;
          else {
            seenInTerm[docId] = 1;
            termScore[docId] = weighted;
            touched.push(docId);
          }
        }
      }
      for (const docId of touched) {
        seenInTerm[docId] = 0;
        const hitTerms = matched[docId];
        if (hitTerms === undefined) {
          matched[docId] = [term];
          total[docId] = termScore[docId]!;
          order.push(docId);
        } else {
          total[docId] = total[docId]! + termScore[docId]!;
          if (!hitTerms.includes(term)) hitTerms.push(term);
        }
      }
    }
    const hits: LexicalHit[] = [];
    for (const docId of order) {
      const id = ms._documentIds.get(docId) as string;
      if (filter && !filter(id)) continue;
      const hitTerms = matched[docId]!;
      hits.push({ id, score: total[docId]! * (hitTerms.length || 1), terms: hitTerms });
    }
    hits.sort((x, y) => y.score - x.score);
    return hits.slice(0, limit);
  }
}
