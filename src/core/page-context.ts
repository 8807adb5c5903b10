/**
 * The attached page's passages for one turn: the page is split by structure (`splitPassages`) and
 * its passages ranked for the question with the same hybrid retrieval as long-term memory — BM25
 * over the memory index's tokenizer (`LexicalIndex`, in memory, for this turn only) and cosine
 * over the embedder's vectors, fused by the calibrated convex combination (`convexFusion`,
 * `fusionWeightsFor`). Nothing of the page is stored: the index and the vectors live for the turn.
 *
 * Cost bound: at most `MAX_PAGE_PASSAGES` passages are ranked, and at most `MAX_EMBEDDED_PASSAGES`
 * are embedded (all of them on a shorter page; else the lexical top hits and the page's first
 * passages), so a long page costs one batch of embeddings, not hundreds.
 */
import type { Embedder } from '../engines/types';
import type { PageAttachment, PromptPage, RankedPassage } from '../model/page';
import { LexicalIndex } from '../memory/long-term/retrieval/lexical';
import { convexFusion, fusionWeightsFor, type ScoredHit } from '../memory/long-term/retrieval/fusion';
import { dot, l2normalize } from '../memory/long-term/retrieval/vector-math';
import { splitPassages } from '../page/passages';

/** Most passages of one page that are ranked (the rest of a very long page is left out). */
export const MAX_PAGE_PASSAGES = 400;
/** Most passages embedded per turn. */
export const MAX_EMBEDDED_PASSAGES = 64;
/** Passages from the start of the page always embedded when the page has more than `MAX_EMBEDDED_PASSAGES` (the lead usually says what the page is about). */
const LEADING_PASSAGES = 16;

/**
 * The page as the prompt assembler takes it: passages scored for `question`, best first.
 * @param embedder the loaded embedder, or `null` (lexical ranking only; ties keep page order).
 *   An embedding failure also falls back to lexical ranking (logged).
 */
export async function rankPagePassages(page: PageAttachment, question: string, embedder: Embedder | null, signal?: AbortSignal): Promise<PromptPage> {
  const passages = splitPassages(page.blocks, undefined, MAX_PAGE_PASSAGES);
  const base = { url: page.url, title: page.title, ...(page.selection ? { selection: page.selection } : {}) };
  if (passages.length === 0) return { ...base, passages: [] };
  const lexicalIndex = new LexicalIndex();
  for (const p of passages) lexicalIndex.set(String(p.index), p.heading ? `${p.heading}\n${p.text}` : p.text);
  const lexical: ScoredHit[] = lexicalIndex.search(question, passages.length);

  let vector: ScoredHit[] = [];
  if (embedder) {
    const chosen =
      passages.length <= MAX_EMBEDDED_PASSAGES
        ? passages
        : [
            ...new Set([
              ...lexical.slice(0, MAX_EMBEDDED_PASSAGES - LEADING_PASSAGES).map((h) => Number(h.id)),
              ...passages.slice(0, LEADING_PASSAGES).map((p) => p.index),
            ]),
          ]
            .slice(0, MAX_EMBEDDED_PASSAGES)
            .map((i) => passages[i]!);
    try {
      const [query, ...vectors] = await embedder.embed([question, ...chosen.map((p) => p.text)], signal);
      const q = l2normalize(query!);
      vector = chosen.map((p, i) => ({ id: String(p.index), score: dot(q, l2normalize(vectors[i]!)) })).sort((a, b) => b.score - a.score);
    } catch (error) {
      if (signal?.aborted) throw error;
      console.warn('[page] passages ranked by keywords only: embedding failed', error);
    }
  }
  const fused = convexFusion(lexical, vector, fusionWeightsFor(embedder?.modelId));
  const ranked: RankedPassage[] = passages.map((p) => ({ ...p, score: fused.get(String(p.index)) ?? 0 }));
  ranked.sort((a, b) => b.score - a.score || a.index - b.index);
  return { ...base, passages: ranked };
}
