/**
 * Profiles (issue 14 item 4): separate memories for, say, work and home, built on the namespace
 * every conversation, memory, tombstone and long-term job already carries. A profile is a
 * `ProfileRecord` (`id` = the namespace); the default profile (`DEFAULT_NAMESPACE`) always exists
 * (listed whether or not it has a row) and cannot be deleted. A namespace used by conversations
 * but without a row (an import from elsewhere) is listed as a profile named after it.
 *
 * The active profile is persisted in `settings` (`ACTIVE_PROFILE_KEY`); the side panel's profile
 * store mirrors it and names it in every request that lists, searches or creates (one parameter,
 * `namespace`); a request that omits it gets the persisted active profile. Retrieval, extraction
 * and memory commands follow the conversation's own namespace (`chat-service.ts`), so a turn
 * never reads another profile's memories; the long-term index keeps namespaces apart at query
 * time (per-namespace vector and meta blocks, an O(1) namespace check per lexical candidate).
 *
 * Deleting a profile removes everything of it, driven by `TABLE_PROFILE_LINK` (`db/schema.ts`):
 * its conversations with their messages, traces, short-term state and entity notes, its memories
 * through the store (`FORGET`: their history goes too), history entries that outlived their memory,
 * tombstones, jobs, open-turn markers, the active-profile setting when it names it, and the row
 * itself (last, so a delete cut short can run again). The lexical index is rebuilt afterwards, since MiniSearch keeps a discarded document's
 * terms until it vacuums and the snapshot would still hold them.
 */
import type { Table } from 'dexie';
import type { RecallDB } from '../db/schema';
import { TABLE_PROFILE_LINK } from '../db/schema';
import { MEMORY_JOB_PREFIX } from '../db/erase';
import type { JobQueue } from '../jobs/queue';
import type { LongTermStore } from '../memory/long-term/types';
import { MemoryError } from '../model/errors';
import { DEFAULT_NAMESPACE } from '../model/memory';
import { ACTIVE_PROFILE_KEY, MAX_PROFILE_NAME_CHARS, PROFILE_ID_PREFIX, profileNameKey, type ProfileDeleteReport, type ProfilesState } from '../model/profiles';
import type { MemoryHistoryRecord, ProfileRecord } from '../model/records';
import { OPEN_TURN_PREFIX } from './chat-service';
import { REVIEW_SETTING_PREFIX } from '../memory/long-term/review';
import { ABOUT_ME_KEY_PREFIX } from '../memory/long-term/profile-summary';

/** Source recorded for the memories a profile delete removes. */
export const PROFILE_DELETE_SOURCE = 'profile:delete';
/** History source of the memories "Erase all memories" removes from one profile (their history goes too). */
export const PROFILE_ERASE_SOURCE = 'profile:erase-memories';

/** Creates, renames, switches and deletes profiles (see module doc). */
export interface ProfileService {
  /** Every profile (the default first, then by creation time) and the active one. */
  list(): Promise<ProfilesState>;
  /** The active profile's id; the default one when the stored id is no profile (deleted, erased). */
  activeId(): Promise<string>;
  /**
   * `namespace` when given (it must be a profile), else the active profile's id.
   * @throws MemoryError('profile_not_found') for a namespace that is no profile.
   */
  resolve(namespace?: string): Promise<string>;
  /**
   * Adds a profile named `name` (trimmed; English, Chinese, any script).
   * @throws MemoryError `profile_name_empty`, `profile_name_too_long` (over `MAX_PROFILE_NAME_CHARS`
   *   code points) or `profile_name_taken` (another profile has that name by `profileNameKey`).
   */
  create(name: string): Promise<ProfileRecord>;
  /** Renames profile `id` (the default one too). @throws as `create`, and `profile_not_found`. */
  rename(id: string, name: string): Promise<ProfileRecord>;
  /** Makes `id` the active profile (persisted). @throws MemoryError('profile_not_found'). */
  switchTo(id: string): Promise<ProfilesState>;
  /**
   * Deletes profile `id` and everything of it (see module doc); the other profiles are not
   * touched. When it was active, the default profile becomes active.
   * @throws MemoryError `profile_default_kept` for the default profile, `profile_not_found`.
   */
  delete(id: string): Promise<ProfileDeleteReport>;
}

