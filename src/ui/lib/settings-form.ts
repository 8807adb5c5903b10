/**
 * Validation of the settings form. Ranges mirror the core's settings validation
 * (`src/core/settings.ts`): answer reserve 16–8,192 tokens, memory top-k 0–50, episodic
 * retention 1–36,500 days or keep forever. The form validates before sending so the user sees
 * which field is wrong in their language; the core validates again.
 */
import type { Settings } from '../../messaging/protocol';

/** Inclusive ranges of the numeric settings. */
export const SETTING_RANGES = {
  /** Tokens reserved for each answer. */
  maxAnswerTokens: { min: 16, max: 8_192 },
  /** Long-term memories injected per turn (top-k). */
  memoryTopK: { min: 0, max: 50 },
  /** Days an episodic memory is kept unless pinned. */
  episodicRetentionDays: { min: 1, max: 36_500 },
} as const;

/** Why a number field was rejected (an i18n key suffix). */
export type NumberFieldError = 'not_integer' | 'out_of_range';

/**
 * Parses a whole number typed by the user (ASCII or full-width digits, surrounding spaces
 * ignored) and checks it against an inclusive range.
 */
export function parseIntInRange(input: string, min: number, max: number): { ok: true; value: number } | { ok: false; error: NumberFieldError } {
  // Full-width digits (０-９) come from Chinese input methods; NFKC maps them to ASCII.
  const trimmed = input.normalize('NFKC').trim();
  if (!/^-?\d+$/.test(trimmed)) return { ok: false, error: 'not_integer' };
  const value = Number(trimmed);
  if (!Number.isSafeInteger(value)) return { ok: false, error: 'not_integer' };
  if (value < min || value > max) return { ok: false, error: 'out_of_range' };
  return { ok: true, value };
}

/** The form's raw values (strings as typed, plus the two switches). */
export interface SettingsFormInput {
  maxAnswerTokens: string;
  memoryTopK: string;
  /** `true` = keep episodic memories forever (`episodicRetentionDays: null`). */
  keepForever: boolean;
  episodicRetentionDays: string;
  locale: Settings['locale'];
}

/** Fields of the numeric settings that can be invalid. */
export type SettingsFormField = 'maxAnswerTokens' | 'memoryTopK' | 'episodicRetentionDays';

/** The form's initial values from stored settings. */
export function settingsToForm(settings: Settings): SettingsFormInput {
  return {
    maxAnswerTokens: String(settings.maxAnswerTokens),
    memoryTopK: String(settings.memoryTopK),
    keepForever: settings.episodicRetentionDays === null,
    episodicRetentionDays: String(settings.episodicRetentionDays ?? 30),
    locale: settings.locale,
  };
}

/**
 * Validates the form. Returns the patch for `settings.set`, or the invalid fields with their
 * error (nothing is sent then).
 */
export function formToSettingsPatch(
  form: SettingsFormInput,
): { ok: true; patch: Pick<Settings, 'maxAnswerTokens' | 'memoryTopK' | 'episodicRetentionDays' | 'locale'> } | { ok: false; errors: Partial<Record<SettingsFormField, NumberFieldError>> } {
  const errors: Partial<Record<SettingsFormField, NumberFieldError>> = {};
  const answer = parseIntInRange(form.maxAnswerTokens, SETTING_RANGES.maxAnswerTokens.min, SETTING_RANGES.maxAnswerTokens.max);
  const topK = parseIntInRange(form.memoryTopK, SETTING_RANGES.memoryTopK.min, SETTING_RANGES.memoryTopK.max);
  const days = form.keepForever
    ? ({ ok: true, value: null } as const)
    : parseIntInRange(form.episodicRetentionDays, SETTING_RANGES.episodicRetentionDays.min, SETTING_RANGES.episodicRetentionDays.max);
  if (!answer.ok) errors.maxAnswerTokens = answer.error;
  if (!topK.ok) errors.memoryTopK = topK.error;
  if (!days.ok) errors.episodicRetentionDays = days.error;
  if (!answer.ok || !topK.ok || !days.ok) return { ok: false, errors };
  return { ok: true, patch: { maxAnswerTokens: answer.value, memoryTopK: topK.value, episodicRetentionDays: days.value, locale: form.locale } };
}
