/**
 * "What Recall knows about me" (issue 14 item 6): the short profile of one namespace (name,
 * preferences, standing instructions), rebuilt in the background by the `ltm.profile` job from the
 * current `profile`, `instruction` and `preference` memories, stored in the settings table under
 * `aboutMe.<namespace>` (`AboutMeProfile`; erased with the user's data: not a preference key).
 * The rebuild follows every write of a source memory, whatever wrote it (extraction, an accepted
 * suggestion, "remember …", the Memory tab, an import): the store reports each committed write
 * (`MemoryStoreDeps.onWrite`) and `queueProfileRebuildsFor` queues one job per namespace touched.
 *
 * A rebuild keeps the user's lines (`pinned`: written or edited in the Memory tab) verbatim and
 * first, never brings back a generated line the user removed (`suppressed`), and fills the rest:
 * - with a loaded instruction-following model (`./llm.ts`): the model condenses the memories into
 *   short lines; each line must be grounded in the memories (the extraction guards' rules, with the
 *   memories' texts as the source), else the rules below write the profile;
 * - without one (or after an unusable reply), deterministically (`synthesizeProfile`): the memories
 *   ranked pinned first, then profile → instruction → preference, then importance, then newest;
 *   a memory whose content words are all in a line already taken (`termCoverage` ≥ 0.8) or in a
 *   pinned line is skipped; lines are added while the whole profile stays under
 *   `ABOUT_ME_MAX_TOKENS` (and `ABOUT_ME_MAX_LINES`).
 */
import { z } from 'zod';
import type { RecallDB } from '../../../db/schema';
import { readThrough } from '../../../db/write-counters';
import type { ChatEngine } from '../../../engines/types';
import { defineJob, enqueueJob } from '../../../jobs/descriptor';
import type { JobQueue } from '../../../jobs/queue';
import {
  ABOUT_ME_KEY_PREFIX,
  ABOUT_ME_MAX_LINE_CHARS,
  ABOUT_ME_MAX_LINES,
  ABOUT_ME_MAX_TOKENS,
  type AboutMeLine,
  type AboutMeProfile,
} from '../../../model/about-me';
import type { MemoryKind } from '../../../model/memory';
import type { MemoryRecord } from '../../../model/records';
import { wordPrefix } from '../../../text/cut';
import { contentTerms, termCoverage } from '../../../text/terms';
import { estimateTokens } from '../../../tokens/estimator';
import { memoryHash, normalizeMemoryText } from '../text';
import type { LongTermStore, WrittenMemory } from '../types';
import { llmProfileLines } from './llm';

/** Job type of the profile rebuild. */
export const PROFILE_JOB = 'ltm.profile';
/** Settings-table key prefix of the stored profiles (declared in `model/about-me.ts`). */
export { ABOUT_ME_KEY_PREFIX };
/** Kinds a profile is built from, in the order they rank. */
export const PROFILE_SOURCE_KINDS: readonly MemoryKind[] = ['profile', 'instruction', 'preference'];

/** The key of `namespace`'s profile in the settings table. */
export function aboutMeKey(namespace: string): string {
  return `${ABOUT_ME_KEY_PREFIX}${namespace}`;
}

/** An empty profile of `namespace` (never built). */
export function emptyProfile(namespace: string): AboutMeProfile {
  return { namespace, lines: [], suppressed: [], builtAt: null, via: null };
}

/** The stored profile of `namespace`, or an empty one. */
export async function readProfile(db: RecallDB, namespace: string): Promise<AboutMeProfile> {
  const value = (await db.settings.get(aboutMeKey(namespace)))?.value as AboutMeProfile | undefined;
  return value && Array.isArray(value.lines) ? { ...emptyProfile(namespace), ...value } : emptyProfile(namespace);
}

async function writeProfile(db: RecallDB, profile: AboutMeProfile): Promise<void> {
  await db.settings.put({ key: aboutMeKey(profile.namespace), value: profile });
}

/** A line cut to `ABOUT_ME_MAX_LINE_CHARS` at a word end, one line (newlines become spaces). */
function lineText(text: string): string {
  const flat = text.replace(/\s+/gu, ' ').trim();
  return Array.from(flat).length > ABOUT_ME_MAX_LINE_CHARS ? `${wordPrefix(flat, ABOUT_ME_MAX_LINE_CHARS - 1)}…` : flat;
}

/** `true` when every content word of `text` is already in one of `lines` (nothing new to say). */
function saysNothingNew(text: string, lines: readonly string[]): boolean {
  const terms = contentTerms(text);
  if (terms.length === 0) return true;
  const normalized = normalizeMemoryText(text);
  return lines.some((l) => normalizeMemoryText(l) === normalized || termCoverage(terms, l) >= 0.8);
}

/** Ranks source memories (module doc): pinned, kind order, importance, newest. */
function rank(a: MemoryRecord, b: MemoryRecord): number {
  return (
    Number(b.pinned) - Number(a.pinned) ||
    PROFILE_SOURCE_KINDS.indexOf(a.kind) - PROFILE_SOURCE_KINDS.indexOf(b.kind) ||
    b.importance - a.importance ||
    b.updatedAt - a.updatedAt ||
    a.id.localeCompare(b.id)
  );
}

