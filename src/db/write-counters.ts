/**
 * Write counters, kept by one DBCore middleware (`writeCountersMiddleware`, installed by
 * `RecallDB`): every write request (add, put, delete, range delete) that reaches IndexedDB through
 * the database bumps the counters watching its table and its keys (`WriteCounters.watch`) when it
 * is issued and again when it settles. A reader that caches what it read (`readThrough`: the
 * core's settings and profile lines, read on every chat turn) notes the counter before its read
 * and keeps the result under that count, trusted while the counter has not moved: a write begun or
 * ended since — during the read too — makes it read again. A write begun before the read but
 * settled after it moves the counter when it settles. This holds because the offscreen document is
 * the only context that opens the database (one `RecallDB`), so every write passes here; a read
 * transaction created after a write's transaction sees that write (IndexedDB orders transactions
 * with overlapping scopes), and a write that aborts after its request settled leaves the rows as
 * a later read finds them.
 */
import type { DBCore, DBCoreMutateRequest, DBCoreTable, Middleware } from 'dexie';

/** A counter of some writes of one table (`WriteCounters.watch`). */
export interface WriteCounter {
  /** Changes whenever a write it watches is issued or settles. */
  count(): number;
}

/** The counters (see module doc). */
export class WriteCounters {
  private readonly watchers = new Map<string, Map<string, { relevant: (key: unknown) => boolean; n: number }>>();

  /**
   * The counter `name` of `table`'s writes that may touch a key `relevant` accepts (a range delete
   * always counts): e.g. the settings rows, not the open-turn markers kept in the same table. The
   * same `name` gives the same counter (a core made again after an unlock reuses it); it counts
   * from its first `watch` on.
   */
  watch(table: string, name: string, relevant: (key: unknown) => boolean): WriteCounter {
    let byName = this.watchers.get(table);
    if (!byName) this.watchers.set(table, (byName = new Map()));
    let watcher = byName.get(name);
    if (!watcher) byName.set(name, (watcher = { relevant, n: 0 }));
    const w = watcher;
    return { count: () => w.n };
  }

  /** Bumps each counter of `table` whose keys `keys` (`null`: unknown, a range) may hold. */
  note(table: string, keys: readonly unknown[] | null): void {
    const byName = this.watchers.get(table);
    if (!byName) return;
    for (const w of byName.values()) if (keys === null || keys.some(w.relevant)) w.n += 1;
  }
}

/**
 * `read`, kept per key until `counter` moves (see module doc): a result is stored under the count
 * noted before its read. Each call gets its own `copy`, so a caller may change what it gets.
 * @throws what `read` throws (nothing is kept then).
 */
export function readThrough<K, V>(counter: WriteCounter, read: (key: K) => Promise<V>, copy: (value: V) => V): (key: K) => Promise<V> {
  const cached = new Map<K, { count: number; value: V }>();
  return async (key) => {
    const count = counter.count();
    const hit = cached.get(key);
    if (hit?.count === count) return copy(hit.value);
    const value = await read(key);
    cached.set(key, { count, value: copy(value) });
    return value;
  };
}

/** The keys a write request touches (`null` for a range delete). */
function keysOf(table: DBCoreTable, req: DBCoreMutateRequest): readonly unknown[] | null {
  if (req.type === 'deleteRange') return null;
  if (req.type === 'delete') return req.keys;
  if (req.keys) return req.keys;
  const extract = table.schema.primaryKey.extractKey;
  return extract ? req.values.map((v) => extract(v)) : null;
}

/** The middleware (install with `db.use(writeCountersMiddleware(counters))`, before the database opens). */
export function writeCountersMiddleware(counters: WriteCounters): Middleware<DBCore> {
  return {
    stack: 'dbcore',
    name: 'WriteCounters',
    create(down: DBCore): DBCore {
      return {
        ...down,
        table(name: string): DBCoreTable {
          const table = down.table(name);
          return {
            ...table,
            mutate(req) {
              const keys = keysOf(table, req);
              counters.note(name, keys);
              return table.mutate(req).then(
                (result) => {
                  counters.note(name, keys);
                  return result;
                },
                (error: unknown) => {
                  counters.note(name, keys);
                  throw error;
                },
              );
            },
          };
        },
      };
    },
  };
}
