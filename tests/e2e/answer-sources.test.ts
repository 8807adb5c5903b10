/**
 * Issue 14 items 1, 5 and 7 (engineer E's part) in the real extension: headless Chromium, the CPU
 * engine (wllama) running the real stories260K GGUF (its replies are nonsense; nothing here needs
 * an instruction-following reply), the packaged fixture embedding model.
 * - A reply shows the memories its prompt used as chips; a chip opens the memory in the Memory tab;
 *   *not relevant here* is stored and the next same question ranks that memory lower (its trace);
 *   *forget* deletes the memory and its feedback.
 * - A temporary chat is marked (banner), learns nothing (no round, no fact) and is gone with its
 *   messages once its panel closes.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callCore,
  FIXTURE_GGUF as GGUF,
  idbCount,
  idbGetAll,
  loadFixtureGguf,
  sendFromPanel,
  startExtensionSession,
  waitForCore,
  waitForJobsIdle,
  type ExtensionSession,
} from './harness';

if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the answer-sources tests (they need the fixture GGUF).');

interface Memory {
  id: string;
  text: string;
}
interface Trace {
  memories: { memoryId: string; text: string }[];
}

const QUESTION = 'What is my favourite colour?';
const FACTS = ['My favourite colour is green', 'The colour of my car is red', 'My sister lives in Porto'];

/** The chips under the last assistant reply: memory ids in order. */
async function lastReplyChips(page: Page): Promise<string[]> {
  const reply = page.locator('[data-testid="message"][data-role="assistant"]').last();
  await reply.locator('[data-testid="source-chip"]').first().waitFor({ timeout: 30_000 });
  return reply.locator('[data-testid="source-chip"]').evaluateAll((chips) => chips.map((c) => c.getAttribute('data-memory-id') ?? ''));
}

/** The stored id of the last assistant reply (the page's element id is `msg-<id>`). */
async function lastReplyId(page: Page): Promise<string> {
  const id = await page.locator('[data-testid="message"][data-role="assistant"]').last().getAttribute('id');
  return id!.replace(/^msg-/, '');
}

