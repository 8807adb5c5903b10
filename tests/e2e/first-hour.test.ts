/**
 * A new user's first hour at the side panel's real width (380 × 760 px), English and Chinese, in
 * the built extension in headless Chromium (fixture embedder packaged; no chat model needed):
 * - the backup passphrase field's placeholder — its only visible label — is not cut off;
 * - "Erase…" opens its question on screen (it opened below the fold, so the button seemed to do nothing);
 * - Export says the file was downloaded, by name (the browser's download indicator is outside the panel);
 * - a model download that fails (offline: the counting proxy refuses it) shows its error once in the Chat
 *   tab's model card, not again as a toast over the composer; the toast shows on a tab without the box,
 *   compact (two lines) in its own strip above the tab's page, never over it, and goes with its ×;
 * - at 400 × 700 px the Memory tab shows memories without scrolling (backup, profile summary,
 *   suggestions and recently learned are behind toggles above the list), in English and Chinese;
 * - in the Chinese UI a conversation round shows "用户：… 助手：…" (Memory tab, its editor, the reply's
 *   source chips, the context view's memories) while its stored, indexed text keeps "User:/Assistant:".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import {
  callCore,
  FIXTURE_GGUF,
  lastReplyTrace,
  loadFixtureGguf,
  openMemorySection,
  sendFromPanel,
  startExtensionSession,
  waitForCore,
  waitForJobsIdle,
  type ExtensionSession,
} from './harness';

const WIDTH = 380;
const HEIGHT = 760;

/** The placeholder's rendered width (canvas text metrics in the input's own font) and the room inside the input, in CSS px. */
async function placeholderFit(page: Page, testid: string): Promise<{ text: string; needed: number; room: number }> {
  return page.getByTestId(testid).evaluate((el) => {
    const input = el as HTMLInputElement;
    const style = getComputedStyle(input);
    const context = document.createElement('canvas').getContext('2d')!;
    context.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return { text: input.placeholder, needed: context.measureText(input.placeholder).width, room };
  });
}

