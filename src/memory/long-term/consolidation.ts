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
import { FACT_KINDS, type MemoryKind } from '../../model/memory';
import type { MemoryView, MemoryRecord } from '../../model/records';
import type { ChatEngine } from '../../engines/types';
import type { ChatMessage } from '../../model/engine';
import type { SearchableStore } from './commands';
import type { PreparedItem } from './extraction/items';
import { parseJsonReply } from './extraction/json';
import { containsCjk, contentTerms, cosineSimilarity, normalizeForCompare, termCoverage, truncateMiddle } from './extraction/language';
import { memorySlot } from './slots';

/** Kinds consolidation compares against (episodic rounds and summaries are never candidates). */
const CANDIDATE_KINDS: ReadonlySet<MemoryKind> = new Set<MemoryKind>(FACT_KINDS);

/** Tunables (defaults in `DEFAULT_CONSOLIDATION_OPTIONS`). */
export interface ConsolidationOptions {
  /** Candidates shown to the LLM per item (Mem0 uses 5). */
  candidates: number;
  /** Cosine at or above which two memories are near duplicates. */
  nearDuplicateCosine: number;
  /** Cosine at or above which a memory is a candidate even without a shared content word. */
  candidateMinSimilarity: number;
  /** Model calls per decision (1 + retries). */
  maxAttempts: number;
  /** Answer budget of a decision call (tokens). */
  maxTokens: number;
}

/** Defaults: 5 candidates, near duplicate at cosine 0.95, candidate at 0.4, 2 attempts, 160 tokens. */
export const DEFAULT_CONSOLIDATION_OPTIONS: ConsolidationOptions = {
  candidates: 5,
  nearDuplicateCosine: 0.95,
  candidateMinSimilarity: 0.4,
  maxAttempts: 2,
  maxTokens: 160,
};

/** Everything consolidation needs about where the items came from. Times in ms epoch. */
export interface ConsolidationContext {
  store: SearchableStore;
  namespace: string;
  /** `null` when no model is loaded: only the LLM-free rules run (related items are then added). */
  engine: ChatEngine | null;
  conversationId: string | null;
  /** Ids of the messages the items came from (stored on each new memory). */
  sourceMessageIds: string[];
  /** Time of the user message: new memories are created at it; contradicted ones are closed at it. */
  messageTime: number;
  /** History `source` of every change, default `conversation:<conversationId>`. */
  source?: string;
  signal?: AbortSignal;
  options?: Partial<ConsolidationOptions>;
}

/** One planned change. `targetId` is a real memory id (never shown to the model). */
export type ConsolidationAction =
  | { event: 'ADD'; item: PreparedItem; reason: 'no-candidates' | 'llm' | 'llm-failed' | 'pinned-target' | 'target-taken' | 'invalid-update' }
  | { event: 'UPDATE'; item: PreparedItem; targetId: string; text: string; reason: 'llm' | 'richer-duplicate' }
  /**
   * Add a new current memory and close the target (`supersededBy` = the new one). `text` is the
   * new memory's text when it is not the item's: an UPDATE that changes the target's meaning
   * (`updateChangesMeaning`) keeps the old state as a past fact and stores the merged text anew.
   */
  | { event: 'DELETE'; item: PreparedItem; targetId: string; reason: 'llm' | 'update-changes-meaning'; text?: string }
  | { event: 'NOOP'; item: PreparedItem; targetId?: string; reason: 'exact-duplicate' | 'near-duplicate' | 'batch-duplicate' | 'llm' };

/** The plan of one batch, plus what the model did. */
export interface ConsolidationPlan {
  actions: ConsolidationAction[];
  /** Decision calls made. */
  llmCalls: number;
  /** Readable reasons of decisions that fell back to ADD because the reply was unusable. */
  llmFailures: string[];
}

/** What applying a plan changed. */
export interface ConsolidationSummary {
  added: number;
  updated: number;
  /** Memories whose validity was closed by a contradiction. */
  invalidated: number;
  unchanged: number;
  /** Ids of memories added or updated. */
  memoryIds: string[];
}

