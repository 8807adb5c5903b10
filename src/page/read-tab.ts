/**
 * Reading a tab on the user's gesture (extension pages and the service worker): the tab's URL is
 * checked first — browser pages, the Web Store and the user's blocked sites are refused before
 * any script runs (`assertReadable`) — then the reader content script is injected with
 * `chrome.scripting` (permission `activeTab`: access to that tab only, granted by the gesture;
 * no host permissions) and its result returned. Nothing is sent anywhere: the text stays on the
 * device and is used for the next prompt only.
 */
import { PageError } from '../model/errors';
import { MAX_SELECTION_CHARS, type PageAttachment, type PageContent, type PdfSource } from '../model/page';
import { assertReadable, hostOf } from './sites';

/** Path of the reader content script in the package (WXT's output of `entrypoints/page-reader.ts`). */
export const PAGE_READER_SCRIPT = '/page-reader.js';

/** The part of a `chrome.tabs.Tab` reading needs. */
export interface ReadableTab {
  id?: number;
  /** Present only while the extension has access to the tab (the gesture's `activeTab` grant). */
  url?: string;
  title?: string;
}

/** Extracts a PDF's text (the core's `pdf.read`: pdf.js, lazy-loaded there). */
export type PdfReader = (source: PdfSource) => Promise<PageContent>;

/**
 * Reads `tab`'s readable content. A PDF open in the browser's viewer is fetched by the reader in
 * the tab and its text extracted by `readPdf`.
 * @param blocked the user's blocked-site patterns (`Settings.blockedSites`).
 * @param readPdf extracts a PDF's text; without it a PDF is refused as `unreadable`.
 * @throws PageError `no_tab` (no tab id), `no_access` (no URL or the injection was refused:
 *   no gesture granted access; a file:// page without "Allow access to file URLs"),
 *   `unreadable` (also a PDF the tab cannot fetch — e.g. a local file — is too large or broken), `blocked` (checked
 *   before injecting), `empty` (no text: also a scanned PDF without a text layer).
 */
export async function readTab(tab: ReadableTab, blocked: readonly string[], readPdf?: PdfReader): Promise<PageContent> {
  if (tab.id === undefined) throw new PageError('no_tab', 'There is no tab to read');
  if (!tab.url)
    throw new PageError('no_access', 'Recall has no access to this tab: use the toolbar button or the shortcut on the page first', { params: { host: '' } });
  assertReadable(tab.url, blocked);
  const host = hostOf(tab.url);
  let results: chrome.scripting.InjectionResult<unknown>[];
  try {
    results = await chrome.scripting.executeScript({ target: { tabId: tab.id }, files: [PAGE_READER_SCRIPT] });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/gallery|cannot be scripted|chrome:\/\/|extensions/i.test(message))
      throw new PageError('unreadable', `Recall cannot read this page: ${message}`, { params: { host } });
    if (tab.url.startsWith('file:'))
      throw new PageError('no_access', `Recall cannot read local files unless "Allow access to file URLs" is on for it in chrome://extensions: ${message}`, {
        params: { host },
      });
    throw new PageError('no_access', `Recall has no access to this tab: ${message}`, { params: { host } });
  }
  let content = results[0]?.result as PageContent | undefined;
  // The browser's PDF viewer: its text is not in the document; the reader fetched the file.
  if (content?.contentType === 'application/pdf') content = await pdfContent(tab.url, tab.title ?? '', content, host, readPdf);
  if (!content || !Array.isArray(content.blocks) || content.blocks.length === 0)
    throw new PageError('empty', `No readable text on ${host || 'this page'}`, { params: { host } });
  return { url: tab.url, title: typeof content.title === 'string' && content.title ? content.title : tab.url, blocks: content.blocks };
}

/** The text of the PDF the reader fetched in the tab. @throws PageError as `readTab` says. */
async function pdfContent(url: string, tabTitle: string, probe: PageContent, host: string, readPdf: PdfReader | undefined): Promise<PageContent> {
  if (!probe.pdfData || !readPdf) {
    const why = probe.pdfError ?? (readPdf ? 'no bytes' : 'no PDF reader');
    throw new PageError('unreadable', `Recall cannot read this PDF (${why})`, { params: { host } });
  }
  try {
    return await readPdf({ url, title: tabTitle || probe.title, data: probe.pdfData });
  } catch (error) {
    throw new PageError('unreadable', `Recall cannot read this PDF: ${error instanceof Error ? error.message : String(error)}`, { params: { host } });
  }
}

/**
 * A selection to attach (context menu): checked like a page (the blocked list applies to it too,
 * no script runs) and cut to `MAX_SELECTION_CHARS`.
 * @throws PageError `unreadable`, `blocked`, `empty` (nothing selected).
 */
export function selectionAttachment(input: { url: string; title?: string; selection: string }, blocked: readonly string[]): PageAttachment {
  assertReadable(input.url, blocked);
  const selection = input.selection.trim().slice(0, MAX_SELECTION_CHARS);
  if (!selection) throw new PageError('empty', 'Nothing is selected', { params: { host: hostOf(input.url) } });
  return { url: input.url, title: input.title || input.url, blocks: [], selection };
}
