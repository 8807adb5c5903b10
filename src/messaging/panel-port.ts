/**
 * The side panel's long-lived port to the core (`runtime.connect`, name `PANEL_PORT_NAME`): the
 * panel says which conversation it shows (`PanelPortMessage`) whenever that changes, and the port's
 * disconnect tells the core the panel closed — a closed panel sends no message, so a port is how
 * the core learns it. The core deletes a temporary chat once no open panel shows it
 * (`src/core/temporary-chats.ts`). Senders are checked like requests (`assertSender`).
 */

/** Name of the panel's port. */
export const PANEL_PORT_NAME = 'recall.panel';

/** What the panel posts on its port: the conversation it shows now (`null`: a new chat, none yet). */
export interface PanelPortMessage {
  open: string | null;
}

/** Whether `value` is a `PanelPortMessage` (anything else on the port is ignored). */
export function isPanelPortMessage(value: unknown): value is PanelPortMessage {
  if (typeof value !== 'object' || value === null || !('open' in value)) return false;
  const open = (value as { open: unknown }).open;
  return open === null || typeof open === 'string';
}
