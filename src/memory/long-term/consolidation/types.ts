/**
 * Consolidation's shared shapes: tunables, the context a run needs, the planned actions, the
 * plan and the summary of what applying it changed (see `./index.ts` for the flow).
 */
import { FACT_KINDS, type MemoryKind } from '../../../model/memory';
import type { ChatEngine } from '../../../engines/types';
import type { LongTermStore } from '../types';
import type { PreparedItem } from '../extraction/items';
import type { MemoryView } from '../../../model/records';

/** Kinds consolidation compares against (episodic rounds and summaries are never candidates). */
export const CANDIDATE_KINDS: ReadonlySet<MemoryKind> = new Set<MemoryKind>(FACT_KINDS);

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
  store: LongTermStore;
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

/** A related existing memory (`findCandidates`). */
export interface Candidate {
  memory: MemoryView;
  /** Cosine similarity to the item, `null` when either side has no vector. */
  similarity: number | null;
  /** Share of the item's content words found in the memory (0..1). */
  coverage: number;
  /** About the same slot of the same subject as the item (`memorySlot`). */
  sameSlot: boolean;
}

/** The error a consolidation run throws when `signal` aborts: the signal's reason, else an `AbortError`. */
export function abortError(signal?: AbortSignal): unknown {
  return signal?.reason ?? new DOMException('Consolidation aborted', 'AbortError');
}
