/**
 * Issue 8, item 1 in real Chromium: a stored assistant reply `'>'.repeat(3000) + ' x'` (which
 * made marked overflow the stack and the panel show 0 messages of the conversation) renders, and
 * the user's message beside it is shown too. The messages are seeded into the extension's real
 * IndexedDB (the `messages` table the core reads), as an old import or a model reply would leave
 * them; no model is needed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, idbPut, startExtensionSession, waitForCore, type ExtensionSession } from './harness';

const HOSTILE = '>'.repeat(3000) + ' x';
const USER_TEXT = 'Please quote this 3000 times';

describe('a hostile stored reply in the real side panel', () => {
  let session: ExtensionSession;
  beforeAll(async () => void (session = await startExtensionSession()));
  afterAll(() => session?.dispose());

  it("shows both messages of a conversation whose reply is '>'.repeat(3000) + ' x'", async () => {
    const page = await session.browser.openPanel();
    await waitForCore(page, 30_000);
    const conversation = await callCore<{ id: string }>(page, 'conversations.create', { title: 'hostile' });
    const now = Date.now();
    const conversationId = conversation.id;
    await idbPut(page, {
      messages: [
        { id: `${conversationId}-u`, conversationId, seq: 0, role: 'user', content: USER_TEXT, createdAt: now, status: 'complete' },
        { id: `${conversationId}-a`, conversationId, seq: 1, role: 'assistant', content: HOSTILE, createdAt: now + 1, status: 'complete' },
      ],
    });
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
    expect(session.browser.console.errors).toEqual([]);
  });
});
