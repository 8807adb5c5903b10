/**
 * PDFs open in the browser's viewer. The viewer's document holds no text (an `<embed>`), so the
 * reader in the tab fetches the PDF's bytes from the tab's own URL (same origin; `force-cache`:
 * the copy the browser already downloaded) and returns them base64 (`fetchPdfInTab`); the core
 * extracts the text layer with pdf.js (`extractPdf`, given the loaded `pdfjs-dist` module: the
 * core lazy-loads it with its packaged worker, `src/core/pdf.ts`; tests pass the Node build).
 * Each page becomes a heading "Page N" and its paragraphs; a PDF without a text layer (a scan)
 * gives no text blocks, which the reader reports as an empty page.
 */
import { MAX_PAGE_BLOCKS, MAX_PDF_BYTES, type PageBlock, type PageContent } from '../model/page';

/** The MIME type of a PDF document (`document.contentType` in the browser's viewer). */
export const PDF_MIME = 'application/pdf';

/** The part of the `pdfjs-dist` module `extractPdf` uses (its `getDocument`). */
export interface PdfJsModule {
  getDocument(src: { data: Uint8Array; isEvalSupported?: boolean; useSystemFonts?: boolean; disableFontFace?: boolean }): {
    promise: Promise<PdfDocument>;
  };
}

/** The part of pdf.js's `PDFDocumentProxy` used here. */
interface PdfDocument {
  numPages: number;
  getMetadata(): Promise<{ info?: unknown }>;
  getPage(n: number): Promise<{ getTextContent(): Promise<{ items: unknown[] }> }>;
  destroy(): Promise<void>;
}

/**
 * Whether a document is a PDF: its MIME type says so, or its URL's path ends in `.pdf` and it
 * has no readable text of its own (`blocks` empty).
 */
export function isPdfDocument(contentType: string | undefined, url: string, blocks: readonly PageBlock[]): boolean {
  if (contentType === PDF_MIME) return true;
  try {
    return blocks.length === 0 && /\.pdf$/i.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/**
 * Fetches the PDF at `url` (the tab's own URL, from the reader in that tab) with the browser's
 * cached copy (`cache: 'force-cache'`).
 * @returns `{ pdfData }` (base64 bytes), or `{ pdfError }` with the reason: the fetch failed (file://
 *   URLs cannot be fetched; a network error) or the file is over `MAX_PDF_BYTES`. Never throws.
 */
export async function fetchPdfInTab(url: string): Promise<{ pdfData?: string; pdfError?: string }> {
  try {
    const response = await fetch(url, { cache: 'force-cache' });
    if (!response.ok) return { pdfError: `fetch_failed: HTTP ${response.status}` };
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > MAX_PDF_BYTES) return { pdfError: 'too_large' };
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length > MAX_PDF_BYTES) return { pdfError: 'too_large' };
    return { pdfData: bytesToBase64(bytes) };
  } catch (error) {
    return { pdfError: `fetch_failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Base64 of `bytes` (chunked `String.fromCharCode` + `btoa`: works in every context, Node 20 too). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The bytes of base64 text. @throws Error (`atob`'s `InvalidCharacterError`) when it is not base64. */
export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * The text of a PDF as page content: per page a heading "Page N" (level 2) and its paragraphs
 * (text items joined; a line end is a space, an empty line a paragraph break), at most
 * `MAX_PAGE_BLOCKS` blocks. Pages without text add nothing: a scanned PDF gives `blocks: []`.
 * @param pdfjs the loaded `pdfjs-dist` module (its worker configured).
 * @param bytes the PDF file.
 * @param title used when the PDF's metadata has no title (the tab's title, else the URL).
 * @throws Error from pdf.js when the bytes are not a PDF (`InvalidPDFException`) or are encrypted.
 */
export async function extractPdf(pdfjs: PdfJsModule, bytes: Uint8Array, url: string, title: string): Promise<PageContent> {
  // isEvalSupported: false — the extension's CSP forbids eval; no fonts are loaded for text only.
  const doc = await pdfjs.getDocument({ data: bytes, isEvalSupported: false, useSystemFonts: false, disableFontFace: true }).promise;
  try {
    const info = (await doc.getMetadata().catch(() => ({ info: undefined }))).info as { Title?: unknown } | undefined;
    const metaTitle = typeof info?.Title === 'string' ? info.Title.replace(/\s+/g, ' ').trim() : '';
    const blocks: PageBlock[] = [];
    for (let n = 1; n <= doc.numPages && blocks.length < MAX_PAGE_BLOCKS; n++) {
      const page = await doc.getPage(n);
      const paragraphs = paragraphsOf((await page.getTextContent()).items);
      if (paragraphs.length === 0) continue;
      blocks.push({ kind: 'heading', level: 2, text: `Page ${n}` }, ...paragraphs.map((text): PageBlock => ({ kind: 'text', text })));
    }
    return { url, title: metaTitle || title || url, blocks: blocks.slice(0, MAX_PAGE_BLOCKS), contentType: PDF_MIME };
  } finally {
    await doc.destroy();
  }
}

/** Paragraphs of a page's text items (`{ str, hasEOL }`; marked-content items have no `str`). */
function paragraphsOf(items: readonly unknown[]): string[] {
  let text = '';
  for (const item of items) {
    const { str, hasEOL } = item as { str?: unknown; hasEOL?: unknown };
    if (typeof str === 'string') text += str;
    if (hasEOL === true) text += '\n';
  }
  return text
    .split(/\n[ \t]*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}
