/**
 * Markdown of assistant replies (src/ui/lib/markdown.ts) with marked + DOMPurify on a jsdom
 * window: Markdown renders, untrusted HTML never does.
 */
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { createMarkdownRenderer, escapeHtml } from '../../src/ui/lib/markdown';

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
