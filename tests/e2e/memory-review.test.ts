/**
 * Review before saving in real Chromium (issue 14 items 2, 3, 7): the built extension, the real
 * fixture GGUF (stories260K, through wllama) and the packaged fixture embedder.
 *
 * 1. Review is switched on in the Memory tab; three real turns run extraction on stories260K. A
 *    model that writes children's stories extracts nothing usable: no fact is stored and nothing
 *    junk is suggested (the guards' counts are printed: they are the real-GGUF junk numbers).
 * 2. A new fact waits in Suggested until accepted, then it is retrieved. An instruction-following
 *    LLM cannot run here, so the suggestion is written into the `suggestions` table exactly as
 *    `suggestItems` (the extraction job's review path) writes it, citing a real turn; everything
 *    after that is real: the Memory tab's badge, the Suggested list, the prompt before and after
 *    accepting, the accept button, the store and retrieval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { memoryHash } from '../../src/memory/long-term/text';
import {
  callCore,
  FIXTURE_GGUF,
  idbGetAll,
  idbPut,
  loadFixtureGguf,
  openMemorySection,
  sendFromPanel,
  startExtensionSession,
  waitForJobsIdle,
  type ExtensionSession,
} from './harness';
if (!FIXTURE_GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the memory-review test (it needs the fixture GGUF).');

const FACT = 'Favourite tea is genmaicha';
const QUESTION = 'Which tea is my favourite, genmaicha?';

/**
 * Asks QUESTION in a new conversation and returns the memories its prompt injected (a memory whose
 * source turn is sent verbatim in the same conversation is left out of the memories section).
 */
async function promptMemoriesOfQuestion(page: Page): Promise<string[]> {
  const conversation = await callCore<{ id: string }>(page, 'conversations.create', {});
  const turn = await callCore<{ assistantMessage: { id: string } }>(page, 'chat.send', {
    conversationId: conversation.id,
    text: QUESTION,
    requestId: crypto.randomUUID(),
  });
  const trace = await callCore<{ memories: { text: string }[] } | null>(page, 'trace.get', { messageId: turn.assistantMessage.id });
  return trace!.memories.map((m) => m.text);
}

describe.skipIf(!FIXTURE_GGUF)('review before saving', () => {
  let session: ExtensionSession;
  beforeAll(async () => void (session = await startExtensionSession()));
  afterAll(() => session?.dispose());

  it('with review on, a new fact waits in Suggested until accepted, then it is retrieved', async () => {
    const page = await session.browser.openPanel();
    await loadFixtureGguf(page);
    await callCore(page, 'settings.set', { maxAnswerTokens: 32 });

    await page.getByTestId('tab-memory').click();
    await openMemorySection(page, 'review');
    await page.getByTestId('review-toggle').check();
    await expect.poll(() => callCore(page, 'review.status', { namespace: 'default' })).toEqual({ enabled: true, pending: 0 });
    // The panel hides Recently learned once its own toggle call has returned: that can be after the
    // core already answers `enabled: true` to the test's call, so wait for the panel too.
    await page.getByTestId('recently-learned').waitFor({ state: 'detached' });

    await page.getByTestId('tab-chat').click();
    for (const text of ['I live in Lisbon and work as a nurse.', '我叫王芳，喜欢喝绿茶。', 'My sister Ana visits on Friday.']) await sendFromPanel(page, text);
    await waitForJobsIdle(page);
    const facts = (await idbGetAll<{ kind: string }>(page, 'memories')).filter((m) => m.kind !== 'episodic');
    const stats = (await idbGetAll<{ key: string; value: Record<string, number> }>(page, 'settings')).find((s) => s.key === 'stats.ltmExtraction')?.value;
    console.log(`[memory-review] stories260K extraction: ${JSON.stringify(stats ?? null)}`);
    expect(facts).toEqual([]);
    expect(await callCore(page, 'review.suggestions', { namespace: 'default' })).toEqual([]);

    // The suggestion an extraction of the first turn would write (see the module doc).
    const [conversation] = await callCore<{ id: string }[]>(page, 'conversations.list');
    const messages = await callCore<{ id: string; role: string; createdAt: number }[]>(page, 'messages.list', { conversationId: conversation!.id });
    const user = messages.find((m) => m.role === 'user')!;
    await idbPut(page, {
      suggestions: [
        {
          id: 'suggestion-1',
          namespace: 'default',
          hash: memoryHash(FACT),
          status: 'pending',
          kind: 'preference',
          text: FACT,
          importance: 0.7,
          validFrom: user.createdAt,
          validUntil: null,
          sourceConversationId: conversation!.id,
          sourceMessageIds: [user.id],
          messageTime: user.createdAt,
          createdAt: Date.now(),
        },
      ],
    });

    // Waiting: not in memory, so not in the prompt.
    expect(await promptMemoriesOfQuestion(page)).not.toContain(FACT);

    await page.getByTestId('tab-memory').click();
    await expect.poll(() => page.getByTestId('review-badge').textContent()).toBe('1');
    const item = page.getByTestId('suggestion');
    await expect(item.textContent()).resolves.toContain(FACT);
    await item.getByTestId('suggestion-accept').click();
    await page.getByTestId('suggestion').waitFor({ state: 'detached' });
    await page.getByTestId('review-badge').waitFor({ state: 'detached' });
    const stored = await callCore<{ text: string; kind: string; sourceMessageIds: string[] }[]>(page, 'memory.list', {
      namespace: 'default',
      kinds: ['preference'],
    });
    expect(stored).toEqual([expect.objectContaining({ text: FACT, kind: 'preference', sourceMessageIds: [user.id] })]);

    // Accepted: retrieved into the next prompt.
    expect(await promptMemoriesOfQuestion(page)).toContain(FACT);
    expect(session.browser.console.errors).toEqual([]);
  });
});
