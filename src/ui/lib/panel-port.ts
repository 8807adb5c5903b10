/**
 * The panel's side of its port to the core (`src/messaging/panel-port.ts`): tells the core which
 * conversation this panel shows, so a temporary chat is deleted once no panel shows it — also when
 * the panel closes (the port disconnects by itself).
 *
 * When the core that accepted the port (`PanelPortAck`) is gone — its Web Lock `CORE_LOCK_NAME` is
 * granted to this panel (`watchCore`): the port alone does not say so, the service worker keeps
 * its end — or when the port drops while the panel stays open, the panel lets go of the port,
 * makes sure a core runs again (`ensureCore`: `core.ensure`) and reconnects, with capped
 * exponential back-off (`RECONNECT_MS` doubling to `RECONNECT_MAX_MS`) that starts over once a
 * core accepts the port. On reconnecting it says again what it shows, and which conversations it
 * left while it had no core (`left`), so a temporary chat opened and left meanwhile is still deleted.
 */
import browser from 'webextension-polyfill';
import { CORE_LOCK_NAME, isPanelPortAck, PANEL_PORT_NAME, type PanelPortMessage } from '../../messaging/panel-port';

/** First wait before reconnecting a dropped port, ms; doubled after each port dropped before a core accepted it. */
export const RECONNECT_MS = 250;
/** Longest wait between reconnects, ms. */
export const RECONNECT_MAX_MS = 30_000;

/** What the app state uses: say which conversation the panel shows now. */
export interface PanelPort {
  /** This panel shows conversation `conversationId` now (`null`: a new chat, none yet). */
  show(conversationId: string | null): void;
}

/** The port, as far as this module uses it (`runtime.Port`). */
export interface PanelPortLike {
  postMessage(message: PanelPortMessage): void;
  disconnect(): void;
  onMessage: { addListener(listener: (message: unknown) => void): void };
  onDisconnect: { addListener(listener: () => void): void };
}

/** Options of `openPanelPort`; the defaults fit the panel. */
export interface PanelPortOptions {
  /** Makes sure the core runs before a reconnect (the panel's `connect()`: `core.ensure` with its own retries). Rejects when it cannot. */
  ensureCore: () => Promise<void>;
  /** Opens a port named `PANEL_PORT_NAME` (default `runtime.connect`). May throw (extension context invalidated). */
  connectPort?: () => PanelPortLike;
  /** Runs `run` after `ms` milliseconds (default `setTimeout`). */
  schedule?: (run: () => void, ms: number) => void;
  /** Resolves once the core that just accepted the port is gone (default: granted `CORE_LOCK_NAME`, which that core holds while it lives). */
  watchCore?: () => Promise<void>;
}

/** Resolves once this panel is granted the core's Web Lock, that is once the core holding it now is gone (released at once). */
function coreGone(): Promise<void> {
  return navigator.locks.request(CORE_LOCK_NAME, () => undefined);
}

/** Opens the port (call once the core is up: `connect()` of `../state/api`). */
export function openPanelPort(options: PanelPortOptions): PanelPort {
  const connectPort = options.connectPort ?? (() => browser.runtime.connect({ name: PANEL_PORT_NAME }) as PanelPortLike);
  const schedule = options.schedule ?? ((run, ms) => void setTimeout(run, ms));
  const watchCore = options.watchCore ?? coreGone;
  let port: PanelPortLike | null = null;
  let shown: string | null = null;
  /** Conversations shown and left while there was no port. */
  let left = new Set<string>();
  let delay = RECONNECT_MS;

  const post = () => {
    if (!port) return;
    const message: PanelPortMessage = left.size > 0 ? { open: shown, left: [...left] } : { open: shown };
    port.postMessage(message);
    left = new Set();
  };
  const retry = () => {
    const wait = delay;
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
    schedule(() => void reconnect(), wait);
  };
  const open = () => {
    let opened: PanelPortLike;
    try {
      opened = connectPort();
    } catch {
      retry();
      return;
    }
    port = opened;
    /** Lets go of this port (once: a drop, or its core gone) and reconnects. */
    const lost = () => {
      if (port !== opened) return;
      port = null;
      opened.disconnect();
      retry();
    };
    opened.onMessage.addListener((message) => {
      if (!isPanelPortAck(message) || port !== opened) return;
      delay = RECONNECT_MS;
      watchCore().then(lost, lost);
    });
    opened.onDisconnect.addListener(lost);
    post();
  };
  const reconnect = async () => {
    try {
      await options.ensureCore();
    } catch {
      retry();
      return;
    }
    open();
  };

  open();
  return {
    show(conversationId) {
      if (!port && shown !== null && shown !== conversationId) left.add(shown);
      if (conversationId !== null) left.delete(conversationId);
      shown = conversationId;
      post();
    },
  };
}
