/**
 * The Memory tab's collapsible sections: the list of memories comes first on screen, and the
 * rarely used parts — the profile summary, suggested memories, recently learned, and backup /
 * import / erase — sit behind one row of toggles above it. Which are open is remembered in the
 * panel's `localStorage` (`recall.ui.v1.memorySectionsOpen`), so a user who keeps Backup open finds
 * it open next time; none is open at first. An unreadable preference counts as none open.
 */
import { readUiPref, writeUiPref, type PrefStorage } from '../lib/ui-prefs';

/** The sections, in the order of their toggles and panels. */
export const MEMORY_SECTIONS = ['about', 'review', 'learned', 'data'] as const;
/** One of `MEMORY_SECTIONS`. */
export type MemorySectionId = (typeof MEMORY_SECTIONS)[number];

const PREF = 'recall.ui.v1.memorySectionsOpen';

/** See module doc. Created by `createMemorySections`. */
export class MemorySections {
  /** The open sections. */
  open = $state<MemorySectionId[]>([]);
  readonly #storage: PrefStorage | null | undefined;

  /** @param storage where the preference lives (`localStorage` when omitted). */
  constructor(storage?: PrefStorage | null) {
    this.#storage = storage;
    const saved = readUiPref(PREF, storage); // undefined: the default (localStorage)
    const ids = (saved ?? '').split(',');
    this.open = MEMORY_SECTIONS.filter((id) => ids.includes(id));
  }

  /** Whether `id` is open. */
  isOpen(id: MemorySectionId): boolean {
    return this.open.includes(id);
  }

  /** Opens `id` when `open` is true, else closes it, and remembers the choice. */
  set(id: MemorySectionId, open: boolean): void {
    if (this.isOpen(id) === open) return;
    this.open = MEMORY_SECTIONS.filter((s) => (s === id ? open : this.open.includes(s)));
    writeUiPref(PREF, this.open.join(','), this.#storage);
  }

  /** Opens `id` if closed, closes it if open. */
  toggle(id: MemorySectionId): void {
    this.set(id, !this.isOpen(id));
  }
}

/** Creates the sections' state, read from `storage` (the panel's `localStorage` when omitted). */
export function createMemorySections(storage?: PrefStorage | null): MemorySections {
  return new MemorySections(storage);
}
