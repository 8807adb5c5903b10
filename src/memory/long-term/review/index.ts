/**
 * Review before saving (issue 14 item 2). A per-namespace setting (off by default; stored in the
 * settings table under `review.<namespace>`, so it follows the profile that owns the namespace):
 * while it is on, `ltm.extract` does not consolidate its items into long-term memory but puts them
 * in the *Suggested* list (table `suggestions`, schema v8), where the user accepts (optionally
 * edited), or rejects each one. A rejected text keeps only its hash, and no later extraction
 * suggests it again in that namespace (by `memoryHash`, the normalized text — like the tombstones).
 * Explicit "remember …" commands never reach extraction (`commands.ts`), so they skip review.
 * An accepted item is consolidated like an extracted one, without the model (exact and near
 * duplicates are no-ops, anything else is added: a request must not wait for an LLM call),
 * with its source conversation and message ids and the history source `conversation:<id>`.
 *
 * With review off, `./recent.ts` lists what extraction saved and undoes one.
 */
import type { RecallDB } from '../../../db/schema';
import type { MemoryView, SuggestionRecord } from '../../../model/records';
import { MemoryError } from '../../../model/errors';
import { FACT_KINDS, type FactKind } from '../../../model/memory';
import { consolidate } from '../consolidation';
import type { PreparedItem } from '../extraction/items';
import { capItemText } from '../extraction/items';
import { toView } from '../store';
import { memoryHash } from '../text';
import type { LongTermStore } from '../types';

export { recentlyLearned, undoLearned } from './recent';

/** Settings-table key prefix of the per-namespace review switch (value: boolean). */
export const REVIEW_SETTING_PREFIX = 'review.';

/** Where the review switch of `namespace` is stored. */
export function reviewSettingKey(namespace: string): string {
  return `${REVIEW_SETTING_PREFIX}${namespace}`;
}

/** Whether new extracted items of `namespace` wait for review (`false` when never set). */
export async function reviewEnabled(db: RecallDB, namespace: string): Promise<boolean> {
  return (await db.settings.get(reviewSettingKey(namespace)))?.value === true;
}

/** Turns review of `namespace` on or off. Pending suggestions stay when it is turned off. */
export async function setReviewEnabled(db: RecallDB, namespace: string, enabled: boolean): Promise<void> {
  await db.settings.put({ key: reviewSettingKey(namespace), value: enabled });
}

/** Where the suggested items came from. Times in ms epoch. */
export interface SuggestionSource {
  namespace: string;
  conversationId: string | null;
  sourceMessageIds: string[];
  messageTime: number;
  /** Clock, default `Date.now`. */
  now?: number;
}

/**
 * Puts `items` in the Suggested list of `source.namespace`, skipping texts already suggested,
 * rejected, or stored as a current memory of that namespace (by `memoryHash`), and repeats inside
 * `items`. One read-write transaction.
 * @returns the new suggestions, in the order of `items`.
 */
export async function suggestItems(db: RecallDB, items: readonly PreparedItem[], source: SuggestionSource): Promise<SuggestionRecord[]> {
  const at = source.now ?? Date.now();
  return db.transaction('rw', db.suggestions, db.memories, async () => {
    const fresh: SuggestionRecord[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      const hash = memoryHash(item.text);
      if (seen.has(hash)) continue;
      seen.add(hash);
      if ((await db.suggestions.where('[namespace+hash]').equals([source.namespace, hash]).count()) > 0) continue;
      const stored = await db.memories.where('hash').equals(hash).toArray();
      if (stored.some((m) => m.namespace === source.namespace && m.current === 1)) continue;
      fresh.push({
        id: crypto.randomUUID(),
        namespace: source.namespace,
        hash,
        status: 'pending',
        kind: item.kind,
        text: item.text,
        ...(item.topic ? { topic: item.topic } : {}),
        importance: item.importance,
        validFrom: item.validFrom,
        validUntil: item.validUntil,
        sourceConversationId: source.conversationId,
        sourceMessageIds: [...source.sourceMessageIds],
        messageTime: source.messageTime,
        createdAt: at,
      });
    }
    await db.suggestions.bulkAdd(fresh);
    return fresh;
  });
}

/** The pending suggestions of `namespace`, oldest first. */
export async function listSuggestions(db: RecallDB, namespace: string): Promise<SuggestionRecord[]> {
  const rows = await db.suggestions.where('[namespace+status]').equals([namespace, 'pending']).toArray();
  return rows.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

/** Number of pending suggestions of `namespace` (the Memory tab's badge). */
export function countSuggestions(db: RecallDB, namespace: string): Promise<number> {
  return db.suggestions.where('[namespace+status]').equals([namespace, 'pending']).count();
}

async function pending(db: RecallDB, id: string): Promise<SuggestionRecord> {
  const row = await db.suggestions.get(id);
  if (!row || row.status !== 'pending') throw new MemoryError('not_found', `No pending suggestion ${id}`, { params: { id } });
  return row;
}

/**
 * Accepts a pending suggestion: consolidates it into the store (see module doc) with the user's
 * edits (`text`: trimmed, capped like an extracted item; `kind`), then deletes the suggestion.
 * @returns the stored memory (an existing one when the text was a duplicate), `null` when
 *   consolidation left nothing to show (a no-op against a memory that is gone).
 * @throws MemoryError `not_found` for an unknown or already handled id; `text_empty` for an empty text.
 */
export async function acceptSuggestion(
  deps: { db: RecallDB; store: LongTermStore },
  input: { id: string; text?: string; kind?: FactKind },
): Promise<MemoryView | null> {
  const row = await pending(deps.db, input.id);
  const text = capItemText(input.text ?? row.text);
  if (!text) throw new MemoryError('text_empty', 'A memory needs a text');
  const kind = input.kind && (FACT_KINDS as readonly string[]).includes(input.kind) ? input.kind : row.kind;
  const item: PreparedItem = {
    kind,
    text,
    ...(row.topic ? { topic: row.topic } : {}),
    importance: row.importance,
    validFrom: row.validFrom,
    validUntil: row.validUntil,
  };
  const result = await consolidate([item], {
    store: deps.store,
    namespace: row.namespace,
    engine: null,
    conversationId: row.sourceConversationId,
    sourceMessageIds: row.sourceMessageIds,
    messageTime: row.messageTime,
  });
  await deps.db.suggestions.delete(row.id);
  const action = result.actions[0];
  const id = result.summary.memoryIds[0] ?? (action && 'targetId' in action ? action.targetId : undefined);
  const memory = id ? await deps.store.get(id) : undefined;
  return memory ? toView(memory) : null;
}

/**
 * Rejects a pending suggestion: its text is emptied and its hash kept (`status: 'rejected'`), so the
 * same normalized text is never suggested again in that namespace.
 * @throws MemoryError `not_found` for an unknown or already handled id.
 */
export async function rejectSuggestion(db: RecallDB, id: string, now: number = Date.now()): Promise<void> {
  const row = await pending(db, id);
  await db.suggestions.put({ ...row, status: 'rejected', text: '', sourceMessageIds: [], createdAt: now });
}
