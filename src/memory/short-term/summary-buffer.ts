/**
 * Summary + buffer (LangChain `ConversationSummaryBufferMemory`): recent messages verbatim while
 * they fit `maxTokens`; older ones are folded into a running summary.
 *
 * The rule, with the known failures of other ports avoided (MEMORY-DESIGN-NOTES.md):
 * - summary tokens (S) and buffer tokens (B, Σ `messageTokens` of the messages after the
 *   watermark) are counted separately; the summary is never a buffer message;
 * - when S + B > maxTokens, the oldest messages are folded — exactly the shortest prefix whose
 *   removal brings S + B ≤ maxTokens, never the newest message; if the new summary is longer
 *   than the old one and the total overflows again, the next fold moves the new overflow;
 * - each message is folded exactly once (watermark + compare-and-set), and the previous summary
 *   is given to the model once, as "previous summary" (never summarized into itself twice);
 * - folding runs in a background job: until it has stored the new summary, the overflowing
 *   messages stay in the context verbatim (never dropped before their summary is safely stored),
 *   so S + B can exceed the limit for the turn right after an exchange.
 */
import type { TokenCounter } from '../../model/tokens';
import { z } from 'zod';
import { defineJob, enqueueJob } from '../../jobs/descriptor';
import { normalizeStrategyConfig } from '../../model/strategies';
import { defineStrategy } from './define';
import type { StrategyDeps } from './deps';
import { conversationJobPayload } from './job-payload';
import { conversationLanguage } from './language';
import { loadContextMessages, messageTokens } from './messages';
import { readSummaryState } from './state';
import { foldInputBudget, foldLines, requireEngine, summaryTargetTokens, takeChunk } from './summarizer';
import type { ContextStrategy } from './types';
import type { ContextMessage } from '../../model/context';

/** Most LLM calls one job run makes before yielding (the rest runs in the next job). */
const MAX_FOLDS_PER_RUN = 12;

/**
 * Number of oldest messages of `buffer` to fold so that `summaryTokens` + the rest ≤ `limit`
 * (0 when it already fits). Never the newest message: a single message larger than the limit
 * stays verbatim.
 */
export function overflowCount(counter: TokenCounter, summaryTokens: number, buffer: readonly ContextMessage[], limit: number): number {
  const costs = buffer.map((m) => messageTokens(counter, m));
  let rest = costs.reduce((a, b) => a + b, 0);
  let n = 0;
  while (n < buffer.length - 1 && summaryTokens + rest > limit) {
    rest -= costs[n]!;
    n += 1;
  }
  return n;
}

/**
 * `short-term.fold`: folds the oldest overflowing messages into the summary (`runFoldJob`).
 * Payload `{ conversationId, maxTokens }` (a `maxTokens` that is not a number reads as 2,000);
 * 4 attempts; coalesced per conversation while queued; a payload without a conversation id fails
 * (retried like any failure).
 */
export const foldJob = defineJob<{ conversationId: string; maxTokens: number }, StrategyDeps>({
  type: 'short-term.fold',
  payload: conversationJobPayload.extend({ maxTokens: z.unknown().transform((v) => (typeof v === 'number' ? v : 2000)) }),
  invalidPayload: 'retry',
  maxAttempts: 4,
  dedupeKey: ({ conversationId }) => `short-term.fold:${conversationId}`,
  run: (payload, { signal }, deps) => runFoldJob(deps, payload, signal),
});

/** Job type of `foldJob`. */
export const FOLD_JOB = foldJob.type;

/** Enqueues the fold job of a conversation (coalesced while one is queued). */
export async function enqueueFold(deps: StrategyDeps, conversationId: string, maxTokens: number): Promise<void> {
  await enqueueJob(deps.jobs, foldJob, { conversationId, maxTokens });
}

/**
 * Creates the summary-buffer strategy with limit `maxTokens` (summary + buffer), applied as
 * `min(maxTokens, budgetTokens)` of the prompt being built (see `shortTermBudget`).
 */
