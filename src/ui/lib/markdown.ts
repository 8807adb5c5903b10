/**
 * Markdown rendering of assistant replies: `marked` (GitHub-flavoured Markdown, single line
 * breaks kept) followed by `DOMPurify`. Model output is untrusted text, so:
 * - raw HTML in the reply is not recognized as HTML (marked's `html` and `tag` tokenizers are
 *   switched off), so it is escaped and shown as text while the Markdown around it still works;
 * - images become plain links (no remote request leaves the device without a click);
 * - the result is sanitized by DOMPurify (no scripts, event handlers, `javascript:` URLs,
 *   forms or styles), and links open in a new tab with `rel="noopener noreferrer"`.
 */
import { Marked, type Tokens } from 'marked';
import createDOMPurify from 'dompurify';

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Renders untrusted Markdown to sanitized HTML (a string safe for `{@html}`). */
export type MarkdownRenderer = (markdown: string) => string;

/**
 * Creates a renderer bound to a DOM `window` (DOMPurify needs a DOM; in tests a jsdom window).
 * @param window the global window of the page, or of a DOM implementation supported by DOMPurify.
 */
export function createMarkdownRenderer(window: Parameters<typeof createDOMPurify>[0]): MarkdownRenderer {
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
    const html = marked.parse(markdown, { async: false });
    return purify.sanitize(html, {
      USE_PROFILES: { html: true },
      FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'img', 'video', 'audio', 'iframe', 'svg', 'math'],
      FORBID_ATTR: ['style', 'class', 'id'],
    });
  };
}

let pageRenderer: MarkdownRenderer | null = null;

/** Renders Markdown with the page's own `window` (created on first use). Browser only. */
export function renderMarkdown(markdown: string): string {
  pageRenderer ??= createMarkdownRenderer(globalThis.window);
  return pageRenderer(markdown);
}
