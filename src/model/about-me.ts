/**
 * "What Recall knows about me" (issue 14 item 6): a short, editable profile of the user per
 * namespace, synthesized in the background from the current profile, instruction and preference
 * memories (`src/memory/long-term/profile-summary`), injected into every prompt as its own
 * delimited section (`<about_user>`, `src/prompt/profile-section.ts`). Leaf module.
 */

/** One line of the profile. */
export interface AboutMeLine {
  text: string;
  /** Written or edited by the user: a rebuild keeps it verbatim and first. */
  pinned: boolean;
  /** Memories the line was built from (empty for the user's own lines and the model's). */
  sourceIds: string[];
}

/** Settings-table key prefix of the stored profiles: `aboutMe.<namespace>` (erased with the memories). */
export const ABOUT_ME_KEY_PREFIX = 'aboutMe.';

/** The profile of one namespace, as stored (settings table, key `aboutMe.<namespace>`). Times in ms epoch. */
export interface AboutMeProfile {
  namespace: string;
  lines: AboutMeLine[];
  /**
   * `memoryHash`es of generated lines the user removed: a rebuild does not bring them back (the
   * memory they came from stays; the user chose not to have it in the profile).
   */
  suppressed: string[];
  /** Last rebuild, `null` before the first. */
  builtAt: number | null;
  /** How the last rebuild wrote the generated lines: the language model, or the rules (no model, or an unusable reply). */
  via: 'llm' | 'rules' | null;
}

/** Longest profile, in tokens of the active model (its prompt section is capped further by its share). */
export const ABOUT_ME_MAX_TOKENS = 160;
/** Most lines of a profile. */
export const ABOUT_ME_MAX_LINES = 12;
/** Longest line, in characters (a longer memory is cut at a word end). */
export const ABOUT_ME_MAX_LINE_CHARS = 200;
