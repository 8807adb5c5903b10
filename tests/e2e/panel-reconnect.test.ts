/**
 * The panel's port after the core's offscreen document closed (real Chromium, the real
 * stories260K GGUF through wllama): the service worker lets go of the panel's `recall.panel`
 * port, so the port drops with the core and the panel reconnects to the new core. Observable: a
 * temporary chat opened after the restart is deleted as soon as the panel leaves it (before the
 * fix the port stayed attached to the worker, which ignores it, and the chat was kept until the
 * next core start).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callCore,
  FIXTURE_GGUF as GGUF,
  idbGetAll,
  openPanelWithFixtureModel,
  sendFromPanel,
  startExtensionSession,
  waitForEngineReady,
  type ExtensionSession,
} from './harness';

if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the panel-reconnect test (it needs the fixture GGUF).');

const temporaryChats = async (page: Parameters<typeof idbGetAll>[0]) =>
  (await idbGetAll<{ id: string; temporary?: boolean }>(page, 'conversations')).filter((c) => c.temporary).map((c) => c.id);

describe.skipIf(!GGUF)('panel port after an offscreen restart (real extension, real model)', () => {
  let session: ExtensionSession;
  beforeAll(async () => void (session = await startExtensionSession()));
  afterAll(() => session?.dispose());

  it('reconnects to the new core: a temporary chat opened after the restart is deleted when the panel leaves it', async () => {
    const page = await openPanelWithFixtureModel(session);
    await sendFromPanel(page, 'Hello before the restart');

    // The offscreen document closes (what a crash or Chrome's own shutdown of it does).
    await page.evaluate(() => chrome.offscreen.closeDocument());
    await expect
      .poll(async () => (await callCore<{ ready: boolean } | undefined>(page, 'core.ensure').catch(() => undefined))?.ready, { timeout: 30_000 })
      .toBe(true);
    await waitForEngineReady(page); // the GGUF restored from OPFS by the new core

    await page.getByTestId('temporary-chat').click();
    await page.getByTestId('temporary-banner').waitFor();
    await sendFromPanel(page, 'A temporary question after the restart');
    const [temporary] = await temporaryChats(page);
    expect(temporary).toBeDefined();

    await page.getByTestId('temporary-leave').click();
    await page.getByTestId('temporary-banner').waitFor({ state: 'detached' });
    await expect.poll(() => temporaryChats(page), { timeout: 15_000 }).toEqual([]);
    expect(await callCore(page, 'conversations.get', { id: temporary })).toBeFalsy();
    expect(session.browser.console.errors).toEqual([]);
  });
});
