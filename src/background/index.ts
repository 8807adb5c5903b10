/**
 * Service-worker side of the extension: the toolbar button opens the side panel, and
 * `core.ensure` creates the offscreen document that hosts the core and waits until it answers.
 * No DOM and no `window` here (service worker).
 */
import browser from 'webextension-polyfill';
import { assertSender, onMessage, sendMessage } from '../messaging/protocol';
import { MessagingError } from '../model/errors';
import { registerPageListeners } from './page';

/** Path of the offscreen document inside the package. */
export const OFFSCREEN_PATH = 'offscreen.html';

let creating: Promise<void> | null = null;

/** Creates the offscreen document unless it exists (one at a time; concurrent calls share the creation). */
export async function ensureOffscreenDocument(): Promise<void> {
  const url = browser.runtime.getURL(`/${OFFSCREEN_PATH}` as never);
  const existing = await chrome.runtime.getContexts({
    contextTypes: [chrome.runtime.ContextType.OFFSCREEN_DOCUMENT],
    documentUrls: [url],
  });
  if (existing.length > 0) return;
  creating ??= chrome.offscreen
    .createDocument({
      url: OFFSCREEN_PATH,
      // wllama (llama.cpp) and onnxruntime-web run Web Workers, which a service worker cannot start.
      reasons: [chrome.offscreen.Reason.WORKERS],
      justification: 'Runs the on-device language model, embeddings and memory store in Web Workers.',
    })
    .finally(() => (creating = null));
  await creating;
}

/** Pings the core until it answers or `timeoutMs` passes. @throws Error on timeout. */
async function waitForCore(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  for (;;) {
    try {
      const pong = await sendMessage('core.ping');
      if (pong?.ready) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new MessagingError('core_timeout', 'The engine host did not start in time');
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
}

/** Wires the service worker's listeners. Call synchronously at start-up. */
export function startBackground(): void {
  chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch((error: unknown) => console.error(error));
  onMessage('core.ensure', async ({ sender }) => {
    assertSender(sender, ['sidepanel'], browser.runtime.id);
    await ensureOffscreenDocument();
    await waitForCore(20_000);
    return { ready: true as const };
  });
  registerPageListeners({
    ensureCore: async () => {
      await ensureOffscreenDocument();
      await waitForCore(20_000);
    },
  });
}
