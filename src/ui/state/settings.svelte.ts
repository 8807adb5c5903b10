/**
 * Settings store: the user's settings as the core holds them, saved with `settings.set`, and the
 * UI language that follows them (also when another window saves: `event.settings`).
 */
import browser from 'webextension-polyfill';
import type { Settings } from '../../model/settings';
import { setLanguage } from '../i18n/index.svelte';
import { resolveUiLanguage } from '../lib/locale';
import type { StoreApi } from './api';
import type { NoticesStore } from './notices.svelte';

const browserLanguage = (): string | undefined => {
  try {
    return browser.i18n.getUILanguage();
  } catch {
    return globalThis.navigator?.language;
  }
};

/** Switches the UI language to what `locale` means here (`auto`: the browser's language). */
export function applyUiLocale(locale: Settings['locale']): Promise<void> {
  return setLanguage(resolveUiLanguage(locale, browserLanguage()));
}

/** What the settings store needs. */
export interface SettingsStoreDeps extends StoreApi {
  notices: NoticesStore;
}

/** See module doc. Created by `createSettingsStore`. */
export class SettingsStore {
  /** `null` until first read (`loadAll` of the app). */
  value = $state<Settings | null>(null);
  readonly #deps: SettingsStoreDeps;

  constructor(deps: SettingsStoreDeps) {
    this.#deps = deps;
  }

  /** Follows `event.settings` (saved here or in another window). @returns the unsubscribe. */
  listen(): () => void {
    return this.#deps.subscribe('event.settings', (settings) => {
      this.value = settings;
      void applyUiLocale(settings.locale);
    });
  }

  /** Shows settings read by the caller (first load) and applies their language. */
  async show(settings: Settings): Promise<void> {
    this.value = settings;
    await applyUiLocale(settings.locale);
  }

  /** Saves a settings patch and applies the UI language. Failures become a notice. @returns `true` when saved. */
  async save(patch: Partial<Settings>): Promise<boolean> {
    try {
      this.value = await this.#deps.request('settings.set', patch);
      await applyUiLocale(this.value.locale);
      return true;
    } catch (error) {
      this.#deps.notices.fail('errors.settingsFailed', error);
      return false;
    }
  }
}

/** Creates the settings store. */
export function createSettingsStore(deps: SettingsStoreDeps): SettingsStore {
  return new SettingsStore(deps);
}
