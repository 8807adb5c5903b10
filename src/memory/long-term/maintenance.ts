/**
 * Long-term memory upkeep, run as a background job (`ltm.maintenance`, see `./jobs.ts`):
 * 1. Expire: memories whose validity end (`validUntil`) has passed but are still marked current
 *    are closed (history event `EXPIRE`); undated, unpinned events not created, updated or
 *    accessed for `staleEventDays` expire too ("events expire, profile facts do not").
 * 2. Retention: episodic memories (stored exchanges) older than `episodicRetentionDays` are
 *    deleted unless pinned (history event `DELETE`, source `maintenance:retention`). The
 *    conversations themselves are not touched.
 * 3. Merge near-duplicates: current memories of the same namespace and kind whose embeddings have
 *    cosine ≥ `nearDuplicateCosine` (or the same normalized text) are merged into one survivor
 *    (pinned first, then higher importance, more accesses, newer). The survivor keeps the richer
 *    text (unless it is pinned: then its own words), the highest importance, the pin and every
 *    source message id (event `MERGE`); the other is deleted (event `DELETE`, source `maintenance:merged-into:<survivor id>`).
 * Every change goes through the store, so history and indexes stay in sync. Re-running is harmless.
 */
import type { RecallDB } from '../../db/schema';
import { FACT_KINDS, type MemoryKind } from '../../model/memory';
import type { MemoryRecord } from '../../model/records';
import type { LongTermStore } from './types';
import { contentTerms, normalizeForCompare, saysMore } from '../../text/terms';
import { cosineSimilarity } from './retrieval/vector';

const DAY_MS = 86_400_000;

/** Kinds merged by maintenance (episodic rounds and summaries are never merged). */
const MERGEABLE: ReadonlySet<MemoryKind> = new Set(FACT_KINDS);

/** Options of one maintenance run. Times in ms epoch; durations in days. */
export interface MaintenanceOptions {
  now: number;
  /** Delete unpinned episodic memories older than this many days; `null` keeps them forever. */
  episodicRetentionDays: number | null;
  /** Expire undated unpinned events untouched for this many days (default 30); `null` never. */
  staleEventDays?: number | null;
  /** Cosine at or above which two memories are merged (default 0.95). */
  nearDuplicateCosine?: number;
  /** Only this namespace (default: all). */
  namespace?: string;
  /**
   * Merge step: only memories changed at or after this time (ms) are compared with the others —
   * pairs of older memories were compared by the previous run. Default: all.
   */
  mergeSince?: number;
  /** Called every 100 merge seeds with the `updatedAt` all earlier seeds had (resume point for `mergeSince`). */
  onMergeProgress?: (processedThrough: number) => Promise<void> | void;
  signal?: AbortSignal;
  /** Progress 0..1 over the three steps. */
  onProgress?: (fraction: number) => void;
}

/** What a maintenance run changed (counts of memories). */
export interface MaintenanceReport {
  expired: number;
  /** Episodic memories deleted by the retention setting. */
  dropped: number;
  /** Memories merged into another one (and deleted). */
  merged: number;
}

function checkAbort(signal?: AbortSignal) {
  if (signal?.aborted) throw signal.reason ?? new DOMException('Maintenance aborted', 'AbortError');
}

/** Survivor order of a merge: pinned, importance, access count, most recently updated. */
function better(a: MemoryRecord, b: MemoryRecord): number {
  return Number(b.pinned) - Number(a.pinned) || b.importance - a.importance || b.accessCount - a.accessCount || b.updatedAt - a.updatedAt;
}

/** Runs the three steps (see module doc). @throws store errors; an AbortError when `signal` aborts. */
export async function runMaintenance(db: RecallDB, store: LongTermStore, options: MaintenanceOptions): Promise<MaintenanceReport> {
  const report: MaintenanceReport = { expired: 0, dropped: 0, merged: 0 };
  const { now } = options;
  const inScope = (m: MemoryRecord) => options.namespace === undefined || m.namespace === options.namespace;

  // 1. Expire.
  const staleDays = options.staleEventDays === undefined ? 30 : options.staleEventDays;
  // One read of the table (no `current` index since schema v4: nearly every row is current).
  const current = (await db.memories.toArray()).filter((m) => m.current === 1 && inScope(m));
  for (const m of current) {
    checkAbort(options.signal);
    const ended = m.validUntil !== null && m.validUntil <= now;
    const lastTouched = Math.max(m.createdAt, m.updatedAt, m.lastAccessedAt ?? 0);
    const stale = staleDays !== null && m.kind === 'event' && !m.pinned && m.validUntil === null && lastTouched < now - staleDays * DAY_MS;
    if (!ended && !stale) continue;
    await store.update(m.id, { validUntil: ended ? m.validUntil : now }, 'maintenance', 'EXPIRE');
    report.expired += 1;
  }
  options.onProgress?.(1 / 3);

  // 2. Retention of episodic memories.
  if (options.episodicRetentionDays !== null) {
    const cutoff = now - options.episodicRetentionDays * DAY_MS;
    const old = (await db.memories.toArray()).filter((m) => m.kind === 'episodic' && inScope(m) && !m.pinned && m.createdAt < cutoff);
    for (let i = 0; i < old.length; i += 100) {
      checkAbort(options.signal);
      const ids = old.slice(i, i + 100).map((m) => m.id);
      await store.remove(ids, 'DELETE', 'maintenance:retention');
      report.dropped += ids.length;
    }
  }
  options.onProgress?.(2 / 3);

  // 3. Merge near-duplicates.
  report.merged = await mergeNearDuplicates(db, store, options);
  options.onProgress?.(1);
  return report;
}