/** What the profile service needs. */
export interface ProfileServiceDeps {
  db: RecallDB;
  store: LongTermStore;
  jobs: JobQueue;
  now?: () => number;
  /** Called after a delete changed conversations (the core broadcasts `event.conversations`). */
  onDeleted?: () => void;
  /** Called with the new state after every create, rename, switch and delete (the core broadcasts `event.profiles`). A throwing listener does not undo or fail the change. */
  onChanged?: (state: ProfilesState) => void;
}

const DEFAULT_PROFILE: ProfileRecord = { id: DEFAULT_NAMESPACE, name: '', createdAt: 0 };

/** The name trimmed (whitespace collapsed), or the refusal. */
function cleanName(name: string): string {
  const clean = (typeof name === 'string' ? name : '').normalize('NFC').replace(/\s+/gu, ' ').trim();
  if (!clean) throw new MemoryError('profile_name_empty', 'A profile needs a name');
  const chars = Array.from(clean).length;
  if (chars > MAX_PROFILE_NAME_CHARS) {
    throw new MemoryError('profile_name_too_long', `A profile name is at most ${MAX_PROFILE_NAME_CHARS} characters`, {
      params: { chars, maxChars: MAX_PROFILE_NAME_CHARS },
    });
  }
  return clean;
}

/** Creates the profile service over `deps.db`. */
export function createProfileService(deps: ProfileServiceDeps): ProfileService {
  const { db, store, jobs } = deps;
  const now = deps.now ?? Date.now;

  async function all(): Promise<ProfileRecord[]> {
    const rows = await db.profiles.toArray();
    const byId = new Map(rows.map((r) => [r.id, r]));
    if (!byId.has(DEFAULT_NAMESPACE)) byId.set(DEFAULT_NAMESPACE, DEFAULT_PROFILE);
    // Namespaces in use without a row (imported from elsewhere): listed under their own string.
    for (const ns of (await db.conversations.orderBy('namespace').uniqueKeys()) as string[]) {
      if (typeof ns === 'string' && ns && !byId.has(ns)) byId.set(ns, { id: ns, name: ns, createdAt: 0 });
    }
    const rest = [...byId.values()].filter((p) => p.id !== DEFAULT_NAMESPACE).sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
    return [byId.get(DEFAULT_NAMESPACE)!, ...rest];
  }

  async function find(id: string): Promise<ProfileRecord> {
    const found = (await all()).find((p) => p.id === id);
    if (!found) throw new MemoryError('profile_not_found', `Unknown profile ${id}`);
    return found;
  }

  function assertFree(profiles: ProfileRecord[], name: string, except: string | null): void {
    const key = profileNameKey(name);
    if (profiles.some((p) => p.id !== except && p.name && profileNameKey(p.name) === key)) {
      throw new MemoryError('profile_name_taken', 'Another profile has this name');
    }
  }

  async function activeIn(profiles: ProfileRecord[]): Promise<string> {
    const stored = (await db.settings.get(ACTIVE_PROFILE_KEY))?.value;
    return typeof stored === 'string' && profiles.some((p) => p.id === stored) ? stored : DEFAULT_NAMESPACE;
  }

  /** Tells `onChanged` the state after a change; returns `value`. */
  async function changed<T>(value: T): Promise<T> {
    if (!deps.onChanged) return value;
    try {
      deps.onChanged(await service.list());
    } catch (error) {
      console.warn('[profiles] change listener failed:', error);
    }
    return value;
  }

  const service: ProfileService = {
    async list() {
      const profiles = await all();
      return { profiles, activeId: await activeIn(profiles) };
    },
    async activeId() {
      return activeIn(await all());
    },
    async resolve(namespace) {
      if (namespace === undefined) return service.activeId();
      if (namespace === DEFAULT_NAMESPACE) return namespace;
      return (await find(namespace)).id;
    },
    async create(name) {
      const clean = cleanName(name);
      const record = await db.transaction('rw', [db.profiles, db.conversations], async () => {
        assertFree(await all(), clean, null);
        const created: ProfileRecord = { id: `${PROFILE_ID_PREFIX}${crypto.randomUUID()}`, name: clean, createdAt: now() };
        await db.profiles.add(created);
        return created;
      });
      return changed(record);
    },
    async rename(id, name) {
      const clean = cleanName(name);
      const renamed = await db.transaction('rw', [db.profiles, db.conversations], async () => {
        const profiles = await all();
        const found = profiles.find((p) => p.id === id);
        if (!found) throw new MemoryError('profile_not_found', `Unknown profile ${id}`);
        assertFree(profiles, clean, id);
        const record = { ...found, name: clean };
        await db.profiles.put(record);
        return record;
      });
      return changed(renamed);
    },
    async switchTo(id) {
      await find(id);
      await db.settings.put({ key: ACTIVE_PROFILE_KEY, value: id });
      return changed(await service.list());
    },
    async delete(id) {
      if (id === DEFAULT_NAMESPACE) throw new MemoryError('profile_default_kept', 'The default profile cannot be deleted');
      await find(id);
      // No job of this profile may run (and write) while its rows go; stop() re-queues a running one.
      await jobs.stop();
      const removed: Record<string, number> = {};
      try {
        const memoryIds = (await db.memories.filter((m) => m.namespace === id).primaryKeys()) as string[];
        if (memoryIds.length > 0) await store.remove(memoryIds, 'FORGET', PROFILE_DELETE_SOURCE);
        removed.memories = memoryIds.length;
        Object.assign(removed, await deleteRows(db, id, new Set(memoryIds)));
        // Discarded documents keep their terms in MiniSearch (and its snapshot) until a vacuum: rebuild.
        await store.rebuildIndexes();
      } finally {
        await jobs.start();
      }
      deps.onDeleted?.();
      for (const key of Object.keys(removed)) if (removed[key] === 0) delete removed[key];
      return changed({ removed, activeId: await service.activeId() });
    },
  };
  return service;
}

