/**
 * Import throughput in the built extension in real Chromium (issue 9, item 5): a backup holding
 * `RECALL_E2E_IMPORT_MESSAGES` messages (default 10,000, in 20 conversations, English and
 * Chinese) is exported through the panel, the store erased, and the file imported back through
 * the panel's Import input with its progress bar (copy, check, then records written of the file's
 * total, which the bar must reach). The test checks that every message comes back
 * and prints the import time (the target is ≤ 10 s for 10k messages); the numbers go to the
 * report, not into an assertion, because the machine running e2e checks is shared.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, idbCount, openMemorySection, idbPut, startExtensionSession, waitForCore, type ExtensionSession } from './harness';

const MESSAGES = Number(process.env.RECALL_E2E_IMPORT_MESSAGES ?? 10_000);
const CONVERSATIONS = 20;
const T0 = Date.UTC(2025, 0, 1);

/** Writes `count` messages in `CONVERSATIONS` conversations straight into the extension's IndexedDB (one transaction). */
function fillMessages(page: Page, count: number): Promise<void> {
  const conversations = Array.from({ length: CONVERSATIONS }, (_, c) => ({
    id: `conv-${c}`,
    title: `Conversation ${c}`,
    namespace: 'default',
    strategy: { kind: 'summary-buffer', maxTokens: 2000 },
    createdAt: T0,
    updatedAt: T0 + count,
  }));
  const perConversation = Math.ceil(count / CONVERSATIONS);
  const messages = Array.from({ length: count }, (_, i) => {
    const seq = i % perConversation;
    const user = seq % 2 === 0;
    return {
      id: `msg-${String(i).padStart(6, '0')}`,
      conversationId: `conv-${Math.floor(i / perConversation)}`,
      seq,
      role: user ? 'user' : 'assistant',
      content: user
        ? `Message ${i}: I am planning item ${i} of my week, 第${i}条消息, and I would like some advice.`
        : `Reply ${i}: here is a short suggestion for item ${i}. 这是第${i}条回复。`,
      createdAt: T0 + i * 1000,
      status: 'complete',
    };
  });
  return idbPut(page, { conversations, messages });
}

const messageCount = (page: Page) => idbCount(page, 'messages');

describe('import throughput', () => {
  let session: ExtensionSession;
  beforeAll(async () => void (session = await startExtensionSession()));
  afterAll(() => session?.dispose());

  it(`imports a backup of ${MESSAGES} messages through the panel, with its progress bar, and every message comes back`, async () => {
    const page = await session.browser.openPanel();
    await page.getByTestId('tab-memory').click();
    await waitForCore(page);
    await openMemorySection(page, 'data');
    await fillMessages(page, MESSAGES);
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 600_000 }), page.getByTestId('memory-export').click()]);
    const file = join(session.profile, download.suggestedFilename());
    await download.saveAs(file);
    await callCore(page, 'memory.eraseAll');
    expect(await messageCount(page)).toBe(0);
    await page.evaluate(() => {
      // Phase → first time (ms) the progress bar showed it; the last records line and counts of the write pass.
      const seen = new Map<string, number>();
      const w = window as unknown as { phases: Map<string, number>; written: { done: string | null; total: string | null; text: string | null } | null };
      w.phases = seen;
      w.written = null;
      new MutationObserver(() => {
        const bar = document.querySelector('[data-testid="transfer-progress"]');
        const phase = bar?.getAttribute('data-phase');
        if (phase && !seen.has(phase)) seen.set(phase, Date.now());
        if (bar && phase === 'write') {
          const text = bar.querySelector('[data-testid="transfer-records"]')?.textContent ?? null;
          w.written = { done: bar.getAttribute('data-done'), total: bar.getAttribute('data-total'), text };
        }
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
    const started = Date.now();
    await page.getByTestId('memory-import-input').setInputFiles(file);
    await page.getByTestId('import-report').waitFor({ timeout: 600_000 });
    const ms = Date.now() - started;
    const phases = await page.evaluate(() => [...(window as unknown as { phases: Map<string, number> }).phases]);
    expect(phases.map(([phase]) => phase)).toEqual(expect.arrayContaining(['upload', 'check', 'write']));
    // The bar counted records and reached done: every record of the file (conversations + messages) written.
    const records = String(MESSAGES + CONVERSATIONS);
    const written = await page.evaluate(() => (window as unknown as { written: { done: string; total: string; text: string } | null }).written);
    expect(written).toEqual({
      done: records,
      total: records,
      text: `${Number(records).toLocaleString('en')} of ${Number(records).toLocaleString('en')} records`,
    });
    expect(await messageCount(page)).toBe(MESSAGES);
    const timeline = phases.map(([phase, at]) => `${phase} from ${at - started} ms`).join(', ');
    console.info(`[e2e import] ${MESSAGES} messages in ${CONVERSATIONS} conversations: import ${ms} ms (progress bar: ${timeline})`);
    await page.close();
  });
});
