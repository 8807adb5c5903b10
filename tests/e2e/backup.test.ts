/**
 * Backups at any size, in the built extension in real Chromium (issue 8, item 2 and the import
 * faults): the panel's Export button makes the core write the file into OPFS in pages and the
 * panel downloads it from there; the Import input streams the picked file into OPFS and sends only
 * its name. The store is filled in the test (random 384-d vectors, written straight into the
 * extension's IndexedDB); `RECALL_E2E_BACKUP_MEMORIES` sets how many memories (default 2,000,
 * about 5 MB; 26,100 gives a file above 64 MiB, the size one runtime message cannot carry).
 * Then the memory core (offscreen document) is killed mid-import, and the browser is closed
 * mid-import: afterwards the store holds none of the file, nothing is duplicated, the staging
 * file is gone, and the panel says the import was undone; importing again works.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, openMemorySection, startExtensionSession, waitForCore, type ExtensionBrowser, type ExtensionSession } from './harness';

const MEMORIES = Number(process.env.RECALL_E2E_BACKUP_MEMORIES ?? 2000);
const T0 = Date.UTC(2025, 0, 1);

/** Writes `count` memories (ids `gen-…`, 384-d random vectors) straight into the extension's IndexedDB. */
function fillStore(page: Page, count: number): Promise<void> {
  return page.evaluate(
    async ({ count, t0 }) => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open('recall');
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      let seed = 12345;
      const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296) * 2 - 1;
      for (let start = 0; start < count; start += 1000) {
        await new Promise<void>((resolve, reject) => {
          const tx = db.transaction('memories', 'readwrite');
          const store = tx.objectStore('memories');
          for (let i = start; i < Math.min(count, start + 1000); i += 1) {
            const embedding = new Float32Array(384).map(random);
            store.put({
              id: `gen-${String(i).padStart(6, '0')}`,
              namespace: 'default',
              kind: 'fact',
              text: `Generated memory ${i}: the user mentioned item ${i} of their list, 第${i}条记录, while planning the week ahead with some detail.`,
              embedding,
              embeddingModel: 'e2e/random-384',
              importance: 0.5,
              createdAt: t0 + i,
              updatedAt: t0 + i,
              validFrom: t0,
              validUntil: null,
              current: 1,
              lastAccessedAt: null,
              accessCount: 0,
              sourceConversationId: null,
              sourceMessageIds: [],
              pinned: false,
              hash: `gen-${i}`,
            });
          }
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error);
        });
      }
      db.close();
    },
    { count, t0: T0 },
  );
}

/** Counts of memories (all, and generated ones by distinct id) and the import's journal/undo rows in `settings`. */
function storeState(page: Page): Promise<{ memories: number; importRows: string[] }> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('recall');
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const tx = db.transaction(['memories', 'settings'], 'readonly');
    const count = await new Promise<number>((r) => (tx.objectStore('memories').count().onsuccess = (e) => r((e.target as IDBRequest<number>).result)));
    const keys = await new Promise<IDBValidKey[]>(
      (r) => (tx.objectStore('settings').getAllKeys().onsuccess = (e) => r((e.target as IDBRequest<IDBValidKey[]>).result)),
    );
    db.close();
    return { memories: count, importRows: keys.map(String).filter((k) => k.startsWith('state.import')) };
  });
}

/** Names in OPFS `backups/` (staging files). */
function stagingFiles(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    let dir: FileSystemDirectoryHandle;
    try {
      dir = await root.getDirectoryHandle('backups');
    } catch {
      return [];
    }
    const names: string[] = [];
    for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    return names;
  });
}

/**
 * Samples the JS heap of the memory core (the offscreen document, which Playwright cannot see)
 * every 100 ms over the browser's DevTools protocol (`Runtime.getHeapUsage`).
 * @returns a function that stops sampling and resolves to the peak used heap in bytes (0 when no sample was taken).
 */
async function watchCoreHeap(browser: ExtensionBrowser): Promise<() => Promise<number>> {
  const cdp = await browser.context.browser()!.newBrowserCDPSession();
  const url = `chrome-extension://${browser.extensionId}/offscreen.html`;
  let peak = 0;
  let nextId = 1;
  let sessionId: string | null = null;
  let running = true;
  cdp.on('Target.receivedMessageFromTarget', (event) => {
    const message = JSON.parse(event.message) as { result?: { usedSize?: number } };
    if (typeof message.result?.usedSize === 'number') peak = Math.max(peak, message.result.usedSize);
  });
  const loop = (async () => {
    while (running) {
      try {
        if (!sessionId) {
          const target = (await cdp.send('Target.getTargets')).targetInfos.find((t) => t.url === url);
          if (target) sessionId = (await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: false })).sessionId;
        }
        if (sessionId) await cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id: nextId++, method: 'Runtime.getHeapUsage' }) });
      } catch {
        sessionId = null;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return async () => {
    running = false;
    await loop;
    await cdp.detach().catch(() => undefined);
    return peak;
  };
}

/** Opens the panel on its memory tab, once the core answers (so the database exists before the test reads it). */
async function openMemoryTab(browser: ExtensionBrowser): Promise<Page> {
  const page = await browser.openPanel();
  await page.getByTestId('tab-memory').click();
  await waitForCore(page);
  await openMemorySection(page, 'data');
  return page;
}

