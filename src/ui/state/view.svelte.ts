/** Which part of the panel is on screen: the tab, the conversation drawer, the context view, the settings field to focus. No data. */
import type { Settings } from '../../model/settings';

/** The panel's tabs. */
export type Tab = 'chat' | 'models' | 'memory' | 'settings';

/** See module doc. Created by `createViewStore`. */
export class ViewStore {
  tab = $state<Tab>('chat');
  drawerOpen = $state(false);
  /** Assistant message whose context view is open (its id), or `null`. */
  contextMessageId = $state<string | null>(null);
  /** The setting whose field the Settings tab focuses when it shows (`openSettings`); cleared once focused. */
  settingsFocus = $state<keyof Settings | null>(null);

  /** Opens the Settings tab with the field of `setting` focused (e.g. "Raise it in Settings" → Answer length). */
  openSettings(setting: keyof Settings | null = null): void {
    this.drawerOpen = false;
    this.contextMessageId = null;
    this.settingsFocus = setting;
    this.tab = 'settings';
  }

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
