/**
 * Splitting a page into passages by its structure (pure): each heading starts a new passage and
 * becomes part of the heading path of the passages under it; paragraphs under one heading are
 * joined until a passage would exceed `maxChars`; a paragraph longer than that is cut at sentence
 * or word ends (`cutAtBoundary`) into several passages. Lengths are characters (UTF-16 code units).
 */
import { MAX_PASSAGE_CHARS, type PageBlock, type PagePassage } from '../model/page';
import { cutAtBoundary } from '../text/boundary';

/** Separator of the heading path (`Guide › Install › Linux`). */
export const HEADING_SEPARATOR = ' › ';

/**
 * The passages of a page's blocks, in document order (`index` 0, 1, …). Empty blocks are skipped;
 * a heading with no text under it makes no passage of its own.
 * @param maxChars longest passage text in characters (default `MAX_PASSAGE_CHARS`); at least 1.
 * @param maxPassages stop after this many passages (the rest of the page is not split at all).
 */
export function splitPassages(blocks: readonly PageBlock[], maxChars: number = MAX_PASSAGE_CHARS, maxPassages = Infinity): PagePassage[] {
  const limit = Math.max(1, Math.floor(maxChars));
  const out: PagePassage[] = [];
  const headings: { level: number; text: string }[] = [];
  let parts: string[] = [];
  let length = 0;
  const heading = () => headings.map((h) => h.text).join(HEADING_SEPARATOR);
  const flush = () => {
    if (parts.length > 0) out.push({ index: out.length, heading: heading(), text: parts.join('\n') });
    parts = [];
    length = 0;
  };
  for (const block of blocks) {
    if (out.length >= maxPassages) break;
    const text = block.text.replace(/\s+/g, ' ').trim();
    if (!text) continue;
    if (block.kind === 'heading') {
      flush();
      const level = Math.min(6, Math.max(1, block.level ?? 1));
      while (headings.length > 0 && headings[headings.length - 1]!.level >= level) headings.pop();
      headings.push({ level, text });
      continue;
    }
    for (const piece of pieces(text, limit, maxPassages - out.length)) {
      if (parts.length > 0 && length + 1 + piece.length > limit) flush();
      parts.push(piece);
      length += (parts.length > 1 ? 1 : 0) + piece.length;
    }
  }
  flush();
  return out.slice(0, maxPassages);
}

/**
 * `text` cut into at most `max` pieces of at most `limit` characters at sentence or word ends.
 * Only a window of `limit + 1` characters is looked at per cut, so a very long block costs O(length).
 */
function pieces(text: string, limit: number, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (out.length < max && text.length - start > limit) {
    const window = text.slice(start, start + limit + 1);
    const head = cutAtBoundary(window, limit).text || window.slice(0, limit);
    out.push(head);
    start += head.length;
    while (start < text.length && /\s/u.test(text[start]!)) start += 1;
  }
  if (out.length < max && start < text.length) out.push(text.slice(start));
  return out;
}