/** Options of `synthesizeProfile`. */
export interface SynthesisOptions {
  /** Token count of a text (the active model's counter), default `estimateTokens`. */
  count?: (text: string) => number;
  /** Cap of the whole profile (tokens), default `ABOUT_ME_MAX_TOKENS`. */
  maxTokens?: number;
}

/**
 * The deterministic profile (module doc): the pinned lines of `keep` first, then one line per
 * ranked memory of `memories` (current ones of `PROFILE_SOURCE_KINDS` only) that says something
 * new and is not `suppressed`, under the token and line caps. Pure.
 * @returns the lines, pinned first; generated lines cite their memory in `sourceIds`.
 */
export function synthesizeProfile(
  memories: readonly MemoryRecord[],
  keep: readonly AboutMeLine[],
  suppressed: ReadonlySet<string>,
  options: SynthesisOptions = {},
): AboutMeLine[] {
  const sources = memories.filter((m) => m.current === 1 && PROFILE_SOURCE_KINDS.includes(m.kind)).sort(rank);
  return fillLines(
    keep,
    sources.map((m) => ({ text: m.text, sourceIds: [m.id] })),
    suppressed,
    options,
  );
}

/**
 * The pinned lines of `keep`, then each of `candidates` in order (cut to one line) that is not
 * suppressed and says something new, while the profile stays under the token and line caps.
 */
export function fillLines(
  keep: readonly AboutMeLine[],
  candidates: readonly { text: string; sourceIds: string[] }[],
  suppressed: ReadonlySet<string>,
  options: SynthesisOptions = {},
): AboutMeLine[] {
  const count = options.count ?? estimateTokens;
  const cap = options.maxTokens ?? ABOUT_ME_MAX_TOKENS;
  const lines: AboutMeLine[] = keep.filter((l) => l.pinned && l.text.trim());
  let tokens = lines.reduce((sum, l) => sum + count(`- ${l.text}\n`), 0);
  for (const c of candidates) {
    if (lines.length >= ABOUT_ME_MAX_LINES) break;
    const text = lineText(c.text);
    if (
      !text ||
      suppressed.has(memoryHash(text)) ||
      saysNothingNew(
        text,
        lines.map((l) => l.text),
      )
    )
      continue;
    const t = count(`- ${text}\n`);
    if (tokens + t > cap) continue; // a shorter one further down may still fit
    lines.push({ text, pinned: false, sourceIds: c.sourceIds });
    tokens += t;
  }
  return lines;
}

/** The current memories of `namespace` a profile is built from (catalog first: only those rows are read). */
async function sourceMemories(store: LongTermStore, namespace: string): Promise<MemoryRecord[]> {
  const entries = (await store.catalog(namespace)).filter((e) => e.current === 1 && PROFILE_SOURCE_KINDS.includes(e.kind));
  const rows = await Promise.all(entries.map((e) => store.get(e.id)));
  return rows.filter((r): r is MemoryRecord => r !== undefined);
}

/** What a rebuild needs. */
export interface ProfileDeps {
  db: RecallDB;
  store: LongTermStore;
  /** The loaded chat model, `null` for the rules only. */
  engine: ChatEngine | null;
  now?: () => number;
  signal?: AbortSignal;
}

/**
 * Rebuilds and stores the profile of `namespace` (module doc).
 * @returns the stored profile.
 * @throws the abort reason when `signal` aborts (an unusable reply or a failed model call is not an
 *   error: the rules write the profile).
 */
export async function rebuildProfile(deps: ProfileDeps, namespace: string): Promise<AboutMeProfile> {
  const now = deps.now ?? Date.now;
  const before = await readProfile(deps.db, namespace);
  const suppressed = new Set(before.suppressed);
  const memories = await sourceMemories(deps.store, namespace);
  const counter = deps.engine?.tokenCounter();
  const count = counter ? (t: string) => counter.count(t) : estimateTokens;
  let lines = synthesizeProfile(memories, before.lines, suppressed, { count });
  let via: AboutMeProfile['via'] = 'rules';
  if (deps.engine?.isLoaded() && memories.length > 0) {
    // A failed model call is no reason to keep an old profile: the rules write it (an abort still stops the job).
    const generated = await llmProfileLines(deps.engine, memories, { ...(deps.signal ? { signal: deps.signal } : {}) }).catch((error: unknown) => {
      if (deps.signal?.aborted) throw error;
      return null;
    });
    if (generated) {
      const fromModel = fillLines(
        before.lines,
        generated.map((text) => ({ text, sourceIds: [] })),
        suppressed,
        { count },
      );
      if (fromModel.some((l) => !l.pinned)) {
        lines = fromModel;
        via = 'llm';
      }
    }
  }
  const profile: AboutMeProfile = { namespace, lines, suppressed: [...suppressed], builtAt: now(), via };
  await writeProfile(deps.db, profile);
  return profile;
}