/** A related existing memory. */
interface Candidate {
  memory: MemoryView;
  /** Cosine similarity to the item, `null` when either side has no vector. */
  similarity: number | null;
  /** Share of the item's content words found in the memory (0..1). */
  coverage: number;
  /** About the same slot of the same subject as the item (`memorySlot`). */
  sameSlot: boolean;
}

function abortError(signal?: AbortSignal): unknown {
  return signal?.reason ?? new DOMException('Consolidation aborted', 'AbortError');
}

function jaccard(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const sa = new Set(a);
  const sb = new Set(b);
  let inter = 0;
  for (const x of sa) if (sb.has(x)) inter += 1;
  return inter / (sa.size + sb.size - inter);
}

/** Near-duplicate test without the LLM (see module doc). */
function nearDuplicate(aText: string, bText: string, similarity: number | null, threshold: number): boolean {
  if (similarity !== null && similarity >= threshold) return true;
  const a = contentTerms(aText);
  const b = contentTerms(bText);
  return a.length > 0 && b.length > 0 && jaccard(a, b) >= 0.9;
}

/** `true` when `richer` contains every content word of `base` and more. */
function saysMore(richer: string, base: string): boolean {
  const r = contentTerms(richer);
  const b = contentTerms(base);
  return r.length > b.length && termCoverage(b, richer) === 1;
}

async function findCandidates(item: PreparedItem, vector: Float32Array | null, ctx: ConsolidationContext, o: ConsolidationOptions): Promise<Candidate[]> {
  const byId = new Map<string, Candidate>();
  const terms = contentTerms(item.text);
  const similarityTo = async (id: string): Promise<number | null> => {
    if (!vector) return null;
    const record: MemoryRecord | undefined = await ctx.store.get(id);
    return record?.embedding && record.embedding.length === vector.length ? cosineSimilarity(vector, record.embedding) : null;
  };
  if (vector) {
    for (const hit of await ctx.store.nearest(vector, { namespace: ctx.namespace, k: o.candidates * 3 })) {
      if (!CANDIDATE_KINDS.has(hit.memory.kind)) continue;
      byId.set(hit.memory.id, { memory: hit.memory, similarity: hit.similarity, coverage: termCoverage(terms, hit.memory.text), sameSlot: false });
    }
  }
  const lexicalHits = await ctx.store.search({ text: item.text, namespace: ctx.namespace, k: o.candidates * 3, now: ctx.messageTime }, { timeFilters: false });
  for (const hit of lexicalHits) {
    if (!CANDIDATE_KINDS.has(hit.memory.kind) || byId.has(hit.memory.id)) continue;
    byId.set(hit.memory.id, { memory: hit.memory, similarity: await similarityTo(hit.memory.id), coverage: termCoverage(terms, hit.memory.text), sameSlot: false });
  }
  // Same subject and slot ("Lives in Shenzhen" / "Moved to Hangzhou"): a candidate even with no shared word.
  for (const memory of await ctx.store.inSlot(memorySlot(item.text), { namespace: ctx.namespace, k: o.candidates, kinds: [...CANDIDATE_KINDS] })) {
    const known = byId.get(memory.id);
    if (known) known.sameSlot = true;
    else byId.set(memory.id, { memory, similarity: await similarityTo(memory.id), coverage: termCoverage(terms, memory.text), sameSlot: true });
  }
  const score = (c: Candidate) => (c.similarity ?? 0) + c.coverage + (c.sameSlot ? 1 : 0);
  return [...byId.values()]
    .filter((c) => c.memory.current === 1 && (c.sameSlot || (c.similarity ?? 0) >= o.candidateMinSimilarity || c.coverage > 0))
    .sort((a, b) => score(b) - score(a))
    .slice(0, o.candidates);
}

