/**
 * Temporary chats are not kept (issue 14 item 5): one is deleted — with its messages, traces and
 * short-term state (`ConversationStore.delete`) — as soon as no open panel shows it any more: the
 * panel that showed it opened another conversation or a new chat, or closed (its port
 * disconnected: `src/messaging/panel-port.ts`). The core also deletes every temporary chat when it
 * starts (`ConversationStore.deleteTemporary`), so none outlives a restart or a killed context.
 * Only a conversation a panel showed is deleted when it leaves it, so a temporary chat another
 * panel has just created (and not announced yet) is never swept away.
 */
import type { ConversationStore } from './conversations';

/** See module doc. */
export interface TemporaryChatKeeper {
  /**
   * Panel `panelId` now shows `conversationId` (`null`: none). The conversation it showed before
   * is deleted when it is temporary and no other panel shows it. Resolves once that is done.
   */
  show(panelId: string, conversationId: string | null): Promise<void>;
  /** Panel `panelId` closed: as `show(panelId, null)`, and the panel is forgotten. */
  close(panelId: string): Promise<void>;
  /**
   * A panel left conversations `conversationIds` while it could not tell this core (its port
   * was down: the core restarted): each is deleted when it is temporary and no panel shows it.
   */
  left(conversationIds: readonly string[]): Promise<void>;
}

/** Creates the keeper over the (event-announcing) conversation store. A failed delete is logged; the next start deletes it. */
export function createTemporaryChatKeeper(conversations: Pick<ConversationStore, 'get' | 'delete'>): TemporaryChatKeeper {
  const shown = new Map<string, string | null>();

  async function leave(previous: string | null | undefined): Promise<void> {
    if (!previous || [...shown.values()].includes(previous)) return;
    try {
      if ((await conversations.get(previous))?.temporary) await conversations.delete(previous);
    } catch (error) {
      console.warn('[temporary] could not delete a temporary chat (the next start does):', error);
    }
  }

  return {
    async show(panelId, conversationId) {
      const previous = shown.get(panelId);
      shown.set(panelId, conversationId);
      if (previous !== conversationId) await leave(previous);
    },
    async close(panelId) {
      const previous = shown.get(panelId);
      shown.delete(panelId);
      await leave(previous);
    },
    async left(conversationIds) {
      for (const id of new Set(conversationIds)) await leave(id);
    },
  };
}
