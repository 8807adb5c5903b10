/**
 * Batched reads by id, shared by the panel's caches that every item of a list fills for itself
 * (the answer sources of each reply, the "From …" message of each memory): every `load` call of
 * the same microtask joins one read, which asks the core in requests of at most `perRequest` ids.
 * The results of a read are stored all at once; a read that fails stores nothing (those ids stay
 * unread, and the next `load` asks again).
 */

/** How a `BatchedReads` asks for ids and where it keeps what it read. */
export interface BatchedReadsOptions<V> {
  /** Most ids in one request (the core's limit for that request). */
  perRequest: number;
  /** Whether `id` was read already (found or not); such ids are not asked for again. */
  isRead(id: string): boolean;
  /** Asks the core for `ids` (at most `perRequest`): the found values by id; an id it lacks was not found. May throw (then nothing is stored). */
  read(ids: string[]): Promise<Map<string, V>>;
  /** Keeps the results of one read: for every id asked, its value, or `null` when the core did not find it. */
  store(results: Record<string, V | null>): void;
}

/** See module doc. */
export class BatchedReads<V> {
  readonly #options: BatchedReadsOptions<V>;
  /** Ids asked for since the last read started. */
  readonly #wanted = new Set<string>();
  /** The read about to start (joined by `load` calls of this microtask), or `null`. */
  #reading: Promise<void> | null = null;

  constructor(options: BatchedReadsOptions<V>) {
    this.#options = options;
  }

  /**
   * Reads the ids of `ids` not read yet; calls in the same microtask share one read. Never
   * rejects (a failed read leaves its ids unread). @returns once the read that holds them is done.
   */
  load(ids: readonly string[]): Promise<void> {
    for (const id of ids) if (!this.#options.isRead(id)) this.#wanted.add(id);
    if (this.#wanted.size === 0) return this.#reading ?? Promise.resolve();
    this.#reading ??= Promise.resolve().then(async () => {
      const wanted = [...this.#wanted];
      this.#wanted.clear();
      this.#reading = null;
      try {
        const found = new Map<string, V>();
        for (let i = 0; i < wanted.length; i += this.#options.perRequest) {
          for (const [id, value] of await this.#options.read(wanted.slice(i, i + this.#options.perRequest))) found.set(id, value);
        }
        this.#options.store(Object.fromEntries(wanted.map((id) => [id, found.get(id) ?? null])));
      } catch {
        // Left unread: the next `load` asks again.
      }
    });
    return this.#reading;
  }
}
