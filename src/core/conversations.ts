/**
 * Conversations and their messages (short-term memory, kept verbatim in Dexie).
 */
import { type RecallDB } from '../db/schema';
import { DEFAULT_NAMESPACE } from '../model/memory';
import type { ConversationRecord, MessageRecord } from '../model/records';
import type { StrategyConfig, StrategyKind } from '../model/strategies';
import type { ConversationSearchHit, ConversationSummary, MessageSnippet } from '../messaging/protocol';
import { MemoryError } from '../model/errors';
import { messageSnippets, searchConversations } from './conversation-search';

/** Title given to a new conversation until its first message names it. */
export const UNTITLED = '';

/** Longest automatic title, in characters. */
const TITLE_CHARS = 40;

/** Conversation CRUD. */
export interface ConversationStore {
  /** The kept conversations of profile `namespace` (every profile's when omitted), newest first (temporary chats are not listed: they are not kept). */
  list(namespace?: string): Promise<ConversationSummary[]>;
  /**
   * Conversations whose title or messages contain every word of `query` (`searchConversations`),
   * only profile `namespace`'s when given; `[]` for a blank query.
   */
  search(query: string, namespace?: string): Promise<ConversationSearchHit[]>;
  /** The messages of `ids` that exist, in brief (`messageSnippets`), in the order of `ids`. @throws MessagingError('bad_request') for more than 500 ids. */
  snippets(ids: string[]): Promise<MessageSnippet[]>;
  get(id: string): Promise<ConversationRecord | undefined>;
  /** @throws Error when `id` does not exist. */
  require(id: string): Promise<ConversationRecord>;
  /** Creates a conversation; `temporary: true` makes a temporary chat (`ConversationRecord.temporary`). */
  create(input: { title?: string; strategy: StrategyConfig; namespace?: string; temporary?: boolean }): Promise<ConversationRecord>;
  /**
   * Renames and/or changes the strategy. `updatedAt` is the time of the last message (it orders
   * the list and the drawer shows it), so a rename or strategy change leaves it as it is.
   * @throws MemoryError('conversation_not_found') when `id` does not exist.
   */
  update(id: string, patch: { title?: string; strategy?: StrategyConfig }): Promise<ConversationRecord>;
  /** Deletes the conversation, its messages, traces and short-term state (long-term memories stay). */
  delete(id: string): Promise<void>;
  /** Deletes every temporary chat (`delete` each; the core runs it at start: none outlives a restart). @returns their ids. */
  deleteTemporary(): Promise<string[]>;
  messages(conversationId: string): Promise<MessageRecord[]>;
  /** Appends a message with the next `seq`; sets the title from the first user message. */
  append(message: Omit<MessageRecord, 'seq'>): Promise<MessageRecord>;
  /**
   * Removes the messages from `fromSeq` on (and their prompt traces) in one transaction, with the
   * short-term state built from them: a strategy state whose watermark (`coveredSeq`,
   * `processedSeq`) reached `fromSeq` is reset, and entity notes last seen at or after it are
   * removed (the next messages take these seqs again, and are folded from scratch). Long-term
   * memories are not touched here (`reviseFrom` in `turn-revision.ts`). @returns the removed ids.
   * @throws MemoryError `conversation_not_found` when `conversationId` does not exist.
   */
  truncate(conversationId: string, fromSeq: number): Promise<string[]>;
}

/** The highest message seq a strategy state has consumed (`coveredSeq` of the summaries, `processedSeq` of entity notes), or -1. */
function stateWatermark(state: unknown): number {
  const s = (state ?? {}) as { coveredSeq?: unknown; processedSeq?: unknown };
  return Math.max(typeof s.coveredSeq === 'number' ? s.coveredSeq : -1, typeof s.processedSeq === 'number' ? s.processedSeq : -1);
}

/** Title from the first user message: first line, whitespace collapsed, at most 40 characters. */
export function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0]!.replace(/\s+/g, ' ');
  const chars = Array.from(line);
  return chars.length > TITLE_CHARS ? `${chars.slice(0, TITLE_CHARS - 1).join('')}…` : line;
}

