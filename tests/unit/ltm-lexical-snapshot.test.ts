/**
 * The lexical snapshot written in slices (`LexicalIndex.toJSONSliced`, issue 9: the snapshot off the
 * hot path): the same string as the one-step `toJSON`, byte for byte — so the persisted format, its
 * version check and the store's crash repair are unchanged — with a pause between slices. And the
 * snapshot loaded in slices of CPU time (`LexicalIndex.fromJSONAsync`): the same index as the
 * one-step `fromJSON`, with a pause between slices (MiniSearch's own `loadJSAsync` paused with a
 * clamped timer every 1,000 keys and took no pause function).
 */
import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../../src/memory/long-term/retrieval/lexical';

const TEXTS = [
  'I was born in Chengdu',
  'My favourite band is Radiohead',
  'The cat is called Mochi and she likes tuna',
  '我的生日是三月五日',
  '邻居送了我一只小猫咪',
  'I work as a nurse in Porto; my manager is Ana',
];

describe('lexical snapshot in slices', () => {
  it('is byte-equal to toJSON (after adds, re-indexes and deletes) and pauses between slices of terms', async () => {
    const index = new LexicalIndex();
    for (let i = 0; i < 60; i++) index.set(`m${i}`, `${TEXTS[i % TEXTS.length]} (${i})`, i % 3 === 0 ? 'topic words' : undefined);
    index.set('m4', 'Moved to Hangzhou last month');
    index.delete('m7');
    index.delete('m8');
    let pauses = 0;
    // 10 terms a slice, no time limit: the count is exact and nothing depends on timing.
    const sliced = await index.toJSONSliced(async () => void (pauses += 1), { terms: 10, ms: Infinity });
    expect(sliced).toBe(index.toJSON());
    const terms = (JSON.parse(sliced) as { index: { index: unknown[] } }).index.index.length;
    expect(terms).toBeGreaterThan(30);
    expect(pauses).toBe(Math.floor(terms / 10));
    // It restores to the same answers.
    const restored = LexicalIndex.fromJSON(sliced);
    for (const q of ['Mochi tuna', '小猫', 'Hangzhou', 'nurse Porto']) expect(restored.search(q, 10)).toEqual(index.search(q, 10));
  });

  it('loads in slices to the same index as fromJSON: its snapshot byte-equal, the same answers, a pause between slices', async () => {
    const index = new LexicalIndex();
    for (let i = 0; i < 60; i++) index.set(`m${i}`, `${TEXTS[i % TEXTS.length]} (${i})`, i % 3 === 0 ? 'topic words' : undefined);
    index.delete('m8');
    const json = index.toJSON();
    const terms = (JSON.parse(json) as { index: { index: unknown[] } }).index.index.length;
    let pauses = 0;
    // sliceMs 0: every term ends a slice, so the count is exact and nothing depends on timing.
    const loaded = await LexicalIndex.fromJSONAsync(json, async () => void (pauses += 1), 0);
    expect(pauses).toBe(terms);
    const oneStep = LexicalIndex.fromJSON(json);
    // Byte-equal to the one-step load's snapshot (a restored trie lists its terms in another order than the live one).
    expect(loaded.toJSON()).toBe(oneStep.toJSON());
    for (const q of ['Mochi tuna', '小猫', 'Chengdu', 'nurse Porto', 'topic']) expect(loaded.search(q, 10)).toEqual(index.search(q, 10));
    // It keeps indexing after the load as the one-step load does.
    for (const lexical of [loaded, oneStep]) {
      lexical.set('m1', 'Moved to Hangzhou last month');
      lexical.delete('m2');
    }
    for (const q of ['Hangzhou', 'Radiohead', 'Mochi']) expect(loaded.search(q, 10)).toEqual(oneStep.search(q, 10));
    expect(loaded.size).toBe(58);
  });

  it('slices by CPU time by default (ms 0: a pause after every term), the same string', async () => {
    const index = new LexicalIndex();
    for (let i = 0; i < 30; i++) index.set(`m${i}`, `${TEXTS[i % TEXTS.length]} (${i})`);
    const terms = (JSON.parse(index.toJSON()) as { index: { index: unknown[] } }).index.index.length;
    let pauses = 0;
    expect(await index.toJSONSliced(async () => void (pauses += 1), { ms: 0 })).toBe(index.toJSON());
    expect(pauses).toBe(terms);
  });

  it('an empty index gives the same snapshot as toJSON, with no pause', async () => {
    const index = new LexicalIndex();
    let pauses = 0;
    expect(await index.toJSONSliced(async () => void (pauses += 1))).toBe(index.toJSON());
    expect(pauses).toBe(0);
  });
});
