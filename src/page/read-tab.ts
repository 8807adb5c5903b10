/**
 * Reading a tab on the user's gesture (extension pages and the service worker): the tab's URL is
 * checked first — browser pages, the Web Store and the user's blocked sites are refused before
 * any script runs (`assertReadable`) — then the reader content script is injected with
 * `chrome.scripting` (permission `activeTab`: access to that tab only, granted by the gesture;
 * no host permissions) and its result returned. Nothing is sent anywhere: the text stays on the
 * device and is used for the next prompt only.
 */
import { PageError } from '../model/errors';
import { MAX_SELECTION_CHARS, type PageAttachment, type PageContent } from '../model/page';
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

/**
 * Reads `tab`'s readable content.
 * @param blocked the user's blocked-site patterns (`Settings.blockedSites`).
 * @throws PageError `no_tab` (no tab id), `no_access` (no URL or the injection was refused:
 *   no gesture granted access), `unreadable`, `blocked` (checked before injecting), `empty` (no text).
 */
export async function readTab(tab: ReadableTab, blocked: readonly string[]): Promise<PageContent> {
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
    throw new PageError('no_access', `Recall has no access to this tab: ${message}`, { params: { host } });
  }
  const content = results[0]?.result as PageContent | undefined;
  // The browser's PDF viewer: its text is not in the document (reading PDFs is not built yet).
  if (content?.contentType === 'application/pdf')
    throw new PageError('unreadable', `Recall cannot read PDFs in the browser's viewer yet (${host})`, { params: { host } });
  if (!content || !Array.isArray(content.blocks) || content.blocks.length === 0)
    throw new PageError('empty', `No readable text on ${host || 'this page'}`, { params: { host } });
  return { url: tab.url, title: typeof content.title === 'string' && content.title ? content.title : tab.url, blocks: content.blocks };
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
