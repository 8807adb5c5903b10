/**
 * User settings, persisted in Dexie `settings` (one row per key). The offscreen document has
 * no `chrome.storage`, so settings live in IndexedDB with everything else.
 */
import { z } from 'zod';
import type { RecallDB } from '../db/schema';
import { DEFAULT_STRATEGY, normalizeStrategyConfig, strategyConfigSchema } from '../model/strategies';
import type { Settings } from '../messaging/protocol';

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
};

/** A strategy of a known kind; its parameters are clamped to their ranges by `normalizeStrategyConfig`. */
const strategySchema = strategyConfigSchema.transform(normalizeStrategyConfig);

/** Validates a partial settings update; unknown keys are rejected. */
export const settingsPatchSchema = z
  .object({
    preferredEngine: z.enum(['webllm', 'wllama']),
    webllmModelId: z.string().min(1).nullable(),
    wllamaSource: z
      .union([
        z.object({ type: z.literal('catalog'), id: z.string().min(1) }),
        z.object({ type: z.literal('opfs'), fileName: z.string().min(1) }),
      ])
      .nullable(),
    embeddingModelId: z.string().min(1),
    defaultStrategy: strategySchema,
    maxAnswerTokens: z.number().int().min(16).max(8192),
    memoryTopK: z.number().int().min(0).max(50),
    episodicRetentionDays: z.number().int().min(1).max(36_500).nullable(),
    locale: z.enum(['auto', 'en', 'zh_CN']),
  })
  .partial()
  .strict();

/** Reads and writes settings. */
export interface SettingsStore {
  /** All settings, defaults filled in. */
  get(): Promise<Settings>;
  /**
   * Applies a validated partial update and returns the new settings.
   * @throws ZodError when the patch has unknown keys or invalid values (nothing is written).
   */
  set(patch: Partial<Settings>): Promise<Settings>;
}

/** Creates the settings store over `db.settings`. */
export function createSettingsStore(db: RecallDB): SettingsStore {
  return {
    async get() {
      const rows = await db.settings.toArray();
      const stored = Object.fromEntries(rows.map((r) => [r.key, r.value]));
      // Values written by an older version that no longer validate fall back to the default.
      const valid = settingsPatchSchema.safeParse(stored);
      return { ...DEFAULT_SETTINGS, ...(valid.success ? valid.data : pickValid(stored)) } as Settings;
    },
    async set(patch) {
      const valid = settingsPatchSchema.parse(patch);
      await db.settings.bulkPut(Object.entries(valid).map(([key, value]) => ({ key, value })));
      return this.get();
    },
  };
}

function pickValid(stored: Record<string, unknown>): Partial<Settings> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stored)) {
    if (settingsPatchSchema.safeParse({ [key]: value }).success) out[key] = value;
  }
  return out as Partial<Settings>;
}
