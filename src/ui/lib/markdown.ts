/**
 * Markdown rendering of assistant replies: `marked` (GitHub-flavoured Markdown, single line
 * breaks kept) followed by `DOMPurify`. Model output is untrusted text, so:
 * - raw HTML in the reply is not recognized as HTML (marked's `html` and `tag` tokenizers are
 *   switched off), so it is escaped and shown as text while the Markdown around it still works;
 * - images become plain links (no remote request leaves the device without a click);
 * - the result is sanitized by DOMPurify (no scripts, event handlers, `javascript:` URLs,
 *   forms or styles), and links open in a new tab with `rel="noopener noreferrer"`;
 * - every reply renders: container nesting (blockquotes, lists) is capped before parsing
 *   (`capNesting`), because marked tokenizes nested containers recursively and `'>'.repeat(3000)`
 *   overflows the stack; and when rendering throws anyway, the reply is shown as plain, escaped
 *   text (`plainTextHtml`) instead of failing the whole transcript.
 */
import { Marked, type Tokens } from 'marked';
import createDOMPurify from 'dompurify';

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/**
 * Deepest container nesting (blockquote `>` and list markers at the start of one line, plus
 * indentation levels) kept by `capNesting`. Deeper markers are shown as literal text. 32 is far
 * beyond any real reply and far below the depth (~1,500 in V8) at which marked overflows the stack.
 */
export const MAX_MARKDOWN_NESTING = 32;

/** One container marker at the start of a line: `>` or a list bullet/number, with its spaces. */
const CONTAINER_MARKER = /^(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t]))[ \t]*/u;

/**
 * Caps the container nesting of Markdown so that marked's recursive block tokenizer stays far
 * from the stack limit. Per line (outside top-level fenced code blocks): the first
 * `maxDepth` leading container markers (`>`, `-`, `+`, `*`, `1.`, `1)`) are kept and
 * the next one is backslash-escaped, so the rest of the line is ordinary text; leading
 * indentation wider than 4 columns per level (a tab = 4) is cut to that width. Text within the cap is
 * returned unchanged (same string).
 * @param markdown the reply text (any length).
 * @param maxDepth nesting kept (default `MAX_MARKDOWN_NESTING`; `Infinity` disables the cap).
 * @returns Markdown whose nesting depth is at most `maxDepth` (+ indentation levels).
 */
export function capNesting(markdown: string, maxDepth = MAX_MARKDOWN_NESTING): string {
  if (maxDepth === Infinity) return markdown;
  let fence: string | null = null;
  let changed = false;
  const lines = markdown.split('\n').map((line) => {
    const fenceMatch = /^ {0,3}(`{3,}|~{3,})/u.exec(line);
    if (fenceMatch) {
      const marker = fenceMatch[1]!;
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      return line;
    }
    if (fence !== null) return line;
    let out = line;
    const indent = /^[ \t]*/u.exec(out)![0];
    let columns = 0;
    for (const c of indent) columns += c === '\t' ? 4 : 1;
    if (columns > maxDepth * 4) out = ' '.repeat(maxDepth * 4) + out.slice(indent.length);
    let pos = /^[ \t]*/u.exec(out)![0].length;
    for (let depth = 0; ; depth++) {
      const m = CONTAINER_MARKER.exec(out.slice(pos));
      if (!m) break;
      if (depth === maxDepth) {
        out = `${out.slice(0, pos)}\\${out.slice(pos)}`;
        break;
      }
      pos += m[0].length;
    }
    if (out !== line) changed = true;
    return out;
  });
  return changed ? lines.join('\n') : markdown;
}

/**
 * The fallback rendering of a reply: its text HTML-escaped, line breaks kept, in one paragraph
 * (class `plain-fallback`). Cannot throw for any string.
 */
export function plainTextHtml(text: string): string {
  return `<p class="plain-fallback">${escapeHtml(text).replace(/\n/g, '<br>')}</p>`;
}

/**
 * Renders untrusted Markdown to sanitized HTML (a string safe for `{@html}`). Never throws: when
 * marked or DOMPurify fails on some input, the result is `plainTextHtml(markdown)`.
 */
export type MarkdownRenderer = (markdown: string) => string;

/**
 * Creates a renderer bound to a DOM `window` (DOMPurify needs a DOM; in tests a jsdom window).
 * @param window the global window of the page, or of a DOM implementation supported by DOMPurify.
 * @param options.maxNesting container nesting kept by `capNesting` (default
 *   `MAX_MARKDOWN_NESTING`; tests pass `Infinity` to reach the plain-text fallback).
 */
export function createMarkdownRenderer(window: Parameters<typeof createDOMPurify>[0], options: { maxNesting?: number } = {}): MarkdownRenderer {
  const maxNesting = options.maxNesting ?? MAX_MARKDOWN_NESTING;
  const purify = createDOMPurify(window);
  purify.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });
  const marked = new Marked({
    gfm: true,
    breaks: true,
    async: false,
    tokenizer: {
      // Returning `undefined` means "no HTML here": the text is tokenized as ordinary text.
      html: () => undefined,
      tag: () => undefined,
    },
    renderer: {
      html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
      image: ({ href, text }: Tokens.Image) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
    },
  });
  return (markdown) => {
    try {
      const html = marked.parse(capNesting(markdown, maxNesting), { async: false });
      return purify.sanitize(html, {
        USE_PROFILES: { html: true },
        FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'img', 'video', 'audio', 'iframe', 'svg', 'math'],
        FORBID_ATTR: ['style', 'class', 'id'],
      });
    } catch (error) {
      console.warn('Markdown rendering failed; showing the reply as plain text', error);
      return plainTextHtml(markdown);
    }
  };
}

let pageRenderer: MarkdownRenderer | null = null;

/** Renders Markdown with the page's own `window` (created on first use). Browser only. */
export function renderMarkdown(markdown: string): string {
  pageRenderer ??= createMarkdownRenderer(globalThis.window);
  return pageRenderer(markdown);
}