/**
 * The decision prompt (Mem0's update-memory prompt, adapted and shortened for small models: one
 * new fact at a time, four events, one example).
 */
export const DECISION_SYSTEM_PROMPT = [
  "You keep a user's memory up to date. Compare the NEW fact with the EXISTING memories and choose one event:",
  'ADD - the new fact is new information.',
  'UPDATE - it is about the same thing as one existing memory and adds or corrects detail; give the merged text.',
  'DELETE - it contradicts one existing memory, which is no longer true (the user moved, changed job, changed their mind).',
  'NONE - it is already known.',
  'Keep the language of the memories; never translate.',
  'Reply with JSON only: {"event": "ADD|UPDATE|DELETE|NONE", "id": "<id of the existing memory, for UPDATE, DELETE, NONE>", "text": "<merged text, for UPDATE>"}',
  'Example:',
  'EXISTING:\n0: 我住在深圳\n1: 喜欢爬山',
  'NEW: 2024-04 搬到了杭州',
  '{"event": "DELETE", "id": "0"}',
].join('\n');

/** JSON Schema of a decision, for grammar-constrained engines. */
export const DECISION_JSON_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    event: { type: 'string', enum: ['ADD', 'UPDATE', 'DELETE', 'NONE'] },
    id: { type: 'string' },
    text: { type: 'string' },
  },
  required: ['event'],
  additionalProperties: false,
};

/** Builds the decision request messages; candidates appear as "0", "1", … in the given order. */
export function buildDecisionMessages(itemText: string, candidateTexts: string[]): ChatMessage[] {
  const existing = candidateTexts.map((t, i) => `${i}: ${truncateMiddle(t.replace(/\s+/g, ' '), 300)}`).join('\n');
  return [
    { role: 'system', content: DECISION_SYSTEM_PROMPT },
    { role: 'user', content: `EXISTING:\n${existing}\nNEW: ${itemText}\nJSON:` },
  ];
}

const EVENT_SYNONYMS: Record<string, 'ADD' | 'UPDATE' | 'DELETE' | 'NONE'> = {
  ADD: 'ADD', NEW: 'ADD', CREATE: 'ADD', INSERT: 'ADD',
  UPDATE: 'UPDATE', MERGE: 'UPDATE', MODIFY: 'UPDATE', REPLACE: 'UPDATE',
  DELETE: 'DELETE', INVALIDATE: 'DELETE', REMOVE: 'DELETE', CONTRADICT: 'DELETE',
  NONE: 'NONE', NOOP: 'NONE', NO_CHANGE: 'NONE', NOCHANGE: 'NONE', SKIP: 'NONE', KEEP: 'NONE',
};

/** A validated decision over candidate indexes. */
export type Decision = { event: 'ADD' } | { event: 'NONE'; index: number | null } | { event: 'UPDATE'; index: number; text: string } | { event: 'DELETE'; index: number };

/**
 * Validates a decision reply against `candidateCount` candidates. The id may be a string or a
 * number ("0" or 0); UPDATE needs a non-empty text, which must keep Chinese when the memory or the
 * new fact is Chinese.
 * @returns the decision, or a readable problem (used as the retry feedback).
 */
