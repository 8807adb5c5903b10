/**
 * Validation of the settings form. Ranges mirror the core's settings validation
 * (`src/core/settings.ts`): answer reserve 16–8,192 tokens, memory top-k 0–50, episodic
 * retention 1–36,500 days or keep forever. Each control is validated and saved on its own as
 * soon as it changes (`controlPatch`), so the user sees which field is wrong in their language;
 * the core validates again.
 */
import type { Settings } from '../../model/settings';

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
 * Settings the panel saves one at a time, as soon as they change (there is no Save button):
 * the numeric fields when the user commits them (Enter or leaving the field), the retention
 * switch and days, and the UI language. The default context strategy saves through its picker.
 */
export type SettingsControl = 'maxAnswerTokens' | 'memoryTopK' | 'retention' | 'locale';

/** The settings patch of one control. */
export type SettingsControlPatch = Partial<Pick<Settings, 'maxAnswerTokens' | 'memoryTopK' | 'episodicRetentionDays' | 'locale'>>;

/**
 * Validates one control of the form and returns its patch for `settings.set`, or the field's
 * error (nothing is sent then). `retention` covers the "forever" switch and the days field:
 * forever gives `episodicRetentionDays: null` whatever the days field holds.
 */
export function controlPatch(
  form: SettingsFormInput,
  control: SettingsControl,
): { ok: true; patch: SettingsControlPatch } | { ok: false; field: SettingsFormField; error: NumberFieldError } {
  if (control === 'locale') return { ok: true, patch: { locale: form.locale } };
  if (control === 'retention') {
    if (form.keepForever) return { ok: true, patch: { episodicRetentionDays: null } };
    const { min, max } = SETTING_RANGES.episodicRetentionDays;
    const days = parseIntInRange(form.episodicRetentionDays, min, max);
    return days.ok ? { ok: true, patch: { episodicRetentionDays: days.value } } : { ok: false, field: 'episodicRetentionDays', error: days.error };
  }
  const { min, max } = SETTING_RANGES[control];
  const value = parseIntInRange(form[control], min, max);
  return value.ok ? { ok: true, patch: { [control]: value.value } } : { ok: false, field: control, error: value.error };
}

/** `true` when `patch` would change at least one value of `settings` (unchanged fields are not saved again). */
export function patchChangesSettings(patch: SettingsControlPatch, settings: Settings): boolean {
  return (Object.keys(patch) as (keyof SettingsControlPatch)[]).some((key) => patch[key] !== settings[key]);
}
