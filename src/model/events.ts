/**
 * Events the core broadcasts to every open panel (fire and forget; nobody may be listening), by
 * name, with their payloads. `ProtocolMap` (`src/messaging/protocol.ts`) declares its `event.*`
 * messages from `EventPayloads`. Leaf module: imports nothing from `src/` but other model files.
 */
import type { TransferProgress } from './backup';
import type { EngineStatus } from './engine';
import type { JobStats } from './jobs';
import type { ProfilesState } from './profiles';
import type { Settings } from './settings';
import type { VaultStatus } from './vault';

/** Every event type, one per `EventPayloads` entry. */
export const EVENT_TYPES = [
  'event.chatDelta',
  'event.engine',
  'event.jobs',
  'event.conversations',
  'event.settings',
  'event.transfer',
  'event.page',
  'event.profiles',
  'event.vault',
] as const;

/** Type of an event broadcast by the core (see `EVENT_TYPES`). */
export type EventType = (typeof EVENT_TYPES)[number];

/** One streamed piece of a reply (`delta`: text appended to the reply so far). */
export interface ChatDeltaEvent {
  requestId: string;
  conversationId: string;
  messageId: string;
  delta: string;
}

/** A conversation or its messages changed (`null`: the list itself changed, e.g. after an erase or import). */
export interface ConversationsChangedEvent {
  conversationId: string | null;
}

/** The payload of each event type. */
export interface EventPayloads {
  'event.chatDelta': ChatDeltaEvent;
  'event.engine': EngineStatus;
  'event.jobs': JobStats;
  'event.conversations': ConversationsChangedEvent;
  'event.settings': Settings;
  /** Progress of the export or import running now. */
  'event.transfer': TransferProgress;
  /** The service worker has a page or selection for the panel to attach (a context menu or the shortcut); take it with `page.takePending`. */
  'event.page': { at: number };
  /** The profiles or the active one changed (created, renamed, switched, deleted): every open panel follows. */
  'event.profiles': ProfilesState;
  /** The vault lock changed (on, off, locked, unlocked, auto-lock time, in-place pass progress). */
  'event.vault': VaultStatus;
}
