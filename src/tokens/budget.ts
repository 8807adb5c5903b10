/**
 * Data of the token-budget bar the side panel shows under a reply: where the last prompt's
 * tokens went, against the model's context window.
 */
import type { PromptBudget, PromptSection } from '../prompt/types';

/** Segments of the bar, in display order. */
export type BudgetSegmentKind = 'system' | 'memories' | 'summary' | 'recent' | 'user' | 'template' | 'reserved' | 'free';

/** One segment of the bar. `tokens` are tokens; `fraction` is `tokens / contextWindow` (0..1). */
export interface BudgetSegment {
  kind: BudgetSegmentKind;
  tokens: number;
  fraction: number;
  /** Localised label for the segment. */
  label: { en: string; zh_CN: string };
}

/** The whole bar. */
export interface BudgetBar {
  contextWindow: number;
  segments: BudgetSegment[];
  /** Prompt + reserved answer exceed the context window (the engine would truncate or fail). */
  overflow: boolean;
  /** Tokens beyond the context window (0 when none). */
  overflowTokens: number;
  /** Counts come from an estimator, not the model's tokenizer (show "≈"). */
  estimated: boolean;
  tokenizer: string;
}

const LABELS: Record<BudgetSegmentKind, { en: string; zh_CN: string }> = {
  system: { en: 'System', zh_CN: '系统指令' },
  memories: { en: 'Long-term memories', zh_CN: '长期记忆' },
  summary: { en: 'Summary & notes', zh_CN: '摘要与笔记' },
  recent: { en: 'Recent turns', zh_CN: '最近对话' },
  user: { en: 'Your message', zh_CN: '你的消息' },
  template: { en: 'Chat template', zh_CN: '对话模板' },
  reserved: { en: 'Reserved for answer', zh_CN: '预留给回答' },
  free: { en: 'Free', zh_CN: '空闲' },
};

/**
 * Groups a prompt trace's sections into the bar's segments. `summary`, `entities` and
 * `retrieved` sections share the "summary & notes" segment (they are all short-term memory
 * beyond the verbatim turns). `template` is what the prompt costs beyond its sections (role
 * markers not attributed to a section, BOS, reply primer): `promptTokens − Σ section tokens`,
 * never negative. `free` = `contextWindow − promptTokens − reservedForAnswer`, never negative;
 * when negative the bar reports `overflow`.
 * @param sections `PromptTrace.sections`.
 * @param budget `PromptTrace.budget`.
 */
export function budgetBar(sections: readonly PromptSection[], budget: PromptBudget): BudgetBar {
  const sum: Record<BudgetSegmentKind, number> = { system: 0, memories: 0, summary: 0, recent: 0, user: 0, template: 0, reserved: 0, free: 0 };
  let sectionTotal = 0;
  for (const s of sections) {
    const kind: BudgetSegmentKind = s.kind === 'entities' || s.kind === 'retrieved' ? 'summary' : s.kind;
    sum[kind] += s.tokens;
    sectionTotal += s.tokens;
  }
  sum.template = Math.max(0, budget.promptTokens - sectionTotal);
  sum.reserved = budget.reservedForAnswer;
  const used = Math.max(budget.promptTokens, sectionTotal) + budget.reservedForAnswer;
  sum.free = Math.max(0, budget.contextWindow - used);
  const order: BudgetSegmentKind[] = ['system', 'memories', 'summary', 'recent', 'user', 'template', 'reserved', 'free'];
  const window = Math.max(1, budget.contextWindow);
  return {
    contextWindow: budget.contextWindow,
    segments: order.map((kind) => ({ kind, tokens: sum[kind], fraction: sum[kind] / window, label: LABELS[kind] })),
    overflow: used > budget.contextWindow,
    overflowTokens: Math.max(0, used - budget.contextWindow),
    estimated: !budget.exact,
    tokenizer: budget.tokenizer,
  };
}
