/**
 * "What Recall knows about you" follows memory writes in the real side panel (the built extension
 * in headless Chromium, the fixture embedder packaged, no chat model: the profile is written by
 * the rules, and "remember that …" is answered without a model). A fresh user sees "Nothing yet";
 * after a "Remember that …" command, and after a preference added and then deleted in the Memory
 * tab (through the panel's `memory.*` messages), the profile shows it — or no longer does —
 * without the Rebuild button.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { callCore, openMemorySection, sendFromPanel, startExtensionSession, waitForCore, type ExtensionSession } from './harness';

const lines = (page: Page) => page.locator('[data-testid="about-me-line"]').evaluateAll((els) => els.map((e) => e.firstChild?.textContent?.trim() ?? ''));

describe('"What Recall knows about you" in the real side panel', () => {
  let session: ExtensionSession;
  let page: Page;
  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await waitForCore(page, 30_000);
  });
  afterAll(() => session?.dispose());

  it('follows "Remember that …" and a preference added and deleted by hand, without Rebuild', async () => {
    await page.getByTestId('tab-memory').click();
    await openMemorySection(page, 'about');
    await page.getByTestId('about-me-empty').waitFor();

    await page.getByTestId('tab-chat').click();
    await sendFromPanel(page, 'Remember that I prefer tea');
    await page.getByTestId('tab-memory').click();
    await expect.poll(() => lines(page), { timeout: 30_000 }).toEqual(['I prefer tea']);

    const walks = await callCore<{ id: string }>(page, 'memory.add', { kind: 'preference', text: 'Likes long walks by the sea' });
    await expect.poll(() => lines(page), { timeout: 30_000 }).toEqual(['Likes long walks by the sea', 'I prefer tea']);

    await callCore(page, 'memory.delete', { id: walks.id });
    await expect.poll(() => lines(page), { timeout: 30_000 }).toEqual(['I prefer tea']);
  });
});
