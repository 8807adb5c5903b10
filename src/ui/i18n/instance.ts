/**
 * The UI's i18next instance: English and Simplified Chinese resources, runtime language
 * switching, interpolation, plurals via `Intl.PluralRules` (`_one`/`_other` keys in English,
 * `_other` only in Chinese), English fallback for a missing key. Strings live in
 * `locales/en.json` and `locales/zh_CN.json`; a unit test checks both have the same keys and
 * placeholders. Manifest strings (name, description) stay in `public/_locales`, which only
 * Chrome reads. Plain TypeScript (no runes) so it runs in unit tests; `index.svelte.ts` adds
 * reactivity.
 */
import i18next, { type TOptions } from 'i18next';
import en from './locales/en.json';
import zhCN from './locales/zh_CN.json';
import type { UiLanguage } from '../lib/locale';

/** The UI's i18next instance (separate from i18next's global instance). */
export const i18n = i18next.createInstance();

void i18n.init({
  resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
  lng: 'en',
  fallbackLng: 'en',
  supportedLngs: ['en', 'zh-CN'],
  // Svelte escapes text interpolations itself; translations are never rendered with {@html}.
  interpolation: { escapeValue: false },
  initAsync: false,
  returnNull: false,
});

type StripPlural<K extends string> = K extends `${infer Base}_one` ? Base : K extends `${infer Base}_other` ? Base : K;
type Leaves<T, Prefix extends string = ''> = {
  [K in keyof T & string]: T[K] extends string ? `${Prefix}${StripPlural<K>}` : Leaves<T[K], `${Prefix}${K}.`>;
}[keyof T & string];

/** Translation keys: dot paths into `locales/en.json`, plural suffixes (`_one`, `_other`) removed. */
export type TranslationKey = Leaves<typeof en>;

/**
 * Translates `key` in the instance's current language, interpolating `{{name}}` from
 * `options` (`count` selects the plural form). Not reactive; components use `t` from
 * `./index.svelte`.
 */
export function translate(key: TranslationKey, options?: TOptions): string {
  return i18n.t(key, options) as string;
}

/** Switches the instance's language and, in a page, the document's `lang` attribute. */
export async function changeUiLanguage(lang: UiLanguage): Promise<void> {
  await i18n.changeLanguage(lang);
  if (typeof document !== 'undefined') document.documentElement.lang = lang;
}
