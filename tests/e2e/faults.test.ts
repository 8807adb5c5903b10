/**
 * Faults in the real extension (headless Chromium, the CPU engine running the real stories260K
 * GGUF, the packaged fixture embedding model):
 * - the offscreen document (memory core) closed while a reply streams: the user's message is
 *   kept, the reply is stored at most once (as an `error` reply saying it was interrupted), the
 *   panel shows it and the next turn works once the core is back;
 * - two panels writing to the same conversation and the same memory at once: no lost message,
 *   unique positions in order, both memory edits in the history.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callCore,
  FIXTURE_GGUF as GGUF,
  loadFixtureGguf,
  startExtensionSession,
  waitForEngineReady as waitEngineReady,
  type ExtensionSession,
} from './harness';

if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the fault tests (they need the fixture GGUF).');

interface StoredMessage {
  id: string;
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  status: string;
  errorCode?: string;
  error?: string;
}

describe.skipIf(!GGUF)('faults in a real browser', () => {
  let session: ExtensionSession;
  let page: Page;

  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await loadFixtureGguf(page);
  });
  afterAll(() => session?.dispose());

  it('the memory core closed mid-reply: user message kept, one interrupted reply, the panel says so and works for the next turn', async () => {
    // A long reply: the largest answer the model's window allows.
    await callCore(page, 'settings.set', { maxAnswerTokens: 8192 });
    // At the first streamed piece, close the offscreen document (what a crash or Chrome's own
    // shutdown of the document does); the service worker re-creates it on the next request.
    await page.evaluate(() => {
      const g = globalThis as { __killedAfter?: number };
      chrome.runtime.onMessage.addListener((m: { type?: string }) => {
        if (m?.type !== 'event.chatDelta' || g.__killedAfter !== undefined) return;
        g.__killedAfter = 1;
        void chrome.offscreen.closeDocument();
      });
    });
    const text = 'Tell me a very long story about a dragon.';
    await page.getByTestId('chat-input').fill(text);
    await page.getByTestId('send').click();
    const reply = page.locator('[data-testid="message"][data-role="assistant"]').last();
    await reply.and(page.locator('[data-status="error"], [data-status="complete"], [data-status="aborted"]')).waitFor({ timeout: 120_000 });
    expect(await page.evaluate(() => (globalThis as { __killedAfter?: number }).__killedAfter)).toBe(1);

    // The panel shows what the core stored: the user's message and one reply marked interrupted.
    // (`core.ensure` is answered by the service worker, which creates the offscreen document again.)
    await expect.poll(async () => (await callCore<{ ready: boolean } | undefined>(page, 'core.ensure'))?.ready, { timeout: 30_000 }).toBe(true);
    const [conversation] = await callCore<{ id: string }[]>(page, 'conversations.list');
    const stored = await callCore<StoredMessage[]>(page, 'messages.list', { conversationId: conversation!.id });
    expect(stored.map((m) => [m.seq, m.role, m.status])).toEqual([
      [0, 'user', 'complete'],
      [1, 'assistant', 'error'],
    ]);
    expect(stored[0]!.content).toBe(text);
    expect(stored[1]).toMatchObject({ errorCode: 'disconnected', content: '' });
    await expect.poll(() => reply.getAttribute('data-status')).toBe('error');
    await expect.poll(() => page.locator('[data-testid="message"][data-role="assistant"]').count()).toBe(1);
    await expect.poll(async () => (await reply.textContent()) ?? '').toMatch(/stopped unexpectedly|interrupted/);

    // The core is back (the GGUF restored from OPFS) and the next turn is answered.
    await callCore(page, 'settings.set', { maxAnswerTokens: 32 });
    await waitEngineReady(page);
    await page.getByTestId('chat-input').fill('And then?');
    await page.getByTestId('send').click();
    const next = page.locator('[data-testid="message"][data-role="assistant"]').nth(1);
    await next.and(page.locator('[data-status="complete"], [data-status="error"]')).waitFor({ timeout: 120_000 });
    expect(await next.getAttribute('data-status')).toBe('complete');
    const after = await callCore<StoredMessage[]>(page, 'messages.list', { conversationId: conversation!.id });
    expect(after.map((m) => [m.seq, m.role, m.status])).toEqual([
      [0, 'user', 'complete'],
      [1, 'assistant', 'error'],
      [2, 'user', 'complete'],
      [3, 'assistant', 'complete'],
    ]);
  });

  it('two panels sending to one conversation and editing one memory at once lose nothing', async () => {
    await callCore(page, 'settings.set', { maxAnswerTokens: 24 });
    const other = await session.browser.openPanel();
    const conversation = await callCore<{ id: string }>(page, 'conversations.create', {});
    const texts = ['First panel says hello', 'Second panel says hi', 'First panel again', 'Second panel again'];
    await Promise.all([
      (async () => {
        await callCore(page, 'chat.send', { conversationId: conversation.id, text: texts[0], requestId: 'a1' });
        await callCore(page, 'chat.send', { conversationId: conversation.id, text: texts[2], requestId: 'a2' });
      })(),
      (async () => {
        await callCore(other, 'chat.send', { conversationId: conversation.id, text: texts[1], requestId: 'b1' });
        await callCore(other, 'chat.send', { conversationId: conversation.id, text: texts[3], requestId: 'b2' });
      })(),
    ]);
    const stored = await callCore<StoredMessage[]>(page, 'messages.list', { conversationId: conversation.id });
    expect(stored.map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Turns do not interleave: each user message is followed by its own reply.
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(
      stored
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .sort(),
    ).toEqual([...texts].sort());
    // Each panel's own two messages keep their order.
    const users = stored.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users.indexOf(texts[0]!)).toBeLessThan(users.indexOf(texts[2]!));
    expect(users.indexOf(texts[1]!)).toBeLessThan(users.indexOf(texts[3]!));

    const memory = await callCore<{ id: string }>(page, 'memory.add', { namespace: 'default', kind: 'fact', text: 'The office is on floor 3' });
    await Promise.all([
      callCore(page, 'memory.update', { id: memory.id, text: 'The office is on floor 4' }),
      callCore(other, 'memory.update', { id: memory.id, text: 'The office is on floor 5' }),
    ]);
    const history = await callCore<{ id: number; memoryId: string; event: string; oldText: string | null; newText: string | null }[]>(page, 'memory.history', {
      memoryId: memory.id,
    });
    const updates = history.filter((h) => h.event === 'UPDATE').sort((a, b) => a.id - b.id);
    expect(updates.map((u) => u.newText).sort()).toEqual(['The office is on floor 4', 'The office is on floor 5']);
    // No lost update: the second edit replaced the first one's text, not the original.
    expect(updates[1]!.oldText).toBe(updates[0]!.newText);
    const [current] = (await callCore<{ id: string; text: string }[]>(page, 'memory.list', { namespace: 'default' })).filter((m) => m.id === memory.id);
    expect(current!.text).toBe(updates[1]!.newText);
    await other.close();
  });
});
