/**
 * Issue 2's end-to-end test, on real input: the built extension in headless Chromium, the CPU
 * engine (wllama) running the real fixture GGUF (stories260K — a real model that writes
 * children's stories and cannot follow instructions), embeddings through the real
 * transformers.js code path with a fixture model shipped inside the extension package.
 *
 * Remembers across a new conversation, a stopped service worker and a browser restart, and
 * sends nothing over the network while chatting (every request goes through a counting proxy).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callCore,
  extensionRequests,
  FIXTURE_GGUF as GGUF,
  loadFixtureGguf,
  sendFromPanel as send,
  startExtensionSession,
  stopServiceWorker,
  waitForEngineReady as waitEngineReady,
  waitForJobsIdle,
  type ExtensionSession,
} from './harness';

const FIRST = '你好，我是梦千寻，我喜欢打篮球，你是？';
const SECOND = '我喜欢什么运动呢？';

if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the whole-loop test (it needs the fixture GGUF).');

/** Counts `event.chatDelta` messages the page receives (tokens streamed from the model). */
async function countDeltas(page: Page): Promise<() => Promise<number>> {
  await page.evaluate(() => {
    (globalThis as { __deltas?: number }).__deltas = 0;
    chrome.runtime.onMessage.addListener((m: { type?: string }) => {
      if (m?.type === 'event.chatDelta') (globalThis as { __deltas?: number }).__deltas! += 1;
    });
  });
  return () => page.evaluate(() => (globalThis as { __deltas?: number }).__deltas ?? 0);
}

