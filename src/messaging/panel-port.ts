/**
 * The side panel's long-lived port to the core (`runtime.connect`, name `PANEL_PORT_NAME`): the
 * panel says which conversation it shows (`PanelPortMessage`) whenever that changes, and the port's
 * disconnect tells the core the panel closed — a closed panel sends no message, so a port is how
 * the core learns it. The core deletes a temporary chat once no open panel shows it
 * (`src/core/temporary-chats.ts`). Senders are checked like requests (`assertSender`).
 *
 * A port reaches every extension context listening for ports, and stays open while any receiver
 * keeps its end; the service worker listens (for WebLLM's port) and keeps the panel's end, so the
 * port does not drop when the core's offscreen document closes (and the worker may not let go:
 * `disconnect()` by any receiver closes the opener's port too). The panel learns of the core's end
 * from a Web Lock instead: the core holds `CORE_LOCK_NAME` for the life of its document and answers a
 * port it accepts with `PanelPortAck` only once it holds it; the panel then asks for the lock, which
 * it is granted when that core is gone, and reconnects (`src/ui/lib/panel-port.ts`), naming the
 * conversations it left while it had no core (`left`).
 */

/** Name of the panel's port. */
export const PANEL_PORT_NAME = 'recall.panel';

/** Name of the Web Lock the core's offscreen document holds while it lives (released when the document closes). */
export const CORE_LOCK_NAME = 'recall.core';

/**
 * What the panel posts on its port: the conversation it shows now (`null`: a new chat, none yet)
 * and, on the first message after a reconnect, the ids of the conversations it showed and left
 * while its port was down (the core deletes those that are temporary and shown by no panel).
 */
export interface PanelPortMessage {
  open: string | null;
  left?: string[];
}

/** What the core posts on a panel port it accepted, once it holds `CORE_LOCK_NAME`: the port is served (the panel's back-off starts over). */
export interface PanelPortAck {
  served: true;
}

/** Whether `value` is a `PanelPortMessage` (anything else on the port is ignored). */
export function isPanelPortMessage(value: unknown): value is PanelPortMessage {
  if (typeof value !== 'object' || value === null || !('open' in value)) return false;
  const { open, left } = value as { open: unknown; left?: unknown };
  if (left !== undefined && !(Array.isArray(left) && left.every((id) => typeof id === 'string'))) return false;
  return open === null || typeof open === 'string';
}

/** Whether `value` is a `PanelPortAck`. */
export function isPanelPortAck(value: unknown): value is PanelPortAck {
  return typeof value === 'object' && value !== null && (value as { served?: unknown }).served === true;
}
