/**
 * Issue 12's rough edges in the real side panel (the built extension in headless Chromium, the
 * fixture embedder packaged, no chat model needed: memories come from a "remember that …"
 * command, which the core answers without a model; other rows are seeded into the extension's
 * IndexedDB as a reply would leave them):
 * - item 3: conversation search in the drawer (English and Chinese, message text and titles);
 *   a rename leaves the conversation where it was in the list;
 * - item 5: deleting the open conversation and "Erase everything" show no error notice;
 * - item 8: a memory's "From …" is its source message and its date, not the conversation title;
 * - item 11: Export / Import / Erase sit above the memory list, the Erase question on screen;
 * - item 13: the chat shows the strategy's one-line description;
 * - item 14: "Raise it in Settings" focuses the Answer length field;
 * - item 6: at 320 and 360 px, English and Chinese, the Settings tab is not covered by the model
 *   chip (screenshots written to `RECALL_SCREENSHOTS` when set, for a person to look at).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { callCore, idbPut, openMemorySection, startExtensionSession, waitForCore, type ExtensionSession } from './harness';

const errorsShown = (page: Page) => page.locator('[data-testid="notice"][data-kind="error"]').count();

describe('the rough edges of issue 12 in the real side panel', () => {
  let session: ExtensionSession;
  let page: Page;
  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await waitForCore(page, 30_000);
  });
  afterAll(() => session?.dispose());

  /** A conversation with `texts` as alternating user/assistant messages, last active at `at + texts.length` (ms). */
  async function seedConversation(title: string, texts: string[], at: number): Promise<string> {
    const { id } = await callCore<{ id: string }>(page, 'conversations.create', { title });
    const record = await callCore<Record<string, unknown>>(page, 'conversations.get', { id });
    await idbPut(page, {
      conversations: [{ ...record, updatedAt: at + texts.length }],
      messages: texts.map((content, seq) => ({
        id: `${id}-${seq}`,
        conversationId: id,
        seq,
        role: seq % 2 ? 'assistant' : 'user',
        content,
        createdAt: at + seq,
        status: 'complete',
      })),
    });
    return id;
  }

  it('searches conversations in the drawer; a rename keeps the order; deleting the open one shows no error', async () => {
    const t0 = Date.now() - 86_400_000;
    const trip = await seedConversation('Weekend plans', ['I am going to Hangzhou next week', 'Hangzhou is lovely in spring.'], t0);
    const zh = await seedConversation('周末', ['我下周去杭州出差', '杭州的西湖很美。'], t0 + 1_000);
    await page.reload();
    await waitForCore(page);
    await page.getByTestId('conversations-toggle').click();
    const items = page.locator('[data-testid="conversation-item"]');
    await expect.poll(() => items.count()).toBe(2);
    const search = page.getByTestId('conversation-search');
    await search.fill('hangzhou');
    await expect.poll(() => items.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id))).toEqual([trip]);
    expect(await page.getByTestId('conversation-snippet').textContent()).toContain('Hangzhou is lovely in spring.');
    await search.fill('西湖');
    await expect.poll(() => items.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id))).toEqual([zh]);
    await search.fill('nothing like this');
    await expect.poll(() => page.getByTestId('conversation-search-status').textContent()).toContain('nothing like this');
    await search.fill('');
    await expect.poll(() => items.count()).toBe(2);

    // Rename the older one: it stays second, with its time.
    const before = await callCore<{ id: string; updatedAt: number }[]>(page, 'conversations.list');
    await page.locator(`[data-testid="conversation-item"][data-id="${trip}"] [data-testid="conversation-rename"]`).click();
    await page.locator('input.rename').fill('Trip to Hangzhou');
    await page.locator('input.rename').press('Enter');
    await expect.poll(() => page.locator(`[data-testid="conversation-item"][data-id="${trip}"] .name`).textContent()).toBe('Trip to Hangzhou');
    const after = await callCore<{ id: string; updatedAt: number }[]>(page, 'conversations.list');
    expect(after.map((c) => [c.id, c.updatedAt])).toEqual(before.map((c) => [c.id, c.updatedAt]));
    expect(await items.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id))).toEqual([zh, trip]);

    // Open one, then delete it from the drawer: a new chat, and no red notice.
    await page.locator(`[data-testid="conversation-item"][data-id="${zh}"] .entry`).click();
    await expect.poll(() => page.locator('[data-testid="message"]').count()).toBe(2);
    await page.getByTestId('conversations-toggle').click();
    await page.locator(`[data-testid="conversation-item"][data-id="${zh}"] [data-testid="conversation-delete"]`).click();
    await page.getByTestId('conversation-delete-confirm').click();
    await expect.poll(() => items.count()).toBe(1);
    await page.waitForTimeout(500); // the core's change event and the panel's re-read have landed
    expect(await errorsShown(page)).toBe(0);
  });

  it("a memory's From line is its source message and date; the toolbar is above the list; Erase asks on screen and shows no error", async () => {
    const { id } = await callCore<{ id: string }>(page, 'conversations.create', { title: 'An unrelated first message' });
    await callCore(page, 'chat.send', { conversationId: id, text: 'remember that I work at Acme', requestId: 'r1' });
    for (let i = 0; i < 12; i++) await callCore(page, 'memory.add', { namespace: 'default', kind: 'fact', text: `test fact number ${i} about the garden` });
    await page.getByTestId('tab-memory').click();
    const acme = page.locator('li', { hasText: 'I work at Acme' }).getByTestId('memory-item-source');
    await expect.poll(() => acme.textContent(), { timeout: 15_000 }).toContain('“remember that I work at Acme”');
    expect(await acme.textContent()).not.toContain('An unrelated first message');
    const today = new Intl.DateTimeFormat('en', { dateStyle: 'medium' }).format(new Date());
    expect((await acme.textContent())!.replace(/\s+/g, ' ')).toMatch(new RegExp(`${today.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

    await openMemorySection(page, 'data');

    const erase = page.getByTestId('erase-all');
    const firstMemory = page.getByTestId('memory-item-source').first();
    expect((await erase.boundingBox())!.y).toBeLessThan((await firstMemory.boundingBox())!.y);
    await erase.click();
    const confirm = page.getByTestId('erase-all-confirm');
    const viewport = page.viewportSize()!;
    const box = (await confirm.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
    await confirm.click();
    await expect.poll(() => page.locator('[data-testid="notice"][data-kind="info"]').count()).toBeGreaterThan(0);
    await page.waitForTimeout(500);
    expect(await errorsShown(page)).toBe(0);
  });

  it('shows the strategy in words in the chat, and "Raise it in Settings" focuses Answer length', async () => {
    await page.getByTestId('tab-chat').click();
    const help = page.getByTestId('strategy-select-help');
    await expect.poll(() => help.isVisible()).toBe(true);
    expect(await help.textContent()).not.toMatch(/Memory\b|Conversation\w/);

    const { id } = await callCore<{ id: string }>(page, 'conversations.create', { title: 'long answer' });
    const now = Date.now();
    await idbPut(page, {
      messages: [
        { id: `${id}-u`, conversationId: id, seq: 0, role: 'user', content: 'Tell me a long story', createdAt: now, status: 'complete' },
        { id: `${id}-a`, conversationId: id, seq: 1, role: 'assistant', content: 'Once upon a time', createdAt: now + 1, status: 'complete', truncated: true },
      ],
    });
    await page.reload();
    await waitForCore(page);
    await page.getByTestId('conversations-toggle').click();
    await page.locator(`[data-testid="conversation-item"][data-id="${id}"] .entry`).click();
    await page.getByTestId('truncated-note').getByRole('button').click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('setting-max-answer-tokens');
  });

  it('at 320 and 360 px, in English and Chinese, the Settings tab is whole and not under the model chip', async () => {
    const shots = process.env.RECALL_SCREENSHOTS ?? null;
    if (shots) mkdirSync(shots, { recursive: true });
    for (const locale of ['en', 'zh_CN'] as const) {
      await callCore(page, 'settings.set', { locale });
      for (const width of [320, 360]) {
        await page.setViewportSize({ width, height: 640 });
        await page.reload();
        await waitForCore(page);
        // The saved language is applied once the panel has loaded its state: measure after that.
        await page.locator(`html[lang="${locale === 'zh_CN' ? 'zh-CN' : 'en'}"]`).waitFor({ state: 'attached' });
        const tab = page.getByTestId('tab-settings');
        await tab.waitFor();
        const chip = page.getByTestId('engine-status');
        const tabBox = (await tab.boundingBox())!;
        const chipBox = (await chip.boundingBox())!;
        expect(tabBox.x + tabBox.width, `${locale} ${width}px`).toBeLessThanOrEqual(chipBox.x);
        expect(tabBox.x + tabBox.width, `${locale} ${width}px`).toBeLessThanOrEqual(width);
        // The label is not clipped inside the button either.
        expect(await tab.evaluate((el) => el.scrollWidth <= el.clientWidth), `${locale} ${width}px`).toBe(true);
        if (shots) await page.screenshot({ path: join(shots, `topbar-${locale}-${width}.png`), clip: { x: 0, y: 0, width, height: 120 } });
      }
    }
    await callCore(page, 'settings.set', { locale: 'auto' });
  });
});
