/**
 * The progressive summarizer shared by `summary` and `summary-buffer`: one LLM call folds a run of
 * messages into the running summary, and the result is committed with compare-and-set on the
 * covered seq. Every message is folded exactly once (the watermark only moves forward, and a
 * re-run after a kill sees it already moved); the stored summary changes only when a reply
 * passes `parseSummaryReply`, otherwise the previous summary stays and the reason is recorded.
 */
import type { ChatEngine } from '../../engines/types';
import { JobDeferred } from '../../jobs/queue';
import type { StrategyDeps } from './deps';
import type { DominantLanguage } from '../../text/language';
import { messagesTokens } from './messages';
import { parseSummaryReply } from './parse';
import { SUMMARY_FORMAT, summaryPrompt } from './prompts';
import { writeSummaryState, type SummaryState } from './state';
import type { ContextMessage } from '../../model/context';
import { JobError } from '../../model/errors';

/** Largest summary the prompt asks for (tokens); Letta caps its summaries near 300 words. */
export const SUMMARY_TARGET_MAX = 512;

/**
 * Length the summarizer is asked to stay under (tokens): 512 for `summary`; for `summary-buffer`
 * 40% of its limit (so recent messages keep most of the room), between 32 and 512. Replies up to
 * twice this are accepted; longer ones are rejected.
 */
export function summaryTargetTokens(kind: 'summary' | 'summary-buffer', maxTokens?: number): number {
  if (kind === 'summary' || maxTokens === undefined) return SUMMARY_TARGET_MAX;
  return Math.max(32, Math.min(SUMMARY_TARGET_MAX, Math.floor(maxTokens * 0.4)));
}

/** A summarizer reply was rejected; the stored summary is unchanged. The job fails and is retried. */
export class SummaryRejectedError extends JobError {
  constructor(reason: string) {
    super('summary_rejected', `Summary reply rejected: ${reason}`);
    this.name = 'SummaryRejectedError';
  }
}

/**
 * Model calls per fold when a rejected reply dropped key facts of the previous summary
 * (`missingFacts` of `parseSummaryReply`): the first, plus one corrective retry that names the
 * facts. Other rejections are not retried here (the job fails and the queue retries it later).
 */
export const FOLD_ATTEMPTS = 2;

/**
 * The note appended to the summary request after a reply that left out `missing` (key facts of
 * the previous summary, as `missingKeyFacts` returns them). About 40 tokens plus the facts.
 */
export function keyFactsRetryPrompt(missing: readonly string[]): string {
  return `Important: an earlier answer left out facts of the previous summary: ${missing.join(', ')}. The new summary must keep every name, place, date and number of the previous summary and add the new lines.`;
}

/** The job was preempted (foreground chat turn) or stopped; the queue re-runs it. */
export class PreemptedError extends JobError {
  constructor() {
    super('preempted', 'Preempted by foreground work');
    this.name = 'PreemptedError';
  }
}

/** The loaded engine, or `JobDeferred` when none is loaded. */
export function requireEngine(deps: StrategyDeps): ChatEngine {
  const engine = deps.engine();
  if (!engine || !engine.isLoaded()) throw new JobDeferred('No language model loaded: summarization waits', 30_000);
  return engine;
}

/**
 * The oldest messages of `pending` that fit `budgetTokens` of prompt input (at least one). A
 * single message longer than the budget is cut to fit (its head is kept, marked with "…"):
 * it still counts as folded.
 */
export function takeChunk(deps: StrategyDeps, pending: readonly ContextMessage[], budgetTokens: number): ContextMessage[] {
  const counter = deps.tokens();
  const chunk: ContextMessage[] = [];
  let used = 0;
  for (const m of pending) {
    const cost = messagesTokens(counter, [m]);
    if (chunk.length > 0 && used + cost > budgetTokens) break;
    if (chunk.length === 0 && cost > budgetTokens) {
      const keep = Math.max(1, Math.floor((m.content.length * budgetTokens) / cost) - 1);
      chunk.push({ ...m, content: `${m.content.slice(0, keep)}…` });
      break;
    }
    chunk.push(m);
    used += cost;
  }
  return chunk;
}