describe('the first hour at the side panel width', () => {
  let session: ExtensionSession;
  let page: Page;
  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await page.setViewportSize({ width: WIDTH, height: HEIGHT });
    await waitForCore(page, 30_000);
  });
  afterAll(() => session?.dispose());

  it.each([
    ['en', 'Passphrase (optional: encrypts the export)'],
    ['zh_CN', '密码短语（可选：加密导出文件）'],
  ] as const)('the backup passphrase placeholder is whole at 380 px (%s)', async (locale, placeholder) => {
    await callCore(page, 'settings.set', { locale });
    await page.reload();
    await waitForCore(page);
    await page.getByTestId('tab-memory').click();
    await openMemorySection(page, 'data');
    const fit = await placeholderFit(page, 'backup-passphrase');
    expect(fit.text).toBe(placeholder);
    expect(fit.needed).toBeLessThanOrEqual(fit.room);
  });

  it('"Erase…" opens its question on screen, and Export says what it downloaded', async () => {
    await callCore(page, 'settings.set', { locale: 'en' });
    await page.reload();
    await waitForCore(page);
    await page.getByTestId('tab-memory').click();
    await openMemorySection(page, 'data');
    await page.getByTestId('erase-all').click();
    const confirm = page.getByTestId('erase-all-confirm');
    await confirm.waitFor();
    const box = (await confirm.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(HEIGHT);
    await page.getByTestId('erase-dialog').getByRole('button', { name: 'Cancel' }).click();

    const download = page.waitForEvent('download');
    await page.getByTestId('memory-export').click();
    const name = (await download).suggestedFilename();
    expect(name).toMatch(/^recall-export-\d{4}-\d{2}-\d{2}\.json$/);
    const info = page.locator('[data-testid="notice"][data-kind="info"]');
    await expect.poll(() => info.allTextContents()).toContainEqual(expect.stringContaining(`Downloaded ${name}`));
  });

  it("a failed model download is shown once in the Chat tab's model card, not again as a toast", async () => {
    await page.getByTestId('tab-chat').click();
    await page.getByTestId('engine-cpu').click();
    await page.getByTestId('load-wllama').click();
    const inline = page.locator('[data-testid="engine-error"][data-slot="chat"]');
    await inline.waitFor({ timeout: 30_000 });
    expect(await inline.isVisible()).toBe(true);
    const errorToasts = page.locator('[data-testid="notice"][data-kind="error"]');
    await page.getByTestId('tab-memory').click(); // no error box there: the failure is toasted
    await expect.poll(() => errorToasts.count()).toBe(1);
    // The toast is compact (two lines: its detail opens with "More") and lies above the tab's page, not over it.
    const toast = (await errorToasts.first().boundingBox())!;
    const panel = (await page.locator('#panel').boundingBox())!;
    expect(toast.height).toBeLessThanOrEqual(60);
    expect(toast.y + toast.height).toBeLessThanOrEqual(panel.y);
    const clamped = await errorToasts
      .first()
      .locator('p')
      .evaluate((p) => p.scrollHeight > p.clientHeight);
    if (clamped) {
      await errorToasts.first().getByTestId('notice-more').click();
      expect((await errorToasts.first().boundingBox())!.height).toBeGreaterThan(toast.height);
    }
    await page.getByTestId('tab-chat').click(); // the model card's box shows it: no toast on top
    expect(await inline.isVisible()).toBe(true);
    expect(await errorToasts.count()).toBe(0);
    await page.getByTestId('tab-memory').click();
    await errorToasts.first().getByTestId('notice-dismiss').click();
    expect(await errorToasts.count()).toBe(0);
  });

  it.each(['en', 'zh_CN'] as const)('at 400 × 700 px the Memory tab shows memories without scrolling (%s)', async (locale) => {
    const existing = await callCore<unknown[]>(page, 'memory.list', { namespace: 'default' });
    if (existing.length === 0)
      for (const text of ['I live in Lisbon', 'I am allergic to peanuts', '我喜欢喝龙井茶']) await callCore(page, 'memory.add', { kind: 'fact', text });
    await page.setViewportSize({ width: 400, height: 700 });
    await callCore(page, 'settings.set', { locale });
    await page.reload();
    await waitForCore(page);
    await page.getByTestId('tab-memory').click();
    const first = page.getByTestId('memory-item').first();
    await first.waitFor();
    const box = (await first.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(700);
    await page.setViewportSize({ width: WIDTH, height: HEIGHT });
  });

  it.skipIf(!FIXTURE_GGUF)('in the Chinese UI a conversation round shows Chinese speaker labels; its stored text keeps User:/Assistant:', async () => {
    type Memory = { id: string; kind: string; text: string };
    await callCore(page, 'settings.set', { locale: 'zh_CN', maxAnswerTokens: 16 });
    await page.reload();
    await waitForCore(page);
    await page.getByTestId('tab-chat').click();
    await loadFixtureGguf(page);
    const said = '我每天早上在西湖边跑步';
    await sendFromPanel(page, said);
    await waitForJobsIdle(page); // the round becomes an episodic memory
    const stored = (await callCore<Memory[]>(page, 'memory.list', { namespace: 'default' })).find((m) => m.kind === 'episodic' && m.text.includes(said))!;
    expect(stored.text.startsWith(`User: ${said}\nAssistant: `)).toBe(true);

    // A new chat asking again retrieves the round: its chip and the context view show it labelled in Chinese.
    await page.getByTestId('new-conversation').click();
    await expect.poll(() => page.getByTestId('message').count()).toBe(0);
    await sendFromPanel(page, said);
    const trace = await lastReplyTrace<{ memories: { memoryId: string }[] }>(page);
    expect(trace.memories.map((m) => m.memoryId)).toContain(stored.id);
    const chip = page.locator(`[data-testid="source-chip"][data-memory-id="${stored.id}"]`);
    expect(await chip.getByTestId('source-open').getAttribute('title')).toMatch(new RegExp(`^用户：${said}\n助手：`));
    await page.getByTestId('open-context').click();
    const cited = page.locator(`[data-testid="context-memory"][data-memory-id="${stored.id}"] [data-testid="context-memory-text"]`);
    expect(await cited.textContent()).toMatch(new RegExp(`^用户：${said}\n助手：`));
    await page.getByTestId('context-close').click();

    // The Memory tab shows it so, and an edit there is saved with the stored labels.
    await page.getByTestId('tab-memory').click();
    const item = page.locator(`[data-testid="memory-item"][data-id="${stored.id}"]`);
    expect(await item.getByTestId('memory-text').textContent()).toMatch(new RegExp(`^用户：${said}\n助手：`));
    expect(await item.innerText()).not.toContain('User:');
    await item.getByTestId('memory-edit').click();
    const editor = item.getByTestId('memory-edit-text');
    const shown = await editor.inputValue();
    expect(shown.startsWith(`用户：${said}\n助手：`)).toBe(true);
    await editor.fill(shown.replace('西湖边', '江边'));
    await item.getByTestId('memory-save').click();
    await expect.poll(async () => (await callCore<Memory>(page, 'memory.get', { id: stored.id })).text).toBe(stored.text.replace('西湖边', '江边'));
  });
});
