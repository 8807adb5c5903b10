/**
 * `wordPrefix` finds its cut with one `Segments.containing` lookup; this checks it against the
 * walk over every segment it replaced (the reference below, the code before the change), for
 * every `maxChars` of texts where ICU's word breaker works differently: English rules, Chinese
 * and Japanese dictionary runs (longer than the 64-character look-ahead window), Thai, emoji
 * (surrogate pairs), URLs and numbers.
 */
import { describe, expect, it } from 'vitest';
import { cutAtWord, wordPrefix } from '../../src/text/cut';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });
const DANGLING = /[\s,;:.!?、，；：。！？\-–—(（[「『"'“‘]+$/u;

/** `wordPrefix` as it was: the last segment start at or before the limit, found by walking the segments. */
function referenceWordPrefix(text: string, maxChars: number): string {
  const chars = Array.from(text);
  if (chars.length <= maxChars) return text;
  if (maxChars <= 0) return '';
  const limit = chars.slice(0, maxChars).join('').length;
  const window = text.slice(0, limit + 64);
  let cut = 0;
  for (const { index } of segmenter.segment(window)) {
    if (index > limit) break;
    cut = index;
  }
  const head = cut > 0 ? text.slice(0, cut).replace(DANGLING, '') : '';
  return head || chars.slice(0, maxChars).join('');
}

const TEXTS = [
  'User: I moved to Hangzhou last spring, and I love the tea there. Assistant: That sounds lovely — Hangzhou is famous for Longjing tea!',
  // One Han run of 90+ characters without punctuation: the dictionary segmentation crosses the look-ahead window.
  '我去年春天搬到了杭州我很喜欢那里的茶尤其是在上班前的早晨我们经常一起去西湖边散步然后在湖边的茶馆里喝龙井茶听说那里的茶叶都是当天早上采摘的所以特别新鲜我的同事也很喜欢',
  '用户：我叫艾玛，住在里斯本。助手：好的，艾玛！你在里斯本住了多久？用户：大概三年了，2021年10月搬来的。',
  '昨日は東京タワーに行きました。とても高くてきれいでした！カタカナのテキストとひらがなのテキスト。',
  'ภาษาไทยไม่มีช่องว่างระหว่างคำเราจึงต้องใช้พจนานุกรมในการตัดคำ',
  'Emoji 🎉🎉 party 👩‍👩‍👧 family 😀 at https://example.com/a/b?c=1&d=2 on 2024-05-03, total 1,234.56 dollars.',
  'Mixed 中文 and English 混合 text, 第3章 chapter three（括号）「引号」和更多内容 — done.',
];

describe('wordPrefix', () => {
  it('cuts where the walk over every segment cut, for every length', () => {
    let checked = 0;
    for (const base of TEXTS) {
      const text = `${base} ${base}`;
      const length = Array.from(text).length;
      for (let maxChars = -1; maxChars <= length + 1; maxChars += 1) {
        expect(wordPrefix(text, maxChars), `${JSON.stringify(text.slice(0, 20))}… at ${maxChars}`).toBe(referenceWordPrefix(text, maxChars));
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('keeps its documented examples', () => {
    expect(wordPrefix('test fact number two', 11)).toBe('test fact');
    expect(cutAtWord('test fact number two', 12)).toBe('test fact…');
    // A first word longer than the limit is cut inside it.
    expect(wordPrefix('https://example.com/path', 5)).toBe('https');
  });
});
