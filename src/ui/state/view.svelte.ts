/** Which part of the panel is on screen: the tab, the conversation drawer, the context view. No data. */

/** The panel's tabs. */
export type Tab = 'chat' | 'models' | 'memory' | 'settings';

/** See module doc. Created by `createViewStore`. */
export class ViewStore {
  tab = $state<Tab>('chat');
  drawerOpen = $state(false);
  /** Assistant message whose context view is open (its id), or `null`. */
  contextMessageId = $state<string | null>(null);

  /** Shows the chat tab with the drawer closed (after opening or starting a conversation). */
  showChat(): void {
    this.drawerOpen = false;
    this.tab = 'chat';
  }
}

/** Creates the view store (chat tab, drawer closed, no context view). */
export function createViewStore(): ViewStore {
  return new ViewStore();
}
