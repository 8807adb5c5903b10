/**
 * Steps 2–5 of consolidation (see `./index.ts`): the LLM-free rules, the model's decision with a
 * bounded retry, and the checks of an UPDATE, computed into a plan before anything is written.
 */
import type { ChatEngine } from '../../../engines/types';
import type { PreparedItem } from '../extraction/items';
import { normalizeForCompare, saysMore, truncateMiddle } from '../../../text/terms';
import { findCandidates } from './candidates';
import { buildDecisionMessages } from './prompt';
import { parseDecision } from './parse';
import { nearDuplicate, updateChangesMeaning, updateTextProblem } from './rules';
import { DECISION_JSON_SCHEMA, type Decision } from './schema';
import {
  abortError,
  DEFAULT_CONSOLIDATION_OPTIONS,
  type Candidate,
  type ConsolidationContext,
  type ConsolidationOptions,
  type ConsolidationPlan,
} from './types';

async function decide(
  engine: ChatEngine,
  item: PreparedItem,
  candidates: Candidate[],
  ctx: ConsolidationContext,
  o: ConsolidationOptions,
): Promise<{ decision: Decision | null; calls: number; failure?: string }> {
  const texts = candidates.map((c) => c.memory.text);
  const base = buildDecisionMessages(item.text, texts);
  let messages = base;
  let last = '';
  for (let attempt = 1; attempt <= o.maxAttempts; attempt++) {
    if (ctx.signal?.aborted) throw abortError(ctx.signal);
    const result = await engine.complete({
      messages,
      maxTokens: o.maxTokens,
      temperature: attempt === 1 ? 0 : 0.3,
      responseFormat: { type: 'json_object', schema: DECISION_JSON_SCHEMA },
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    if (result.finishReason === 'abort' || ctx.signal?.aborted) throw abortError(ctx.signal);
    const parsed = parseDecision(result.content, candidates.length, item.text, texts);
    if (parsed.ok) return { decision: parsed.decision, calls: attempt };
    last = parsed.message;
    messages = [
      ...base,
      { role: 'assistant', content: truncateMiddle(result.content.trim() || '(empty)', 200) },
      { role: 'user', content: `${parsed.message} Reply again with only the JSON object.` },
    ];
  }
  return { decision: null, calls: o.maxAttempts, failure: `Decision for "${truncateMiddle(item.text, 60)}" unusable after ${o.maxAttempts} attempts: ${last}` };
}

/**
 * Plans the consolidation of `items` (see module doc). Reads the store and calls the model; writes
 * nothing.
 * @throws an AbortError when `ctx.signal` aborts; the engine's errors unchanged; store read errors.
 */
export async function planConsolidation(items: PreparedItem[], ctx: ConsolidationContext): Promise<ConsolidationPlan> {
  const o = { ...DEFAULT_CONSOLIDATION_OPTIONS, ...ctx.options };
  const plan: ConsolidationPlan = { actions: [], llmCalls: 0, llmFailures: [] };
  const planned: PreparedItem[] = [];
  const takenTargets = new Set<string>();

  for (const item of items) {
    if (ctx.signal?.aborted) throw abortError(ctx.signal);
    const norm = normalizeForCompare(item.text);
    if (planned.some((p) => normalizeForCompare(p.text) === norm || nearDuplicate(p.text, item.text, null, o.nearDuplicateCosine))) {
      plan.actions.push({ event: 'NOOP', item, reason: 'batch-duplicate' });
      continue;
    }
    const vector = await ctx.store.embed(item.text);
    const candidates = await findCandidates(item, vector, ctx, o);

    const exact = candidates.find((c) => normalizeForCompare(c.memory.text) === norm);
    if (exact) {
      plan.actions.push({ event: 'NOOP', item, targetId: exact.memory.id, reason: 'exact-duplicate' });
      continue;
    }
    const near = candidates.find((c) => nearDuplicate(c.memory.text, item.text, c.similarity, o.nearDuplicateCosine));
    if (near) {
      if (saysMore(item.text, near.memory.text) && !near.memory.pinned && !takenTargets.has(near.memory.id)) {
        takenTargets.add(near.memory.id);
        plan.actions.push({ event: 'UPDATE', item, targetId: near.memory.id, text: item.text, reason: 'richer-duplicate' });
      } else {
        plan.actions.push({ event: 'NOOP', item, targetId: near.memory.id, reason: 'near-duplicate' });
      }
      continue;
    }
    if (candidates.length === 0 || !ctx.engine) {
      planned.push(item);
      plan.actions.push({ event: 'ADD', item, reason: 'no-candidates' });
      continue;
    }

    const { decision, calls, failure } = await decide(ctx.engine, item, candidates, ctx, o);
    plan.llmCalls += calls;
    if (!decision) {
      plan.llmFailures.push(failure!);
      planned.push(item);
      plan.actions.push({ event: 'ADD', item, reason: 'llm-failed' });
      continue;
    }
    if (decision.event === 'ADD') {
      planned.push(item);
      plan.actions.push({ event: 'ADD', item, reason: 'llm' });
      continue;
    }
    if (decision.event === 'NONE') {
      const target = decision.index === null ? undefined : candidates[decision.index]!.memory.id;
      plan.actions.push({ event: 'NOOP', item, ...(target ? { targetId: target } : {}), reason: 'llm' });
      continue;
    }
    const target = candidates[decision.index]!.memory;
    if (takenTargets.has(target.id)) {
      planned.push(item);
      plan.actions.push({ event: 'ADD', item, reason: 'target-taken' });
      continue;
    }
    if (decision.event === 'UPDATE') {
      if (target.pinned) {
        planned.push(item);
        plan.actions.push({ event: 'ADD', item, reason: 'pinned-target' });
        continue;
      }
      const problem = updateTextProblem(decision.text, item.text, target.text);
      if (problem) {
        // Never overwrite a memory with an ungrounded text, never lose the new fact: add it as it is.
        plan.llmFailures.push(`UPDATE for "${truncateMiddle(item.text, 60)}" refused, the item is added instead: ${problem}`);
        planned.push(item);
        plan.actions.push({ event: 'ADD', item, reason: 'invalid-update' });
        continue;
      }
      takenTargets.add(target.id);
      if (updateChangesMeaning(target.text, decision.text)) {
        // The old state was true until now: keep it as a closed past fact, store the merged text anew.
        planned.push({ ...item, text: decision.text });
        plan.actions.push({ event: 'DELETE', item, targetId: target.id, text: decision.text, reason: 'update-changes-meaning' });
        continue;
      }
      plan.actions.push({ event: 'UPDATE', item, targetId: target.id, text: decision.text, reason: 'llm' });
      continue;
    }
    takenTargets.add(target.id);
    planned.push(item);
    plan.actions.push({ event: 'DELETE', item, targetId: target.id, reason: 'llm' });
  }
  return plan;
}
