/**
 * Reading a page's content in the tab (needs a DOM: runs in the content script
 * `entrypoints/page-reader.ts`, injected on the user's gesture). Mozilla's Readability
 * (the Firefox reader view's library) finds the article on a copy of the document; its HTML is
 * parsed into an inert document and only its text is kept, block by block — no markup, script or
 * attribute of the page leaves the tab. A page Readability finds no article in is read from its
 * body (scripts, styles, navigation, forms and hidden elements left out).
 */
import { Readability } from '@mozilla/readability';
import { MAX_PAGE_BLOCKS, type PageBlock, type PageContent } from '../model/page';
import { fetchPdfInTab, isPdfDocument } from './pdf';

/** Elements whose text is one block. */
const BLOCK_TAGS = new Set(['P', 'LI', 'BLOCKQUOTE', 'PRE', 'TD', 'TH', 'DD', 'DT', 'FIGCAPTION', 'CAPTION', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6']);
/** Elements never read (the body fallback). */
const SKIPPED_TAGS = new Set([
  'SCRIPT',
  'STYLE',
  'NOSCRIPT',
  'TEMPLATE',
  'NAV',
  'FORM',
  'BUTTON',
  'SELECT',
  'TEXTAREA',
  'SVG',
  'IFRAME',
  'HEADER',
  'FOOTER',
  'ASIDE',
]);

/**
 * The readable content of `doc` (left unchanged: Readability works on a clone).
 * @param url the page's URL, kept as it is.
 * @returns title and blocks (at most `MAX_PAGE_BLOCKS`); `blocks` is empty when the page has no text.
 */
export function extractPage(doc: Document, url: string): PageContent {
  let article: ReturnType<Readability<string>['parse']> = null;
  try {
    article = new Readability(doc.cloneNode(true) as Document).parse();
  } catch {
    article = null; // a page Readability cannot handle is read from its body
  }
  const title = (article?.title || doc.title || url).replace(/\s+/g, ' ').trim();
  let blocks: PageBlock[] = [];
  if (article?.content) {
    // DOMParser documents are inert: no script runs, no resource loads.
    const parsed = new DOMParser().parseFromString(article.content, 'text/html');
    blocks = blocksOf(parsed.body);
  }
  if (blocks.length === 0 && doc.body) blocks = blocksOf(doc.body, true);
  return { url, title, blocks: blocks.slice(0, MAX_PAGE_BLOCKS), ...(doc.contentType ? { contentType: doc.contentType } : {}) };
}

/**
 * What the reader in the tab returns: the page's readable content (`extractPage`), or for a PDF
 * open in the browser's viewer (`isPdfDocument`) no blocks and its bytes (`pdfData`, base64) or
 * why they could not be fetched (`pdfError`) — the core extracts its text.
 */
export async function readPage(doc: Document, url: string): Promise<PageContent> {
  const content = extractPage(doc, url);
  if (!isPdfDocument(content.contentType, url, content.blocks)) return content;
  return { ...content, blocks: [], contentType: 'application/pdf', ...(await fetchPdfInTab(url)) };
}

/** The text blocks under `root` in document order: each block element that holds no other block element. */
export function blocksOf(root: Element, skipChrome = false): PageBlock[] {
  const out: PageBlock[] = [];
  const visit = (el: Element) => {
    if (out.length >= MAX_PAGE_BLOCKS) return;
    if (SKIPPED_TAGS.has(el.tagName.toUpperCase()) && (skipChrome || el.tagName.toUpperCase() !== 'HEADER')) return;
    if (skipChrome && (el.getAttribute('hidden') !== null || el.getAttribute('aria-hidden') === 'true')) return;
    const tag = el.tagName.toUpperCase();
    if (BLOCK_TAGS.has(tag) && !hasBlockChild(el)) {
      const text = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      if (text) out.push(/^H[1-6]$/.test(tag) ? { kind: 'heading', level: Number(tag[1]), text } : { kind: 'text', text });
      return;
    }
    for (const child of Array.from(el.children)) visit(child);
  };
  visit(root);
  return out;
}

function hasBlockChild(el: Element): boolean {
  for (const child of Array.from(el.getElementsByTagName('*'))) if (BLOCK_TAGS.has(child.tagName.toUpperCase())) return true;
  return false;
}
