/**
 * Strategy metadata for the settings UI (labels, descriptions, parameter specs, defaults) and
 * normalization of stored configurations.
 */
import { z } from 'zod';
import { DEFAULT_STRATEGY, type StrategyConfig, type StrategyKind } from '../../model/strategies';

/** A localised string. */
export interface Localized {
  en: string;
  zh_CN: string;
}

/** One numeric parameter of a strategy, for a number input or slider. */
export interface StrategyParamSpec {
  key: 'k' | 'maxTokens' | 'topK';
  label: Localized;
  description: Localized;
  /** What the number counts. */
  unit: 'exchanges' | 'tokens' | 'items';
  min: number;
  max: number;
  step: number;
  default: number;
}

/** What the UI shows about one strategy. */
export interface StrategyInfo {
  kind: StrategyKind;
  label: Localized;
  description: Localized;
  /** Full configuration with every parameter at its default. */
  defaults: StrategyConfig;
  params: StrategyParamSpec[];
  /** Runs the chat model in the background after each exchange (summaries, entity notes). */
  usesLlm: boolean;
}

const K_WINDOW: StrategyParamSpec = {
  key: 'k',
  label: { en: 'Exchanges kept', zh_CN: '保留的轮数' },
  description: { en: 'How many of the latest exchanges (your message and the reply) stay in the prompt word for word.', zh_CN: '最近多少轮对话（你的消息和回复）原样保留在提示中。' },
  unit: 'exchanges',
  min: 1,
  max: 50,
  step: 1,
  default: 5,
};

const MAX_TOKENS: StrategyParamSpec = {
  key: 'maxTokens',
  label: { en: 'Token limit', zh_CN: 'Token 上限' },
  description: { en: 'Most tokens the conversation history may take in each prompt.', zh_CN: '每次提示中对话历史最多占用的 token 数。' },
  unit: 'tokens',
  min: 200,
  max: 32_000,
  step: 100,
  default: 2000,
};

const TOP_K: StrategyParamSpec = {
  key: 'topK',
  label: { en: 'Past exchanges retrieved', zh_CN: '检索的历史对话数' },
  description: { en: 'How many similar past exchanges (from any conversation) are added to the prompt.', zh_CN: '从所有对话中检索多少条相似的历史对话加入提示。' },
  unit: 'items',
  min: 1,
  max: 20,
  step: 1,
  default: 4,
};

