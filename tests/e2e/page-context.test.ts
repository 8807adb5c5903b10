/**
 * Issue 15 in the real extension (headless Chromium, the CPU engine on the real stories260K GGUF,
 * the packaged fixture embedder): the page you're on.
 * - "Attach this page" reads a page served by the test on 127.0.0.1; a question sent with it has
 *   the page's known sentence, title and URL in the `page` section of its prompt trace, and the
 *   context view shows the title and URL. The stored user message is only the question.
 * - "Remember this" on a selection (the context-menu handler, driven through the service worker:
 *   Playwright cannot click a native context menu, so the test calls the same handler with the
 *   click data Chrome passes) stores a pinned memory whose source is the page's URL and title,
 *   shown in the Memory tab.
 * - A PDF served by the test (`minimalPdf`, one known sentence) and open in Chromium's PDF viewer
 *   is read with pdf.js: the sentence is in the page section of the trace.
 * - A site on the blocked list is refused with its own message; nothing is attached.
 * - Nothing reaches the counting proxy: the page is fulfilled by the test inside the browser
 *   (Playwright `route`), so any request that tried to leave would be counted.
 *
 * The gesture: `activeTab` is granted by Chrome when the user clicks the toolbar button, a menu
 * entry or a shortcut; none of those can be pressed by Playwright in headless mode. The test gives
 * the build copy the host access that grant gives — `http://127.0.0.1/*` in its manifest's
 * `host_permissions`, for the test's origin only — and says so here; the shipped manifest has no
 * host permission for any page.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalPdf } from '../helpers/minimal-pdf';
import { callCore, extensionRequests, FIXTURE_GGUF as GGUF, loadFixtureGguf, sendFromPanel, startExtensionSession, type ExtensionSession } from './harness';

if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the page-context tests (they need the fixture GGUF).');

const ORIGIN = 'http://127.0.0.1:8765';
const ARTICLE_URL = `${ORIGIN}/mills.html`;
const TITLE = 'Tidal mills of the Atlantic coast';
const SENTENCE = 'The Eling tide mill near Southampton still grinds flour on two tides a day.';
const filler = (topic: string) => `${topic} ${'Engineers kept records of every tide and every repair over the centuries. '.repeat(5)}`;
const ARTICLE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${TITLE} | Example News</title></head><body>
<nav><a href="/">Home</a> · <a href="/news">News</a></nav>
<article>
<h1>${TITLE}</h1>
<p>${filler('Tidal mills used the sea as their reservoir.')}</p>
<h2>Eling</h2>
<p>${SENTENCE} ${filler('The mill was restored in 1980.')}</p>
<h2>Elsewhere</h2>
<p>${filler('Mills on the Rance estuary gave way to a tidal power station.')}</p>
</article><footer>© Example News</footer></body></html>`;

const PDF_URL = `${ORIGIN}/census.pdf`;
const PDF_TITLE = 'Gull census';
const PDF_SENTENCE = 'The lighthouse keeper counted 4217 gulls on Tuesday.';

interface StoredMessage {
  id: string;
  role: string;
  content: string;
}

describe.skipIf(!GGUF)('the page you are on, in a real browser', () => {
  let session: ExtensionSession;
  let panel: Page;
  let article: Page;

  beforeAll(async () => {
    session = await startExtensionSession({ launch: false });
    const manifestPath = join(session.extensionDir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { host_permissions?: string[] };
    expect(manifest.host_permissions?.some((p) => p.includes('127.0.0.1') || p.includes('<all_urls>'))).toBe(false);
    manifest.host_permissions = [...(manifest.host_permissions ?? []), 'http://127.0.0.1/*']; // the activeTab grant, simulated (see above)
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const browser = await session.launch();
    const pdf = Buffer.from(minimalPdf([PDF_SENTENCE], PDF_TITLE));
    await browser.context.route(`${ORIGIN}/**`, (route) =>
      route.request().url() === PDF_URL
        ? route.fulfill({ status: 200, contentType: 'application/pdf', body: pdf })
        : route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: ARTICLE }),
    );
    panel = await browser.openPanel();
    await loadFixtureGguf(panel);
    article = await browser.context.newPage();
    await article.goto(ARTICLE_URL);
    await panel.bringToFront();
  });
  afterAll(() => session?.dispose());

  it('attaches the page; the question is answered with the page in its own prompt section, title and URL included', async () => {
    const requestsBefore = session.proxy.requests.length;
    await panel.getByTestId('page-attach').click();
    const chip = panel.getByTestId('page-attached');
    await chip.waitFor();
    expect(await chip.getAttribute('data-url')).toBe(ARTICLE_URL);
    expect(await chip.textContent()).toContain(TITLE);

    await sendFromPanel(panel, 'Which mill still grinds flour?');
    expect(await chip.count()).toBe(0); // it went with that message only
    const [conversation] = await callCore<{ id: string }[]>(panel, 'conversations.list');
    const messages = await callCore<StoredMessage[]>(panel, 'messages.list', { conversationId: conversation!.id });
    expect(messages.map((m) => [m.role, m.role === 'user' ? m.content : '…'])).toEqual([
      ['user', 'Which mill still grinds flour?'],
      ['assistant', '…'],
    ]);
    const trace = await callCore<{ sections: { kind: string; text: string }[]; page?: { url: string; title: string } }>(panel, 'trace.get', {
      messageId: messages[1]!.id,
    });
    const section = trace.sections.find((s) => s.kind === 'page');
    expect(section?.text).toContain(SENTENCE);
    expect(section?.text).toContain(`Title: ${TITLE}`);
    expect(section?.text).toContain(`URL: ${ARTICLE_URL}`);
    expect(section?.text).not.toContain('Home'); // navigation is not article text
    expect(trace.page).toMatchObject({ url: ARTICLE_URL, title: TITLE });

    // The context view shows the page with its title and URL.
    await panel.getByTestId('open-context').click();
    await panel.getByTestId('context-page').waitFor();
    expect(await panel.getByTestId('context-page-title').textContent()).toBe(TITLE);
    expect(await panel.getByTestId('context-page-url').textContent()).toBe(ARTICLE_URL);
    await panel.keyboard.press('Escape');

    // No page text became a memory, and nothing tried to leave the machine.
    const memories = await callCore<{ text: string }[]>(panel, 'memory.list', { namespace: 'default', limit: 500 });
    expect(memories.some((m) => m.text.includes('Southampton'))).toBe(false);
    expect(extensionRequests(session.proxy.requests.slice(requestsBefore))).toEqual([]);
  });

  it('"Remember this" on a selection stores a pinned memory with the page as its source', async () => {
    const selection = 'Eling tide mill grinds flour on two tides a day';
    const id = await session.browser.serviceWorker.evaluate(
      async ({ url, text }) => {
        const [tab] = await chrome.tabs.query({ url });
        const handlers = (globalThis as unknown as { recallPageHandlers: { onMenuClick: (info: unknown, tab: unknown) => Promise<string | null> } })
          .recallPageHandlers;
        return handlers.onMenuClick({ menuItemId: 'recall-remember', selectionText: text, pageUrl: url }, tab);
      },
      { url: ARTICLE_URL, text: selection },
    );
    expect(id).toEqual(expect.any(String));
    const memories = await callCore<{ id: string; text: string; pinned: boolean; sourceUrl?: string; sourceTitle?: string }[]>(panel, 'memory.list', {
      namespace: 'default',
      limit: 500,
    });
    expect(memories.find((m) => m.id === id)).toMatchObject({ text: selection, pinned: true, sourceUrl: ARTICLE_URL, sourceTitle: `${TITLE} | Example News` });

    await panel.getByTestId('tab-memory').click();
    const item = panel.locator(`[data-testid="memory-item"][data-id="${id}"]`);
    await item.waitFor();
    expect(await item.getByTestId('memory-page-source').getAttribute('data-url')).toBe(ARTICLE_URL);
    await panel.getByTestId('tab-chat').click();
  });

  it('"Ask Recall about the selection" and the "ask about this page" shortcut attach in the open panel', async () => {
    type Handlers = { onMenuClick: (info: unknown, tab: unknown) => Promise<string | null>; onCommand: (command: string, tab: unknown) => Promise<void> };
    await session.browser.serviceWorker.evaluate(async (url) => {
      const [tab] = await chrome.tabs.query({ url });
      const handlers = (globalThis as unknown as { recallPageHandlers: Handlers }).recallPageHandlers;
      await handlers.onMenuClick({ menuItemId: 'recall-ask-selection', selectionText: 'two tides a day', pageUrl: url }, tab);
    }, ARTICLE_URL);
    const chip = panel.getByTestId('page-attached');
    await chip.waitFor(); // the panel took it on `event.page`
    expect(await chip.textContent()).toContain('Selection attached');
    await panel.getByTestId('page-detach').click();
    await expect.poll(() => chip.count()).toBe(0);

    await session.browser.serviceWorker.evaluate(async (url) => {
      const [tab] = await chrome.tabs.query({ url });
      await (globalThis as unknown as { recallPageHandlers: Handlers }).recallPageHandlers.onCommand('ask-about-page', tab);
    }, ARTICLE_URL);
    await chip.waitFor();
    expect(await chip.textContent()).toContain('Page attached');
    expect(await chip.getAttribute('data-url')).toBe(ARTICLE_URL);
    await panel.getByTestId('page-detach').click();
  });

  it('a PDF open in the browser viewer is read with pdf.js: its sentence reaches the page section', async () => {
    const requestsBefore = session.proxy.requests.length;
    const pdfTab = await session.browser.context.newPage();
    await pdfTab.goto(PDF_URL).catch(() => undefined); // the viewer may report the navigation as aborted
    await panel.bringToFront();
    await panel.getByTestId('page-attach').click();
    const chip = panel.getByTestId('page-attached');
    await chip.waitFor();
    expect(await chip.getAttribute('data-url')).toBe(PDF_URL);
    expect(await chip.textContent()).toContain(PDF_TITLE); // the PDF's own metadata title

    await sendFromPanel(panel, 'How many gulls did the keeper count?');
    const [conversation] = await callCore<{ id: string }[]>(panel, 'conversations.list');
    const messages = await callCore<StoredMessage[]>(panel, 'messages.list', { conversationId: conversation!.id });
    const trace = await callCore<{ sections: { kind: string; text: string }[] }>(panel, 'trace.get', { messageId: messages.at(-1)!.id });
    const section = trace.sections.find((s) => s.kind === 'page');
    expect(section?.text).toContain(PDF_SENTENCE);
    expect(section?.text).toContain(`URL: ${PDF_URL}`);
    expect(extensionRequests(session.proxy.requests.slice(requestsBefore))).toEqual([]);
    await pdfTab.close();
  });

  it('a blocked site is refused with its own message, for the composer and the context menu alike', async () => {
    await callCore(panel, 'settings.set', { blockedSites: ['127.0.0.1:8765'] });
    await panel.getByTestId('page-attach').click();
    const notice = panel.locator('[data-testid="notice"][data-kind="error"]').last();
    await notice.waitFor();
    expect(await notice.textContent()).toContain('127.0.0.1 is on your list of sites never to read');
    expect(await panel.getByTestId('page-attached').count()).toBe(0);

    const id = await session.browser.serviceWorker.evaluate(async (url) => {
      const [tab] = await chrome.tabs.query({ url });
      const handlers = (globalThis as unknown as { recallPageHandlers: { onMenuClick: (info: unknown, tab: unknown) => Promise<string | null> } })
        .recallPageHandlers;
      return handlers.onMenuClick({ menuItemId: 'recall-remember', selectionText: 'never stored', pageUrl: url }, tab);
    }, ARTICLE_URL);
    expect(id).toBeNull();
    const memories = await callCore<{ text: string }[]>(panel, 'memory.list', { namespace: 'default', limit: 500 });
    expect(memories.some((m) => m.text === 'never stored')).toBe(false);
    await callCore(panel, 'settings.set', { blockedSites: [] });
  });

  it('reports no console errors', () => {
    expect(session.browser.console.errors).toEqual([]);
  });
});
