/**
 * The page the user is on: which pages may be read (`sites`), reading a tab on the user's gesture
 * (`read-tab`), a PDF open in the browser's viewer (`pdf`: fetched in the tab, its text extracted
 * with pdf.js in the core), and splitting its text into passages (`passages`). The DOM side
 * (`extract`) runs only in the content script and is not re-exported here.
 */
export { assertReadable, blockingPattern, hostOf, normalizeSitePattern, unreadableReason } from './sites';
export { splitPassages, HEADING_SEPARATOR } from './passages';
export { readTab, selectionAttachment, PAGE_READER_SCRIPT, type ReadableTab, type PdfReader } from './read-tab';
export { extractPdf, base64ToBytes, PDF_MIME, type PdfJsModule } from './pdf';
