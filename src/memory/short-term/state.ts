/**
 * Persisted state of the summary strategies (`db.strategyState`), validated on read and
 * written with compare-and-set, so a job re-run after a kill never folds a message twice.
 */
import { z } from 'zod';
import type { RecallDB } from '../../db/schema';
import type { StrategyKind } from '../../model/strategies';

/** State of `summary` and `summary-buffer` for one conversation. */
export interface SummaryState {
  /** The running summary (`''` before the first fold). */
  summary: string;
  /** Highest message seq folded into `summary` (−1: none). Messages with a higher seq are verbatim. */
  coveredSeq: number;
  /** Number of successful folds. */
  folds: number;
  /** Why the last summarizer reply was rejected (`null` after a good one). Shown in the UI. */
  lastError: string | null;
  /** Rejected replies since the last good one. */
  rejectedReplies: number;
  /** ms epoch of the last change. */
  updatedAt: number;
}

const SummaryStateSchema = z.object({
  summary: z.string(),
  coveredSeq: z.number().int().min(-1),
  folds: z.number().int().min(0),
  lastError: z.string().nullable(),
  rejectedReplies: z.number().int().min(0),
  updatedAt: z.number(),
});

/** State before anything was summarized. */
export const EMPTY_SUMMARY_STATE: SummaryState = { summary: '', coveredSeq: -1, folds: 0, lastError: null, rejectedReplies: 0, updatedAt: 0 };

/**
 * Reads the summary state of a conversation. A missing record is the empty state; a corrupt
 * record (wrong shape) is also read as empty — every message then counts as not yet summarized,
 * so nothing is dropped — with `lastError` saying so; the next good fold overwrites it.
 */
export async function readSummaryState(db: RecallDB, conversationId: string, kind: 'summary' | 'summary-buffer'): Promise<SummaryState> {
  const record = await db.strategyState.get([conversationId, kind]);
  if (!record) return { ...EMPTY_SUMMARY_STATE };
  const parsed = SummaryStateSchema.safeParse(record.state);
  if (!parsed.success) return { ...EMPTY_SUMMARY_STATE, lastError: 'stored summary state was unreadable and has been reset' };
  return parsed.data;
}

/**
 * Writes `next` if the stored `coveredSeq` still equals `expectedCoveredSeq` (compare-and-set in
 * one transaction). Returns `false`, writing nothing, when another run changed it first.
 */
export async function writeSummaryState(
  db: RecallDB,
  conversationId: string,
  kind: 'summary' | 'summary-buffer',
  expectedCoveredSeq: number,
  next: SummaryState,
): Promise<boolean> {
  return db.transaction('rw', db.strategyState, async () => {
    const current = await readSummaryState(db, conversationId, kind);
    if (current.coveredSeq !== expectedCoveredSeq) return false;
    await db.strategyState.put({ conversationId, strategy: kind, state: next, updatedAt: next.updatedAt });
    return true;
  });
}

/** State of the `entity` strategy: the last message seq whose exchange was processed. */
export interface EntityState {
  processedSeq: number;
  lastError: string | null;
  updatedAt: number;
}

const EntityStateSchema = z.object({ processedSeq: z.number().int().min(-1), lastError: z.string().nullable(), updatedAt: z.number() });

/** Reads the entity state; missing or corrupt → `processedSeq: -1`. */
export async function readEntityState(db: RecallDB, conversationId: string): Promise<EntityState> {
  const record = await db.strategyState.get([conversationId, 'entity' satisfies StrategyKind]);
  const parsed = EntityStateSchema.safeParse(record?.state);
  return parsed.success ? parsed.data : { processedSeq: -1, lastError: null, updatedAt: 0 };
}
