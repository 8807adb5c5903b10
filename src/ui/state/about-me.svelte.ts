/**
 * "What Recall knows about me" in the panel (issue 14 item 6): the profile of the active
 * namespace, its editor (lines the user writes or changes are sent `pinned`, so a rebuild keeps
 * them) and the rebuild button. Re-reads the profile when the job counts change (`event.jobs`: a
 * rebuild may have finished), unless the user is editing.
 */
import { DEFAULT_NAMESPACE } from '../../model/memory';
import type { AboutMeProfile } from '../../model/about-me';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/** What the store needs. */
export interface AboutMeStoreDeps extends StoreApi {
  notices: NoticesStore;
  /** The active namespace (profile); default `DEFAULT_NAMESPACE`. */
  namespace?: () => string;
}

/** One line in the editor: its text now, what it was when editing began (`null`: new), and whether it was pinned. */
export interface DraftLine {
  text: string;
  original: string | null;
  pinned: boolean;
}

/** See module doc. Created by `createAboutMeStore`. */
export class AboutMeStore {
  /** `null` until first read. */
  profile = $state<AboutMeProfile | null>(null);
  /** The editor's lines while editing, else `null`. */
  draft = $state<DraftLine[] | null>(null);
  /** A rebuild was asked for and has not come back yet. */
  rebuilding = $state(false);
  readonly #deps: AboutMeStoreDeps;

  constructor(deps: AboutMeStoreDeps) {
    this.#deps = deps;
  }

  get #namespace(): string {
    return this.#deps.namespace?.() ?? DEFAULT_NAMESPACE;
  }

  /** Follows `event.jobs` (see module doc). @returns the unsubscribe. */
  listen(): () => void {
    return this.#deps.subscribe('event.jobs', () => {
      if (this.draft === null) void this.load(true);
    });
  }

  /** Reads the profile; `quiet` failures keep the last one without a notice. */
  async load(quiet = false): Promise<void> {
    try {
      const profile = await this.#deps.request('aboutMe.get', { namespace: this.#namespace });
      if (this.rebuilding && profile.builtAt !== this.profile?.builtAt) this.rebuilding = false;
      this.profile = profile;
    } catch (error) {
      if (!quiet) this.#deps.notices.fail('aboutMe.loadFailed', error);
    }
  }

  /** Opens the editor on the current lines. */
  startEdit(): void {
    this.draft = (this.profile?.lines ?? []).map((l) => ({ text: l.text, original: l.text, pinned: l.pinned }));
  }

  /** Adds an empty line to the editor. */
  addLine(): void {
    this.draft = [...(this.draft ?? []), { text: '', original: null, pinned: true }];
  }

  /** Removes line `index` from the editor. */
  removeLine(index: number): void {
    this.draft = (this.draft ?? []).filter((_, i) => i !== index);
  }

  /** Leaves the editor without saving. */
  cancel(): void {
    this.draft = null;
  }

  /**
   * Saves the editor's lines: a line is sent pinned when it was pinned, new, or changed (trimmed
   * text differs from where it started); blank lines are dropped by the core.
   */
  async save(): Promise<void> {
    const draft = this.draft;
    if (!draft) return;
    const lines = draft.map((l) => ({ text: l.text.trim(), pinned: l.pinned || l.original === null || l.text.trim() !== l.original.trim() }));
    try {
      this.profile = await this.#deps.request('aboutMe.save', { namespace: this.#namespace, lines });
      this.draft = null;
    } catch (error) {
      this.#deps.notices.fail('aboutMe.saveFailed', error);
    }
  }

  /** Asks the core to rebuild the profile in the background. */
  async rebuild(): Promise<void> {
    try {
      this.rebuilding = true;
      await this.#deps.request('aboutMe.rebuild', { namespace: this.#namespace });
    } catch (error) {
      this.rebuilding = false;
      this.#deps.notices.fail('aboutMe.saveFailed', error);
    }
  }
}

/** Creates the store. */
export function createAboutMeStore(deps: AboutMeStoreDeps): AboutMeStore {
  return new AboutMeStore(deps);
}
