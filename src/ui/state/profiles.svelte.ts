/**
 * Profiles store: the profiles and the ACTIVE one — the one place the panel's namespace comes
 * from. Every store that lists, searches or creates something (conversations, the memory
 * manager, history import, pasted memories) reads `namespace` from here and names it in its
 * request, so switching the profile switches all of them. Also the picker's own form state: the
 * name typed for a new profile, the profile being renamed, the delete question
 * (`ProfilePicker.svelte`). Creating a profile switches to it. The active profile is the core's
 * (persisted): a switch in another panel is followed here (`event.profiles`). Failures become notices.
 */
import { DEFAULT_NAMESPACE } from '../../model/memory';
import type { ProfilesState } from '../../model/profiles';
import type { ProfileRecord } from '../../model/records';
import { t } from '../i18n/index.svelte';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

/** What the profiles store needs. */
export interface ProfilesStoreDeps extends StoreApi {
  notices: NoticesStore;
  /**
   * Called after the active profile changed (switch, create, or the active one deleted): the panel
   * leaves the open conversation and shows the new profile's list (`AppState`).
   */
  onSwitched: () => Promise<void>;
}

/** See module doc. Created by `createProfilesStore`. */
export class ProfilesStore {
  /** Every profile, the default first (`profiles.list`); only the default one before the first read. */
  profiles = $state<ProfileRecord[]>([{ id: DEFAULT_NAMESPACE, name: '', createdAt: 0 }]);
  /** Id of the active profile: the namespace the panel's requests name. */
  activeId = $state<string>(DEFAULT_NAMESPACE);
  /** The name typed for a new profile. */
  newName = $state('');
  /** Id of the profile being renamed, and the name typed; `null` when none. */
  renamingId = $state<string | null>(null);
  renameText = $state('');
  /** Id of the profile whose delete asks for confirmation, or `null`. */
  confirmingDeleteId = $state<string | null>(null);
  /** A create, rename, switch or delete is in flight. */
  busy = $state(false);
  readonly #deps: ProfilesStoreDeps;

  constructor(deps: ProfilesStoreDeps) {
    this.#deps = deps;
  }

  /** The namespace every request of the panel names (= `activeId`). */
  get namespace(): string {
    return this.activeId;
  }

  /** The active profile's record. */
  get active(): ProfileRecord {
    return this.profiles.find((p) => p.id === this.activeId) ?? this.profiles[0]!;
  }

  /** Shows a state the core answered. @returns whether the active profile changed. */
  show(state: ProfilesState): boolean {
    const changed = state.activeId !== this.activeId;
    this.profiles = state.profiles;
    this.activeId = state.activeId;
    return changed;
  }

  /**
   * Follows `event.profiles` (a change made here or in another panel): shows the new state, and
   * when the active profile changed the panel follows it (`onSwitched`). @returns the unsubscribe.
   */
  listen(): () => void {
    return this.#deps.subscribe('event.profiles', (state) => {
      if (this.show(state)) void this.#deps.onSwitched();
    });
  }

  /** Reads the profiles and the active one (first load). Failures become a notice. */
  async load(): Promise<void> {
    try {
      this.show(await this.#deps.request('profiles.list', undefined, { retry: true }));
    } catch (error) {
      this.#deps.notices.fail('errors.loadFailed', error);
    }
  }

  /** Makes `id` active; on a change the panel follows (`onSwitched`). Failures become a notice. */
  async switchTo(id: string): Promise<void> {
    if (id === this.activeId) return;
    await this.#run(async () => {
      if (this.show(await this.#deps.request('profiles.switch', { id }))) await this.#deps.onSwitched();
    });
  }

  /** Creates a profile named `newName` and switches to it; the field empties on success. @returns whether it was created. */
  async create(): Promise<boolean> {
    const name = this.newName.trim();
    if (!name) return false;
    return this.#run(async () => {
      const created = await this.#deps.request('profiles.create', { name });
      this.newName = '';
      if (this.show(await this.#deps.request('profiles.switch', { id: created.id }))) await this.#deps.onSwitched();
    });
  }

  /** Opens the rename field of profile `id` with its name (`shownName` for the default one's translated name). */
  startRename(id: string, shownName: string): void {
    this.confirmingDeleteId = null;
    this.renamingId = id;
    this.renameText = shownName;
  }

  /** Leaves the rename field. */
  cancelRename(): void {
    this.renamingId = null;
  }

  /** Saves the typed name of the profile being renamed; the field stays open when it fails. @returns whether it was saved. */
  async saveRename(): Promise<boolean> {
    const id = this.renamingId;
    if (!id || !this.renameText.trim()) return false;
    return this.#run(async () => {
      const renamed = await this.#deps.request('profiles.rename', { id, name: this.renameText.trim() });
      this.profiles = this.profiles.map((p) => (p.id === renamed.id ? renamed : p));
      this.renamingId = null;
    });
  }

  /** Asks before deleting profile `id` (never the default one). */
  askDelete(id: string): void {
    if (id === DEFAULT_NAMESPACE) return;
    this.renamingId = null;
    this.confirmingDeleteId = id;
  }

  /** Closes the delete question. */
  cancelDelete(): void {
    this.confirmingDeleteId = null;
  }

  /**
   * Deletes the profile the question is about, with everything of it; when it was active the
   * default one becomes active and the panel follows. @returns whether it was deleted.
   */
  async confirmDelete(): Promise<boolean> {
    const id = this.confirmingDeleteId;
    if (!id) return false;
    return this.#run(async () => {
      await this.#deps.request('profiles.delete', { id });
      this.confirmingDeleteId = null;
      if (this.show(await this.#deps.request('profiles.list', undefined, { retry: true }))) await this.#deps.onSwitched();
      this.#deps.notices.notify('info', t('profiles.deleted'));
    });
  }

  /** Runs one change with `busy` set; a failure becomes a notice. @returns whether it succeeded. */
  async #run(change: () => Promise<void>): Promise<boolean> {
    this.busy = true;
    try {
      await change();
      return true;
    } catch (error) {
      this.#deps.notices.fail('profiles.failed', error);
      return false;
    } finally {
      this.busy = false;
    }
  }
}

/** Creates the profiles store. */
export function createProfilesStore(deps: ProfilesStoreDeps): ProfilesStore {
  return new ProfilesStore(deps);
}