describe.skipIf(!GGUF)('sources under each answer and temporary chats in a real browser', () => {
  let session: ExtensionSession;
  let page: Page;

  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await loadFixtureGguf(page);
    for (const text of FACTS) await callCore(page, 'memory.add', { namespace: 'default', kind: 'fact', text });
  });
  afterAll(() => session?.dispose());

  it('a reply shows its source chips; not relevant here ranks the memory lower for the same question; a chip opens and forgets', async () => {
    const memories = await callCore<Memory[]>(page, 'memory.list', { namespace: 'default' });
    const green = memories.find((m) => m.text === FACTS[0])!;
    const car = memories.find((m) => m.text === FACTS[1])!;

    await sendFromPanel(page, QUESTION);
    const firstId = await lastReplyId(page);
    const firstTrace = await callCore<Trace>(page, 'trace.get', { messageId: firstId });
    // The chips are the trace's memories, in its order; the green memory is the best match.
    expect(await lastReplyChips(page)).toEqual(firstTrace.memories.map((m) => m.memoryId));
    expect(firstTrace.memories[0]!.memoryId).toBe(green.id);

    const chip = page.locator(`[data-testid="message"][data-role="assistant"]`).last().locator(`[data-testid="source-chip"][data-memory-id="${green.id}"]`);
    await chip.getByTestId('source-menu').click();
    await chip.getByTestId('source-not-relevant').click();
    await chip.and(page.locator('[data-not-relevant="true"]')).waitFor();
    const feedback = await idbGetAll<{ memoryId: string; query: string; messageId: string }>(page, 'feedback');
    expect(feedback.map((f) => [f.memoryId, f.query, f.messageId])).toEqual([[green.id, QUESTION, firstId]]);

    // The same question again: the green memory ranks lower in the new reply's prompt (and chips).
    await sendFromPanel(page, QUESTION);
    const secondTrace = await callCore<Trace>(page, 'trace.get', { messageId: await lastReplyId(page) });
    const rankOf = (t: Trace) => {
      const i = t.memories.findIndex((m) => m.memoryId === green.id);
      return i === -1 ? Infinity : i;
    };
    expect(rankOf(secondTrace)).toBeGreaterThan(rankOf(firstTrace));
    expect(await lastReplyChips(page)).toEqual(secondTrace.memories.map((m) => m.memoryId));

    // A chip opens its memory in the Memory tab, first and highlighted.
    const carChip = page.locator('[data-testid="message"][data-role="assistant"]').last().locator(`[data-testid="source-chip"][data-memory-id="${car.id}"]`);
    await carChip.getByTestId('source-open').click();
    await page.locator(`[data-testid="focused-memory"][data-memory-id="${car.id}"]`).waitFor();
    expect(await page.getByTestId('focused-memory').textContent()).toContain(FACTS[1]);

    // Forget from the chip (asks first): the memory and its feedback are gone, the chip says so.
    await page.getByTestId('tab-chat').click();
    await callCore(page, 'memory.feedback', { messageId: firstId, memoryId: car.id });
    await carChip.getByTestId('source-menu').click();
    await carChip.getByTestId('source-forget').click();
    await carChip.getByTestId('source-forget-confirm').click();
    await carChip.and(page.locator('[data-exists="false"]')).waitFor();
    expect((await callCore<Memory[]>(page, 'memory.list', { namespace: 'default' })).map((m) => m.id)).not.toContain(car.id);
    expect((await idbGetAll<{ memoryId: string }>(page, 'feedback')).map((f) => f.memoryId)).toEqual([green.id]);
  });

  it('a temporary chat is marked, learns nothing, and leaves no conversation and no memory once its panel closes', async () => {
    await waitForJobsIdle(page);
    const memoriesBefore = await idbCount(page, 'memories');
    const conversationsBefore = (await idbGetAll<{ id: string }>(page, 'conversations')).map((c) => c.id).sort();
    await page.getByTestId('temporary-chat').click();
    await page.getByTestId('temporary-banner').waitFor();
    // It shares words with a stored fact (the packaged fixture embedder is calibrated to α 1, so only
    // the lexical list finds memories for it: a message with no shared word retrieves nothing).
    await sendFromPanel(page, 'What colour is my car? The code of my journal is swordfish');
    // Existing memory still answers in it: the reply shows its chips.
    expect((await lastReplyChips(page)).length).toBeGreaterThan(0);
    await waitForJobsIdle(page);
    expect(await idbCount(page, 'memories')).toBe(memoriesBefore); // not even the round
    expect((await callCore<{ id: string }[]>(page, 'conversations.list')).map((c) => c.id).sort()).toEqual(conversationsBefore);
    const temporary = (await idbGetAll<{ id: string; temporary?: boolean }>(page, 'conversations')).filter((c) => c.temporary);
    expect(temporary).toHaveLength(1);

    await page.close(); // the panel closes: its port disconnects
    page = await session.browser.openPanel();
    await waitForCore(page);
    const deadline = Date.now() + 15_000;
    while ((await idbGetAll<{ temporary?: boolean }>(page, 'conversations')).some((c) => c.temporary) && Date.now() < deadline) await page.waitForTimeout(100);
    expect((await idbGetAll<{ id: string }>(page, 'conversations')).map((c) => c.id).sort()).toEqual(conversationsBefore);
    const messages = await idbGetAll<{ content: string }>(page, 'messages');
    expect(messages.filter((m) => m.content.includes('swordfish'))).toEqual([]);
    const memories = await idbGetAll<{ text: string }>(page, 'memories');
    expect(memories).toHaveLength(memoriesBefore);
    expect(memories.filter((m) => m.text.includes('swordfish'))).toEqual([]);
    expect(session.browser.console.errors).toEqual([]);
  });
});