export function createSummaryBuffer(deps: StrategyDeps, maxTokens: number): ContextStrategy {
  /** The limit of the last prompt: `maxTokens`, or less when the model's window had less room. */
  let effectiveLimit = maxTokens;
  const needsFold = async (conversationId: string, limit: number, userText?: string) => {
    // Only the messages after the fold watermark are read: the turn's cost does not grow with the
    // conversation. One read transaction for both (one snapshot, one transaction less per turn).
    const { state, buffer } = await deps.db.transaction('r', [deps.db.strategyState, deps.db.messages], async () => {
      const state = await readSummaryState(deps.db, conversationId, 'summary-buffer');
      return { state, buffer: await loadContextMessages(deps.db, conversationId, userText, { afterSeq: state.coveredSeq }) };
    });
    const counter = deps.tokens();
    const overflow = overflowCount(counter, counter.count(state.summary), buffer, limit);
    return { state, buffer, overflow, fold: overflow > 0 };
  };
  return {
    kind: 'summary-buffer',
    async load(conversationId, { userText, budgetTokens }) {
      // A limit larger than the prompt has room for would let the assembler drop turns that are
      // not summarized yet: fold against the room there is.
      effectiveLimit = Math.max(1, Math.min(maxTokens, budgetTokens));
      const { state, buffer, fold, overflow } = await needsFold(conversationId, effectiveLimit, userText);
      if (fold) await enqueueFold(deps, conversationId, effectiveLimit);
      // Overflowing messages stay verbatim until the fold succeeds: never dropped before summarized.
      return {
        summary: state.summary || null,
        entities: [],
        retrieved: [],
        recent: buffer,
        ...(overflow > 0 ? { pending: { messages: overflow, lastError: state.lastError } } : {}),
      };
    },
    async onExchange(conversationId) {
      if ((await needsFold(conversationId, effectiveLimit)).fold) await enqueueFold(deps, conversationId, effectiveLimit);
    },
  };
}

/**
 * Job handler: while summary + buffer exceed the limit, folds the overflowing oldest messages
 * (in chunks that fit the summarizer's context window). The limit is `maxTokens` from the payload
 * (the strategy's limit, capped by the room of the last prompt), or the conversation's current
 * `maxTokens` when it still uses summary-buffer and that is lower.
 */
export async function runFoldJob(deps: StrategyDeps, payload: { conversationId: string; maxTokens: number }, signal: AbortSignal): Promise<void> {
  const { conversationId } = payload;
  const conversation = await deps.db.conversations.get(conversationId);
  const current = conversation ? normalizeStrategyConfig(conversation.strategy) : null;
  // The payload's limit is the conversation's `maxTokens`, or less when the model's window had
  // less room; a conversation whose limit was lowered since uses the lower one.
  const limit = current?.kind === 'summary-buffer' && current.maxTokens !== undefined ? Math.min(current.maxTokens, payload.maxTokens) : payload.maxTokens;
  const target = summaryTargetTokens('summary-buffer', limit);
  for (let i = 0; i < MAX_FOLDS_PER_RUN; i++) {
    const state = await readSummaryState(deps.db, conversationId, 'summary-buffer');
    const messages = await loadContextMessages(deps.db, conversationId);
    const buffer = messages.filter((m) => m.seq > state.coveredSeq);
    const counter = deps.tokens();
    const n = overflowCount(counter, counter.count(state.summary), buffer, limit);
    if (n === 0) return;
    const engine = requireEngine(deps);
    const lines = takeChunk(deps, buffer.slice(0, n), foldInputBudget(deps, engine, state, target));
    await foldLines(deps, { conversationId, kind: 'summary-buffer', state, lines, targetTokens: target, language: conversationLanguage(messages), signal });
  }
  await enqueueFold(deps, conversationId, limit);
}

/** `summary-buffer`: recent messages within `maxTokens`, older ones folded into a summary by `foldJob`. */
export const summaryBufferStrategy = defineStrategy({
  kind: 'summary-buffer',
  create: (deps, config) => createSummaryBuffer(deps, config.maxTokens!),
  jobs: [foldJob],
});