/** Starts an import of `path` from the panel and resolves once its first batches are committed (journal + ≥ 2 undo rows). */
async function importUntilHalfway(page: Page, path: string): Promise<void> {
  await page.getByTestId('memory-import-input').setInputFiles(path);
  for (let i = 0; ; i += 1) {
    const { importRows } = await storeState(page);
    if (importRows.includes('state.import') && importRows.filter((k) => k.startsWith('state.import.undo.')).length >= 2) return;
    if (i > 2400) throw new Error('the import never got halfway');
    await page.waitForTimeout(25);
  }
}

describe('backups at any size, and imports cut short', () => {
  let session: ExtensionSession;
  let exported: string;
  beforeAll(async () => void (session = await startExtensionSession()));
  afterAll(() => session?.dispose());

  it(`exports ${MEMORIES} memories with vectors through OPFS and imports the file back, whole`, async () => {
    const page = await openMemoryTab(session.browser);
    await fillStore(page, MEMORIES);
    const stopHeap = await watchCoreHeap(session.browser);
    const started = Date.now();
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 600_000 }), page.getByTestId('memory-export').click()]);
    exported = join(session.profile, download.suggestedFilename());
    await download.saveAs(exported);
    const exportMs = Date.now() - started;
    const bytes = statSync(exported).size;
    expect(download.suggestedFilename()).toMatch(/^recall-export-\d{4}-\d\d-\d\d\.json$/);
    expect(bytes).toBeGreaterThan(MEMORIES * 2000); // a 384-d vector alone is 2,048 base64 characters

    // Start from an empty store, then import the downloaded file through the panel.
    await callCore(page, 'memory.eraseAll');
    expect((await storeState(page)).memories).toBe(0);
    const importStarted = Date.now();
    // Record every phase the progress bar shows.
    await page.evaluate(() => {
      const seen = new Set<string>();
      (window as unknown as { phases: Set<string> }).phases = seen;
      new MutationObserver(() => {
        const bar = document.querySelector('[data-testid="transfer-progress"]');
        if (bar) seen.add(bar.getAttribute('data-phase') ?? '');
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await page.getByTestId('memory-import-input').setInputFiles(exported);
    const report = page.getByTestId('import-report');
    await report.waitFor({ timeout: 600_000 });
    const importMs = Date.now() - importStarted;
    expect(await page.evaluate(() => [...(window as unknown as { phases: Set<string> }).phases])).toContain('upload');
    expect(await report.getAttribute('data-added')).toBe(String(MEMORIES));
    expect(await storeState(page)).toEqual({ memories: MEMORIES, importRows: [] });
    // The import's staging copy is gone at once; the export's once its download had time to finish.
    expect((await stagingFiles(page)).filter((name) => !/^export-\d+-recall-export-/.test(name))).toEqual([]);
    const coreHeap = await stopHeap();
    const heap = await page.evaluate(() => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? null);
    const mib = (n: number | null) => (n === null ? '?' : (n / 1048576).toFixed(1));
    console.info(
      `[e2e backup] ${MEMORIES} memories, file ${mib(bytes)} MiB: export+download ${exportMs} ms, import ${importMs} ms, ` +
        `peak JS heap of the memory core ${mib(coreHeap)} MiB, panel JS heap after ${mib(heap)} MiB`,
    );
    await expect.poll(() => stagingFiles(page), { timeout: 90_000, interval: 1000 }).toEqual([]);
    await page.close();
  });

  it('the memory core killed mid-import: none of the file is kept, the panel says so, importing again works', async () => {
    const page = await openMemoryTab(session.browser);
    await callCore(page, 'memory.eraseAll');
    await importUntilHalfway(page, exported);
    expect((await storeState(page)).memories).toBeGreaterThan(0); // batches were committed
    await session.browser.serviceWorker.evaluate(() => chrome.offscreen.closeDocument());

    const error = page.getByTestId('import-error');
    await error.waitFor({ timeout: 120_000 });
    expect(await error.textContent()).toContain('interrupted');
    expect(await storeState(page)).toEqual({ memories: 0, importRows: [] });
    expect(await stagingFiles(page)).toEqual([]);

    await page.getByTestId('memory-import-input').setInputFiles(exported);
    await page.getByTestId('import-report').waitFor({ timeout: 600_000 });
    expect(await storeState(page)).toEqual({ memories: MEMORIES, importRows: [] });
    await page.close();
  });

  it('the browser closed mid-import: after the restart none of the file is kept and the panel says so', async () => {
    let page = await openMemoryTab(session.browser);
    await callCore(page, 'memory.eraseAll');
    await importUntilHalfway(page, exported);
    await session.closeBrowser();

    const browser = await session.launch();
    page = await openMemoryTab(browser);
    const error = page.getByTestId('import-error');
    await error.waitFor({ timeout: 120_000 });
    expect(await error.textContent()).toContain('interrupted');
    expect(await storeState(page)).toEqual({ memories: 0, importRows: [] });
    expect(await stagingFiles(page)).toEqual([]);
    expect(browser.console.errors).toEqual([]);
  });
});