/** Prompt input room (tokens) for the lines of one fold, given the engine's context window. */
export function foldInputBudget(deps: StrategyDeps, engine: ChatEngine, state: SummaryState, targetTokens: number): number {
  const window = engine.contextWindow() ?? 4096;
  const counter = deps.tokens();
  const fixed =
    counter.count(
      summaryPrompt(state.summary, [], targetTokens, 'mixed')
        .map((m) => m.content)
        .join('\n'),
    ) + 64;
  return Math.max(256, Math.min(4096, window - (2 * targetTokens + 64) - fixed));
}

/**
 * Folds `lines` (the oldest not-yet-summarized messages, in order, directly after
 * `state.coveredSeq`) into the summary with one LLM call, or `FOLD_ATTEMPTS` when the reply drops
 * key facts of the previous summary (the retry names them). A rejected fold changes neither the
 * summary nor the watermark: the previous summary stays and the lines stay unsummarized (the
 * strategies return them verbatim) until a later run of the job folds them.
 * @returns `true` when the new summary was stored, `false` when another run moved the watermark first.
 * @throws JobDeferred (no model), PreemptedError (aborted), SummaryRejectedError (bad reply;
 *   recorded in the state's `lastError`).
 */
export async function foldLines(
  deps: StrategyDeps,
  input: {
    conversationId: string;
    kind: 'summary' | 'summary-buffer';
    state: SummaryState;
    lines: ContextMessage[];
    targetTokens: number;
    /** Language of the conversation (`conversationLanguage`); the summary must be written in it. */
    language: DominantLanguage;
    signal: AbortSignal;
  },
): Promise<boolean> {
  const { conversationId, kind, state, lines, targetTokens, language, signal } = input;
  const last = lines[lines.length - 1];
  if (!last) return false;
  const engine = requireEngine(deps);
  const now = deps.now ?? Date.now;
  const grounding = {
    previous: state.summary,
    lines: lines.map((m) => m.content).join('\n'),
    userLines: lines
      .filter((m) => m.role === 'user')
      .map((m) => m.content)
      .join('\n'),
  };
  const base = summaryPrompt(state.summary, lines, targetTokens, language);
  let messages = base;
  let parsed: ReturnType<typeof parseSummaryReply> = { ok: false, reason: 'no reply' };
  for (let attempt = 1; attempt <= FOLD_ATTEMPTS; attempt++) {
    const result = await engine.complete({
      messages,
      maxTokens: 2 * targetTokens + 64,
      temperature: 0.2,
      responseFormat: SUMMARY_FORMAT,
      signal,
    });
    if (signal.aborted || result.finishReason === 'abort') throw new PreemptedError();
    parsed = parseSummaryReply(result, { counter: deps.tokens(), maxTokens: 2 * targetTokens, language, grounding });
    // Only a summary that forgot facts is asked again (naming them); other bad replies fail the job, which retries later.
    if (parsed.ok || !parsed.missingFacts?.length) break;
    const note = keyFactsRetryPrompt(parsed.missingFacts);
    // The rejected reply is not sent back: the request stays within the room `foldInputBudget` left.
    messages = base.map((m, i) => (i === base.length - 1 ? { ...m, content: `${m.content}\n\n${note}` } : m));
  }
  if (!parsed.ok) {
    await writeSummaryState(deps.db, conversationId, kind, state.coveredSeq, {
      ...state,
      lastError: parsed.reason,
      rejectedReplies: state.rejectedReplies + 1,
      updatedAt: now(),
    });
    throw new SummaryRejectedError(parsed.reason);
  }
  return writeSummaryState(deps.db, conversationId, kind, state.coveredSeq, {
    summary: parsed.value,
    coveredSeq: last.seq,
    folds: state.folds + 1,
    lastError: null,
    rejectedReplies: 0,
    updatedAt: now(),
  });
}
