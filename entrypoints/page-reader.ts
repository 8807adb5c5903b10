import { defineUnlistedScript } from 'wxt/utils/define-unlisted-script';
import { readPage } from '../src/page/extract';

/**
 * The page reader, injected as a content script only on the user's gesture
 * (`chrome.scripting.executeScript({ files: ['/page-reader.js'] })`, `src/page/read-tab.ts`) into
 * that one tab; its value (the page's readable content; for a PDF, its bytes: `readPage`) is the
 * injection's result (Chrome waits for the promise). An unlisted
 * script rather than a WXT content script: WXT's content-script context announces itself to the
 * page (a `postMessage` and a DOM event), and a page must not learn that Recall read it.
 */
// The definition form: its `main` may return a promise (the one-function form is typed `() => void`).
export default defineUnlistedScript({ main: () => readPage(document, location.href) });
