/**
 * User settings: their shape, zod schema and defaults, and the keys of the `settings` table.
 * The table (`SettingRecord`, one row per key) also holds job bookkeeping under the `stats.*`
 * and `state.*` prefixes; those rows are not settings and never reach `parseSettings`' result.
 * Read settings through `readSettings` (`src/db/settings.ts`) or the core's `SettingsStore`,
 * never row by row. Leaf module: imports nothing from `src/` but other model files.
 */
import { z } from 'zod';
import type { WllamaSource } from './engine';
import { DEFAULT_STRATEGY, normalizeStrategyConfig, strategyConfigSchema, type StrategyConfig } from './strategies';

/** Engines the user can prefer (loaded on start). */
export const PREFERRED_ENGINES = ['webllm', 'wllama'] as const;

/** UI languages the user can pick; `auto` follows the browser. */
export const LOCALES = ['auto', 'en', 'zh_CN'] as const;

/** User settings (persisted in Dexie `settings`, one row per key). */
export interface Settings {
  /** Engine to load on start. */
  preferredEngine: (typeof PREFERRED_ENGINES)[number];
  webllmModelId: string | null;
  wllamaSource: WllamaSource | null;
  /** Embedding model id (transformers.js). */
  embeddingModelId: string;
  /** Strategy for new conversations. */
  defaultStrategy: StrategyConfig;
  /** Tokens reserved for each answer. */
  maxAnswerTokens: number;
  /** Memories injected per turn (top-k). */
  memoryTopK: number;
  /** Drop episodic memories older than this many days unless pinned (`null` = keep forever). */
  episodicRetentionDays: number | null;
  /** UI language. */
  locale: (typeof LOCALES)[number];
  /**
   * Sites Recall never reads (`src/page/sites.ts` patterns: `example.com`, `example.com/private`,
   * `127.0.0.1:8080`), checked before any script runs in a tab; at most `MAX_BLOCKED_SITES`.
   */
  blockedSites: string[];
}

/** Most blocked-site patterns kept. */
export const MAX_BLOCKED_SITES = 500;

/** Name of one setting (a key of the `settings` table that is a preference). */
export type SettingKey = keyof Settings;

/** Embedding model used when the user has not picked one (384-d, multilingual, quantized). */
export const DEFAULT_EMBEDDING_MODEL_ID = 'Xenova/paraphrase-multilingual-MiniLM-L12-v2';

/** Defaults for a fresh install. */
export const DEFAULT_SETTINGS: Settings = {
  preferredEngine: 'webllm',
  webllmModelId: null,
  wllamaSource: null,
  embeddingModelId: DEFAULT_EMBEDDING_MODEL_ID,
  defaultStrategy: DEFAULT_STRATEGY,
  maxAnswerTokens: 512,
  memoryTopK: 8,
  episodicRetentionDays: null,
  locale: 'auto',
  blockedSites: [],
};

/** Every setting's key, in `DEFAULT_SETTINGS` order. */
export const SETTING_KEYS = Object.keys(DEFAULT_SETTINGS) as SettingKey[];

/**
 * Settings a backup carries to another device (`src/backup/format.ts`): the user's choices about
 * memory, prompts and language. Left out: the engine choices (`preferredEngine`, `webllmModelId`,
 * `wllamaSource`), which name a model downloaded or opened on this device.
 */
export const PORTABLE_SETTING_KEYS = [
  'embeddingModelId',
  'defaultStrategy',
  'maxAnswerTokens',
  'memoryTopK',
  'episodicRetentionDays',
  'locale',
] as const satisfies readonly SettingKey[];

/** The schema of every setting (all keys required). */
export const settingsSchema = z.object({
  preferredEngine: z.enum(PREFERRED_ENGINES),
  webllmModelId: z.string().min(1).nullable(),
  wllamaSource: z
    .union([z.object({ type: z.literal('catalog'), id: z.string().min(1) }), z.object({ type: z.literal('opfs'), fileName: z.string().min(1) })])
    .nullable(),
  embeddingModelId: z.string().min(1),
  /** A strategy of a known kind; its parameters are clamped to their ranges (`normalizeStrategyConfig`). */
  defaultStrategy: strategyConfigSchema.transform(normalizeStrategyConfig),
  maxAnswerTokens: z.number().int().min(16).max(8192),
  memoryTopK: z.number().int().min(0).max(50),
  episodicRetentionDays: z.number().int().min(1).max(36_500).nullable(),
  locale: z.enum(LOCALES),
  blockedSites: z.array(z.string().min(1).max(300)).max(MAX_BLOCKED_SITES),
}) satisfies z.ZodType<Settings>;

/** Validates a partial settings update (`settings.set`); unknown keys are rejected. */
export const settingsPatchSchema = settingsSchema.partial().strict();

/**
 * Settings from stored values by key (e.g. the rows of the `settings` table): each setting is
 * validated on its own against `settingsSchema`; a missing value or one that no longer validates
 * (written by an older version) takes its default. Keys that are not settings (`stats.*`,
 * `state.*`, anything unknown) are ignored. Never throws.
 */
export function parseSettings(stored: Readonly<Record<string, unknown>>): Settings {
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const parsed = Object.hasOwn(stored, key) ? settingsSchema.shape[key].safeParse(stored[key]) : null;
    out[key] = parsed?.success ? parsed.data : DEFAULT_SETTINGS[key];
  }
  return out as unknown as Settings;
}

/** Prefix of the `settings` rows that hold job statistics shown by the UI (erased with the user's data). */
export const STATS_KEY_PREFIX = 'stats.';
/** Prefix of the `settings` rows that hold internal state (journals, resume points, markers; erased with the user's data). */
export const STATE_KEY_PREFIX = 'state.';

/** `settings` key of the maintenance merge resume point (`{ mergedThrough: ms }`, see `MaintenanceOptions.mergeSince`). */
export const MAINTENANCE_STATE_KEY = `${STATE_KEY_PREFIX}ltmMaintenance`;
