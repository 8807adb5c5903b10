/**
 * The page the user is on, as Recall reads it on request (`src/page/`): its readable blocks, a
 * selection, and the passages chosen for a prompt. Leaf module: imports nothing from `src/`.
 * Page text is never stored as memory unless the user says so ("Remember this", or a
 * "remember …" command while a page is attached).
 */

/** One structural block of a readable page: a heading (level 1–6) or a paragraph-like text (paragraph, list item, quote, code, table cell). */
export interface PageBlock {
  kind: 'heading' | 'text';
  /** Heading level 1–6 (`kind: 'heading'` only). */
  level?: number;
  /** The block's text, whitespace collapsed (characters, not tokens). */
  text: string;
}

/** A page's readable content as extracted in the tab (Readability on a copy of the document). */
export interface PageContent {
  /** The page's URL (the tab's, not the article's canonical one). */
  url: string;
  /** The page's title (Readability's title, else `document.title`, else the URL). */
  title: string;
  /** Headings and texts in document order. */
  blocks: PageBlock[];
  /** The document's MIME type as the reader saw it (`document.contentType`), e.g. `application/pdf` in the browser's PDF viewer. */
  contentType?: string;
  /**
   * A PDF open in the browser's viewer: its bytes, base64, as the reader fetched them from the tab's
   * own URL (the browser's cached copy; at most `MAX_PDF_BYTES`). The reader leaves `blocks` empty;
   * the core extracts them (`pdf.read`). Never part of an attachment.
   */
  pdfData?: string;
  /** Why a PDF's bytes could not be fetched in the tab (`too_large`, `fetch_failed`: the message). */
  pdfError?: string;
}

/** What the panel attaches to the next message: the page, or only a selection of it (`blocks` empty then). */
export interface PageAttachment extends PageContent {
  /** Text the user selected on the page (context menu *Ask Recall about the selection*), at most `MAX_SELECTION_CHARS`. */
  selection?: string;
}

/** Longest selection kept, in characters (a longer one is cut). */
export const MAX_SELECTION_CHARS = 8_000;

/** A PDF's bytes as the reader fetched them in the tab, for the core to extract (`pdf.read`). */
export interface PdfSource {
  url: string;
  /** The tab's title (used when the PDF's metadata has none). */
  title: string;
  /** The PDF file, base64. */
  data: string;
}

/** Largest PDF read, in bytes (a larger one is refused as unreadable). */
export const MAX_PDF_BYTES = 32 * 1024 * 1024;

/** Most blocks an extraction returns (the rest of a very long page is left out). */
export const MAX_PAGE_BLOCKS = 2_000;

/** One passage of a page: consecutive blocks under the same heading path, at most `MAX_PASSAGE_CHARS` long. */
export interface PagePassage {
  /** Position in the page (0-based, document order). */
  index: number;
  /** The headings above it, outermost first, joined by " › " ('' before the first heading). */
  heading: string;
  /** The passage's text (its blocks joined by newlines). */
  text: string;
}

/** Longest passage, in characters (a longer paragraph is cut at sentence or word ends into several). */
export const MAX_PASSAGE_CHARS = 1_200;

/** A passage with its relevance to the question (hybrid retrieval score, higher = more relevant). */
export interface RankedPassage extends PagePassage {
  score: number;
}

/** The page as the prompt assembler gets it: title, URL, the selection, and passages best first. */
export interface PromptPage {
  url: string;
  title: string;
  selection?: string;
  /** Passages, most relevant first; the assembler keeps as many as fit its share and shows them in page order. */
  passages: RankedPassage[];
}

/** What the trace keeps about the attached page (the context view shows it with the page section). */
export interface PageTrace {
  url: string;
  title: string;
  /** Passages the page was split into. */
  passages: number;
  /** Passages placed in the prompt. */
  included: number;
  /** Whether a selection was attached. */
  selection: boolean;
}

/**
 * What the service worker keeps for the panel after a context-menu click or the shortcut: the
 * attachment, or why there is none (a `PageError`'s code and params, translated by the panel).
 */
export type PendingPage = { attachment: PageAttachment } | { error: { code: string; message: string; params: Record<string, string | number> } };
