/**
 * Page store: the page (or selection) attached to the next message in the composer. *Attach* asks
 * the service worker to read the active tab of this panel's window (`page.read`: refused for
 * browser pages, the Web Store and blocked sites before any script runs); a context-menu click or
 * the shortcut leaves an attachment with the service worker, which says so (`event.page`) and the
 * panel takes it (`page.takePending`), also once on start. The chat store takes the attachment
 * when it sends (`take`): it goes with that one message and is never stored.
 */
import type { PageAttachment, PendingPage } from '../../model/page';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/**
 * What the page store needs. `whereAmI`: the window this panel belongs to (`undefined`: the last
 * focused one) and, when the panel is opened as a tab, that tab's id (never read itself).
 */
export interface PageStoreDeps extends StoreApi {
  notices: NoticesStore;
  whereAmI?: () => Promise<{ windowId?: number; panelTabId?: number }>;
}

/** A failure left by the service worker, as an error the notices translate (`errorCodes.page.<code>`). */
function pendingError(error: Extract<PendingPage, { error: unknown }>['error']): Error {
  return Object.assign(new Error(error.message), { domain: 'page', code: error.code, params: error.params });
}

/** See module doc. Created by `createPageStore`. */
export class PageStore {
  /** The attachment for the next message, or `null`. */
  attached = $state<PageAttachment | null>(null);
  /** A read is running. */
  busy = $state(false);
  readonly #deps: PageStoreDeps;

  constructor(deps: PageStoreDeps) {
    this.#deps = deps;
  }

  /** Reads the current tab and attaches it (replacing any attachment). A refusal becomes a notice (`page.attachFailed`). */
  async attachCurrent(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const where = (await this.#deps.whereAmI?.().catch(() => undefined)) ?? {};
      this.attached = await this.#deps.request('page.read', where);
    } catch (error) {
      this.#deps.notices.fail('page.attachFailed', error);
    } finally {
      this.busy = false;
    }
  }

  /** Takes what a context menu or the shortcut left (if anything): attaches it, or shows why not. */
  async takePending(): Promise<void> {
    const pending = await this.#deps.request('page.takePending').catch(() => null);
    if (!pending) return;
    if ('attachment' in pending) this.attached = pending.attachment;
    else this.#deps.notices.fail('page.attachFailed', pendingError(pending.error));
  }

  /** Removes the attachment. */
  clear(): void {
    this.attached = null;
  }

  /** The attachment for the message being sent, once: it is cleared. */
  take(): PageAttachment | null {
    const out = this.attached ? ($state.snapshot(this.attached) as PageAttachment) : null;
    this.attached = null;
    return out;
  }

  /** Follows `event.page` (the service worker has something for this panel). */
  listen(): () => void {
    return this.#deps.subscribe('event.page', () => void this.takePending());
  }
}

/** Creates the page store. */
export function createPageStore(deps: PageStoreDeps): PageStore {
  return new PageStore(deps);
}
