/**
 * Importing from other assistants in the built extension in real Chromium (issue 13, items 1 and
 * 5): the Memory tab's Import input takes the ChatGPT fixture (`../shared/fixtures/chat-exports/`,
 * skipped with a printed reason when absent), says it found a ChatGPT export, and its
 * conversations appear with their own titles (the tree fixture: the branch the user saw only), and
 * the Claude fixture likewise;
 * then three saved memories pasted as text become pinned memories, and pasting them again adds none.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, openMemorySection, SHARED_DIR, startExtensionSession, waitForCore, type ExtensionSession } from './harness';

const EXPORTS = SHARED_DIR ? join(SHARED_DIR, 'fixtures/chat-exports/chatgpt') : null;
if (!EXPORTS) console.warn('[e2e history-import] ../shared/fixtures is absent: skipping.');

describe.skipIf(!EXPORTS)('import from other assistants', () => {
  let session: ExtensionSession;
  let page: Page;
  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await page.getByTestId('tab-memory').click();
    await waitForCore(page);
    await openMemorySection(page, 'data');
  });
  afterAll(() => session?.dispose());

  it('imports the ChatGPT export and the tree export: titles, messages, the current branch only', async () => {
    await page.getByTestId('memory-import-input').setInputFiles(join(EXPORTS!, 'chatgpt-export.json'));
    const report = page.getByTestId('history-report');
    await expect.poll(() => report.getAttribute('data-added'), { timeout: 60_000 }).toBe('2');
    expect(await report.getAttribute('data-format')).toBe('chatgpt');
    expect(await report.getAttribute('data-messages')).toBe('10');
    await expect.poll(() => report.textContent()).toMatch(/ChatGPT/);

    await page.getByTestId('memory-import-input').setInputFiles(join(EXPORTS!, 'chatgpt-tree.json'));
    await expect.poll(() => report.getAttribute('data-messages'), { timeout: 60_000 }).toBe('6');
    const list = await callCore<{ id: string; title: string; messageCount: number }[]>(page, 'conversations.list');
    expect(list.map((c) => [c.title, c.messageCount]).sort()).toEqual([
      ['Assist user with summary', 6],
      ['Conversation 1. Web Search', 6],
      ['Conversation 2', 4],
    ]);
    const tree = list.find((c) => c.title === 'Assist user with summary')!;
    const messages = await callCore<{ content: string }[]>(page, 'messages.list', { conversationId: tree.id });
    expect(messages.map((m) => m.content)).toContain('hi again');
    expect(messages.map((m) => m.content)).not.toContain('so cool bro');

    // The same file again adds nothing.
    await page.getByTestId('memory-import-input').setInputFiles(join(EXPORTS!, 'chatgpt-export.json'));
    await expect.poll(() => report.getAttribute('data-skipped'), { timeout: 60_000 }).toBe('2');
    expect(await report.getAttribute('data-added')).toBe('0');
  });

  it('imports the Claude export', async () => {
    await page.getByTestId('memory-import-input').setInputFiles(join(EXPORTS!, '../polylogue/origin-capability_claude-ai-export.json'));
    const report = page.getByTestId('history-report');
    await expect.poll(() => report.getAttribute('data-format'), { timeout: 60_000 }).toBe('claude');
    expect(await report.getAttribute('data-added')).toBe('1');
    const list = await callCore<{ title: string; messageCount: number }[]>(page, 'conversations.list');
    expect(list).toContainEqual(expect.objectContaining({ title: 'Origin capability matrix', messageCount: 1 }));
  });

  it('pastes three saved memories: pinned memories in the list; again, all skipped', async () => {
    await page.getByTestId('saved-memories-open').click();
    const pasted = '- Lives in Hangzhou\n- Prefers green tea\n- Has a cat named Mochi';
    await page.getByTestId('saved-memories-text').fill(pasted);
    await page.getByTestId('saved-memories-add').click();
    const report = page.getByTestId('saved-memories-report');
    await expect.poll(() => report.getAttribute('data-added'), { timeout: 60_000 }).toBe('3');
    const memories = await callCore<{ text: string; pinned: boolean }[]>(page, 'memory.list', { namespace: 'default', kinds: ['fact'] });
    expect(
      memories
        .filter((m) => m.pinned)
        .map((m) => m.text)
        .sort(),
    ).toEqual(['Has a cat named Mochi', 'Lives in Hangzhou', 'Prefers green tea']);
    await expect.poll(() => page.getByTestId('memory-item').filter({ hasText: 'Prefers green tea' }).count()).toBe(1);

    await page.getByTestId('saved-memories-text').fill(pasted);
    await page.getByTestId('saved-memories-add').click();
    await expect.poll(() => report.getAttribute('data-skipped'), { timeout: 60_000 }).toBe('3');
    expect(await report.getAttribute('data-added')).toBe('0');
  });
});
