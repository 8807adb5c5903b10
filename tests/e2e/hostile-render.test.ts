/**
 * Issue 8, item 1 in real Chromium: a stored assistant reply `'>'.repeat(3000) + ' x'` (which
 * made marked overflow the stack and the panel show 0 messages of the conversation) renders, and
 * the user's message beside it is shown too. The messages are seeded into the extension's real
 * IndexedDB (the `messages` table the core reads), as an old import or a model reply would leave
 * them; no model is needed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, copyBuildWithPackagedEmbedder, launchExtension, removeDir, startCountingProxy, type CountingProxy, type ExtensionBrowser } from './harness';

const HOSTILE = '>'.repeat(3000) + ' x';
const USER_TEXT = 'Please quote this 3000 times';

describe('a hostile stored reply in the real side panel', () => {
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
    await browser?.close();
    await proxy?.close();
    removeDir(extensionDir);
    removeDir(profile);
  });

  it("shows both messages of a conversation whose reply is '>'.repeat(3000) + ' x'", async () => {
    const page = await browser.openPanel();
    // The panel starts the core (offscreen document); requests before that go unanswered.
    await expect.poll(async () => Array.isArray(await callCore(page, 'conversations.list').catch(() => null)), { timeout: 30_000 }).toBe(true);
    const conversation = await callCore<{ id: string }>(page, 'conversations.create', { title: 'hostile' });
    const now = Date.now();
    await page.evaluate(
      ([conversationId, user, reply, at]) =>
        new Promise<void>((resolve, reject) => {
          const open = indexedDB.open('recall');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const tx = open.result.transaction('messages', 'readwrite');
            const store = tx.objectStore('messages');
            store.put({ id: `${conversationId}-u`, conversationId, seq: 0, role: 'user', content: user, createdAt: at, status: 'complete' });
            store.put({ id: `${conversationId}-a`, conversationId, seq: 1, role: 'assistant', content: reply, createdAt: at + 1, status: 'complete' });
            tx.oncomplete = () => {
              open.result.close();
              resolve();
            };
            tx.onerror = () => reject(tx.error);
          };
        }),
      [conversation.id, USER_TEXT, HOSTILE, now] as const,
    );
    expect(await callCore<unknown[]>(page, 'messages.list', { conversationId: conversation.id })).toHaveLength(2);

    await page.reload();
    await page.getByTestId('conversations-toggle').click();
    await page.locator(`[data-testid="conversation-item"][data-id="${conversation.id}"] .entry`).click();
    const shown = page.locator('[data-testid="message"]');
    await expect.poll(() => shown.count(), { timeout: 15_000 }).toBe(2);
    expect(await page.locator('[data-testid="message"][data-role="user"]').textContent()).toContain(USER_TEXT);
    const reply = await page.locator('[data-testid="message"][data-role="assistant"]').textContent();
    // Every character of the reply is on screen: 32 levels as quotes, the rest as literal '>'.
    expect(reply!.replace(/\s+/g, '').length).toBeGreaterThanOrEqual(3000 - 32);
    expect(reply).toContain('x');
    expect(browser.console.errors).toEqual([]);
  });
});
