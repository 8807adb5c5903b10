/**
 * The token shares of the prompt's optional sections, in a module of its own so the side panel can
 * explain a section's cut (`src/ui/lib/budget.ts`) without bundling prompt assembly and its
 * tokenizers. Re-exported by `assemble.ts`, which applies them.
 */

/**
 * Share of the free budget the attached page may take (`<current_page>`, `page-section.ts`). It is
 * taken first — the user asked about the page — and the other sections share what it leaves.
 */
export const PAGE_SHARE = 0.4;

/**
 * Largest share of the free budget each optional section may take (fractions of the tokens left
 * after instruction + user message). The summary gets the most: it stands for every turn that is
 * no longer verbatim.
 */
export const SECTION_SHARES = { memories: 0.25, summary: 0.4, entities: 0.15, retrieved: 0.2, page: PAGE_SHARE } as const;
