/**
 * Consolidation: reconciling newly extracted items with what long-term memory already holds.
 *
 * Mem0's "update memory" phase (mem0ai/mem0 `mem0/configs/prompts.py` DEFAULT_UPDATE_MEMORY_PROMPT,
 * adapted in our own words), with Zep/Graphiti's "invalidate, don't delete":
 * 1. For each new item, fetch the nearest existing memories of the same namespace (vector
 *    `store.nearest` plus lexical `store.search`, extracted kinds only — never episodic rounds or
 *    summaries), keeping those that look related (cosine ≥ `candidateMinSimilarity`, or sharing a
 *    content word), plus the current memories about the same slot of the same subject
 *    (`store.inSlot`, `slots.ts`: where the user lives, their job, a pet's name, …), which a
 *    contradiction may share no word with ("Lives in Shenzhen" / "Moved to Hangzhou"). Same-slot
 *    memories rank first; at most `candidates` are shown.
 * 2. Without the LLM: an exact duplicate (same normalized text) or a near duplicate (cosine ≥
 *    `nearDuplicateCosine`, or content-word Jaccard ≥ 0.9) is a NOOP — or an UPDATE to the new text
 *    when that text says strictly more; an item with no related memory is an ADD; a repeat of an
 *    item earlier in the same batch is a NOOP.
 * 3. Otherwise the LLM sees the candidates under short integer ids ("0", "1", …, never the real
 *    ids, which models garble) and answers one of ADD / UPDATE (same subject, richer or corrected
 *    text: keep the id, replace the text) / DELETE (contradiction: the old memory is no longer true)
 *    / NONE.
 * 4. DELETE never erases: the new item is added and the old memory's validity is closed at the
 *    message time with `supersededBy` pointing at the new one ("I moved from Shenzhen to Hangzhou":
 *    Hangzhou current, Shenzhen past, both queryable).
 * 5. UPDATE is checked before anything is written (`updateTextProblem`): a merged text that is not
 *    grounded in the new item and the old memory ("ok"), drops the new fact or is far too long is
 *    refused and the item is added as it is (reason `invalid-update`, reported in `llmFailures`).
 *    An UPDATE that changes the meaning (`updateChangesMeaning`: a content word of the old text is
 *    gone, "Lives in Shenzhen" → "Lives in Hangzhou") is applied like DELETE: the merged text
 *    becomes a new current memory and the old one is closed as a past fact; only an UPDATE that
 *    keeps every content word of the old text (adds detail) rewrites it in place.
 *
 * Safety: the whole plan (embeddings, searches, LLM calls) is computed before the first write, so a
 * misbehaving model cannot leave half a decision behind. An unusable decision reply (after a bounded
 * retry) falls back to ADD, which loses nothing. A pinned memory (dictated by the user) is never
 * rewritten by the model: an UPDATE of it becomes an ADD. Each write is one store transaction with
 * its history entry; re-running a plan after a crash is harmless (repeats become exact duplicates).
 */
import type { PreparedItem } from '../extraction/items';
import { applyConsolidation } from './apply';
import { planConsolidation } from './plan';
import { abortError, type ConsolidationContext, type ConsolidationPlan, type ConsolidationSummary } from './types';

export { applyConsolidation } from './apply';
export { findCandidates } from './candidates';
export { parseDecision } from './parse';
export { planConsolidation } from './plan';
export { buildDecisionMessages, DECISION_SYSTEM_PROMPT } from './prompt';
export { nearDuplicate, UPDATE_TEXT_LIMITS, updateChangesMeaning, updateTextProblem } from './rules';
export { DECISION_JSON_SCHEMA, type Decision } from './schema';
export {
  DEFAULT_CONSOLIDATION_OPTIONS,
  type ConsolidationAction,
  type ConsolidationContext,
  type ConsolidationOptions,
  type ConsolidationPlan,
  type ConsolidationSummary,
} from './types';

/** Plans, then applies (see `planConsolidation` and `applyConsolidation`). */
export async function consolidate(items: PreparedItem[], ctx: ConsolidationContext): Promise<ConsolidationPlan & { summary: ConsolidationSummary }> {
  const plan = await planConsolidation(items, ctx);
  if (ctx.signal?.aborted) throw abortError(ctx.signal);
  return { ...plan, summary: await applyConsolidation(plan, ctx) };
}
