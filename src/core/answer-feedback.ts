/**
 * "Not relevant here" under a reply (issue 14 item 1): the panel names the reply (assistant
 * message) and the memory; the query recorded is the user message that reply answered, i.e. the
 * text the turn retrieved memories for. The store keeps the row and demotes that memory for
 * similar queries (`LongTermStore.addFeedback`, `retrieval/feedback.ts`).
 */
import type { RecallDB } from '../db/schema';
import type { FeedbackRecord, FeedbackView } from '../model/records';
import type { AnswerSources } from '../messaging/protocol';
import type { LongTermStore } from '../memory/long-term/types';
import { MemoryError, MessagingError } from '../model/errors';

/** See module doc. */
export interface AnswerFeedback {
  /**
   * Marks memory `memoryId` as not relevant under reply `messageId` (idempotent per pair).
   * @throws MemoryError `message_not_found` when `messageId` is not a stored reply with a user
   *   message before it; `not_found` when the memory is gone; MessagingError `bad_request` in a
   *   temporary chat (nothing of it is kept, so no feedback either).
   */
  mark(input: { messageId: string; memoryId: string }): Promise<FeedbackView>;
  /** Undoes feedback row `id`. @returns whether it existed. */
  undo(id: string): Promise<boolean>;
  /** The feedback rows under reply `messageId`, oldest first. */
  list(messageId: string): Promise<FeedbackView[]>;
  /**
   * The memories the prompts of replies `messageIds` used, in brief, from their stored traces
   * (`AnswerSources`; each memory says whether it is still stored). Replies without a trace are
   * left out. @throws MessagingError `bad_request` for more than 500 ids.
   */
  sources(messageIds: string[]): Promise<Record<string, AnswerSources>>;
}

/** Most reply ids one `sources` call reads. */
export const MAX_SOURCES_IDS = 500;

const viewOf = ({ id, memoryId, messageId, createdAt }: FeedbackRecord): FeedbackView => ({ id, memoryId, messageId, createdAt });

/** Creates the service over the database and the long-term store. */
export function createAnswerFeedback(db: RecallDB, store: LongTermStore): AnswerFeedback {
  return {
    async mark({ messageId, memoryId }) {
      const reply = await db.messages.get(messageId);
      if (!reply || reply.role !== 'assistant') throw new MemoryError('message_not_found', `No reply ${messageId}`);
      const conversation = await db.conversations.get(reply.conversationId);
      if (conversation?.temporary) throw new MessagingError('bad_request', 'No feedback is kept from a temporary chat');
      const before = await db.messages.where('[conversationId+seq]').between([reply.conversationId, -Infinity], [reply.conversationId, reply.seq]).toArray();
      const question = before.reverse().find((m) => m.role === 'user');
      if (!question) throw new MemoryError('message_not_found', `No user message before reply ${messageId}`);
      const memory = await store.get(memoryId);
      if (!memory) throw new MemoryError('not_found', `Unknown memory id "${memoryId}"`);
      const row = await store.addFeedback({ memoryId, namespace: memory.namespace, query: question.content, messageId, conversationId: reply.conversationId });
      return viewOf(row);
    },
    undo: (id) => store.removeFeedback(id),
    list: async (messageId) => (await store.feedbackFor(messageId)).map(viewOf),
    async sources(messageIds) {
      if (!Array.isArray(messageIds) || messageIds.length > MAX_SOURCES_IDS)
        throw new MessagingError('bad_request', `trace.sources takes at most ${MAX_SOURCES_IDS} ids`);
      const traces = (await db.promptTraces.bulkGet(messageIds)).filter((t) => t !== undefined);
      const ids = [...new Set(traces.flatMap((t) => t.trace.memories.map((m) => m.memoryId)))];
      // Keys only: which memories are still stored (no row, text or vector is read).
      const stored = new Set((await db.memories.where('id').anyOf(ids).primaryKeys()) as string[]);
      const out: Record<string, AnswerSources> = {};
      for (const { messageId, trace } of traces) {
        out[messageId] = {
          memories: trace.memories.map((m) => ({
            memoryId: m.memoryId,
            kind: m.kind,
            text: m.text,
            ...(m.shortened ? { shortened: true as const } : {}),
            exists: stored.has(m.memoryId),
          })),
          dropped: trace.sections.find((section) => section.kind === 'memories')?.dropped ?? 0,
          feedback: (await store.feedbackFor(messageId)).map(viewOf),
        };
      }
      return out;
    },
  };
}
