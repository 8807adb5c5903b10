import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../../src/memory/long-term/retrieval/lexical';

/** MiniSearch's own `search` on the same index (what `LexicalIndex.search` reimplements). */
function reference(index: LexicalIndex, text: string, limit: number, filter?: (id: string) => boolean) {
  const ms = (index as unknown as { index: { search(q: string, o: object): { id: string; score: number; queryTerms: string[] }[] } }).index;
  return ms
    .search(text, filter ? { filter: (r: { id: string }) => filter(r.id) } : {})
    .slice(0, limit)
    .map((r) => ({ id: r.id, score: r.score, terms: [...new Set(r.queryTerms)] }));
}

const TEXTS = [
  'My cat Tofu likes sardines',
  'The user moved to Lisbon in 2023',
  'I live in Lisbon with my cat',
  '我的猫叫豆腐，喜欢沙丁鱼',
  '用户住在里斯本',
  'Coffee every morning, no sugar',
  'my sister has a cat too',
  'Prefers tea to coffee in the evening',
];

describe('LexicalIndex.search scoring', () => {
  it('ranks by BM25+ × matched terms, as computed by hand for a two-document index', () => {
    const index = new LexicalIndex();
    index.set('a', 'cat');
    index.set('b', 'cat dog');
    // text field: N = 2, df(cat) = 2, avg length 1.5. idf = ln(1 + 0.5/2.5) = ln 1.2.
    // a: tf 1, len 1 → ln1.2 · (0.5 + 2.2 / (1 + 1.2·(0.3 + 0.7/1.5)))
    const idf = Math.log(1.2);
    const a = idf * (0.5 + 2.2 / (1 + 1.2 * (0.3 + (0.7 * 1) / 1.5)));
    const b = idf * (0.5 + 2.2 / (1 + 1.2 * (0.3 + (0.7 * 2) / 1.5)));
    const hits = index.search('cat', 10);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b']);
    expect(hits[0]!.score).toBeCloseTo(a, 12);
    expect(hits[1]!.score).toBeCloseTo(b, 12);
    expect(hits[0]!.terms).toEqual(['cat']);
  });

  it('gives the same ids, scores (exactly), terms and order as MiniSearch.search, with filters, limits and discarded documents', () => {
    const index = new LexicalIndex();
    TEXTS.forEach((t, i) => index.set(`m${i}`, t, i % 2 ? 'life' : 'pets'));
    index.set('m1', 'The user moved to Porto, then back to Lisbon'); // re-indexed: the old postings are discarded
    index.delete('m5');
    const queries = ['my cat', 'Lisbon coffee cat cat', '我的猫', '里斯本 用户', 'tea', 'nothing matches zzz', 'where do I live?'];
    for (const q of queries) {
      expect(index.search(q, 50)).toEqual(reference(index, q, 50));
      expect(index.search(q, 2)).toEqual(reference(index, q, 2));
      const odd = (id: string) => Number(id.slice(1)) % 2 === 1;
      expect(index.search(q, 50, odd)).toEqual(reference(index, q, 50, odd));
    }
  });
});
