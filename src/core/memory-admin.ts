/**
 * What the user does with long-term memory by hand in the memory manager: list and search,
 * add, correct, pin, delete. Every change goes through the `LongTermStore`, so the history and the
 * indexes stay in sync.
 */
import type { RecallDB } from '../db/schema';
import { withCreationTexts } from '../db/history';
import type { MemoryHistoryRecord, MemoryView } from '../model/records';
import type { MemoryKind } from '../model/memory';
import { toView } from '../memory/long-term/store';
import { normalizeMemoryText } from '../memory/long-term/text';
import type { LongTermStore } from '../memory/long-term/types';
import type { MemoryListQuery } from '../messaging/protocol';
import { MemoryError, MessagingError } from '../model/errors';

/** See module doc. */
export interface MemoryAdmin {
  /**
   * The memories of a namespace, at most `limit` (default 200). Without `search`: pinned first,
   * then the most recently updated. With `search`, a filter as the user types: memories whose
   * words match (the retrieval's BM25 over CJK-aware, lightly stemmed terms; no time filters, so
   * "in May" or "5月" are words here, not date ranges), best first, then memories that contain
   * the typed text anywhere (normalized: NFKC, lower case), so a partial word such as "Moch" or
   * "杭" matches too. Vector similarity is not used: every memory has a nearest neighbour, and a
   * filter must be able to say "no match". Reads no embeddings: it filters the store's catalog
   * (the index's meta columns, no row read) and the lexical index, and reads the rows it returns only.
   */
  list(query: MemoryListQuery): Promise<MemoryView[]>;
  /** History entries, newest first; a creation entry's text is derived (`withCreationTexts`: not stored since schema v4). */
  history(query: { memoryId?: string; limit?: number }): Promise<MemoryHistoryRecord[]>;
  /** `source`: the web page the text comes from ("Remember this"), kept as `sourceUrl` / `sourceTitle`. */
  add(input: { namespace: string; kind: MemoryKind; text: string; pinned?: boolean; source?: { url: string; title: string } }): Promise<MemoryView>;
  update(input: { id: string; text?: string; kind?: MemoryKind; pinned?: boolean; importance?: number }): Promise<MemoryView>;
  /**
   * Deletes a memory (history event `DELETE`, tombstone). Returns the conversation rounds
   * (episodic memories) that state the deleted fact (`roundsStating`), still stored: the UI offers
   * to remove them too, since they would bring the fact back into prompts. `[]` for a round.
   */
  delete(id: string): Promise<{ rounds: MemoryView[] }>;
}

/** Creates the admin API over the store. */
export function createMemoryAdmin(db: RecallDB, store: LongTermStore): MemoryAdmin {
  // The first listing with a search after a start sets `recall:admin.list.*` performance marks
  // (the cold-start bench's per-phase profile); later ones set none, so marks do not pile up.
  let marked = false;
  return {
    async list({ namespace, search, includeInvalid = false, kinds, limit = 200 }) {
      if (typeof namespace !== 'string' || !namespace) throw new MessagingError('bad_request', 'memory.list needs a namespace');
      const mark = !marked && Boolean(search?.trim());
      if (mark) {
        marked = true;
        performance.mark('recall:admin.list.start');
      }
      const wanted = (m: Pick<MemoryView, 'current' | 'kind'>) => (includeInvalid || m.current === 1) && (!kinds || kinds.includes(m.kind));
      // The listing runs on the index's meta columns (kind, flags, time, normalized text; no vector,
      // no catalog of every memory, no sort of all): `listIds`, pinned first, then newest.
      const where = { includeInvalid, ...(kinds ? { kinds } : {}) };
      /** Rows of `ids`, in that order (texts are read for what is shown only). */
      const rowsOf = async (ids: string[]) => (ids.length === 0 ? [] : (await db.memories.bulkGet(ids)).flatMap((r) => (r ? [toView(r)] : [])));
      if (!search?.trim()) return rowsOf(store.listIds(namespace, { ...where, limit }));
      const hits = await store.search({ text: search, namespace, k: limit, includeInvalid }, { mode: 'lexical', timeFilters: false });
      if (mark) performance.mark('recall:admin.list.searched');
      const matched = hits.map((h) => h.memory).filter(wanted);
      const needle = normalizeMemoryText(search);
      const containing =
        needle === ''
          ? []
          : store.listIds(namespace, { ...where, contains: needle, exclude: new Set(matched.map((m) => m.id)), limit: limit - matched.length });
      const listed = [...matched, ...(await rowsOf(containing))].slice(0, limit);
      if (mark) performance.mark('recall:admin.list.end');
      return listed;
    },
    async history({ memoryId, limit = 200 }) {
      const rows = memoryId
        ? await db.memoryHistory.where('memoryId').equals(memoryId).toArray()
        : await db.memoryHistory.orderBy('at').reverse().limit(limit).toArray();
      return withCreationTexts(db, rows.sort((a, b) => b.at - a.at).slice(0, limit));
    },
    async add({ namespace, kind, text, pinned = true, source }) {
      const clean = text.trim();
      if (!clean) throw new MemoryError('text_empty', 'A memory needs some text');
      const from = source?.url ? { sourceUrl: source.url.slice(0, 4096), sourceTitle: (source.title || source.url).slice(0, 1000) } : {};
      const { memory } = await store.add({ namespace, kind, text: clean, pinned, importance: pinned ? 0.9 : 0.5, ...from }, 'user');
      return toView(memory);
    },
    async update({ id, text, kind, pinned, importance }) {
      const patch = {
        ...(text !== undefined ? { text: text.trim() } : {}),
        ...(kind !== undefined ? { kind } : {}),
        ...(pinned !== undefined ? { pinned } : {}),
        ...(importance !== undefined ? { importance: Math.max(0, Math.min(1, importance)) } : {}),
      };
      if (patch.text === '') throw new MemoryError('text_empty', 'A memory needs some text');
      const event = text === undefined && pinned !== undefined ? (pinned ? 'PIN' : 'UNPIN') : 'UPDATE';
      return toView(await store.update(id, patch, 'user', event));
    },
    async delete(id) {
      const record = await store.get(id);
      const rounds = record ? await store.roundsStating(record) : [];
      await store.remove([id], 'DELETE', 'user');
      return { rounds };
    },
  };
}
