/**
 * Profiles as vocabulary (issue 14): a profile is a namespace of the long-term memory with a name
 * (`ProfileRecord` in `./records.ts`). The core's `src/core/profiles.ts` keeps them; the side
 * panel's `src/ui/state/profiles.svelte.ts` holds the active one and passes it in every request
 * that lists, searches or creates something. Leaf module: imports only other model files.
 */
import type { ProfileRecord } from './records';

/** Longest profile name, in characters (code points), after trimming. */
export const MAX_PROFILE_NAME_CHARS = 60;

/**
 * `settings` row holding the active profile's id (a `state`-like key, not a preference: "Erase
 * everything" removes it with the profiles, and the default profile is active again).
 */
export const ACTIVE_PROFILE_KEY = 'profile.active';

/** Prefix of the ids of profiles the user creates (`profile-<uuid>`). */
export const PROFILE_ID_PREFIX = 'profile-';

/**
 * The form two names are compared in for uniqueness: Unicode NFKC, whitespace collapsed and
 * trimmed, lower case ("Work", " work ", "ｗｏｒｋ" are one name; "工作" and "Work" are two).
 */
export function profileNameKey(name: string): string {
  return name.normalize('NFKC').replace(/\s+/gu, ' ').trim().toLowerCase();
}

/** The profiles and which one is active (`profiles.list`, `profiles.switch`). */
export interface ProfilesState {
  /** Every profile, the default first, then by `createdAt`. */
  profiles: ProfileRecord[];
  /** Id (namespace) of the active profile; always one of `profiles`. */
  activeId: string;
}

/** What deleting a profile removed (`profiles.delete`): row counts per table name. */
export interface ProfileDeleteReport {
  /** Rows removed per table (tables with nothing removed are left out). */
  removed: Record<string, number>;
  /** The profile active afterwards (the default one when the deleted profile was active). */
  activeId: string;
}
