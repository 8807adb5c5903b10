/**
 * Markdown of assistant replies (src/ui/lib/markdown.ts) with marked + DOMPurify on a jsdom
 * window: Markdown renders, untrusted HTML never does.
 */
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { capNesting, createMarkdownRenderer, escapeHtml, MAX_MARKDOWN_NESTING } from '../../src/ui/lib/markdown';

const window = new JSDOM('').window;
const render = createMarkdownRenderer(window as unknown as Parameters<typeof createMarkdownRenderer>[0]);
/** Parses the output back into DOM to assert on elements rather than on string details. */
const dom = (html: string) => {
  const el = window.document.createElement('div');
  el.innerHTML = html;
  return el;
};

describe('renderMarkdown', () => {
  it('renders common Markdown, Chinese included', () => {
    const el = dom(render('# 标题\n\n**加粗** and `code`\n\n- 一\n- two\n\n```js\nlet a = 1 < 2;\n```'));
    expect(el.querySelector('h1')?.textContent).toBe('标题');
    expect(el.querySelector('strong')?.textContent).toBe('加粗');
    expect([...el.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['一', 'two']);
    expect(el.querySelector('pre code')?.textContent).toBe('let a = 1 < 2;\n');
  });

  it('keeps single line breaks (chat style)', () => {
    expect(dom(render('line one\nline two')).querySelectorAll('br')).toHaveLength(1);
  });

  it('shows raw HTML as text instead of running it', () => {
    const el = dom(render('<script>alert(1)</script> **still markdown** <img src=x onerror=alert(1)>'));
    expect(el.querySelector('script')).toBeNull();
    expect(el.querySelector('img')).toBeNull();
    expect(el.querySelector('strong')?.textContent).toBe('still markdown');
    expect(el.textContent).toContain('<script>alert(1)</script>');
    expect(el.textContent).toContain('<img src=x onerror=alert(1)>');
  });

  it('shows an HTML block as text', () => {
    const el = dom(render('<div onclick="steal()">\n<iframe src="https://evil.example"></iframe>\n</div>'));
    expect(el.querySelector('div, iframe')).toBeNull();
    expect(el.textContent).toContain('<iframe src="https://evil.example"></iframe>');
  });

  it('drops javascript: links and opens others safely in a new tab', () => {
    const el = dom(render('[bad](javascript:alert(1)) [good](https://example.com/a?b=1)'));
    const [bad, good] = [...el.querySelectorAll('a')];
    expect(bad!.getAttribute('href')).toBeNull();
    expect(good!.getAttribute('href')).toBe('https://example.com/a?b=1');
    expect(good!.getAttribute('target')).toBe('_blank');
    expect(good!.getAttribute('rel')).toBe('noopener noreferrer');
  });

  it('turns images into links so nothing is fetched without a click', () => {
    const el = dom(render('![a cat](https://tracker.example/p.png)'));
    expect(el.querySelector('img')).toBeNull();
    const link = el.querySelector('a');
    expect(link?.getAttribute('href')).toBe('https://tracker.example/p.png');
    expect(link?.textContent).toBe('a cat');
  });

  it('does not let an image title or URL break out of the attribute', () => {
    const el = dom(render('![x](https://e.example/"onmouseover="alert(1))'));
    for (const a of el.querySelectorAll('a')) expect(a.getAttribute('onmouseover')).toBeNull();
  });
});

describe('escapeHtml', () => {
  it('escapes the five HTML-special characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

describe('hostile nesting (issue 8, item 1)', () => {
  /** Depth of nested <blockquote> elements along the first chain. */
  const blockquoteDepth = (el: Element) => {
    let depth = 0;
    for (let node = el.querySelector('blockquote'); node; node = node.querySelector(':scope > blockquote')) depth++;
    return depth;
  };

  it("renders '>'.repeat(3000) + ' x' (which overflows marked's stack) capped at the nesting limit", () => {
    const text = '>'.repeat(3000) + ' x';
    const el = dom(render(text));
    expect(blockquoteDepth(el)).toBe(MAX_MARKDOWN_NESTING);
    // Nothing of the reply is lost: the markers beyond the cap are shown as text.
    expect(el.textContent!.replace(/\s+/g, '')).toBe('>'.repeat(3000 - MAX_MARKDOWN_NESTING) + 'x');
  });

  it('renders deeply nested lists, numbered lists and indentation without throwing', () => {
    for (const text of ['- '.repeat(3000) + 'x', '1. '.repeat(3000) + 'x', Array.from({ length: 2000 }, (_, i) => ' '.repeat(i * 2) + '- a').join('\n')]) {
      const el = dom(render(text));
      expect(el.querySelector('ul, ol')).not.toBeNull();
      expect(el.textContent).toContain(text.includes('a') ? 'a' : 'x');
    }
  });

  it('leaves ordinary Markdown and deep code inside fences unchanged', () => {
    const normal = '> quote\n> > nested\n\n- a\n  - b\n\n```\n' + '>'.repeat(100) + '\n```';
    expect(capNesting(normal)).toBe(normal);
    expect(capNesting('>'.repeat(MAX_MARKDOWN_NESTING) + ' x')).toBe('>'.repeat(MAX_MARKDOWN_NESTING) + ' x');
    expect(capNesting('>'.repeat(MAX_MARKDOWN_NESTING + 2) + ' x')).toBe('>'.repeat(MAX_MARKDOWN_NESTING) + '\\>> x');
  });

  it('falls back to plain, escaped text when rendering throws (real stack overflow, cap disabled)', () => {
    const uncapped = createMarkdownRenderer(window as unknown as Parameters<typeof createMarkdownRenderer>[0], { maxNesting: Infinity });
    const text = '>'.repeat(3000) + ' x <b>y</b>\nline 2';
    let html = '';
    expect(() => (html = uncapped(text))).not.toThrow();
    const el = dom(html);
    expect(el.querySelector('blockquote, b')).toBeNull();
    expect(el.querySelector('p.plain-fallback')).not.toBeNull();
    expect(el.textContent).toBe('>'.repeat(3000) + ' x <b>y</b>line 2');
    expect(el.querySelectorAll('br')).toHaveLength(1);
  });
});
