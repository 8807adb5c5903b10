/**
 * The extension points agree with their lists (ARCHITECTURE.md, "Extension points"): every
 * strategy kind of `STRATEGIES` has exactly one implementation in the short-term registry and
 * vice versa; the job types the core registers are exactly `JOB_TYPES`, each described once;
 * and every strategy kind, strategy parameter, job type and memory kind has the locale strings
 * the UI shows, in English and Simplified Chinese (checked without falling back to English).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MemoryKind } from '../../src/model/memory';
import { createJobQueue, type JobQueue } from '../../src/jobs/queue';
import { RecallDB } from '../../src/db/schema';
import { episodicJob, registerEpisodicJobs } from '../../src/memory/long-term';
import { LONG_TERM_JOBS, registerExtractionJobs } from '../../src/memory/long-term/jobs';
import { createStrategy, registerShortTermJobs, SHORT_TERM_JOBS, STRATEGY_REGISTRY, strategyDefinition } from '../../src/memory/short-term';
import { JOB_TYPES, jobTypeLabelKey } from '../../src/model/jobs';
import { STRATEGIES, STRATEGY_KINDS, strategyInfo, strategyKindSchema } from '../../src/model/strategies';
import { i18n } from '../../src/ui/i18n/instance';
import { JOB_LABELS, jobLabelKey } from '../../src/ui/lib/jobs';
import { STRATEGY_LIST } from '../../src/ui/lib/strategies';
import { createHarness, type Harness } from '../../bench/data/strategy-harness';

/** `true` when `key` has a non-empty string in `lng` itself (no fallback to English). */
function translated(key: string, lng: 'en' | 'zh-CN'): boolean {
  if (!i18n.exists(key, { lng, fallbackLng: false })) return false;
  const value = i18n.t(key, { lng, fallbackLng: false });
  return typeof value === 'string' && value.trim().length > 0 && value !== key;
}

function expectInBothLocales(keys: readonly string[]): void {
  for (const key of keys) {
    expect(translated(key, 'en'), `en: ${key}`).toBe(true);
    expect(translated(key, 'zh-CN'), `zh-CN: ${key}`).toBe(true);
  }
}

let h: Harness | undefined;
let db: RecallDB | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await db?.delete();
  db = undefined;
});

describe('strategies', () => {
  it('every kind of the list has exactly one implementation, and every implementation a kind', () => {
    const implemented = STRATEGY_REGISTRY.map((d) => d.kind);
    expect(new Set(implemented).size).toBe(implemented.length);
    expect([...implemented].sort()).toEqual([...STRATEGY_KINDS].sort());
    for (const kind of STRATEGY_KINDS) expect(strategyDefinition(kind).info).toBe(strategyInfo(kind));
  });

  it('the kinds, the schema enum and the picker list are the same list, in the same order', () => {
    expect(STRATEGY_KINDS).toEqual(STRATEGIES.map((s) => s.kind));
    expect(strategyKindSchema.options).toEqual(STRATEGY_KINDS);
    expect(STRATEGY_LIST.map((s) => s.kind)).toEqual(STRATEGY_KINDS);
    expect(STRATEGY_KINDS).toHaveLength(7);
  });

  it('creates a strategy of each kind from the registry', () => {
    h = createHarness();
    for (const kind of STRATEGY_KINDS) expect(createStrategy({ kind }, h.deps).kind).toBe(kind);
  });

  it('has the label and description of every kind and parameter in both locales', () => {
    const keys = STRATEGIES.flatMap((s) => [s.labelKey, s.descriptionKey, ...s.params.flatMap((p) => [p.labelKey, p.descriptionKey])]);
    expect(keys.length).toBeGreaterThanOrEqual(2 * 7 + 2 * 6);
    expectInBothLocales(keys);
  });

  it('every kind has a one-line description for the chat, and no description names a library class (issue 12 item 13)', () => {
    expectInBothLocales(STRATEGY_KINDS.map((kind) => `strategies.${kind}.short`));
    for (const lng of ['en', 'zh-CN']) {
      for (const s of STRATEGIES) {
        for (const key of [s.descriptionKey, `strategies.${s.kind}.short`]) {
          const text = i18n.t(key, { lng });
          expect(text, `${lng} ${key}`).not.toMatch(/[A-Z][a-z]+[A-Z]\w*Memory|Conversation\w+|VectorStore/u);
        }
        expect(Array.from(i18n.t(`strategies.${s.kind}.short`, { lng })).length, `${lng} ${s.kind}`).toBeLessThanOrEqual(72);
      }
    }
  });
});

describe('jobs', () => {
  /** The real queue on fake-indexeddb, recording the types registered on it. */
  function recordingQueue(): { queue: JobQueue; registered: string[] } {
    db = new RecallDB(`registries-${crypto.randomUUID()}`);
    const real = createJobQueue(db);
    const registered: string[] = [];
    return { queue: { ...real, register: (type, handler) => (registered.push(type), real.register(type, handler)) }, registered };
  }

  it('the descriptors are exactly JOB_TYPES, each once', () => {
    const described = [episodicJob, ...LONG_TERM_JOBS, ...SHORT_TERM_JOBS].map((d) => d.type);
    expect(new Set(described).size).toBe(described.length);
    expect([...described].sort()).toEqual([...JOB_TYPES].sort());
  });

  it('the core’s registration functions register every job type once (the calls of createCore)', () => {
    const { queue, registered } = recordingQueue();
    h = createHarness();
    const store = {} as Parameters<typeof registerEpisodicJobs>[1]['store'];
    registerEpisodicJobs(queue, { store, db: db!, now: Date.now });
    registerExtractionJobs(queue, { db: db!, store: store as never, engine: () => null });
    registerShortTermJobs(queue, h.deps);
    expect([...registered].sort()).toEqual([...JOB_TYPES].sort());
  });

  it('labels every job type in both locales; the UI table derives from the list', () => {
    expect(Object.keys(JOB_LABELS).sort()).toEqual([...JOB_TYPES].sort());
    for (const type of JOB_TYPES) expect(jobLabelKey(type)).toBe(jobTypeLabelKey(type));
    expect(jobTypeLabelKey('short-term.fold')).toBe('jobs.types.short-term_fold');
    expectInBothLocales([...JOB_TYPES.map(jobTypeLabelKey), 'jobs.types.other']);
  });
});

describe('memory kinds', () => {
  it('has the label of every memory kind in both locales', () => {
    // Exhaustive by type: a kind added to `MemoryKind` without an entry here does not compile.
    const kinds = Object.keys({ profile: 1, preference: 1, event: 1, fact: 1, instruction: 1, episodic: 1, summary: 1 } satisfies Record<MemoryKind, 1>);
    expectInBothLocales(kinds.map((k) => `memoryKind.${k}`));
  });
});