/**
 * Stores the user's edit of the profile: `lines` as shown after editing (`pinned` set on every
 * line the user wrote or changed). A generated line that is gone is suppressed (not brought back
 * by a rebuild). Blank lines are dropped; lines are cut to `ABOUT_ME_MAX_LINE_CHARS`.
 * @returns the stored profile.
 */
export async function saveProfileEdit(db: RecallDB, namespace: string, lines: readonly { text: string; pinned: boolean }[]): Promise<AboutMeProfile> {
  const before = await readProfile(db, namespace);
  const kept = lines.map((l) => ({ text: lineText(l.text), pinned: l.pinned })).filter((l) => l.text);
  const keptHashes = new Set(kept.map((l) => memoryHash(l.text)));
  const removed = before.lines.filter((l) => !l.pinned && !keptHashes.has(memoryHash(l.text))).map((l) => memoryHash(l.text));
  const sources = new Map(before.lines.map((l) => [memoryHash(l.text), l.sourceIds]));
  const profile: AboutMeProfile = {
    ...before,
    lines: kept.map((l) => ({ ...l, sourceIds: l.pinned ? [] : (sources.get(memoryHash(l.text)) ?? []) })),
    suppressed: [...new Set([...before.suppressed, ...removed])],
  };
  await writeProfile(db, profile);
  return profile;
}

/** The profile lines of `namespace` for the prompt (`[]` when there is none). */
export async function profileLinesForPrompt(db: RecallDB, namespace: string): Promise<string[]> {
  return (await readProfile(db, namespace)).lines.map((l) => l.text);
}

/**
 * `profileLinesForPrompt`, kept per namespace until a write touches any profile row
 * (`aboutMe.*` in `db.settings`, whoever writes it: the rebuild job, an edit, an import, an erase;
 * `db.writes`): every chat turn reads its profile's lines. Returns a copy each call.
 */
export function createProfileLinesReader(db: RecallDB): (namespace: string) => Promise<string[]> {
  const writes = db.writes.watch('settings', 'profiles', (key) => typeof key === 'string' && key.startsWith(ABOUT_ME_KEY_PREFIX));
  return readThrough(
    writes,
    (namespace: string) => profileLinesForPrompt(db, namespace),
    (lines) => [...lines],
  );
}

/** What `ltm.profile` needs (a subset of the long-term jobs' deps, `LongTermJobDeps`). */
export interface ProfileJobDeps {
  db: RecallDB;
  store: LongTermStore;
  /** The chat engine, `null` while none is loaded. */
  engine: () => ChatEngine | null;
  jobs: JobQueue;
  now?: () => number;
}

/**
 * `ltm.profile` (payload `{ namespace }`): rebuilds that profile (`rebuildProfile`), with the
 * loaded chat model when there is one (else the rules); 3 attempts; one queued per namespace.
 */
export const profileJob = defineJob<{ namespace: string }, ProfileJobDeps>({
  type: PROFILE_JOB,
  payload: z.object({ namespace: z.string().min(1) }),
  invalidPayload: 'fail',
  maxAttempts: 3,
  dedupeKey: ({ namespace }) => `${PROFILE_JOB}:${namespace}`,
  async run({ namespace }, { signal }, deps) {
    const engine = deps.engine();
    await rebuildProfile(
      { db: deps.db, store: deps.store, engine: engine?.isLoaded() ? engine : null, signal, ...(deps.now ? { now: deps.now } : {}) },
      namespace,
    );
  },
});

/** Queues a rebuild of `namespace`'s profile (deduplicated while one is queued). */
export async function queueProfileRebuild(jobs: JobQueue, namespace: string): Promise<void> {
  await enqueueJob(jobs, profileJob, { namespace });
}

/**
 * History events of a source memory that change no profile line: `MERGE` only adds source
 * message ids (a repeated round). Every other event can change what a profile says or how its
 * lines rank (text, kind, pinned, importance, validity).
 */
const EVENTS_WITHOUT_PROFILE_CHANGE: ReadonlySet<WrittenMemory['event']> = new Set(['MERGE']);

/**
 * The store's write listener (`MemoryStoreDeps.onWrite`, wired by `composeLongTermMemory`):
 * queues a rebuild (`queueProfileRebuild`, one per namespace: deduplicated by the job's key while
 * one is queued, so a burst of writes queues one job) of every namespace in which `written` holds
 * a memory of a `PROFILE_SOURCE_KINDS` kind, except for `EVENTS_WITHOUT_PROFILE_CHANGE`.
 * Resolves once those jobs are persisted. @throws what the job queue throws (IndexedDB failures).
 */
export async function queueProfileRebuildsFor(jobs: JobQueue, written: readonly WrittenMemory[]): Promise<void> {
  const namespaces = new Set(
    written.filter((w) => PROFILE_SOURCE_KINDS.includes(w.kind) && !EVENTS_WITHOUT_PROFILE_CHANGE.has(w.event)).map((w) => w.namespace),
  );
  for (const namespace of namespaces) await queueProfileRebuild(jobs, namespace);
}
