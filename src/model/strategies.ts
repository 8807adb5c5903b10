/**
 * The short-term context strategies as vocabulary: their kinds, their stored configuration, and
 * what the settings UI and the schemas know about each (translation keys of its label and
 * description, its numeric parameters with units, ranges and defaults, whether it runs the chat
 * model in the background). Names follow LangChain's classic conversation-memory classes.
 *
 * This is the one list of strategies (`STRATEGIES`): `StrategyKind`, `STRATEGY_KINDS`, every zod
 * enum of kinds and the picker's list derive from it. The implementations live in
 * `src/memory/short-term` (one file per strategy, `defineStrategy`) and are collected by its
 * registry, which the compiler checks against this list (see ARCHITECTURE.md, "Extension points").
 * A leaf module: imports nothing from `src/`.
 */
import { z } from 'zod';

/** The numeric parameters a strategy may have. */
export const STRATEGY_PARAM_KEYS = ['k', 'maxTokens', 'topK'] as const;
/** One numeric parameter name: `k` (exchanges), `maxTokens` (tokens), `topK` (retrieved items). */
export type StrategyParamKey = (typeof STRATEGY_PARAM_KEYS)[number];

/**
 * One numeric parameter of a strategy, for a number input. Its label and description are the
 * UI's translation keys `strategyParams.<key>.label` / `.description` (`en.json`, `zh_CN.json`).
 */
export interface StrategyParamSpec {
  key: StrategyParamKey;
  labelKey: `strategyParams.${StrategyParamKey}.label`;
  descriptionKey: `strategyParams.${StrategyParamKey}.description`;
  /** What the number counts. */
  unit: 'exchanges' | 'tokens' | 'items';
  min: number;
  max: number;
  step: number;
  default: number;
}

/** What the UI and the schemas know about one strategy of kind `K`. */
export interface StrategyInfo<K extends string = string> {
  kind: K;
  /** Translation key of its name (`strategies.<kind>.label`). */
  labelKey: `strategies.${K}.label`;
  /** Translation key of its one-paragraph description (`strategies.<kind>.description`). */
  descriptionKey: `strategies.${K}.description`;
  /** Its parameters, in the order the picker shows them (`[]`: none). */
  params: readonly StrategyParamSpec[];
  /** Runs the chat model in the background after each exchange (summaries, entity notes). */
  usesLlm: boolean;
  /** Full configuration with every parameter at its default. */
  defaults: { kind: K } & Partial<Record<StrategyParamKey, number>>;
}

/**
 * Declares one strategy of the list: fills the translation keys from `kind` and checks the
 * parameter specs (`min ≤ default ≤ max`, `step > 0`, no key twice).
 * @throws Error for an inconsistent spec (a programming error, thrown when this module loads).
 */
export function defineStrategyInfo<const K extends string>(info: { kind: K; params?: readonly StrategyParamSpec[]; usesLlm: boolean }): StrategyInfo<K> {
  const params = info.params ?? [];
  const keys = new Set<string>();
  for (const p of params) {
    if (keys.has(p.key)) throw new Error(`Strategy "${info.kind}" declares parameter "${p.key}" twice`);
    keys.add(p.key);
    if (!(p.step > 0 && p.min <= p.default && p.default <= p.max)) throw new Error(`Strategy "${info.kind}": bad range for "${p.key}"`);
  }
  const defaults: StrategyInfo<K>['defaults'] = { kind: info.kind };
  for (const p of params) defaults[p.key] = p.default;
  return {
    kind: info.kind,
    labelKey: `strategies.${info.kind}.label`,
    descriptionKey: `strategies.${info.kind}.description`,
    params,
    usesLlm: info.usesLlm,
    defaults,
  };
}

/** A parameter spec with its translation keys filled from `key`. */
function param(key: StrategyParamKey, spec: Omit<StrategyParamSpec, 'key' | 'labelKey' | 'descriptionKey'>): StrategyParamSpec {
  return { key, labelKey: `strategyParams.${key}.label`, descriptionKey: `strategyParams.${key}.description`, ...spec };
}

/** `k`: exchanges kept verbatim (1–50). */
const K_WINDOW = param('k', { unit: 'exchanges', min: 1, max: 50, step: 1, default: 5 });
/** `maxTokens`: tokens the conversation history may take (200–32,000). */
const MAX_TOKENS = param('maxTokens', { unit: 'tokens', min: 200, max: 32_000, step: 100, default: 2000 });
/** `topK`: past exchanges retrieved (1–20). */
const TOP_K = param('topK', { unit: 'items', min: 1, max: 20, step: 1, default: 4 });

