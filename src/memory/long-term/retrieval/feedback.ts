/**
 * Relevance feedback as a ranking stage (issue 14): "not relevant here" on a memory under a
 * reply demotes that memory for queries similar to the one it was marked under, and for no other.
 * This is negative relevance feedback per (memory, query) pair, applied after fusion and the
 * tie-breaks of `store/search.ts`, as its own stage: `demoteByFeedback(ranked, query, rows)`.
 *
 * Query similarity (`isSimilarQuery`): the cosine of the two queries' L2-normalized embeddings
 * when both were embedded by the same model (≥ `FEEDBACK_COSINE_THRESHOLD`), else the Jaccard
 * overlap of their content terms (`contentTerms`, ≥ `FEEDBACK_TERM_OVERLAP`) — the lexical
 * fallback when no embedder was ready at either end. A demoted memory's score drops by
 * `FEEDBACK_PENALTY`, more than the largest score a candidate can have, so it ranks after every
 * memory that was not demoted (it still answers when nothing else does: demoted, not deleted).
 * Cost: O(feedback rows × dimension) for the similarities, plus O(candidates) for the re-sort
 * (only when something was demoted) — never O(memories).
 */
import type { FeedbackRecord } from '../../../model/records';

/**
 * Cosine similarity of two query embeddings (same model) at or above which the queries count as
 * the same question. 0.8: paraphrases of one question ("Where do I work?" / "where do i work now")
 * sit above it with the multilingual MiniLM default and the test embedders, different questions
 * about other things below it.
 */
export const FEEDBACK_COSINE_THRESHOLD = 0.8;

/** Jaccard overlap of content terms at or above which two queries count as similar (no comparable embeddings). */
export const FEEDBACK_TERM_OVERLAP = 0.5;

/**
 * Score subtracted from a demoted memory (score units of `weightedScore`). A candidate's score is
 * at most ~3.5 (relevance ≤ 1, same-slot 0.5, time window 1, "now" recency weight ≤ 1, importance
 * 0.01), so 4 puts a demoted memory after every other candidate.
 */
export const FEEDBACK_PENALTY = 4;

/** What a feedback row contributes to ranking (a `FeedbackRecord`'s query side). */
export type FeedbackSignal = Pick<FeedbackRecord, 'memoryId' | 'terms' | 'embedding' | 'embeddingModel'>;

/** The query being ranked, in the same terms as a feedback row. */
export interface FeedbackQuery {
  /** Content terms of the query text (`contentTerms`). */
  terms: readonly string[];
  /** Its L2-normalized embedding, or `null` when it was not embedded. */
  embedding: Float32Array | null;
  /** Model of `embedding` (`null` with it). */
  embeddingModel: string | null;
}

/** Jaccard overlap |a ∩ b| / |a ∪ b| of two term lists (0 when both are empty). */
export function termOverlap(a: readonly string[], b: readonly string[]): number {
  const left = new Set(a);
  const right = new Set(b);
  if (left.size === 0 && right.size === 0) return 0;
  let shared = 0;
  for (const term of left) if (right.has(term)) shared += 1;
  return shared / (left.size + right.size - shared);
}

/** Dot product of two vectors of the same length (the cosine of L2-normalized vectors). */
function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += a[i]! * b[i]!;
  return sum;
}

/**
 * Whether `query` is similar to the query a feedback row was recorded under: cosine ≥
 * `FEEDBACK_COSINE_THRESHOLD` when both have an embedding of the same model and dimension, else
 * term overlap ≥ `FEEDBACK_TERM_OVERLAP`.
 */
export function isSimilarQuery(row: Pick<FeedbackSignal, 'terms' | 'embedding' | 'embeddingModel'>, query: FeedbackQuery): boolean {
  if (row.embedding && query.embedding && row.embeddingModel === query.embeddingModel && row.embedding.length === query.embedding.length) {
    return dot(row.embedding, query.embedding) >= FEEDBACK_COSINE_THRESHOLD;
  }
  return termOverlap(row.terms, query.terms) >= FEEDBACK_TERM_OVERLAP;
}

/** Ids of the memories `rows` demote for `query` (see `isSimilarQuery`). O(rows). */
export function demotedFor(query: FeedbackQuery, rows: Iterable<FeedbackSignal>): Set<string> {
  const out = new Set<string>();
  for (const row of rows) if (!out.has(row.memoryId) && isSimilarQuery(row, query)) out.add(row.memoryId);
  return out;
}

/**
 * The ranking stage: `ranked` (best first) with every memory demoted for `query` by `rows` moved
 * down by `FEEDBACK_PENALTY` (its score lowered by it), order otherwise kept (a stable sort).
 * Returns `ranked` itself when nothing is demoted.
 */
export function demoteByFeedback<T extends { id: string; score: number }>(ranked: T[], query: FeedbackQuery, rows: Iterable<FeedbackSignal>): T[] {
  const demoted = demotedFor(query, rows);
  if (demoted.size === 0 || !ranked.some((r) => demoted.has(r.id))) return ranked;
  return ranked.map((r) => (demoted.has(r.id) ? { ...r, score: r.score - FEEDBACK_PENALTY } : r)).sort((a, b) => b.score - a.score);
}
