import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../../src/memory/long-term/retrieval/lexical';
import { mulberry32 } from '../../bench/data/prng';

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

  it('stays equal to MiniSearch.search on generated data while memories are added, re-indexed and deleted between cached queries', () => {
    // Postings are cached after a query and extended when a memory is added (`bm25.ts`): every
    // answer is compared with MiniSearch's own exhaustive search on the same index.
    const rand = mulberry32(7);
    const words = [
      'cat',
      'cats',
      'Lisbon',
      'coffee',
      'tea',
      'moved',
      'moving',
      'sister',
      'dentist',
      'Friday',
      'garden',
      'bike',
      'green',
      'run',
      'running',
      'book',
      'piano',
      'work',
      'nurse',
      'office',
    ];
    const zh = ['猫', '咖啡', '里斯本', '姐姐', '牙医', '周五', '花园', '自行车', '跑步', '钢琴'];
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const sentence = () =>
      rand() < 0.3
        ? `我的${pick(zh)}和${pick(zh)}${pick(zh)}`
        : `${rand() < 0.5 ? 'My' : 'The'} ${Array.from({ length: 2 + Math.floor(rand() * 9) }, () => pick(words)).join(' ')}`;
    const index = new LexicalIndex();
    const live: string[] = [];
    let next = 0;
    const add = () => {
      const id = `g${next++}`;
      index.set(id, sentence(), rand() < 0.2 ? pick(words) : undefined);
      live.push(id);
    };
    for (let i = 0; i < 200; i++) add();
    const queries = [
      'my cat',
      'cat cat coffee',
      'Lisbon moving sister',
      '我的猫 咖啡',
      'dentist Friday garden bike green',
      // more than 32 distinct terms, with repeats
      `${words.join(' ')} ${zh.join(' ')} ${words.slice(0, 5).join(' ')} my piano`,
    ];
    const even = (id: string) => Number(id.slice(1)) % 2 === 0;
    // A search removes postings of discarded memories as it meets them (MiniSearch does too), so
    // each answer is compared with MiniSearch on a copy of the index as it was before the search.
    const same = (q: string, limit: number, filter?: (id: string) => boolean) => {
      const expected = reference(LexicalIndex.fromJSON(index.toJSON()), q, limit, filter);
      expect(index.search(q, limit, filter)).toEqual(expected);
    };
    const check = () => {
      for (const q of queries) {
        same(q, 50);
        same(q, 3);
        same(q, 50, even);
      }
    };
    for (let round = 0; round < 8; round++) {
      check();
      check(); // cached lists answer the same
      for (let i = 0; i < 5; i++) add(); // appended to cached lists
      if (round % 3 === 1) index.set(pick(live), sentence()); // re-indexed: old postings discarded
      if (round % 4 === 2) {
        const gone = live.splice(Math.floor(rand() * live.length), 1)[0]!;
        index.delete(gone);
      }
    }
    check();
  });
});
