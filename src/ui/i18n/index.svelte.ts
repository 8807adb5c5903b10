/**
 * Reactive translation for components: `t()` reads a language version held in `$state`, so
 * any template or `$derived` that calls it re-renders when the language changes. The strings
 * and the i18next setup are in `./instance.ts`.
 */
import type { TOptions } from 'i18next';
import type { UiLanguage } from '../lib/locale';
import { changeUiLanguage, i18n, translate, type TranslationKey } from './instance';

export { i18n, type TranslationKey };

let version = $state(0);
let current = $state<UiLanguage>('en');
i18n.on('languageChanged', () => {
  version += 1;
});

/** Translates `key` in the current UI language (reactive). See `translate`. */
export function t(key: TranslationKey, options?: TOptions): string {
  void version;
  return translate(key, options);
}

/** The current UI language (reactive). */
export function language(): UiLanguage {
  return current;
}

/** Switches the UI language (and the document's `lang` attribute). */
export async function setLanguage(lang: UiLanguage): Promise<void> {
  current = lang;
  await changeUiLanguage(lang);
}
