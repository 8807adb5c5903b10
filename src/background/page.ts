/**
 * The page the user is on, service-worker side: the context-menu entries (*Ask Recall about the
 * selection*, *Remember this*), the shortcuts (open the side panel; ask about the page) and the
 * panel's `page.read` / `page.takePending` requests. Each gesture handler calls
 * `chrome.sidePanel.open` first, synchronously, while the gesture still counts. The user's blocked
 * sites come from the core's settings and are checked before any script runs (`src/page`).
 * Nothing is read without a gesture, nothing is stored unless the user says so ("Remember this"),
 * and nothing is sent over the network.
 */
import browser from 'webextension-polyfill';
import { assertSender, emitEvent, onMessage, sendMessage } from '../messaging/protocol';
import { PageError, RecallError } from '../model/errors';
import type { PageAttachment, PendingPage } from '../model/page';
import { readTab, selectionAttachment, type PdfReader, type ReadableTab } from '../page/read-tab';

/** Context-menu entry id: *Ask* about the selected text (opens the side panel and leaves the selection for it). */
export const MENU_ASK_SELECTION = 'recall-ask-selection';
/** Context-menu entry id: "Remember this" (the selection becomes a pinned memory, with the page's URL and title). */
export const MENU_REMEMBER = 'recall-remember';
/** Command name (`manifest.commands`, wxt.config.ts): open the side panel. */
export const COMMAND_OPEN_PANEL = 'open-side-panel';
/** Command name (`manifest.commands`, wxt.config.ts): open the side panel and read the current tab for it (*ask about the page*). */
export const COMMAND_ASK_PAGE = 'ask-about-page';

/** The part of `chrome.contextMenus.OnClickData` the handler reads. */
export interface MenuClick {
  menuItemId: string | number;
  selectionText?: string;
  pageUrl?: string;
}

/** What the handlers need from the rest of the worker (the core, for settings and memory). */
export interface PageDeps {
  /** Makes sure the core runs (`core.ensure`'s work). */
  ensureCore: () => Promise<void>;
}

let pending: PendingPage | null = null;

/** Keeps `next` for the panel and tells an open panel to take it. */
function leaveForPanel(next: PendingPage): void {
  pending = next;
  emitEvent('event.page', { at: Date.now() });
}

/** A failure as the panel gets it (a `PageError`'s code and params; other errors as `no_access`). */
function pendingError(error: unknown): PendingPage {
  const e = error instanceof RecallError ? error : new PageError('no_access', error instanceof Error ? error.message : String(error));
  return { error: { code: e.code, message: e.message, params: { ...e.params } } };
}

/** Extracts a PDF's text in the core (`pdf.read`: pdf.js lives in the offscreen document, never in the worker). */
function pdfReader(deps: PageDeps): PdfReader {
  return async (source) => {
    await deps.ensureCore();
    return sendMessage('pdf.read', source);
  };
}

async function blockedSites(deps: PageDeps): Promise<string[]> {
  await deps.ensureCore();
  return (await sendMessage('settings.get')).blockedSites;
}

/**
 * Handles a context-menu click (`chrome.contextMenus.onClicked`). *Ask*: opens the side panel on
 * `tab` and leaves the selection for it; *Remember this*: stores the selection as a pinned memory
 * whose source is the page's URL and title (`memory.add`). A blocked site is refused either way.
 * @returns the memory's id for *Remember this* (`null` otherwise or when refused).
 */
export async function onMenuClick(deps: PageDeps, info: MenuClick, tab: ReadableTab | undefined): Promise<string | null> {
  const ask = info.menuItemId === MENU_ASK_SELECTION;
  if (ask && tab?.id !== undefined) openPanel(tab.id);
  try {
    const attachment = selectionAttachment(
      { url: info.pageUrl ?? tab?.url ?? '', title: tab?.title ?? '', selection: info.selectionText ?? '' },
      await blockedSites(deps),
    );
    if (ask) {
      leaveForPanel({ attachment });
      return null;
    }
    if (info.menuItemId !== MENU_REMEMBER) return null;
    // No namespace: the core stores it in the active profile (the worker does not know it).
    const memory = await sendMessage('memory.add', {
      kind: 'fact',
      text: attachment.selection!,
      pinned: true,
      source: { url: attachment.url, title: attachment.title },
    });
    await showBadge(tab?.id, '✓');
    return memory.id;
  } catch (error) {
    if (ask) leaveForPanel(pendingError(error));
    else {
      console.warn('[page] Remember this was refused:', error instanceof Error ? error.message : error);
      await showBadge(tab?.id, '!');
    }
    return null;
  }
}

