/**
 * The store's relevance-feedback rows (`db.feedback`, schema v7): "not relevant here" on a memory
 * under a reply (see `retrieval/feedback.ts` for how ranking uses them). The rows are few (one per
 * click), so they are read once, on the first search or write, and kept in memory per namespace;
 * every write goes to Dexie first and to that copy after its commit. Rows leave with their memory
 * (`dropForMemories`, called inside the store's removal transaction) and on an undo (`remove`).
 */
import type { RecallDB } from '../../../db/schema';
import type { FeedbackRecord } from '../../../model/records';
import { MAX_MEMORY_TEXT_CHARS } from '../../../model/memory';
import { contentTerms } from '../../../text/terms';
import type { FeedbackSignal } from '../retrieval/feedback';

/** What `FeedbackBook.add` needs: the memory, the query it was marked under and where. */
export interface NewFeedback {
  memoryId: string;
  namespace: string;
  /** The user message the reply answered. */
  query: string;
  messageId: string;
  conversationId: string;
}

/** See module doc. */
export class FeedbackBook {
  readonly #db: RecallDB;
  readonly #now: () => number;
  /** Rows by namespace, once read. */
  #rows: Map<string, FeedbackRecord[]> | null = null;
  #loading: Promise<Map<string, FeedbackRecord[]>> | null = null;
  /** Bumped by `reset`. */
  #generation = 0;

  /** @param now clock (ms epoch). */
  constructor(db: RecallDB, now: () => number) {
    this.#db = db;
    this.#now = now;
  }

  /** Every row, grouped by namespace (read from Dexie the first time). */
  async #all(): Promise<Map<string, FeedbackRecord[]>> {
    if (this.#rows) return this.#rows;
    const generation = this.#generation;
    this.#loading ??= this.#db.feedback.toArray().then((rows) => {
      const byNs = new Map<string, FeedbackRecord[]>();
      for (const row of rows) byNs.set(row.namespace, [...(byNs.get(row.namespace) ?? []), row]);
      // A `reset` meanwhile (an erase) makes this read stale: the next call reads again.
      if (generation === this.#generation) {
        this.#rows = byNs;
        this.#loading = null;
      }
      return byNs;
    });
    return this.#loading;
  }

  /** The rows of `namespace` that ranking reads. */
  async signals(namespace: string): Promise<readonly FeedbackSignal[]> {
    return (await this.#all()).get(namespace) ?? [];
  }

  /** The rows recorded under assistant message `messageId`, oldest first. */
  async forMessage(messageId: string): Promise<FeedbackRecord[]> {
    const rows = await this.#db.feedback.where('messageId').equals(messageId).toArray();
    return rows.sort((a, b) => a.createdAt - b.createdAt);
  }

  /**
   * Stores one row: `input` with the query's content terms and `embedding` (L2-normalized, of
   * `embeddingModel`; `null` when no embedder was ready). The query is cut to
   * `MAX_MEMORY_TEXT_CHARS` characters. A second click on the same memory under the same message
   * returns the stored row. @returns the row.
   */
  async add(input: NewFeedback, embedding: Float32Array | null, embeddingModel: string | null): Promise<FeedbackRecord> {
    const all = await this.#all();
    const same = (all.get(input.namespace) ?? []).find((r) => r.memoryId === input.memoryId && r.messageId === input.messageId);
    if (same) return same;
    const query = input.query.slice(0, MAX_MEMORY_TEXT_CHARS);
    const row: FeedbackRecord = {
      id: crypto.randomUUID(),
      ...input,
      query,
      terms: contentTerms(query),
      embedding,
      embeddingModel: embedding ? embeddingModel : null,
      createdAt: this.#now(),
    };
    await this.#db.feedback.add(row);
    all.set(row.namespace, [...(all.get(row.namespace) ?? []), row]);
    return row;
  }

  /** Deletes row `id` (an undo). @returns whether it existed. */
  async remove(id: string): Promise<boolean> {
    const all = await this.#all();
    const row = await this.#db.feedback.get(id);
    if (!row) return false;
    await this.#db.feedback.delete(id);
    all.set(
      row.namespace,
      (all.get(row.namespace) ?? []).filter((r) => r.id !== id),
    );
    return true;
  }

  /**
   * Deletes the rows of memories `ids` from Dexie; call inside the removal's transaction (which
   * must include `db.feedback`), then `forgetMemories` once it committed.
   */
  async dropForMemories(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.#db.feedback.where('memoryId').anyOf(ids).delete();
  }

  /** Drops the in-memory rows of memories `ids` (after `dropForMemories` committed). */
  forgetMemories(ids: readonly string[]): void {
    if (!this.#rows || ids.length === 0) return;
    const gone = new Set(ids);
    for (const [ns, rows] of this.#rows)
      this.#rows.set(
        ns,
        rows.filter((r) => !gone.has(r.memoryId)),
      );
  }

  /** Forgets the in-memory copy (after an erase or a rebuild from the rows): read again on next use. */
  reset(): void {
    this.#rows = null;
    this.#loading = null;
    this.#generation += 1;
  }
}