/**
 * Deletes the rows of every table but the store's that belong to namespace `ns`, by
 * `TABLE_PROFILE_LINK`, in one transaction; the profile row goes last. `memoryIds`: the memories
 * of `ns` (already removed from the store). @returns rows removed per table.
 * @throws Error naming a table `TABLE_PROFILE_LINK` does not classify (nothing deleted then).
 */
async function deleteRows(db: RecallDB, ns: string, memoryIds: ReadonlySet<string>): Promise<Record<string, number>> {
  for (const table of db.tables) {
    if (!(table.name in TABLE_PROFILE_LINK)) throw new Error(`Table ${table.name} has no TABLE_PROFILE_LINK entry`);
  }
  const removed: Record<string, number> = {};
  // The store's tables are read (which memories still exist), never written here.
  const tables = db.tables.filter((t) => TABLE_PROFILE_LINK[t.name] !== 'none');
  await db.transaction('rw', tables, async () => {
    const conversationIds = new Set((await db.conversations.where('namespace').equals(ns).primaryKeys()) as string[]);
    const messageIds = new Set(
      (await db.messages
        .where('conversationId')
        .anyOf([...conversationIds])
        .primaryKeys()) as string[],
    );
    const keysOf: Record<'namespace' | 'conversationId' | 'memoryId' | 'messageId', ReadonlySet<string>> = {
      namespace: new Set([ns]),
      conversationId: conversationIds,
      memoryId: memoryIds,
      messageId: messageIds,
    };
    const byField = async (table: Table, field: keyof typeof keysOf) => {
      const keys = keysOf[field];
      if (keys.size === 0) return 0;
      const indexed = table.schema.primKey.keyPath === field || table.schema.indexes.some((i) => i.keyPath === field);
      const rows = indexed ? table.where(field).anyOf([...keys]) : table.filter((row: Record<string, unknown>) => keys.has(row[field] as string));
      return rows.delete();
    };
    // Conversations last among the rows that name them (the sets above are already read).
    const ordered = [...tables].sort((a, b) => Number(a.name === 'conversations') - Number(b.name === 'conversations'));
    for (const table of ordered) {
      const link = TABLE_PROFILE_LINK[table.name]!;
      if (link === 'profile' || link === 'store') continue;
      let count = 0;
      if (typeof link === 'object') count = await byField(table, link.field);
      else if (link === 'history') count = await deleteHistory(db, ns, memoryIds, conversationIds);
      else if (link === 'jobs') {
        count = await db.jobs
          .filter((job) => {
            const p = (job.payload ?? {}) as { namespace?: unknown; conversationId?: unknown };
            return p.namespace === ns || (typeof p.conversationId === 'string' && conversationIds.has(p.conversationId));
          })
          .delete();
      } else if (link === 'settings') {
        const keys = [...messageIds].map((id) => OPEN_TURN_PREFIX + id);
        // The active-profile row when it names this profile (the default one is active again).
        if ((await db.settings.get(ACTIVE_PROFILE_KEY))?.value === ns) keys.push(ACTIVE_PROFILE_KEY);
        // Its review switch and its "what Recall knows about me" profile (keyed by namespace).
        keys.push(REVIEW_SETTING_PREFIX + ns, ABOUT_ME_KEY_PREFIX + ns);
        count = (await db.settings.bulkGet(keys)).filter(Boolean).length;
        await db.settings.bulkDelete(keys);
      }
      removed[table.name] = count;
    }
    removed.profiles = (await db.profiles.get(ns)) ? 1 : 0;
    await db.profiles.delete(ns);
  });
  return removed;
}