/** The seven strategies, in the order the UI lists them (LangChain's memory classes in brackets). */
export const STRATEGIES: Record<StrategyKind, StrategyInfo> = {
  'full-buffer': {
    kind: 'full-buffer',
    label: { en: 'Full history', zh_CN: '完整历史' },
    description: {
      en: 'Every message, word for word. Most faithful; the prompt grows with the conversation until it no longer fits. (ConversationBufferMemory)',
      zh_CN: '原样保留每一条消息。最忠实，但提示会随对话变长，直到装不下为止。（ConversationBufferMemory）',
    },
    defaults: { kind: 'full-buffer' },
    params: [],
    usesLlm: false,
  },
  'buffer-window': {
    kind: 'buffer-window',
    label: { en: 'Last k exchanges', zh_CN: '最近 k 轮' },
    description: {
      en: 'Only the last k exchanges, word for word. Cheap and predictable; anything older is forgotten. (ConversationBufferWindowMemory)',
      zh_CN: '只原样保留最近 k 轮对话。开销小、可预测；更早的内容会被遗忘。（ConversationBufferWindowMemory）',
    },
    defaults: { kind: 'buffer-window', k: 5 },
    params: [K_WINDOW],
    usesLlm: false,
  },
  'token-buffer': {
    kind: 'token-buffer',
    label: { en: 'Recent messages within a token limit', zh_CN: 'Token 上限内的最近消息' },
    description: {
      en: 'The most recent whole messages that fit under the token limit. Uses the room well; older messages are forgotten. (ConversationTokenBufferMemory)',
      zh_CN: '在 token 上限内尽量保留最近的完整消息。充分利用空间；更早的消息会被遗忘。（ConversationTokenBufferMemory）',
    },
    defaults: { kind: 'token-buffer', maxTokens: 2000 },
    params: [MAX_TOKENS],
    usesLlm: false,
  },
  summary: {
    kind: 'summary',
    label: { en: 'Running summary', zh_CN: '滚动摘要' },
    description: {
      en: 'A summary of the whole conversation, updated in the background after each exchange. Fewest tokens; details and wording are lost. (ConversationSummaryMemory)',
      zh_CN: '整段对话的摘要，每轮对话后在后台更新。token 最少，但会丢失细节和原话。（ConversationSummaryMemory）',
    },
    defaults: { kind: 'summary' },
    params: [],
    usesLlm: true,
  },
  'summary-buffer': {
    kind: 'summary-buffer',
    label: { en: 'Summary + recent messages', zh_CN: '摘要 + 最近消息' },
    description: {
      en: 'Recent messages word for word while they fit the token limit; older ones are folded into a running summary. The usual best balance. (ConversationSummaryBufferMemory)',
      zh_CN: '在 token 上限内原样保留最近的消息，更早的消息并入滚动摘要。通常是最均衡的选择。（ConversationSummaryBufferMemory）',
    },
    defaults: { kind: 'summary-buffer', maxTokens: 2000 },
    params: [MAX_TOKENS],
    usesLlm: true,
  },
  entity: {
    kind: 'entity',
    label: { en: 'Entity notes', zh_CN: '实体笔记' },
    description: {
      en: 'Keeps a short note about each person, place, pet or project mentioned, and adds the notes of those named in your message, with the last k exchanges. (ConversationEntityMemory)',
      zh_CN: '为提到的每个人物、地点、宠物或项目保存简短笔记；你的消息提到谁，就加入谁的笔记，并附上最近 k 轮对话。（ConversationEntityMemory）',
    },
    defaults: { kind: 'entity', k: 3 },
    params: [{ ...K_WINDOW, default: 3 }],
    usesLlm: true,
  },
  vector: {
    kind: 'vector',
    label: { en: 'Similar past exchanges', zh_CN: '相似的历史对话' },
    description: {
      en: 'Finds the past exchanges most similar to your message, across all conversations, and adds them with the last k exchanges. (VectorStoreRetrieverMemory)',
      zh_CN: '在所有对话中查找与你的消息最相似的历史对话，与最近 k 轮对话一起加入提示。（VectorStoreRetrieverMemory）',
    },
    defaults: { kind: 'vector', k: 2, topK: 4 },
    params: [{ ...K_WINDOW, default: 2 }, TOP_K],
    usesLlm: false,
  },
};

const ConfigSchema = z.object({
  kind: z.enum(['full-buffer', 'buffer-window', 'token-buffer', 'summary', 'summary-buffer', 'entity', 'vector']),
  k: z.number().optional(),
  maxTokens: z.number().optional(),
  topK: z.number().optional(),
});

/**
 * A complete, valid configuration from anything stored or sent by the UI: unknown kinds fall
 * back to `DEFAULT_STRATEGY`; parameters the strategy uses are filled with defaults when
 * missing or not finite, rounded and clamped to their spec's range; others are removed.
 */
export function normalizeStrategyConfig(config: unknown): StrategyConfig {
  const parsed = ConfigSchema.safeParse(config);
  const base = parsed.success ? parsed.data : DEFAULT_STRATEGY;
  const info = STRATEGIES[base.kind];
  const out: StrategyConfig = { kind: base.kind };
  for (const spec of info.params) {
    const raw = base[spec.key];
    const value = typeof raw === 'number' && Number.isFinite(raw) ? Math.round(raw) : spec.default;
    out[spec.key] = Math.min(spec.max, Math.max(spec.min, value));
  }
  return out;
}
