/**
 * Import throughput in the built extension in real Chromium (issue 9, item 5): a backup holding
 * `RECALL_E2E_IMPORT_MESSAGES` messages (default 10,000, in 20 conversations, English and
 * Chinese) is exported through the panel, the store erased, and the file imported back through
 * the panel's Import input with its progress bar. The test checks that every message comes back
 * and prints the import time (the target is ≤ 10 s for 10k messages); the numbers go to the
 * report, not into an assertion, because the machine running e2e checks is shared.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, copyBuildWithPackagedEmbedder, launchExtension, removeDir, startCountingProxy, type CountingProxy, type ExtensionBrowser } from './harness';

const MESSAGES = Number(process.env.RECALL_E2E_IMPORT_MESSAGES ?? 10_000);
const CONVERSATIONS = 20;
const T0 = Date.UTC(2025, 0, 1);

/** Writes `count` messages in `CONVERSATIONS` conversations straight into the extension's IndexedDB. */
function fillMessages(page: Page, count: number): Promise<void> {
  return page.evaluate(
    async ({ count, conversations, t0 }) => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open('recall');
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      await new Promise<void>((resolve, reject) => {
        const tx = db.transaction(['conversations', 'messages'], 'readwrite');
        for (let c = 0; c < conversations; c += 1) {
          tx.objectStore('conversations').put({ id: `conv-${c}`, title: `Conversation ${c}`, namespace: 'default', strategy: { kind: 'summary-buffer', maxTokens: 2000 }, createdAt: t0, updatedAt: t0 + count });
        }
        const perConversation = Math.ceil(count / conversations);
        for (let i = 0; i < count; i += 1) {
          const c = Math.floor(i / perConversation);
          const seq = i % perConversation;
          const user = seq % 2 === 0;
          tx.objectStore('messages').put({
            id: `msg-${String(i).padStart(6, '0')}`,
            conversationId: `conv-${c}`,
            seq,
            role: user ? 'user' : 'assistant',
            content: user ? `Message ${i}: I am planning item ${i} of my week, 第${i}条消息, and I would like some advice.` : `Reply ${i}: here is a short suggestion for item ${i}. 这是第${i}条回复。`,
            createdAt: t0 + i * 1000,
            status: 'complete',
          });
        }
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
      });
      db.close();
    },
    { count, conversations: CONVERSATIONS, t0: T0 },
  );
}

function messageCount(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('recall');
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const n = await new Promise<number>((r) => (db.transaction('messages').objectStore('messages').count().onsuccess = (e) => r((e.target as IDBRequest<number>).result)));
    db.close();
    return n;
  });
}

describe('import throughput', () => {
  let extensionDir: string;
  let profile: string;
  let proxy: CountingProxy;
  let browser: ExtensionBrowser;

  beforeAll(async () => {
    extensionDir = await copyBuildWithPackagedEmbedder();
    profile = mkdtempSync(join(tmpdir(), 'recall-profile-'));
    proxy = await startCountingProxy();
    browser = await launchExtension({ extensionDir, userDataDir: profile, proxyPort: proxy.port });
  });

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await proxy?.close();
    removeDir(profile);
    removeDir(extensionDir);
  });

  it(`imports a backup of ${MESSAGES} messages through the panel, with its progress bar, and every message comes back`, async () => {
    const page = await browser.openPanel();
    await page.getByTestId('tab-memory').click();
    for (let i = 0; !(await callCore<{ ready?: boolean } | undefined>(page, 'core.ping').catch(() => undefined))?.ready; i += 1) {
      if (i > 600) throw new Error('the core did not answer');
      await page.waitForTimeout(100);
    }
    await fillMessages(page, MESSAGES);
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 600_000 }), page.getByTestId('memory-export').click()]);
    const file = join(profile, download.suggestedFilename());
    await download.saveAs(file);
    await callCore(page, 'memory.eraseAll');
    expect(await messageCount(page)).toBe(0);
    await page.evaluate(() => {
      // Phase → first time (ms) the progress bar showed it.
      const seen = new Map<string, number>();
      (window as unknown as { phases: Map<string, number> }).phases = seen;
      new MutationObserver(() => {
        const phase = document.querySelector('[data-testid="transfer-progress"]')?.getAttribute('data-phase');
        if (phase && !seen.has(phase)) seen.set(phase, Date.now());
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    const started = Date.now();
    await page.getByTestId('memory-import-input').setInputFiles(file);
    await page.getByTestId('import-report').waitFor({ timeout: 600_000 });
    const ms = Date.now() - started;
    const phases = await page.evaluate(() => [...(window as unknown as { phases: Map<string, number> }).phases]);
    expect(phases.map(([phase]) => phase)).toContain('write');
    expect(await messageCount(page)).toBe(MESSAGES);
    const timeline = phases.map(([phase, at]) => `${phase} from ${at - started} ms`).join(', ');
    console.info(`[e2e import] ${MESSAGES} messages in ${CONVERSATIONS} conversations: import ${ms} ms (progress bar: ${timeline})`);
    await page.close();
  });
});