/**
 * Step 3 (see module doc). Seeds are the changed memories, oldest change first; each is compared
 * with its nearest neighbours (any age) through the store's vector index and with memories of the
 * same text hash. Records are read once up front (one Dexie query per seed: the neighbour lookup),
 * and `onMergeProgress` is told how far the seeds got, so a preempted run can resume.
 */
async function mergeNearDuplicates(db: RecallDB, store: LongTermStore, options: MaintenanceOptions): Promise<number> {
  const threshold = options.nearDuplicateCosine ?? 0.95;
  const all = (await db.memories.toArray()).filter(
    (m) => m.current === 1 && MERGEABLE.has(m.kind) && (options.namespace === undefined || m.namespace === options.namespace),
  );
  const byId = new Map(all.map((m) => [m.id, m]));
  const byHash = new Map<string, MemoryRecord[]>();
  for (const m of all) byHash.set(m.hash, [...(byHash.get(m.hash) ?? []), m]);
  const seeds = all.filter((m) => options.mergeSince === undefined || m.updatedAt >= options.mergeSince).sort((a, b) => a.updatedAt - b.updatedAt);
  let merged = 0;
  for (const [i, seed] of seeds.entries()) {
    checkAbort(options.signal);
    if (i > 0 && i % 100 === 0) await options.onMergeProgress?.(seeds[i - 1]!.updatedAt);
    const first = byId.get(seed.id);
    if (!first) continue; // merged away earlier in this run
    const duplicates = new Map<string, MemoryRecord>();
    const sameKind = (other: MemoryRecord) => other.id !== first.id && other.namespace === first.namespace && other.kind === first.kind;
    // Same text hash (works without embeddings).
    for (const other of byHash.get(first.hash) ?? []) if (byId.has(other.id) && sameKind(other)) duplicates.set(other.id, other);
    if (first.embedding) {
      for (const hit of await store.nearest(first.embedding, { namespace: first.namespace, k: 6 })) {
        const other = byId.get(hit.memory.id);
        if (!other || !sameKind(other)) continue;
        const cos = other.embedding && other.embedding.length === first.embedding.length ? cosineSimilarity(first.embedding, other.embedding) : hit.similarity;
        if (cos >= threshold || normalizeForCompare(other.text) === normalizeForCompare(first.text)) duplicates.set(other.id, other);
      }
    }
    if (duplicates.size === 0) continue;
    // The best of the group survives (a neighbour may rank above the seed).
    const [survivor, ...group] = [first, ...duplicates.values()].sort(better) as [MemoryRecord, ...MemoryRecord[]];
    // A pinned survivor keeps the user's own words; otherwise, among the texts that contain
    // everything the survivor says, the one with the most content words wins.
    const richest = survivor.pinned
      ? survivor
      : group
          .filter((m) => saysMore(m.text, survivor.text))
          .reduce((best, m) => (contentTerms(m.text).length > contentTerms(best.text).length ? m : best), survivor);
    const updated = await store.update(
      survivor.id,
      {
        text: richest.text,
        importance: Math.max(survivor.importance, ...group.map((m) => m.importance)),
        pinned: survivor.pinned || group.some((m) => m.pinned),
        sourceMessageIds: [...new Set([survivor, ...group].flatMap((m) => m.sourceMessageIds))],
      },
      'maintenance',
      'MERGE',
    );
    byId.set(updated.id, updated);
    for (const other of group) {
      await store.remove([other.id], 'DELETE', `maintenance:merged-into:${survivor.id}`);
      byId.delete(other.id);
      merged += 1;
    }
  }
  return merged;
}
