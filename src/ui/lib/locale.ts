/**
 * Which UI language to show. The setting (`Settings.locale`) is `auto`, `en` or `zh_CN`
 * (Chrome's `_locales` folder names); the UI uses BCP 47 tags (`en`, `zh-CN`) for i18next,
 * `Intl` and the `lang` attribute.
 */
import type { Settings } from '../../model/settings';

/** UI languages, as BCP 47 tags. */
export type UiLanguage = 'en' | 'zh-CN';

/** All UI languages, in the order the language picker lists them. */
export const UI_LANGUAGES: readonly UiLanguage[] = ['en', 'zh-CN'];

/**
 * Resolves the language to show.
 * @param setting the user's choice; `auto` follows the browser.
 * @param browserLanguage the browser UI language (`chrome.i18n.getUILanguage()`, e.g. `zh-CN`,
 *   `zh-TW`, `en-US`); any Chinese variant maps to Simplified Chinese, everything else to English.
 */
export function resolveUiLanguage(setting: Settings['locale'], browserLanguage: string | undefined): UiLanguage {
  if (setting === 'en') return 'en';
  if (setting === 'zh_CN') return 'zh-CN';
  return /^zh\b/i.test(browserLanguage ?? '') ? 'zh-CN' : 'en';
}
