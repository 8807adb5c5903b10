/**
 * Unit tests import `webextension-polyfill` through this alias (see vitest.config.ts): the real
 * polyfill refuses to load outside an extension, so tests get WXT's in-memory fake browser.
 */
import { fakeBrowser } from 'wxt/testing/fake-browser';
export default fakeBrowser;
