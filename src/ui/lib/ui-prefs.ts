/**
 * Small preferences of the side panel itself, kept in the panel's `localStorage` (they concern
 * one panel's display, not the memory, so they are not in IndexedDB and not in exports). Every
 * key is declared here once, with its version in the name; a value that cannot be read counts as
 * unset. Storage errors (disabled storage, quota) are ignored: a preference is never worth an error.
 */

/** The declared keys and the type of their values. */
export interface UiPrefs {
  /** The embedder error message whose chat banner the user dismissed (v1). */
  'recall.ui.v1.embedderBannerDismissed': string;
  /** Background-job failures and rejections up to this time (ms epoch, as a decimal string) were dismissed in the Memory tab (v1). */
  'recall.ui.v1.jobNotesDismissedAt': string;
  /** The Memory tab's sections the user left open (`MemorySectionId`s joined by commas; '' = none) (v1). */
  'recall.ui.v1.memorySectionsOpen': string;
}

/** The part of the Web Storage API used here (`localStorage` in the panel). */
export type PrefStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

const defaultStorage = (): PrefStorage | null => {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null; // access denied (storage disabled)
  }
};

/**
 * Reads a preference. @returns its value, or `null` when unset, unreadable or not a string.
 */
export function readUiPref<K extends keyof UiPrefs>(key: K, storage: PrefStorage | null = defaultStorage()): UiPrefs[K] | null {
  try {
    const raw = storage?.getItem(key);
    if (raw == null) return null;
    const value: unknown = JSON.parse(raw);
    return typeof value === 'string' ? (value as UiPrefs[K]) : null;
  } catch {
    return null;
  }
}

/** Writes a preference; `null` removes it. Never throws. */
export function writeUiPref<K extends keyof UiPrefs>(key: K, value: UiPrefs[K] | null, storage: PrefStorage | null = defaultStorage()): void {
  try {
    if (value === null) storage?.removeItem(key);
    else storage?.setItem(key, JSON.stringify(value));
  } catch {
    // full or disabled storage: the preference lasts until the panel closes
  }
}