export function parseDecision(reply: string, candidateCount: number, itemText: string, candidateTexts: string[]): { ok: true; decision: Decision } | { ok: false; message: string } {
  const json = parseJsonReply(reply);
  if (!json.ok) return { ok: false, message: json.message };
  const obj = (Array.isArray(json.value) ? json.value[0] : json.value) as Record<string, unknown> | undefined;
  if (!obj || typeof obj !== 'object') return { ok: false, message: 'The reply was not a JSON object.' };
  const rawEvent = typeof obj.event === 'string' ? obj.event.trim().toUpperCase().replace(/[\s-]+/g, '_') : '';
  const event = EVENT_SYNONYMS[rawEvent];
  if (!event) return { ok: false, message: `"event" must be one of ADD, UPDATE, DELETE, NONE (got ${JSON.stringify(obj.event ?? null)}).` };
  if (event === 'ADD') return { ok: true, decision: { event } };
  const rawId = typeof obj.id === 'number' ? String(obj.id) : typeof obj.id === 'string' ? obj.id.trim() : '';
  const index = /^\d+$/.test(rawId) ? Number(rawId) : null;
  if (index !== null && index >= candidateCount) return { ok: false, message: `"id" must be one of the EXISTING ids 0 to ${candidateCount - 1} (got ${rawId}).` };
  if (event === 'NONE') return { ok: true, decision: { event, index } };
  if (index === null) return { ok: false, message: `${event} needs the "id" of an EXISTING memory (0 to ${candidateCount - 1}).` };
  if (event === 'DELETE') return { ok: true, decision: { event, index } };
  const text = typeof obj.text === 'string' ? obj.text.trim() : '';
  if (!text) return { ok: false, message: 'UPDATE needs the merged "text".' };
  if ((containsCjk(itemText) || containsCjk(candidateTexts[index] ?? '')) && !containsCjk(text)) {
    return { ok: false, message: 'The merged "text" must stay in Chinese (中文); never translate.' };
  }
  return { ok: true, decision: { event, index, text } };
}

/**
 * Limits on an UPDATE's merged text (see `updateTextProblem`): `minGrounded` is the share (0..1)
 * of its content words that must occur in the new item or the old memory; `minNewCoverage` the
 * share it must keep of the new item's content words that the old memory lacks (the new
 * information); `extraChars` how many characters (code points) it may be longer than the new item
 * and the old memory together.
 */
export const UPDATE_TEXT_LIMITS = { minGrounded: 0.5, minNewCoverage: 0.5, extraChars: 40 } as const;

/**
 * Checks that an UPDATE's merged `text` is grounded in the new item and the old memory, so that a
 * bad reply ("ok", a story, another subject) can neither overwrite a memory nor drop the new fact:
 * it has content words (`contentTerms`), at least `minGrounded` of them occur in `itemText` or
 * `oldText` (`termCoverage`: whole words, CJK as substrings), it keeps at least `minNewCoverage`
 * of the item's content words that are not in `oldText` (what the item adds), and it is at most
 * `extraChars` characters longer than both texts together.
 * @returns a readable problem, or `null` when the text is usable.
 * @example updateTextProblem('ok', 'Lives in Hangzhou', 'Lives in Shenzhen') // 'the merged text "ok" is not grounded …'
 */
export function updateTextProblem(text: string, itemText: string, oldText: string): string | null {
  const limit = Array.from(itemText).length + Array.from(oldText).length + UPDATE_TEXT_LIMITS.extraChars;
  const length = Array.from(text).length;
  if (length > limit) return `the merged text is ${length} characters long (at most ${limit}: the new fact and the old memory together)`;
  const terms = contentTerms(text);
  const quoted = JSON.stringify(truncateMiddle(text, 60));
  if (terms.length === 0) return `the merged text ${quoted} has no content words`;
  const grounded = termCoverage(terms, `${itemText}\n${oldText}`);
  if (grounded < UPDATE_TEXT_LIMITS.minGrounded) return `the merged text ${quoted} is not grounded in the new fact or the old memory (${Math.round(grounded * 100)}% of its words occur in them)`;
  // What the item says that the old memory does not: the merge exists to carry it.
  const newTerms = contentTerms(itemText).filter((t) => termCoverage([t], oldText) === 0);
  const kept = termCoverage(newTerms, text);
  if (newTerms.length > 0 && kept < UPDATE_TEXT_LIMITS.minNewCoverage) return `the merged text ${quoted} drops the new fact (${Math.round(kept * 100)}% of its words kept)`;
  return null;
}

