/**
 * Settings form store: the Settings tab's form (values as typed), each field's validation error
 * and the short "Saved" mark, over the settings store. Every control saves on its own as soon as
 * it is committed (there is no Save button): lists and switches at once, number fields on Enter or
 * when they lose focus, and only when valid and changed (`../lib/settings-form`); a rejected value
 * keeps its error and is not sent. One per Settings panel on screen (`AppState.createSettingsForm`),
 * so the form starts from the stored settings each time the panel opens.
 */
import type { StrategyConfig } from '../../model/strategies';
import type { Settings } from '../../model/settings';
import {
  controlPatch,
  patchChangesSettings,
  settingsToForm,
  type NumberFieldError,
  type SettingsControl,
  type SettingsFormField,
  type SettingsFormInput,
} from '../lib/settings-form';
import type { SettingsStore } from './settings.svelte';

/** What the "Saved" marks are keyed by: the form's controls and the default strategy. */
export type SavedControl = SettingsControl | 'defaultStrategy';

/** How long the "Saved" mark stays beside a control, in ms. */
export const SAVED_MARK_MS = 2_500;

/** What the settings form store needs. */
export interface SettingsFormStoreDeps {
  /** The panel's settings store (its value is what the form starts from and compares with). */
  settings: SettingsStore;
}

/** See module doc. Created by `createSettingsFormStore`. */
export class SettingsFormStore {
  /** The form's raw values; `null` until the settings were read. */
  form = $state<SettingsFormInput | null>(null);
  /** Each number field's error, while it has one. */
  errors = $state<Partial<Record<SettingsFormField, NumberFieldError>>>({});
  /** The control saved last, while its "Saved" mark shows (`SAVED_MARK_MS`), else `null`. */
  savedControl = $state<SavedControl | null>(null);
  readonly #deps: SettingsFormStoreDeps;
  #savedTimer: ReturnType<typeof setTimeout> | undefined;
  /** Controls being saved now (Enter and the change event that may follow must not save twice). */
  readonly #inFlight = new Set<SettingsControl>();

  constructor(deps: SettingsFormStoreDeps) {
    this.#deps = deps;
  }

  /** Fills the form from the stored settings once they are there (call it again until it is filled; later calls keep what is typed). */
  fill(): void {
    const value = this.#deps.settings.value;
    if (value && !this.form) this.form = settingsToForm(value);
  }

  /** Removes a field's error (the user edits it again). */
  clearError(field: SettingsFormField): void {
    if (this.errors[field]) this.errors = { ...this.errors, [field]: undefined };
  }

  /**
   * Validates one control and saves it when it changed: an invalid value sets its field's error
   * (nothing sent); a valid one clears it; a save that worked shows the control's "Saved" mark.
   * A commit of a control whose save is still in flight does nothing. Failures become a notice
   * (`SettingsStore.save`).
   */
  async commit(control: SettingsControl): Promise<void> {
    const stored = this.#deps.settings.value;
    if (!this.form || !stored || this.#inFlight.has(control)) return;
    const result = controlPatch(this.form, control);
    if (!result.ok) {
      this.errors = { ...this.errors, [result.field]: result.error };
      return;
    }
    if (control !== 'locale') {
      const fields: SettingsFormField[] = control === 'retention' ? ['episodicRetentionDays'] : [control];
      this.errors = { ...this.errors, ...Object.fromEntries(fields.map((f) => [f, undefined])) };
    }
    if (!patchChangesSettings(result.patch, stored)) return;
    this.#inFlight.add(control);
    try {
      if (await this.#deps.settings.save(result.patch)) this.#markSaved(control);
    } finally {
      this.#inFlight.delete(control);
    }
  }

  /** Picks the UI language and saves it. */
  setLocale(locale: Settings['locale']): Promise<void> {
    if (!this.form) return Promise.resolve();
    this.form.locale = locale;
    return this.commit('locale');
  }

  /** Turns "keep forever" on or off and saves the retention (off: the days field's value). */
  setKeepForever(keepForever: boolean): Promise<void> {
    if (!this.form) return Promise.resolve();
    this.form.keepForever = keepForever;
    return this.commit('retention');
  }

  /** Saves the context strategy of new conversations (its picker validates the parameters). */
  async setDefaultStrategy(strategy: StrategyConfig): Promise<void> {
    if (await this.#deps.settings.save({ defaultStrategy: strategy })) this.#markSaved('defaultStrategy');
  }

  /** Stops the "Saved" mark's timer (the panel closes). */
  dispose(): void {
    clearTimeout(this.#savedTimer);
  }

  #markSaved(control: SavedControl): void {
    this.savedControl = control;
    clearTimeout(this.#savedTimer);
    this.#savedTimer = setTimeout(() => (this.savedControl = null), SAVED_MARK_MS);
  }
}

/** Creates a settings form store (empty until `fill()` finds the settings read). */
export function createSettingsFormStore(deps: SettingsFormStoreDeps): SettingsFormStore {
  return new SettingsFormStore(deps);
}
