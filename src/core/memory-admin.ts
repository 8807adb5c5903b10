/**
 * What the user does with long-term memory by hand in the memory manager: list and search,
 * add, correct, pin, delete. Every change goes through the `MemoryStore`, so the history and the
 * indexes stay in sync.
 */
import type { MemoryHistoryRecord, MemoryKind, MemoryRecord, RecallDB } from '../db/schema';
import type { MemoryStore, MemoryView, RetrievedMemory, RetrievalQuery } from '../memory/long-term/types';
import type { MemoryListQuery } from '../messaging/protocol';

/** The store plus its search, as created by `createMemoryStore`. */
export type SearchableMemoryStore = MemoryStore & { search(query: RetrievalQuery): Promise<RetrievedMemory[]>; rebuildIndexes(): Promise<void> };

/** Strips the embedding (vectors never leave the core). */
export function toView(memory: MemoryRecord): MemoryView {
  const { embedding: _embedding, ...view } = memory;
  return view;
}

/** See module doc. */
export interface MemoryAdmin {
  list(query: MemoryListQuery): Promise<MemoryView[]>;
  history(query: { memoryId?: string; limit?: number }): Promise<MemoryHistoryRecord[]>;
  add(input: { namespace?: string; kind: MemoryKind; text: string; pinned?: boolean }): Promise<MemoryView>;
  update(input: { id: string; text?: string; kind?: MemoryKind; pinned?: boolean; importance?: number }): Promise<MemoryView>;
  delete(id: string): Promise<void>;
}

/** Creates the admin API over the store. */
export function createMemoryAdmin(db: RecallDB, store: SearchableMemoryStore): MemoryAdmin {
  return {
    async list({ namespace = 'default', search, includeInvalid = false, kinds, limit = 200 }) {
      const wanted = (m: MemoryView) => (includeInvalid || m.current === 1) && (!kinds || kinds.includes(m.kind));
      if (search?.trim()) {
        const hits = await store.search({ text: search, namespace, k: limit, includeInvalid });
        return hits.map((h) => h.memory).filter(wanted);
      }
      const rows = await db.memories.where('namespace').equals(namespace).toArray();
      return rows
        .map(toView)
        .filter(wanted)
        .sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updatedAt - a.updatedAt)
        .slice(0, limit);
    },
    async history({ memoryId, limit = 200 }) {
      const rows = memoryId
        ? await db.memoryHistory.where('memoryId').equals(memoryId).toArray()
        : await db.memoryHistory.orderBy('at').reverse().limit(limit).toArray();
      return rows.sort((a, b) => b.at - a.at).slice(0, limit);
    },
    async add({ namespace = 'default', kind, text, pinned = true }) {
      const clean = text.trim();
      if (!clean) throw new Error('A memory needs some text');
      const { memory } = await store.add({ namespace, kind, text: clean, pinned, importance: pinned ? 0.9 : 0.5 }, 'user');
      return toView(memory);
    },
    async update({ id, text, kind, pinned, importance }) {
      const patch = {
        ...(text !== undefined ? { text: text.trim() } : {}),
        ...(kind !== undefined ? { kind } : {}),
        ...(pinned !== undefined ? { pinned } : {}),
        ...(importance !== undefined ? { importance: Math.max(0, Math.min(1, importance)) } : {}),
      };
      if (patch.text === '') throw new Error('A memory needs some text');
      const event = text === undefined && pinned !== undefined ? (pinned ? 'PIN' : 'UNPIN') : 'UPDATE';
      return toView(await store.update(id, patch, 'user', event));
    },
    async delete(id) {
      await store.remove([id], 'DELETE', 'user');
    },
  };
}