/** Handles a shortcut (`chrome.commands.onCommand`): opens the side panel; *ask about the page* also reads `tab` for it. */
export async function onCommand(deps: PageDeps, command: string, tab: ReadableTab & { windowId?: number }): Promise<void> {
  if (command !== COMMAND_OPEN_PANEL && command !== COMMAND_ASK_PAGE) return;
  if (tab?.id !== undefined) openPanel(tab.id);
  if (command !== COMMAND_ASK_PAGE) return;
  try {
    const content = await readTab(tab, await blockedSites(deps), pdfReader(deps));
    leaveForPanel({ attachment: content });
  } catch (error) {
    leaveForPanel(pendingError(error));
  }
}

/** Opens the side panel on a tab. Must run synchronously inside the gesture's handler. */
function openPanel(tabId: number): void {
  chrome.sidePanel.open({ tabId }).catch((error: unknown) => console.warn('[page] could not open the side panel:', error));
}

/** Shows a short badge on the toolbar button for a few seconds (feedback for *Remember this*). */
async function showBadge(tabId: number | undefined, text: string): Promise<void> {
  await chrome.action.setBadgeText({ text, ...(tabId !== undefined ? { tabId } : {}) }).catch(() => undefined);
  setTimeout(() => void chrome.action.setBadgeText({ text: '', ...(tabId !== undefined ? { tabId } : {}) }).catch(() => undefined), 4000);
}

/**
 * The tab the panel means: the active tab of its window; when that is the panel itself (opened as
 * a tab, `panelTabId`) or another of this extension's pages, the most recently used other tab of
 * that window.
 */
async function panelTab(windowId: number | undefined, panelTabId: number | undefined): Promise<chrome.tabs.Tab | undefined> {
  const own = browser.runtime.getURL('/' as never);
  const ours = (t: chrome.tabs.Tab) => t.id === panelTabId || (t.url ?? t.pendingUrl ?? '').startsWith(own);
  const tabs = await chrome.tabs.query(windowId !== undefined ? { windowId } : { lastFocusedWindow: true });
  const active = tabs.find((t) => t.active);
  if (active && !ours(active)) return active;
  return tabs.filter((t) => !ours(t)).sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0))[0];
}

/** Registers the menus, the shortcuts and the panel's requests. Call synchronously at start-up. */
export function registerPageListeners(deps: PageDeps): void {
  chrome.runtime.onInstalled.addListener(() => {
    chrome.contextMenus.removeAll(() => {
      chrome.contextMenus.create({ id: MENU_ASK_SELECTION, title: chrome.i18n.getMessage('menuAskSelection'), contexts: ['selection'] });
      chrome.contextMenus.create({ id: MENU_REMEMBER, title: chrome.i18n.getMessage('menuRemember'), contexts: ['selection'] });
    });
  });
  chrome.contextMenus.onClicked.addListener((info, tab) => void onMenuClick(deps, info, tab));
  // A native context menu or a browser shortcut cannot be pressed from Playwright: the end-to-end
  // test calls the same handlers the listeners call, with the data Chrome passes. They can do
  // nothing the menu or the shortcut cannot.
  (globalThis as unknown as Record<string, unknown>).recallPageHandlers = {
    onMenuClick: (info: MenuClick, tab: ReadableTab | undefined) => onMenuClick(deps, info, tab),
    onCommand: (command: string, tab: ReadableTab) => onCommand(deps, command, tab),
  };
  chrome.commands.onCommand.addListener((command, tab) => void onCommand(deps, command, tab ?? {}));
  onMessage('page.read', async ({ sender, data }): Promise<PageAttachment> => {
    assertSender(sender, ['sidepanel'], browser.runtime.id);
    const tab = await panelTab(data?.windowId, data?.panelTabId);
    if (!tab) throw new PageError('no_tab', 'There is no tab to read');
    return readTab(tab, await blockedSites(deps), pdfReader(deps));
  });
  onMessage('page.takePending', ({ sender }) => {
    assertSender(sender, ['sidepanel'], browser.runtime.id);
    const out = pending;
    pending = null;
    return out;
  });
}