/**
 * Deletes the history of namespace `ns`: entries of its memories, and entries that outlived their
 * memory (a `DELETE` keeps them) when their `DELETE` entry names `ns`, or — older entries without
 * the namespace — when any entry's source is one of its conversations (`conversation:<id>`,
 * `revision:<id>`). An outlived entry of the user's own adding in an older version names neither
 * and stays (it cannot be told apart from another profile's).
 */
async function deleteHistory(db: RecallDB, ns: string, memoryIds: ReadonlySet<string>, conversationIds: ReadonlySet<string>): Promise<number> {
  const fromConversation = (source: string) => {
    const at = source.indexOf(':');
    return at > 0 && conversationIds.has(source.slice(at + 1));
  };
  const doomed = new Set(memoryIds);
  const outlived = new Map<string, MemoryHistoryRecord[]>();
  const live = new Set((await db.memories.toCollection().primaryKeys()) as string[]);
  await db.memoryHistory.each((h) => {
    if (doomed.has(h.memoryId) || live.has(h.memoryId)) return;
    const list = outlived.get(h.memoryId) ?? [];
    list.push(h);
    outlived.set(h.memoryId, list);
  });
  for (const [memoryId, entries] of outlived) {
    const named = entries.find((h) => h.namespace !== undefined)?.namespace;
    if (named === ns || (named === undefined && entries.some((h) => fromConversation(h.source)))) doomed.add(memoryId);
  }
  if (doomed.size === 0) return 0;
  return db.memoryHistory
    .where('memoryId')
    .anyOf([...doomed])
    .delete();
}

/**
 * Erases the long-term memory of namespace `ns` only ("Erase all memories" acts within the active
 * profile, issue 14): its memories (through the store, so its index blocks go too), their history
 * (and history that outlived its memory naming `ns`), its tombstones, feedback, suggestions, queued
 * `ltm.*` jobs and its "about me" profile. Conversations, messages, settings and every other
 * profile stay. The caller stops the job queue first and rebuilds the indexes after (discarded
 * documents keep their terms in the lexical snapshot until a vacuum).
 * @returns rows removed per table (`memories` counted before the store removed them).
 */
export async function eraseNamespaceMemories(db: RecallDB, store: LongTermStore, ns: string): Promise<Record<string, number>> {
  const memoryIds = (await db.memories.filter((m) => m.namespace === ns).primaryKeys()) as string[];
  if (memoryIds.length > 0) await store.remove(memoryIds, 'FORGET', PROFILE_ERASE_SOURCE);
  const conversationIds = new Set((await db.conversations.where('namespace').equals(ns).primaryKeys()) as string[]);
  return db.transaction('rw', [db.memories, db.memoryHistory, db.tombstones, db.feedback, db.suggestions, db.jobs, db.settings], async () => {
    const removed: Record<string, number> = { memories: memoryIds.length };
    removed.memoryHistory = await deleteHistory(db, ns, new Set(memoryIds), conversationIds);
    removed.tombstones = await db.tombstones.where('[namespace+hash]').between([ns, ''], [ns, '\uffff'], true, true).delete();
    removed.feedback = await db.feedback.filter((f) => f.namespace === ns).delete();
    removed.suggestions = await db.suggestions.where('[namespace+status]').between([ns, ''], [ns, '\uffff'], true, true).delete();
    removed.jobs = await db.jobs
      .filter((job) => {
        if (!job.type.startsWith(MEMORY_JOB_PREFIX)) return false;
        const p = (job.payload ?? {}) as { namespace?: unknown; conversationId?: unknown };
        return p.namespace === ns || (typeof p.conversationId === 'string' && conversationIds.has(p.conversationId));
      })
      .delete();
    await db.settings.delete(ABOUT_ME_KEY_PREFIX + ns);
    return removed;
  });
}
