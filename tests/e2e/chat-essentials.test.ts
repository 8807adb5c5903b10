/**
 * Issue 12 items 1, 2 and 4 in the real extension: headless Chromium, the CPU engine (wllama)
 * running the real stories260K GGUF, the packaged fixture embedding model.
 * - A pasted text far beyond the model's window is measured before it is sent: Enter sends
 *   nothing, the text stays in the box, the composer says why and offers to shorten it; the
 *   shortened text is sent and answered.
 * - Esc in the composer stops the streaming reply; a message sent while it streams shows that it
 *   waits, and is sent when the reply ends. Both are done from the page's own `event.chatDelta`
 *   listener at the first streamed piece (as faults.test.ts does), so the reply is still running.
 * - Regenerate replaces the last reply; Edit replaces a user message and every turn after it.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, FIXTURE_GGUF as GGUF, loadFixtureGguf, sendFromPanel, startExtensionSession, type ExtensionSession } from './harness';

if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the chat-essentials tests (they need the fixture GGUF).');

interface StoredMessage {
  id: string;
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  status: string;
}

const DONE = '[data-status="complete"], [data-status="error"], [data-status="aborted"]';

async function storedMessages(page: Page): Promise<StoredMessage[]> {
  const [conversation] = await callCore<{ id: string }[]>(page, 'conversations.list');
  return callCore<StoredMessage[]>(page, 'messages.list', { conversationId: conversation!.id });
}

describe.skipIf(!GGUF)('chat essentials in a real browser', () => {
  let session: ExtensionSession;
  let page: Page;

  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await loadFixtureGguf(page);
  });
  afterAll(() => session?.dispose());

  it('a pasted text too long for the model is not sent, stays in the box, and can be shortened to what fits', async () => {
    const sentence = 'The little girl walked to the park and played with her red ball all day long. ';
    const pasted = sentence.repeat(Math.ceil(13_500 / sentence.length)).trim();
    const input = page.getByTestId('chat-input');
    await input.fill(pasted);
    await input.press('Enter');
    const warning = page.getByTestId('composer-too-long');
    await warning.waitFor();
    expect(await warning.textContent()).toMatch(/needs [\d,]+ tokens and the model has room for [\d,]+/);
    expect(await input.inputValue()).toBe(pasted);
    expect(await page.locator('[data-testid="message"]').count()).toBe(0);
    const conversations = await callCore<{ messageCount: number }[]>(page, 'conversations.list');
    expect(conversations.every((c) => c.messageCount === 0)).toBe(true); // nothing was stored
    expect(await page.getByTestId('send').isDisabled()).toBe(true);

    await page.getByTestId('shorten').click();
    const shortened = await input.inputValue();
    expect(shortened.length).toBeLessThan(pasted.length);
    expect(pasted.startsWith(shortened)).toBe(true);
    expect(shortened.endsWith('day long.')).toBe(true); // cut at a sentence end
    await expect.poll(() => warning.count()).toBe(0);
    await page.getByTestId('send').click();
    const reply = page.locator('[data-testid="message"][data-role="assistant"]').last();
    await reply.and(page.locator(DONE)).waitFor({ timeout: 120_000 });
    expect(await reply.getAttribute('data-status')).toBe('complete');
    expect((await storedMessages(page)).map((m) => [m.role, m.content.length])).toEqual([
      ['user', shortened.length],
      ['assistant', expect.any(Number)],
    ]);
    await page.getByTestId('new-conversation').click();
    // The view empties once the core has created the chat: the next test sends to that one.
    await expect.poll(() => page.locator('[data-testid="message"]').count()).toBe(0);
  });

  it('Esc stops the streaming reply; a message sent meanwhile waits, then is sent when the reply ends', async () => {
    await callCore(page, 'settings.set', { maxAnswerTokens: 8192 }); // a long reply: the most the window allows
    await page.evaluate(() => {
      const g = globalThis as { __acted?: boolean; __queuedSeen?: boolean };
      chrome.runtime.onMessage.addListener((m: { type?: string }) => {
        if (m?.type !== 'event.chatDelta' || g.__acted) return;
        g.__acted = true;
        const input = document.querySelector<HTMLTextAreaElement>('[data-testid="chat-input"]')!;
        // A memory command: sent without measuring, so it is queued at once.
        input.value = 'Remember that the dragon is green';
        input.dispatchEvent(new Event('input', { bubbles: true }));
        input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
        setTimeout(() => {
          g.__queuedSeen = document.querySelector('[data-testid="queued"]') !== null;
          input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true }));
        }, 0);
      });
    });
    await page.getByTestId('chat-input').fill('Tell me a very long story about a dragon.');
    await page.getByTestId('send').click();
    const replies = page.locator('[data-testid="message"][data-role="assistant"]');
    await expect.poll(() => replies.count(), { timeout: 60_000 }).toBe(2);
    await replies.nth(1).and(page.locator(DONE)).waitFor({ timeout: 120_000 });
    expect(await page.evaluate(() => (globalThis as { __queuedSeen?: boolean }).__queuedSeen)).toBe(true);
    expect(await replies.nth(0).getAttribute('data-status')).toBe('aborted');
    expect(await replies.nth(1).getAttribute('data-status')).toBe('complete');
    expect((await storedMessages(page)).map((m) => [m.role, m.status, m.role === 'user' ? m.content : ''])).toEqual([
      ['user', 'complete', 'Tell me a very long story about a dragon.'],
      ['assistant', 'aborted', ''],
      ['user', 'complete', 'Remember that the dragon is green'],
      ['assistant', 'complete', ''],
    ]);
    expect(await page.getByTestId('queued').count()).toBe(0);
    await callCore(page, 'settings.set', { maxAnswerTokens: 32 });
  });

  it('Regenerate replaces the last reply; Edit replaces a message and every turn after it', async () => {
    await sendFromPanel(page, 'What happened next?');
    const before = await storedMessages(page);
    expect(before).toHaveLength(6);
    await page.getByTestId('regenerate').click();
    await expect.poll(async () => (await storedMessages(page)).at(-1)?.id, { timeout: 120_000 }).not.toBe(before.at(-1)!.id);
    const last = page.locator('[data-testid="message"][data-role="assistant"]').last();
    await last.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 120_000 });
    const regenerated = await storedMessages(page);
    expect(regenerated.map((m) => m.content).slice(0, 5)).toEqual(before.map((m) => m.content).slice(0, 5));
    expect(regenerated).toHaveLength(6);
    expect(regenerated.some((m) => m.id === before[5]!.id)).toBe(false);

    await page.locator('[data-testid="message"][data-role="user"]').first().getByTestId('edit').click();
    await page.getByTestId('edit-input').fill('Once upon a time there was a cat.');
    await page.getByTestId('edit-send').click();
    await expect
      .poll(async () => (await storedMessages(page)).map((m) => [m.role, m.status]), { timeout: 120_000 })
      .toEqual([
        ['user', 'complete'],
        ['assistant', 'complete'],
      ]);
    expect((await storedMessages(page))[0]!.content).toBe('Once upon a time there was a cat.');
    await expect.poll(() => page.locator('[data-testid="message"]').count()).toBe(2);
    expect(await page.locator('[data-testid="message"][data-role="user"]').textContent()).toContain('Once upon a time there was a cat.');
  });
});
