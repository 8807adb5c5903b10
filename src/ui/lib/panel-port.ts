/**
 * The panel's side of its port to the core (`src/messaging/panel-port.ts`): tells the core which
 * conversation this panel shows, so a temporary chat is deleted once no panel shows it — also when
 * the panel closes (the port disconnects by itself). When the port drops while the panel stays
 * open (the core's offscreen document restarted), it reconnects and says again what it shows,
 * after `RECONNECT_MS`.
 */
import browser from 'webextension-polyfill';
import { PANEL_PORT_NAME, type PanelPortMessage } from '../../messaging/panel-port';

/** Wait before reconnecting a dropped port, ms. */
const RECONNECT_MS = 1000;

/** What the app state uses: say which conversation the panel shows now. */
export interface PanelPort {
  /** This panel shows conversation `conversationId` now (`null`: a new chat, none yet). */
  show(conversationId: string | null): void;
}

/** Opens the port (call once the core is up: `connect()` of `../state/api`). */
export function openPanelPort(): PanelPort {
  let port: ReturnType<typeof browser.runtime.connect> | null = null;
  let shown: string | null = null;
  const post = () => port?.postMessage({ open: shown } satisfies PanelPortMessage);
  const open = () => {
    port = browser.runtime.connect({ name: PANEL_PORT_NAME });
    port.onDisconnect.addListener(() => {
      port = null;
      setTimeout(open, RECONNECT_MS);
    });
    post();
  };
  open();
  return {
    show(conversationId) {
      shown = conversationId;
      post();
    },
  };
}