/**
 * The seven strategies, in the order the picker lists them (LangChain's memory classes):
 * full history (ConversationBufferMemory), last k exchanges (…BufferWindowMemory), recent messages
 * within a token limit (…TokenBufferMemory), running summary (…SummaryMemory), summary + recent
 * messages (…SummaryBufferMemory, the default), entity notes (…EntityMemory), similar past
 * exchanges (VectorStoreRetrieverMemory). Adding a strategy: one entry here, one implementation
 * file and one registry line in `src/memory/short-term`, and its locale strings.
 */
export const STRATEGIES = [
  defineStrategyInfo({ kind: 'full-buffer', usesLlm: false }),
  defineStrategyInfo({ kind: 'buffer-window', params: [K_WINDOW], usesLlm: false }),
  defineStrategyInfo({ kind: 'token-buffer', params: [MAX_TOKENS], usesLlm: false }),
  defineStrategyInfo({ kind: 'summary', usesLlm: true }),
  defineStrategyInfo({ kind: 'summary-buffer', params: [MAX_TOKENS], usesLlm: true }),
  defineStrategyInfo({ kind: 'entity', params: [{ ...K_WINDOW, default: 3 }], usesLlm: true }),
  defineStrategyInfo({ kind: 'vector', params: [{ ...K_WINDOW, default: 2 }, TOP_K], usesLlm: false }),
] as const;

/** A strategy's kind: `'full-buffer' | 'buffer-window' | … | 'vector'` (from `STRATEGIES`). */
export type StrategyKind = (typeof STRATEGIES)[number]['kind'];

/** Every strategy kind, in the picker's order. */
export const STRATEGY_KINDS = STRATEGIES.map((s) => s.kind) as [StrategyKind, ...StrategyKind[]];

/** zod schema of a strategy kind (the one enum every schema uses). */
export const strategyKindSchema = z.enum(STRATEGY_KINDS);

/**
 * A strategy and its parameters, stored per conversation.
 * - `k`: exchanges kept by `buffer-window`, or turns kept verbatim next to `entity`/`vector`.
 * - `maxTokens`: token limit of `token-buffer` and of `summary-buffer` (summary + buffer).
 * - `topK`: exchanges retrieved by `vector`.
 */
export interface StrategyConfig {
  kind: StrategyKind;
  k?: number;
  maxTokens?: number;
  topK?: number;
}

/** zod schema of a stored or sent `StrategyConfig`, before `normalizeStrategyConfig` clamps it. */
export const strategyConfigSchema = z.object({
  kind: strategyKindSchema,
  k: z.number().optional(),
  maxTokens: z.number().optional(),
  topK: z.number().optional(),
});

/** Default strategy for new conversations: summary + buffer, 2,000 tokens (LangChain's default). */
export const DEFAULT_STRATEGY: StrategyConfig = { kind: 'summary-buffer', maxTokens: 2000 };

const BY_KIND: ReadonlyMap<string, StrategyInfo<StrategyKind>> = new Map(STRATEGIES.map((s) => [s.kind, s]));

/** `true` when `kind` is one of `STRATEGY_KINDS`. */
export function isStrategyKind(kind: unknown): kind is StrategyKind {
  return typeof kind === 'string' && BY_KIND.has(kind);
}

/** The list entry of `kind`. @throws Error `Unknown context strategy: <kind>` for a kind not in `STRATEGIES`. */
export function strategyInfo(kind: StrategyKind): StrategyInfo<StrategyKind> {
  const info = BY_KIND.get(kind);
  if (!info) throw new Error(`Unknown context strategy: ${kind}`);
  return info;
}

/**
 * A complete, valid configuration from anything stored or sent by the UI: unknown kinds fall
 * back to `DEFAULT_STRATEGY`; parameters the strategy uses are filled with defaults when
 * missing or not finite, rounded and clamped to their spec's range; others are removed.
 */
export function normalizeStrategyConfig(config: unknown): StrategyConfig {
  const parsed = strategyConfigSchema.safeParse(config);
  const base = parsed.success ? parsed.data : DEFAULT_STRATEGY;
  const out: StrategyConfig = { kind: base.kind };
  for (const spec of strategyInfo(base.kind).params) {
    const raw = base[spec.key];
    const value = typeof raw === 'number' && Number.isFinite(raw) ? Math.round(raw) : spec.default;
    out[spec.key] = Math.min(spec.max, Math.max(spec.min, value));
  }
  return out;
}