/**
 * `true` when replacing `oldText` by `newText` changes its meaning rather than adding detail:
 * some content word of the old text (`contentTerms`) is not contained in the new one
 * (`termCoverage` < 1; token containment, CJK terms as substrings). "Lives in Shenzhen" →
 * "Lives in Hangzhou" changes it (Shenzhen is gone); "喜欢喝茶" → "喜欢喝茶，尤其是乌龙茶" adds
 * detail. A text without content words never changes meaning.
 */
export function updateChangesMeaning(oldText: string, newText: string): boolean {
  const terms = contentTerms(oldText);
  return terms.length > 0 && termCoverage(terms, newText) < 1;
}

async function decide(engine: ChatEngine, item: PreparedItem, candidates: Candidate[], ctx: ConsolidationContext, o: ConsolidationOptions): Promise<{ decision: Decision | null; calls: number; failure?: string }> {
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

/**
 * Applies a plan to the store: ADD → `store.add`; UPDATE → `store.update` (text, importance =
 * max, source message ids merged, an event's end date follows the new item); DELETE → add the new
 * item (with the action's `text` when it has one: an UPDATE that changed the meaning), then
 * `store.invalidate(old, messageTime, source, newId)`; NOOP → nothing.
 * @throws the store's errors (each change is its own transaction; what was applied before stays,
 *   and re-running the same plan is harmless).
 */
export async function applyConsolidation(plan: ConsolidationPlan, ctx: ConsolidationContext): Promise<ConsolidationSummary> {
  const source = ctx.source ?? (ctx.conversationId ? `conversation:${ctx.conversationId}` : 'extraction');
  const summary: ConsolidationSummary = { added: 0, updated: 0, invalidated: 0, unchanged: 0, memoryIds: [] };
  const add = async (item: PreparedItem) => {
    const { memory, created } = await ctx.store.add(
      {
        namespace: ctx.namespace,
        kind: item.kind,
        text: item.text,
        ...(item.topic ? { topic: item.topic } : {}),
        importance: item.importance,
        validFrom: item.validFrom,
        validUntil: item.validUntil,
        sourceConversationId: ctx.conversationId,
        sourceMessageIds: ctx.sourceMessageIds,
        createdAt: ctx.messageTime,
      },
      source,
    );
    if (created) summary.added += 1;
    else summary.unchanged += 1;
    summary.memoryIds.push(memory.id);
    return memory;
  };
  for (const action of plan.actions) {
    switch (action.event) {
      case 'ADD':
        await add(action.item);
        break;
      case 'UPDATE': {
        const old = await ctx.store.get(action.targetId);
        if (!old || old.current === 0) {
          await add(action.item);
          break;
        }
        const updated = await ctx.store.update(
          action.targetId,
          {
            text: action.text,
            importance: Math.max(old.importance, action.item.importance),
            sourceMessageIds: [...new Set([...old.sourceMessageIds, ...ctx.sourceMessageIds])],
            ...(old.kind === 'event' && action.item.kind === 'event' ? { validUntil: action.item.validUntil } : {}),
          },
          source,
          'UPDATE',
        );
        summary.updated += 1;
        summary.memoryIds.push(updated.id);
        break;
      }
      case 'DELETE': {
        const fresh = await add(action.text === undefined ? action.item : { ...action.item, text: action.text });
        const old = await ctx.store.get(action.targetId);
        if (old && old.current === 1 && old.id !== fresh.id) {
          await ctx.store.invalidate(action.targetId, ctx.messageTime, source, fresh.id);
          summary.invalidated += 1;
        }
        break;
      }
      case 'NOOP':
        summary.unchanged += 1;
        break;
    }
  }
  return summary;
}

/** Plans, then applies (see `planConsolidation` and `applyConsolidation`). */
export async function consolidate(items: PreparedItem[], ctx: ConsolidationContext): Promise<ConsolidationPlan & { summary: ConsolidationSummary }> {
  const plan = await planConsolidation(items, ctx);
  if (ctx.signal?.aborted) throw abortError(ctx.signal);
  return { ...plan, summary: await applyConsolidation(plan, ctx) };
}
