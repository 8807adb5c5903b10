/**
 * Context view store: the prompt trace of the assistant message whose context view is open, read
 * from the core (`trace.get`) unless it is the open conversation's last one, which the
 * conversations store already holds. A reply that comes back after another message was opened is
 * dropped. One per context view on screen (`AppState.createContextView`).
 */
import type { PromptTrace } from '../../model/trace';
import { errorText } from '../lib/errors';
import type { ConversationsStore } from './conversations.svelte';

/** What the context view store needs. */
export interface ContextViewStoreDeps {
  conversations: ConversationsStore;
}

/** See module doc. Created by `createContextViewStore`. */
export class ContextViewStore {
  /** The trace shown; `null` while loading, on failure, or when none was recorded (memory command, imported reply). */
  trace = $state<PromptTrace | null>(null);
  /** `true` while the trace is read. */
  loading = $state(true);
  /** The core's message when the read failed, else `null`. */
  loadError = $state<string | null>(null);
  readonly #deps: ContextViewStoreDeps;
  /** The message opened last: replies for any other are dropped. */
  #messageId: string | null = null;

  constructor(deps: ContextViewStoreDeps) {
    this.#deps = deps;
  }

  /** Shows the trace of assistant message `messageId` (the cached last trace at once, else read from the core). Never throws. */
  async open(messageId: string): Promise<void> {
    this.#messageId = messageId;
    this.loading = true;
    this.loadError = null;
    const last = this.#deps.conversations.lastTrace;
    if (last?.messageId === messageId) {
      this.trace = last.trace;
      this.loading = false;
      return;
    }
    try {
      const trace = await this.#deps.conversations.trace(messageId);
      if (this.#messageId === messageId) this.trace = trace;
    } catch (error) {
      if (this.#messageId === messageId) this.loadError = errorText(error);
    } finally {
      if (this.#messageId === messageId) this.loading = false;
    }
  }
}

/** Creates a context view store (loading, nothing shown). */
export function createContextViewStore(deps: ContextViewStoreDeps): ContextViewStore {
  return new ContextViewStore(deps);
}
