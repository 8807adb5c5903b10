/**
 * Service-worker side of the WebLLM engine: WebLLM's `ExtensionServiceWorkerMLCEngineHandler`
 * owns the `MLCEngine` (WebGPU works in extension service workers since Chrome 124) and answers
 * the proxy in the engine host over a `chrome.runtime` port (see `engine.ts`).
 *
 * Register synchronously at service-worker start-up (`entrypoints/background.ts`), so a port
 * opened while the worker was asleep reaches the listener.
 */
import { ExtensionServiceWorkerMLCEngineHandler } from '@mlc-ai/web-llm';
import { WEBLLM_PORT_NAME, type WebLLMPort } from './engine';

/** A port as seen by `runtime.onConnect` (with its sender). */
export interface IncomingWebLLMPort extends WebLLMPort {
  readonly sender?: { id?: string; url?: string; tab?: unknown };
}

/** The `runtime.onConnect` event (subset). */
export interface OnConnectLike {
  addListener(listener: (port: IncomingWebLLMPort) => void): void;
}

/** The engine object WebLLM's handler drives (the real one is WebLLM's `MLCEngine`). */
export type MLCEngineLike = ExtensionServiceWorkerMLCEngineHandler['engine'];

/** Options of `registerWebLLMServiceWorker`, for tests; the defaults fit the extension. */
export interface RegisterWebLLMOptions {
  /** Default `chrome.runtime.onConnect`. */
  onConnect?: OnConnectLike;
  /** This extension's id (default `chrome.runtime.id`); ports from elsewhere are refused. */
  extensionId?: string;
  /**
   * Replaces the handler's `MLCEngine` (tests: a fake engine, since WebGPU and the model hub are
   * not available in Node). Default: WebLLM's real `MLCEngine`.
   */
  createEngine?: () => MLCEngineLike;
}

/**
 * `true` when a port comes from one of this extension's own pages (offscreen document, or an
 * extension page in a tab) — not a content script (whose URL is the web page's), not another
 * extension.
 */
function isOwnPage(port: IncomingWebLLMPort, extensionId: string | undefined): boolean {
  const sender = port.sender;
  if (!sender || !extensionId) return false;
  if (sender.id !== extensionId) return false;
  try {
    const url = new URL(sender.url ?? '');
    return url.protocol === 'chrome-extension:' && url.host === extensionId;
  } catch {
    return false;
  }
}

/**
 * Listens for WebLLM ports and serves them with one `ExtensionServiceWorkerMLCEngineHandler`
 * (created on the first connection; later connections — e.g. a reloaded offscreen document —
 * take over with `setPort`, keeping a loaded model). Call once per service-worker start.
 */
export function registerWebLLMServiceWorker(options: RegisterWebLLMOptions = {}): void {
  const onConnect = options.onConnect ?? (chrome.runtime.onConnect as unknown as OnConnectLike);
  const extensionId = options.extensionId ?? (globalThis as { chrome?: { runtime?: { id?: string } } }).chrome?.runtime?.id;
  let handler: ExtensionServiceWorkerMLCEngineHandler | undefined;
  onConnect.addListener((port) => {
    if (port.name !== WEBLLM_PORT_NAME) return;
    if (!isOwnPage(port, extensionId)) {
      console.warn('[webllm] refused a port from', port.sender?.url ?? 'an unknown sender');
      port.disconnect();
      return;
    }
    const chromePort = port as unknown as chrome.runtime.Port;
    if (!handler) {
      handler = new ExtensionServiceWorkerMLCEngineHandler(chromePort);
      if (options.createEngine) {
        const progress = handler.engine.getInitProgressCallback();
        handler.engine = options.createEngine();
        handler.engine.setInitProgressCallback(progress);
      }
    } else {
      handler.setPort(chromePort);
    }
    const current = handler;
    port.onMessage.addListener((message) => {
      try {
        current.onmessage(message);
      } catch (error) {
        console.warn('[webllm] malformed message on the engine port:', error);
      }
    });
  });
}