describe.skipIf(!GGUF)('the whole loop in a real browser', () => {
  let session: ExtensionSession;
  // The offline install option: the embedding model ships inside the package. The browser starts in the test.
  beforeAll(async () => void (session = await startExtensionSession({ launch: false })));
  afterAll(() => session?.dispose());

  it('chats with a local model and remembers across conversations, a stopped worker and a browser restart', async () => {
    // ── first browser session ──────────────────────────────────────────────
    let browser = await session.launch();
    let page = await browser.openPanel();
    await loadFixtureGguf(page);
    const status = await callCore<{ chat: { kind: string; modelId: string }; embedder: { state: string; modelId: string } }>(page, 'engine.status');
    expect(status.chat.kind).toBe('wllama');
    expect(status.chat.modelId).toBe('stories260K.gguf');

    const deltas = await countDeltas(page);
    const firstReply = await send(page, FIRST);
    expect(firstReply.trim().length).toBeGreaterThan(0);
    expect(await deltas()).toBeGreaterThan(1); // streamed, not one final blob
    const [firstConversation] = await callCore<{ id: string; title: string }[]>(page, 'conversations.list');
    expect(firstConversation!.title).toBe(FIRST);
    await waitForJobsIdle(page); // the exchange is embedded and stored as a long-term memory in the background

    await page.getByTestId('new-conversation').click();
    await stopServiceWorker(browser);
    // Stopping the worker loses nothing: the core (offscreen document) still answers, through a fresh worker.
    expect((await callCore<{ ready: boolean }>(page, 'core.ensure')).ready).toBe(true);
    await session.closeBrowser();

    // ── browser restart on the same profile ─────────────────────────────────
    browser = await session.launch();
    page = await browser.openPanel();
    await waitEngineReady(page); // the GGUF is restored from OPFS, no file picker, no network
    await page.getByTestId('new-conversation').click();

    const { proxy } = session;
    const requestsBefore = proxy.requests.length;
    await send(page, SECOND);
    // Everything that tried to leave the machine during the chat, minus Chromium's own account probe.
    expect(extensionRequests(proxy.requests.slice(requestsBefore))).toEqual([]);

    // The prompt's token count (our GGUF tokenizer + chat template) equals what llama.cpp counted.
    const [current] = await callCore<{ id: string }[]>(page, 'conversations.list');
    const messages = await callCore<{ id: string }[]>(page, 'messages.list', { conversationId: current!.id });
    const trace = await callCore<{
      budget: { promptTokens: number; exact: boolean };
      engineUsage: { promptTokens: number };
      timings: { promptReadyMs: number; retrievalMs: number; queryEmbeddingMs: number };
    }>(page, 'trace.get', {
      messageId: messages[messages.length - 1]!.id,
    });
    expect(trace.budget.exact).toBe(true);
    expect(trace.budget.promptTokens).toBe(trace.engineUsage.promptTokens);
    // The turn's own timings (performance.now() in the offscreen document): a real retrieval ran inside the span.
    expect(trace.timings.promptReadyMs).toBeGreaterThan(trace.timings.retrievalMs);
    expect(trace.timings.retrievalMs).toBeGreaterThanOrEqual(trace.timings.queryEmbeddingMs);
    expect(trace.timings.queryEmbeddingMs).toBeGreaterThan(0);

    await page.getByTestId('open-context').click();
    const view = page.getByTestId('context-view');
    await view.waitFor();
    const memory = view.getByTestId('context-memory').filter({ hasText: '篮球' });
    await expect.poll(() => memory.count()).toBeGreaterThan(0);
    const source = memory.first().getByTestId('memory-source');
    expect(await source.getAttribute('data-conversation-id')).toBe(firstConversation!.id);
    expect(await source.textContent()).toContain(FIRST.slice(0, 10));
    const memorySection = view.locator('[data-testid="context-section"][data-kind="memories"]');
    expect(await memorySection.textContent()).toContain('篮球');
    expect(await view.getByTestId('context-timings').textContent()).toMatch(/^Prompt ready in [\d,.]+ ms \(memory search [\d,.]+ ms\)$/);

    // A second panel (another window) on the same conversation sees this panel's next turn
    // appear without a reload (the core announces stored messages), and this one sees its deletion.
    const other = await browser.openPanel();
    await other.getByTestId('conversations-toggle').click();
    await other.locator(`[data-testid="conversation-item"][data-id="${current!.id}"] .entry`).click();
    const shown = other.locator('[data-testid="message"]');
    await expect.poll(() => shown.count()).toBe(messages.length);
    await page.getByTestId('context-close').click();
    await send(page, '谢谢');
    await expect.poll(() => shown.count(), { timeout: 30_000 }).toBe(messages.length + 2);
    await other.close();

    // Deleting the first conversation from the drawer keeps what was learned from it. The rows
    // must fit the drawer (no sideways scrolling to reach the buttons, which then sit under the backdrop).
    await page.getByTestId('conversations-toggle').click();
    const item = page.locator(`[data-testid="conversation-item"][data-id="${firstConversation!.id}"]`);
    await item.waitFor();
    const fit = await page.locator('#conversation-drawer').evaluate((drawer) => ({
      scrollWidth: drawer.scrollWidth,
      clientWidth: drawer.clientWidth,
      right: drawer.getBoundingClientRect().right,
      buttonsRight: Math.max(...[...drawer.querySelectorAll('[data-testid="conversation-delete"]')].map((b) => b.getBoundingClientRect().right)),
    }));
    expect(fit.scrollWidth).toBe(fit.clientWidth);
    expect(fit.buttonsRight).toBeLessThanOrEqual(fit.right);
    await item.getByTestId('conversation-delete').click();
    await page.getByTestId('conversation-delete-confirm').click();
    await item.waitFor({ state: 'detached' });
    const left = await callCore<{ id: string }[]>(page, 'conversations.list');
    expect(left.map((c) => c.id)).not.toContain(firstConversation!.id);
    const kept = await callCore<{ text: string }[]>(page, 'memory.list', { namespace: 'default', search: '篮球' });
    expect(kept.some((m) => m.text.includes('篮球'))).toBe(true);

    expect(browser.console.errors).toEqual([]);
  });
});
