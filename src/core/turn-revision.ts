/**
 * Replacing the latest turns of a conversation (regenerate, edit and resend, retry): the user
 * message the replacement starts from and every message after it are removed, and what memory
 * learned from them is revised, so the new turn is learned from as if the old ones never happened.
 *
 * - Short-term memory: the messages, their prompt traces, and strategy state built from them (a
 *   summary or entity notes that covered a removed message are reset; `ConversationStore.truncate`).
 * - Long-term memory, for the removed message ids `R`:
 *   - a memory whose every source message is in `R` (an episodic round of a removed exchange, a
 *     fact extracted only from a removed message) is removed (`DELETE`, history kept). No tombstone
 *     is written: the user did not delete it, and saying it again must be learned again;
 *   - a memory a removed memory had superseded (closed by a contradiction) is valid again;
 *   - a memory with other sources too loses the ids of `R`, and text changes made by this
 *     conversation's extraction since the first removed message was sent are undone from its history
 *     (newest first, while the history's new text is the memory's text).
 *   Revision changes are recorded with source `revision:<conversationId>`.
 * - Review before saving: a pending suggestion whose every source message is in `R` (extracted
 *   from a removed message, waiting in Suggested) is dropped with it, so the new turn can suggest
 *   it again from the new message; one with other sources too loses the ids of `R`. Rejected
 *   texts' hashes stay (the user's choice, not learned from the removed turn).
 * Queued background jobs of the removed exchanges find their messages gone and store nothing.
 */
import type { RecallDB } from '../db/schema';
import type { LongTermStore } from '../memory/long-term/types';
import type { MemoryHistoryRecord, MemoryRecord, MessageRecord } from '../model/records';
import { MemoryError } from '../model/errors';
import type { ConversationStore } from './conversations';

/** What a revision changed (counts). */
export interface RevisionReport {
  /** Messages removed from the conversation. */
  messages: number;
  /** Long-term memories removed (their only sources were removed messages). */
  removedMemories: number;
  /** Memories that lost removed source ids (and, where this conversation changed their text since, got the earlier text back). */
  revisedMemories: number;
  /** Memories valid again because the memory that superseded them was removed. */
  reopenedMemories: number;
  /** Pending suggestions dropped (their only sources were removed messages). */
  droppedSuggestions: number;
}

/** History source of the changes a revision makes. */
export const revisionSource = (conversationId: string) => `revision:${conversationId}`;

/**
 * The user message a replacement starts from, checked: it exists, is in `conversationId` and is
 * the user's. @throws MemoryError `message_not_found` otherwise.
 */
export async function replaceableUserMessage(db: RecallDB, conversationId: string, messageId: string): Promise<MessageRecord> {
  const message = await db.messages.get(messageId);
  if (!message || message.conversationId !== conversationId || message.role !== 'user') {
    throw new MemoryError('message_not_found', `No user message ${messageId} in conversation ${conversationId}`);
  }
  return message;
}

/**
 * Removes `from` and every later message of its conversation and revises the memories learned
 * from them (see module doc). Run inside the turn lock (no turn is writing meanwhile).
 * @throws the store's errors (what was revised before stays revised; running it again is harmless).
 */
export async function reviseFrom(
  deps: { db: RecallDB; store: LongTermStore; conversations: ConversationStore },
  from: MessageRecord,
  namespace: string,
): Promise<RevisionReport> {
  const { db, store } = deps;
  const conversationId = from.conversationId;
  const removed = await db.messages.where('[conversationId+seq]').between([conversationId, from.seq], [conversationId, Infinity]).toArray();
  const ids = new Set(removed.map((m) => m.id));
  const source = revisionSource(conversationId);
  const report: RevisionReport = { messages: removed.length, removedMemories: 0, revisedMemories: 0, reopenedMemories: 0, droppedSuggestions: 0 };

  const cited =
    ids.size > 0
      ? await db.memories
          .where('sourceMessageIds')
          .anyOf([...ids])
          .distinct()
          .toArray()
      : [];
  const inNamespace = cited.filter((m) => m.namespace === namespace);
  const onlyReplaced = inNamespace.filter((m) => m.sourceMessageIds.every((id) => ids.has(id)));
  const alsoOthers = inNamespace.filter((m) => !m.sourceMessageIds.every((id) => ids.has(id)));

  // What this conversation's extraction changed since the first removed message was sent.
  const since = (await db.memoryHistory.where('at').aboveOrEqual(from.createdAt).toArray()).filter((h) => h.source === `conversation:${conversationId}`);

  if (onlyReplaced.length > 0) {
    const gone = new Set(onlyReplaced.map((m) => m.id));
    const closedBy = since.filter((h) => h.event === 'INVALIDATE').map((h) => h.memoryId);
    const superseded = (await db.memories.bulkGet([...new Set(closedBy)])).filter(
      (m): m is MemoryRecord => m !== undefined && m.supersededBy !== undefined && gone.has(m.supersededBy),
    );
    await store.remove([...gone], 'DELETE', source);
    report.removedMemories = gone.size;
    for (const memory of superseded) {
      await store.update(memory.id, { validUntil: null, supersededBy: undefined }, source, 'UPDATE');
      report.reopenedMemories += 1;
    }
  }

  for (const memory of alsoOthers) {
    const text = textBefore(memory, since);
    await store.update(
      memory.id,
      { sourceMessageIds: memory.sourceMessageIds.filter((id) => !ids.has(id)), ...(text !== memory.text ? { text } : {}) },
      source,
      'UPDATE',
    );
    report.revisedMemories += 1;
  }

  report.droppedSuggestions = await reviseSuggestions(db, namespace, ids);
  await deps.conversations.truncate(conversationId, from.seq);
  return report;
}

/**
 * Drops the pending suggestions of `namespace` whose every source message is in `removed`, and
 * takes the ids of `removed` out of those with other sources too (one transaction).
 * @returns how many were dropped.
 */
async function reviseSuggestions(db: RecallDB, namespace: string, removed: ReadonlySet<string>): Promise<number> {
  if (removed.size === 0) return 0;
  return db.transaction('rw', db.suggestions, async () => {
    const pending = await db.suggestions.where('[namespace+status]').equals([namespace, 'pending']).toArray();
    const cited = pending.filter((s) => s.sourceMessageIds.some((id) => removed.has(id)));
    const dropped = cited.filter((s) => s.sourceMessageIds.every((id) => removed.has(id)));
    const kept = cited.filter((s) => !dropped.includes(s)).map((s) => ({ ...s, sourceMessageIds: s.sourceMessageIds.filter((id) => !removed.has(id)) }));
    await db.suggestions.bulkDelete(dropped.map((s) => s.id));
    await db.suggestions.bulkPut(kept);
    return dropped.length;
  });
}

/** `memory`'s text before the `UPDATE`s in `history` (newest first, while each one's new text is the text then). */
function textBefore(memory: MemoryRecord, history: readonly MemoryHistoryRecord[]): string {
  const updates = history.filter((h) => h.memoryId === memory.id && h.event === 'UPDATE').sort((a, b) => b.at - a.at || (b.id ?? 0) - (a.id ?? 0));
  let text = memory.text;
  for (const update of updates) {
    if (update.newText !== text || update.oldText === null) break;
    text = update.oldText;
  }
  return text;
}
