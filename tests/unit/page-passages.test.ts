/** Splitting a page into passages by structure (src/page/passages.ts) and reading it from a DOM (src/page/extract.ts, on jsdom). */
import { describe, expect, it } from 'vitest';
import { JSDOM } from 'jsdom';
import { splitPassages } from '../../src/page/passages';
import { extractPage } from '../../src/page/extract';
import type { PageBlock } from '../../src/model/page';

const h = (level: number, text: string): PageBlock => ({ kind: 'heading', level, text });
const p = (text: string): PageBlock => ({ kind: 'text', text });

describe('splitPassages', () => {
  it('starts a passage at each heading and keeps the heading path (a same-level heading replaces its sibling)', () => {
    const passages = splitPassages([
      p('Intro text.'),
      h(1, 'Guide'),
      p('About.'),
      h(2, 'Install'),
      p('Step one.'),
      p('Step two.'),
      h(2, 'Use'),
      p('Run it.'),
      h(1, 'FAQ'),
      p('Ask.'),
    ]);
    expect(passages).toEqual([
      { index: 0, heading: '', text: 'Intro text.' },
      { index: 1, heading: 'Guide', text: 'About.' },
      { index: 2, heading: 'Guide › Install', text: 'Step one.\nStep two.' },
      { index: 3, heading: 'Guide › Use', text: 'Run it.' },
      { index: 4, heading: 'FAQ', text: 'Ask.' },
    ]);
  });

  it('joins paragraphs up to the limit and cuts a longer paragraph at sentence ends', () => {
    // 10-character paragraphs, limit 25: two fit (10 + 1 + 10 = 21), a third would make 32.
    const ten = ['aaaaaaaaa.', 'bbbbbbbbb.', 'ccccccccc.'];
    expect(splitPassages(ten.map(p), 25).map((x) => x.text)).toEqual(['aaaaaaaaa.\nbbbbbbbbb.', 'ccccccccc.']);
    // Three sentences; Intl.Segmenter's sentence segments keep their trailing space: 21 + 20 + 17 characters.
    // Limit 41: the first two sentences end exactly at 41, the cut is there; limit 40: the cut falls after the first.
    const long = 'First sentence here. Second one is here. Third comes last.';
    expect(splitPassages([p(long)], 41).map((x) => x.text)).toEqual(['First sentence here. Second one is here.', 'Third comes last.']);
    expect(splitPassages([p(long)], 40).map((x) => x.text)).toEqual(['First sentence here.', 'Second one is here. Third comes last.']);
  });

  it('stops at maxPassages; a huge block is cut at sentence ends into passages of at most maxChars', () => {
    const huge = 'Word after word makes a sentence. '.repeat(60_000); // 2 MB of text in one block
    const all = splitPassages([p(huge)], 1200);
    expect(all.length).toBe(Math.ceil(huge.trim().length / 1190)); // every piece ends at a sentence end: 35 sentences of 34 characters = 1,190
    expect(all.every((x) => x.text.length <= 1200 && x.text.endsWith('sentence.'))).toBe(true);
    expect(splitPassages([p(huge), p('after')], 1200, 3).map((x) => x.index)).toEqual([0, 1, 2]);
  });

  it('skips empty blocks and headings with nothing under them, collapses whitespace', () => {
    expect(splitPassages([h(1, 'Empty'), h(1, 'Full'), p('  a\n\n b  '), p('   ')])).toEqual([{ index: 0, heading: 'Full', text: 'a b' }]);
    expect(splitPassages([])).toEqual([]);
  });
});

describe('extractPage (Readability on a copy of the document)', () => {
  const article = `<!doctype html><html><head><title>Tidal Mills | Example News</title></head><body>
    <nav><a href="/">Home</a> <a href="/news">News</a></nav>
    <article>
      <h1>Tidal mills of the Atlantic coast</h1>
      <p>Tidal mills used the sea itself as their reservoir. ${'They stored water at high tide and ran their wheels as it ebbed. '.repeat(4)}</p>
      <h2>How they worked</h2>
      <p>The Eling tide mill near Southampton still grinds flour on two tides a day. ${'A sluice gate held the pond until the sea fell. '.repeat(4)}</p>
      <ul><li>Pond gate</li><li>Water wheel</li></ul>
      <script>window.evil = 1</script>
    </article>
    <footer>Copyright</footer></body></html>`;

  it('keeps the article as heading and text blocks, without navigation, scripts or markup, and leaves the document unchanged', () => {
    const dom = new JSDOM(article, { url: 'http://127.0.0.1/mills' });
    (globalThis as { DOMParser?: unknown }).DOMParser = dom.window.DOMParser;
    const before = dom.window.document.documentElement.outerHTML;
    const page = extractPage(dom.window.document, 'http://127.0.0.1/mills');
    expect(page.url).toBe('http://127.0.0.1/mills');
    expect(page.title).toContain('Tidal');
    const texts = page.blocks.map((b) => b.text).join('\n');
    expect(texts).toContain('The Eling tide mill near Southampton still grinds flour on two tides a day.');
    expect(page.blocks).toContainEqual({ kind: 'heading', level: 2, text: 'How they worked' });
    expect(page.blocks).toContainEqual({ kind: 'text', text: 'Pond gate' });
    expect(texts).not.toContain('Home');
    expect(texts).not.toContain('window.evil');
    expect(texts).not.toContain('<');
    expect(dom.window.document.documentElement.outerHTML).toBe(before);
  });

  it('an empty page gives no blocks', () => {
    const dom = new JSDOM('<!doctype html><html><head><title>Blank</title></head><body></body></html>');
    (globalThis as { DOMParser?: unknown }).DOMParser = dom.window.DOMParser;
    expect(extractPage(dom.window.document, 'http://127.0.0.1/blank')).toEqual({
      url: 'http://127.0.0.1/blank',
      title: 'Blank',
      blocks: [],
      contentType: 'text/html',
    });
  });
});
