/**
 * Saved memories pasted as text: the list ChatGPT, Claude or Gemini show under their memory
 * settings, one memory per line or bullet. Bullets (`-`, `*`, `•`, `·`), numbering (`1.`, `1)`,
 * `１．`) and check boxes (`[ ]`, `[x]`) are removed; empty lines and Markdown headings are left out.
 */

const BULLET = /^\s*(?:[-*•·‣◦▪]|\d{1,3}[.)．、]|[(（]\d{1,3}[)）])\s*(?:\[[ xX]\]\s*)?/;

/**
 * The memories of a pasted list, in order, each trimmed, bullet and numbering removed.
 * Repeats are kept: the store skips exact duplicates by its normalized-text hash.
 * @param text the pasted text (any line ending).
 */
export function parseSavedMemories(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r\n?|\n/)) {
    if (/^\s*#{1,6}\s/.test(raw)) continue;
    const line = raw.replace(BULLET, '').trim();
    if (!line) continue;
    out.push(line);
  }
  return out;
}
