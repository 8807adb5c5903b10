/**
 * A new user's first hour at the side panel's real width (380 × 760 px), English and Chinese, in
 * the built extension in headless Chromium (fixture embedder packaged; no chat model needed):
 * - the backup passphrase field's placeholder — its only visible label — is not cut off;
 * - "Erase…" opens its question on screen (it opened below the fold, so the button seemed to do nothing);
 * - Export says the file was downloaded, by name (the browser's download indicator is outside the panel);
 * - a model download that fails (offline: the counting proxy refuses it) shows its error once in the Chat
 *   tab's model card, not again as a toast over the composer; the toast shows on a tab without the box.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { callCore, startExtensionSession, waitForCore, type ExtensionSession } from './harness';

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
    const fit = await placeholderFit(page, 'backup-passphrase');
    expect(fit.text).toBe(placeholder);
    expect(fit.needed).toBeLessThanOrEqual(fit.room);
  });

  it('"Erase…" opens its question on screen, and Export says what it downloaded', async () => {
    await callCore(page, 'settings.set', { locale: 'en' });
    await page.reload();
    await waitForCore(page);
    await page.getByTestId('tab-memory').click();
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
    await page.getByTestId('tab-chat').click(); // the model card's box shows it: no toast on top
    expect(await inline.isVisible()).toBe(true);
    expect(await errorToasts.count()).toBe(0);
  });
});
