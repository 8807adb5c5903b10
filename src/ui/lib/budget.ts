/**
 * The token-budget bar: how one prompt used the model's context window. Pure; computed from a
 * `PromptTrace` (its sections and `PromptBudget`), all quantities in tokens.
 *
 * Layout of the bar, left to right, in prompt order: system prompt, long-term memories,
 * summary, entity notes, retrieved exchanges, recent turns, the user message, chat-template
 * overhead not attributed to a section, the answer reserve, then the free part of the window.
 */
import { PROMPT_SECTION_KINDS, type PromptSectionKind, type PromptTrace } from '../../model/trace';
import { PROFILE_SHARE, SECTION_SHARES } from '../../prompt/shares';

/** Kinds of bar segments: the prompt sections plus template overhead, answer reserve and free room. */
export type BudgetSegmentKind = PromptSectionKind | 'overhead' | 'reserved' | 'free';

/** Prompt section kinds in prompt order (see `PromptSectionKind`). */
export const SECTION_ORDER: readonly PromptSectionKind[] = PROMPT_SECTION_KINDS;

/** One coloured segment of the bar. */
export interface BudgetSegment {
  kind: BudgetSegmentKind;
  /** Tokens in this segment. */
  tokens: number;
  /** Share of the bar's width, 0..1 (segments add up to 1). */
  fraction: number;
}

/** Everything the budget bar and its legend show. */
export interface BudgetView {
  /** The model's context window (tokens). */
  contextWindow: number;
  /** Tokens of the whole prompt: the larger of `budget.promptTokens` and the sum of the sections. */
  promptTokens: number;
  /** Tokens reserved for the answer. */
  reservedForAnswer: number;
  /** `contextWindow − promptTokens − reservedForAnswer`, never below 0. */
  freeTokens: number;
  /** `true` when prompt + reserve exceed the context window (the bar is then scaled to the total). */
  overflow: boolean;
  /** Non-empty segments in bar order. */
  segments: BudgetSegment[];
  /** Tokenizer id and whether the counts are exact (real tokenizer) or estimated. */
  tokenizer: string;
  exact: boolean;
}

/**
 * Computes the budget bar of one prompt trace.
 *
 * Sections of the same kind are added together. `overhead` is what `budget.promptTokens` counts
 * beyond the sections (e.g. the reply primer of the chat template); it is 0 when the sections
 * already add up to at least `promptTokens`. Fractions are shares of `max(contextWindow,
 * prompt + reserve)`, so an overflowing prompt still draws a full bar, flagged by `overflow`.
 * A context window of 0 (unknown) is treated as the prompt + reserve total.
 */
export function computeBudget(trace: Pick<PromptTrace, 'sections' | 'budget'>): BudgetView {
  const { budget } = trace;
  const byKind = new Map<PromptSectionKind, number>();
  for (const section of trace.sections) byKind.set(section.kind, (byKind.get(section.kind) ?? 0) + Math.max(0, section.tokens));
  const sectionTotal = [...byKind.values()].reduce((a, b) => a + b, 0);
  const promptTokens = Math.max(budget.promptTokens, sectionTotal);
  const overhead = promptTokens - sectionTotal;
  const reserved = Math.max(0, budget.reservedForAnswer);
  const used = promptTokens + reserved;
  const contextWindow = Math.max(0, budget.contextWindow);
  const freeTokens = Math.max(0, contextWindow - used);
  const scale = Math.max(contextWindow, used);

  const raw: { kind: BudgetSegmentKind; tokens: number }[] = [
    ...SECTION_ORDER.map((kind) => ({ kind, tokens: byKind.get(kind) ?? 0 })),
    { kind: 'overhead', tokens: overhead },
    { kind: 'reserved', tokens: reserved },
    { kind: 'free', tokens: freeTokens },
  ];
  const segments = raw.filter((s) => s.tokens > 0).map((s) => ({ ...s, fraction: scale > 0 ? s.tokens / scale : 0 }));

  return {
    contextWindow,
    promptTokens,
    reservedForAnswer: reserved,
    freeTokens,
    overflow: contextWindow > 0 && used > contextWindow,
    segments,
    tokenizer: budget.tokenizer,
    exact: budget.exact,
  };
}

/**
 * Why items of a prompt section were left out: an optional section (the profile, memories, summary, entities,
 * retrieved exchanges) may take at most its share of the room left after the instructions and the
 * user message (`SECTION_SHARES`, `percent` 0..100), however much of the window is free; recent
 * turns stop when the window is full; the instructions and the message are never cut (`null`).
 */
export function droppedReason(kind: PromptSectionKind): { kind: 'share'; percent: number } | { kind: 'window' } | null {
  if (kind === 'recent') return { kind: 'window' };
  if (kind === 'system' || kind === 'user') return null;
  return { kind: 'share', percent: Math.round((kind === 'profile' ? PROFILE_SHARE : SECTION_SHARES[kind]) * 100) };
}
