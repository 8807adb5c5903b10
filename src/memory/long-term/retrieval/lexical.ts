/**
 * Lexical (full-text) index of long-term memories over MiniSearch (BM25+ ranking, MiniSearch's
 * defaults k1 = 1.2, b = 0.7, δ = 0.5), with the CJK-aware tokenizer of `./tokenize`.
 * It holds only ids and terms: texts and metadata stay in Dexie.
 */
import MiniSearch from 'minisearch';
import { tokenize } from './tokenize';

/** One lexical hit: memory id and its BM25+ score (higher = better, unbounded). */
export interface LexicalHit {
  id: string;
  score: number;
}

interface LexicalDoc {
  id: string;
  text: string;
  topic: string;
}

/** A MiniSearch index of memory texts (and topics, boosted ×0.5) keyed by memory id. */
export class LexicalIndex {
  private index = LexicalIndex.create();

  private static create(): MiniSearch<LexicalDoc> {
    return new MiniSearch<LexicalDoc>({
      idField: 'id',
      fields: ['text', 'topic'],
      storeFields: [],
      tokenize,
      // Terms are already normalized by `tokenize`.
      processTerm: (term) => term,
      searchOptions: { boost: { text: 1, topic: 0.5 }, combineWith: 'OR' },
    });
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
    this.index.add({ id, text, topic: topic ?? '' });
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
   * semantics); query terms of 4+ Latin letters also match as prefixes ("move" → "moved"), at
   * MiniSearch's default prefix weight (0.375).
   * @param text query in any language.
   * @param limit maximum hits returned (after `filter`).
   * @param filter keeps a hit when it returns true (applied to every match before `limit`, so
   *   filtering never starves the result).
   * @returns hits, best first.
   */
  search(text: string, limit: number, filter?: (id: string) => boolean): LexicalHit[] {
    if (!text.trim() || this.index.documentCount === 0) return [];
    const results = this.index.search(text, {
      prefix: (term) => term.length >= 4 && /^[a-z]+$/u.test(term),
      ...(filter ? { filter: (r) => filter(r.id as string) } : {}),
    });
    return results.slice(0, limit).map((r) => ({ id: r.id as string, score: r.score }));
  }
}
