/**
 * The extension's offscreen document (the memory core) over the browser's DevTools protocol, for
 * benches: Playwright does not see offscreen documents, so this attaches through a browser CDP
 * session (`Target.attachToTarget`, messages relayed with `Target.sendMessageToTarget`).
 */
import { writeFileSync } from 'node:fs';
import type { ExtensionBrowser } from '../../tests/e2e/harness';

/** A DevTools session on the offscreen document. */
export interface OffscreenSession {
  /** Sends one DevTools method to the offscreen document. @throws Error with the protocol's message. */
  call<T>(method: string, params?: Record<string, unknown>): Promise<T>;
  detach(): Promise<void>;
}

/**
 * Attaches to the running offscreen document of `browser`.
 * @throws Error when no offscreen document is running.
 */
export async function attachOffscreen(browser: ExtensionBrowser): Promise<OffscreenSession> {
  const cdp = await browser.context.browser()!.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  const target = targetInfos.find((t) => t.type === 'background_page' && t.url === `chrome-extension://${browser.extensionId}/offscreen.html`);
  if (!target) {
    await cdp.detach().catch(() => undefined);
    throw new Error('no offscreen document is running');
  }
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: false });
  let nextId = 1;
  return {
    call: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        const onMessage = (event: { sessionId?: string; message: string }) => {
          const message = JSON.parse(event.message) as { id?: number; result?: T; error?: { message: string } };
          if (message.id !== id) return;
          cdp.off('Target.receivedMessageFromTarget', onMessage);
          if (message.error) reject(new Error(`${method}: ${message.error.message}`));
          else resolve(message.result as T);
        };
        cdp.on('Target.receivedMessageFromTarget', onMessage);
        void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
      }),
    detach: () => cdp.detach().catch(() => undefined),
  };
}

/**
 * Records a V8 CPU profile of the offscreen document while `fn` runs (sampling every
 * `intervalUs` µs) and writes it to `file` (a `.cpuprofile`, readable by Chrome DevTools).
 * @returns what `fn` returns. @throws what `fn` or the protocol throws.
 */
export async function profileOffscreen<T>(browser: ExtensionBrowser, file: string, fn: () => Promise<T>, intervalUs = 500): Promise<T> {
  const session = await attachOffscreen(browser);
  try {
    await session.call('Profiler.enable');
    await session.call('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.call('Profiler.start');
    const out = await fn();
    const { profile } = await session.call<{ profile: unknown }>('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    return out;
  } finally {
    await session.detach();
  }
}
