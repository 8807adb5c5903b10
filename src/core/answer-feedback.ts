/**
 * "Not relevant here" under a reply (issue 14 item 1): the panel names the reply (assistant
 * message) and the memory; the query recorded is the user message that reply answered, i.e. the
 * text the turn retrieved memories for. The store keeps the row and demotes that memory for
 * similar queries (`LongTermStore.addFeedback`, `retrieval/feedback.ts`).
 */
import type { RecallDB } from '../db/schema';
import type { FeedbackRecord, FeedbackView } from '../model/records';
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
}

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
  };
}
