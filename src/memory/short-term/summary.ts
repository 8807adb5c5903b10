/**
 * Summary (LangChain `ConversationSummaryMemory`): a progressive summary of the whole
 * conversation, updated in the background after each exchange. Messages not yet folded into the
 * stored summary are returned verbatim, so nothing is missing while the summarizer is busy,
 * has no model, or keeps failing.
 */
import { defineJob, enqueueJob } from '../../jobs/descriptor';
import { defineStrategy } from './define';
import type { StrategyDeps } from './deps';
import { conversationJobPayload } from './job-payload';
import { conversationLanguage } from './language';
import { loadContextMessages } from './messages';
import { readSummaryState } from './state';
import { foldInputBudget, requireEngine, summaryTargetTokens, takeChunk, foldLines } from './summarizer';
import type { ContextStrategy } from './types';
import type { ContextMessage } from '../../model/context';

/** Most LLM calls one job run makes before yielding (the rest runs in the next job). */
const MAX_FOLDS_PER_RUN = 12;

/** Messages after the watermark, without a trailing user message that has no reply yet. */
function pendingExchanges(messages: readonly ContextMessage[], coveredSeq: number): ContextMessage[] {
  const pending = messages.filter((m) => m.seq > coveredSeq);
  while (pending.length > 0 && pending[pending.length - 1]!.role === 'user') pending.pop();
  return pending;
}

/**
 * `short-term.summary`: folds new exchanges into the running summary (`runSummaryJob`). Payload
 * `{ conversationId }`; 4 attempts; coalesced per conversation while queued; a payload without a
 * conversation id fails (retried like any failure).
 */
export const summaryJob = defineJob<{ conversationId: string }, StrategyDeps>({
  type: 'short-term.summary',
  payload: conversationJobPayload,
  invalidPayload: 'retry',
  maxAttempts: 4,
  dedupeKey: ({ conversationId }) => `short-term.summary:${conversationId}`,
  run: ({ conversationId }, { signal }, deps) => runSummaryJob(deps, conversationId, signal),
});

/** Job type of `summaryJob`. */
export const SUMMARY_JOB = summaryJob.type;

/** Enqueues the summary job of a conversation (coalesced while one is queued). */
export async function enqueueSummary(deps: StrategyDeps, conversationId: string): Promise<void> {
  await enqueueJob(deps.jobs, summaryJob, { conversationId });
}

/** Creates the summary strategy. */
export function createSummary(deps: StrategyDeps): ContextStrategy {
  return {
    kind: 'summary',
    async load(conversationId, { userText }) {
      // Only the messages after the fold watermark are read (see summary-buffer).
      const state = await readSummaryState(deps.db, conversationId, 'summary');
      const recent = await loadContextMessages(deps.db, conversationId, userText, { afterSeq: state.coveredSeq });
      const pending = pendingExchanges(recent, state.coveredSeq).length;
      // Self-healing: a conversation switched to this strategy, or a lost job, gets summarized.
      if (pending > 0) await enqueueSummary(deps, conversationId);
      return {
        summary: state.summary || null,
        entities: [],
        retrieved: [],
        recent,
        // Only worth a notice when the summarizer is behind by more than the last exchange.
        ...(pending > 2 || (pending > 0 && state.lastError) ? { pending: { messages: pending, lastError: state.lastError } } : {}),
      };
    },
    async onExchange(conversationId) {
      await enqueueSummary(deps, conversationId);
    },
  };
}

/**
 * Job handler: folds every message after the watermark (complete exchanges only) into the
 * summary, in chunks that fit the summarizer's context window, committing after each chunk.
 */
export async function runSummaryJob(deps: StrategyDeps, conversationId: string, signal: AbortSignal): Promise<void> {
  const target = summaryTargetTokens('summary');
  for (let i = 0; i < MAX_FOLDS_PER_RUN; i++) {
    const state = await readSummaryState(deps.db, conversationId, 'summary');
    const messages = await loadContextMessages(deps.db, conversationId);
    const pending = pendingExchanges(messages, state.coveredSeq);
    if (pending.length === 0) return;
    const engine = requireEngine(deps);
    const lines = takeChunk(deps, pending, foldInputBudget(deps, engine, state, target));
    await foldLines(deps, { conversationId, kind: 'summary', state, lines, targetTokens: target, language: conversationLanguage(messages), signal });
  }
  await enqueueSummary(deps, conversationId);
}

/** `summary`: a running summary of the whole conversation, folded by `summaryJob`. */
export const summaryStrategy = defineStrategy({ kind: 'summary', create: (deps) => createSummary(deps), jobs: [summaryJob] });
