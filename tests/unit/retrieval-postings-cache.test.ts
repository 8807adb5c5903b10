import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../../src/memory/long-term/retrieval/lexical';
import type { Bm25Scorer } from '../../src/memory/long-term/retrieval/bm25';

/** MiniSearch's own `search` on the same index (what `LexicalIndex.search` reimplements), on a copy (a search drops discarded postings it meets). */
function reference(index: LexicalIndex, text: string, limit: number) {
  const copy = LexicalIndex.fromJSON(index.toJSON());
  const ms = (copy as unknown as { index: { search(q: string): { id: string; score: number; queryTerms: string[] }[] } }).index;
  return ms
    .search(text)
    .slice(0, limit)
    .map((r) => ({ id: r.id, score: r.score, terms: [...new Set(r.queryTerms)] }));
}

/** Compares with MiniSearch on the index as it was before the search (computed first: a search removes the discarded postings it meets). */
function same(index: LexicalIndex, text: string): void {
  const expected = reference(index, text, 10);
  expect(index.search(text, 10)).toEqual(expected);
}

const scorerOf = (index: LexicalIndex) => (index as unknown as { scorer: Bm25Scorer }).scorer;

describe('posting-list copies across re-indexing and deletes', () => {
  it('keeps the copies of terms a re-indexed or deleted memory does not hold, and drops those it holds', () => {
    const index = new LexicalIndex();
    index.set('a', 'Coffee every morning with my sister');
    index.set('b', 'Tea in the garden on Sundays');
    index.set('c', 'Coffee beans from Lisbon');
    index.set('d', 'My bike is green');
    const scorer = scorerOf(index);
    same(index, 'coffee');
    same(index, 'garden bike');
    expect(['coffee', 'garden', 'bike'].map((t) => scorer.caches(t))).toEqual([true, true, true]);

    // "b" holds neither "coffee" nor "bike": their copies stay (before: every copy was dropped).
    index.set('b', 'Tea in the garden on Saturdays');
    index.delete('d');
    expect(scorer.caches('coffee')).toBe(true);
    same(index, 'coffee');
    expect(scorer.caches('coffee')).toBe(true);
    // "garden" held the old "b", "bike" the deleted "d": those copies are dropped at their next use, and the
    // answers are MiniSearch's (its walk removes the discarded postings; the next query copies them again).
    same(index, 'garden bike');
    expect(scorer.caches('garden')).toBe(false);
    same(index, 'garden bike');
    expect(scorer.caches('garden')).toBe(true);

    // A re-indexed memory that holds a cached term: that copy is dropped, the answer stays exact.
    index.set('c', 'Coffee beans from Porto');
    same(index, 'coffee lisbon porto');
    same(index, 'coffee lisbon porto');
  });

  it('answers as MiniSearch from a snapshot that still holds postings of discarded memories, and while many memories are added after the first query', () => {
    const index = new LexicalIndex();
    for (let i = 0; i < 30; i++) index.set(`m${i}`, `note ${i % 3 === 0 ? 'coffee' : 'tea'} garden ${i % 5 === 0 ? 'bike' : 'walk'}`);
    index.set('m3', 'note tea only'); // discarded, not vacuumed: its postings travel in the snapshot
    index.delete('m10');
    const restored = LexicalIndex.fromJSON(index.toJSON());
    same(restored, 'coffee bike');
    same(restored, 'coffee bike');
    // Far more memories than the field-length table was built for: it grows, answers stay MiniSearch's.
    for (let i = 30; i < 400; i++) {
      restored.set(`m${i}`, `note ${i % 7 === 0 ? 'coffee' : 'tea'} ${i % 11 === 0 ? 'bike' : ''}`);
      if (i % 50 === 0) same(restored, 'coffee bike walk');
    }
    restored.set('m35', 'coffee bike again');
    same(restored, 'coffee bike walk note');
    same(restored, 'coffee bike walk note');
  });
});