/** Creates the store over `db`. `now` is the clock in ms. */
export function createConversationStore(db: RecallDB, now: () => number = Date.now): ConversationStore {
  const store: ConversationStore = {
    async list(namespace) {
      const all = (
        namespace === undefined
          ? await db.conversations.orderBy('updatedAt').reverse().toArray()
          : (await db.conversations.where('namespace').equals(namespace).toArray()).sort((a, b) => b.updatedAt - a.updatedAt)
      ).filter((c) => !c.temporary);
      return Promise.all(
        all.map(async (c) => ({
          id: c.id,
          title: c.title,
          updatedAt: c.updatedAt,
          messageCount: await db.messages.where('conversationId').equals(c.id).count(),
        })),
      );
    },
    search: (query, namespace) => searchConversations(db, query, undefined, namespace),
    snippets: (ids) => messageSnippets(db, ids),
    get: (id) => db.conversations.get(id),
    async require(id) {
      const c = await db.conversations.get(id);
      if (!c) throw new MemoryError('conversation_not_found', `Unknown conversation ${id}`);
      return c;
    },
    async create({ title, strategy, namespace, temporary }) {
      const t = now();
      const record: ConversationRecord = {
        id: crypto.randomUUID(),
        title: title?.trim() ?? UNTITLED,
        namespace: namespace ?? DEFAULT_NAMESPACE,
        strategy,
        createdAt: t,
        updatedAt: t,
        ...(temporary ? { temporary: true as const } : {}),
      };
      await db.conversations.add(record);
      return record;
    },
    async update(id, patch) {
      return db.transaction('rw', db.conversations, async () => {
        const c = await store.require(id);
        const next = {
          ...c,
          ...(patch.title !== undefined ? { title: patch.title.trim() } : {}),
          ...(patch.strategy ? { strategy: patch.strategy } : {}),
        };
        await db.conversations.put(next);
        return next;
      });
    },
    async delete(id) {
      await db.transaction('rw', [db.conversations, db.messages, db.promptTraces, db.strategyState, db.entities], async () => {
        await db.messages.where('conversationId').equals(id).delete();
        await db.promptTraces.where('conversationId').equals(id).delete();
        await db.strategyState.where('conversationId').equals(id).delete();
        await db.entities.where('conversationId').equals(id).delete();
        await db.conversations.delete(id);
      });
    },
    async deleteTemporary() {
      const ids = (await db.conversations.toArray()).filter((c) => c.temporary).map((c) => c.id);
      for (const id of ids) await store.delete(id);
      return ids;
    },
    messages: (conversationId) => db.messages.where('[conversationId+seq]').between([conversationId, -Infinity], [conversationId, Infinity]).toArray(),
    async append(message) {
      return db.transaction('rw', [db.messages, db.conversations], async () => {
        const conversation = await store.require(message.conversationId);
        const last = await db.messages.where('[conversationId+seq]').between([message.conversationId, -Infinity], [message.conversationId, Infinity]).last();
        const record: MessageRecord = { ...message, seq: (last?.seq ?? -1) + 1 };
        await db.messages.add(record);
        const title = conversation.title || (message.role === 'user' ? titleFrom(message.content) : conversation.title);
        // The row read above, in this transaction: written back whole (`update` would read it again through a cursor).
        await db.conversations.put({ ...conversation, updatedAt: now(), title });
        return record;
      });
    },
    async truncate(conversationId, fromSeq) {
      return db.transaction('rw', [db.conversations, db.messages, db.promptTraces, db.strategyState, db.entities], async () => {
        await store.require(conversationId);
        const range = db.messages.where('[conversationId+seq]').between([conversationId, fromSeq], [conversationId, Infinity]);
        const ids = (await range.primaryKeys()) as string[];
        await range.delete();
        await db.promptTraces.bulkDelete(ids);
        const states = await db.strategyState.where('conversationId').equals(conversationId).toArray();
        const stale = states.filter((s) => stateWatermark(s.state) >= fromSeq).map((s): [string, StrategyKind] => [s.conversationId, s.strategy]);
        await db.strategyState.bulkDelete(stale);
        await db.entities
          .where('conversationId')
          .equals(conversationId)
          .filter((e) => e.lastSeenSeq >= fromSeq)
          .delete();
        await db.conversations.update(conversationId, { updatedAt: now() });
        return ids;
      });
    },
  };
  return store;
}

/** Control over the change events of `withChangeEvents`. */
export interface ConversationEvents {
  /**
   * Holds the change events back until the returned release is called (idempotent; holds nest):
   * a chat turn holds them while it builds its prompt, so the panels' refresh reads (the list,
   * the open conversation) run during generation instead of competing with the prompt's reads.
   */
  holdEvents(): () => void;
}

/**
 * The same store, calling `onChange(conversationId)` after every change it makes: create,
 * update (rename, strategy), delete, append (each stored message), truncate (replaced turns). The core broadcasts these as
 * `event.conversations`, so every open panel — one reopened while a reply was streaming, or a
 * second window's — refreshes its list and the conversation it shows. A throwing listener does
 * not undo or fail the change. While a `holdEvents` is in force, the changes are announced when
 * the last hold is released, once per conversation, in the order they were first made.
 */
export function withChangeEvents(store: ConversationStore, onChange: (conversationId: string) => void): ConversationStore & ConversationEvents {
  let holds = 0;
  const held = new Set<string>();
  const announce = (id: string) => {
    try {
      onChange(id);
    } catch (error) {
      console.warn('[conversations] change listener failed:', error);
    }
  };
  const tell = (id: string) => {
    if (holds > 0) held.add(id);
    else announce(id);
  };
  return {
    ...store,
    holdEvents() {
      holds += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds -= 1;
        if (holds > 0) return;
        const ids = [...held];
        held.clear();
        ids.forEach(announce);
      };
    },
    async create(input) {
      const record = await store.create(input);
      tell(record.id);
      return record;
    },
    async update(id, patch) {
      const record = await store.update(id, patch);
      tell(id);
      return record;
    },
    async delete(id) {
      await store.delete(id);
      tell(id);
    },
    async deleteTemporary() {
      const ids = await store.deleteTemporary();
      ids.forEach(tell);
      return ids;
    },
    async append(message) {
      const record = await store.append(message);
      tell(record.conversationId);
      return record;
    },
    async truncate(conversationId, fromSeq) {
      const ids = await store.truncate(conversationId, fromSeq);
      tell(conversationId);
      return ids;
    },
  };
}
