/**
 * Shapes of an assembled prompt and of its trace (what the context view shows).
 * Token counts are tokens of the active model's tokenizer (or the estimator, see `exact`).
 * Leaf module: imports nothing from `src/` but other model files.
 */
import type { ChatMessage, TokenUsage } from './engine';
import type { MemoryKind } from './memory';
import type { StrategyConfig } from './strategies';
import type { PageTrace } from './page';

/** Kinds of prompt sections, in prompt order. */
export const PROMPT_SECTION_KINDS = ['system', 'profile', 'memories', 'summary', 'entities', 'retrieved', 'page', 'recent', 'user'] as const;

/** Kind of a prompt section (see `PROMPT_SECTION_KINDS`). */
export type PromptSectionKind = (typeof PROMPT_SECTION_KINDS)[number];

/** One delimited section of the prompt. */
export interface PromptSection {
  kind: PromptSectionKind;
  /** The exact text of the section as it appears in the prompt (for `recent`: the turns joined). */
  text: string;
  /** Tokens of `text` plus the chat-template overhead of the messages it occupies. */
  tokens: number;
  /** Number of items (memories, entities, turns) in the section. */
  items: number;
  /** Items left out to stay under the token budget. */
  dropped: number;
  /**
   * Delimiters and special tokens neutralized in this section's text (`src/prompt/neutralize.ts`);
   * absent when nothing was (and in traces stored by older versions).
   */
  neutralized?: NeutralizedReport;
}

/** What was neutralized in one piece of text or one section. */
export interface NeutralizedReport {
  /** Number of occurrences replaced. */
  count: number;
  /**
   * Distinct original strings replaced (e.g. `</long_term_memories>`, `<|im_start|>`), first seen
   * first; at most 20, each cut to 64 characters.
   */
  pieces: string[];
}

/** A long-term memory injected into a prompt, with where it came from. */
export interface MemoryCitation {
  memoryId: string;
  kind: MemoryKind;
  text: string;
  /** Final retrieval score after fusion and weighting (higher = more relevant). */
  score: number;
  /** 1-based ranks in each retriever, when it returned the memory. */
  ranks: { lexical?: number; vector?: number };
  sourceConversationId: string | null;
  /** Title of the source conversation at the time of the prompt, if it still exists. */
  sourceConversationTitle: string | null;
  sourceMessageIds: string[];
  createdAt: number;
  /** The web page the memory was saved from ("Remember this"), when it was. */
  sourceUrl?: string;
  sourceTitle?: string;
  /** Its line was cut (a prefix of its text, "…") to fit the memories' token share; absent when sent whole (and in older traces). */
  shortened?: true;
}

/** The token budget of one prompt (all values in tokens). */
export interface PromptBudget {
  /** Model context window. */
  contextWindow: number;
  /** Tokens reserved for the answer (`maxTokens` of the request). */
  reservedForAnswer: number;
  /** Tokens of the whole prompt (sections + template overhead). */
  promptTokens: number;
  /** Tokenizer used for the counts (see `TokenCounter.id`) and whether counts are exact. */
  tokenizer: string;
  exact: boolean;
}

/**
 * Something the user should know about a prompt, by stable code (the UI translates):
 * - `summary_pending`: messages that should have been folded into the summary are still
 *   verbatim (the summarizer has not run yet or its replies were rejected: `lastError`), so the
 *   short-term part exceeds the strategy's limit for now;
 * - `keyword_memory_only`: no embedding model is loaded, long-term memory was searched by
 *   keywords only.
 */
export type PromptNotice = { code: 'summary_pending'; messages: number; lastError: string | null } | { code: 'keyword_memory_only' };

/**
 * How long one turn took until its prompt was ready, in milliseconds on a monotonic clock
 * (`performance.now()` in the product; `ChatServiceDeps.clock`). Generation is not in it.
 * `promptReadyMs` is the sum of the contiguous spans `startMs`, `shortTermMs`, `userMessageMs`,
 * `memoryWaitMs` and `assemblyMs`. The long-term reads (retrieval, cited titles, profile) start
 * with the turn and run alongside `shortTermMs`; `memoryWaitMs` is what is left of them after it.
 * The user message is stored while the engine starts on the prompt (`userMessageMs` 0; traces
 * stored before that have the time its write took before the prompt). `retrievalMs` is the retrieval's own time (overlapping the spans, not
 * one of them); `queryEmbeddingMs` is part of `retrievalMs`.
 */
export interface TurnTimings {
  /**
   * From `ChatService.send`'s entry to the moment the assembled prompt is handed to the chat
   * engine (`ChatEngine.complete`): waiting for the turn lock, the short-term context, long-term retrieval (query embedding included), the cited titles and the
   * profile, prompt assembly. What the turn-overhead benchmarks call send → prompt ready.
   */
  promptReadyMs: number;
  /**
   * Long-term retrieval (`LongTermMemory.retrieve`: the store's hybrid search with its query
   * embedding, neighbour expansion, past-round marks), from the turn's start inside the lock to
   * its result; it overlaps `shortTermMs` and `memoryWaitMs`. 0 when none ran (`memoryTopK` 0).
   */
  retrievalMs: number;
  /**
   * Embedding the message for this turn's long-term retrieval (the store's query embedding); part
   * of `retrievalMs`. 0 when no query was embedded (no embedder loaded, or no vector of its model stored).
   */
  queryEmbeddingMs: number;
  /**
   * From `send`'s entry to the turn's start inside the turn lock: reading the conversation and
   * the settings, waiting for a running turn and for the job queue to yield (`runForeground`),
   * and for regenerate / edit / retry removing the replaced turns.
   */
  startMs: number;
  /** The short-term strategy's context (`ContextStrategy.load`, with its token budget). */
  shortTermMs: number;
  /**
   * Storing the user message with its open-turn marker before the prompt: 0 since it is stored
   * while the engine starts (see the type doc); older traces hold that write's time.
   */
  userMessageMs: number;
  /**
   * After the short-term context (and, in older traces, the user message), waiting for the long-term reads started with the turn
   * (retrieval, then the cited conversations' titles; the profile): 0 when they were done by then.
   * Absent in traces stored before it existed (their `retrievalMs` was then a span of its own).
   */
  memoryWaitMs?: number;
  /** From the long-term reads' end to prompt ready: ranking the attached page's passages (when one is), `assemblePrompt`. */
  assemblyMs: number;
}

/** Everything the context view shows about one turn's prompt. */
export interface PromptTrace {
  /** The exact messages sent to the engine. */
  messages: ChatMessage[];
  sections: PromptSection[];
  memories: MemoryCitation[];
  budget: PromptBudget;
  strategy: StrategyConfig;
  modelId: string | null;
  /** Usage the engine reported for this completion, when it did. */
  engineUsage: TokenUsage | null;
  /** Notices about this prompt (absent in traces stored by older versions). */
  notices?: PromptNotice[];
  /** The page attached to this message, when one was (title, URL, passages; the text is in the `page` section). */
  page?: PageTrace;
  /** How long the turn took until the prompt was ready (absent in traces stored by older versions). */
  timings?: TurnTimings;
}
