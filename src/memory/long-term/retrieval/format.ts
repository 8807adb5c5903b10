/**
 * Formats retrieved long-term memories for the prompt, under a token budget, ordered so the
 * most relevant sit at both ends of the section: models use the start and the end of a long
 * context best and the middle worst (N. F. Liu et al., "Lost in the Middle: How Language Models
 * Use Long Contexts", TACL 2024). The placement is LangChain's `LongContextReorder`: by relevance,
 * items alternate between the front and the back, so the least relevant end up in the middle.
 */
import type { TokenCounter } from '../../../engines/types';
import type { RetrievedMemory } from '../types';

/** Result of `formatMemoriesForPrompt`. */
export interface FormattedMemories {
  /** One line per memory, `- [YYYY-MM-DD] text` (date when it was said, local time), '' when none fits. */
  text: string;
  /** The memories in `text`, in relevance order (best first), not in line order. */
  included: RetrievedMemory[];
  /** Memories left out because they did not fit in `maxTokens`. */
  dropped: number;
}

const pad = (n: number) => String(n).padStart(2, '0');
const localDate = (ms: number) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
};

/**
 * One memory as a prompt line: `- [2024-05-03] I moved to Hangzhou`. Line breaks inside the text
 * become " / "; a memory whose validity ended gets ` (no longer true since YYYY-MM-DD)`.
 */
export function formatMemoryLine(memory: RetrievedMemory['memory']): string {
  const text = memory.text.trim().replace(/\s*\n+\s*/gu, ' / ');
  const ended = memory.validUntil !== null && memory.current === 0 ? ` (no longer true since ${localDate(memory.validUntil)})` : '';
  return `- [${localDate(memory.createdAt)}] ${text}${ended}`;
}

/**
 * Places items given best-first so the best are at both ends: ranks 1, 3, 5, … from the start and
 * 2, 4, 6, … from the end. E.g. `[1, 2, 3, 4, 5]` → `[1, 3, 5, 4, 2]`.
 */
export function lostInTheMiddleOrder<T>(bestFirst: readonly T[]): T[] {
  const front: T[] = [];
  const back: T[] = [];
  bestFirst.forEach((item, i) => (i % 2 === 0 ? front.push(item) : back.unshift(item)));
  return [...front, ...back];
}

/**
 * Builds the memory section body under `maxTokens`.
 * Memories are taken in relevance order (`memories` is best first, as retrieval returns them);
 * one that does not fit is skipped (a shorter, less relevant one may still fit), then the kept
 * ones are ordered with `lostInTheMiddleOrder` and joined with "\n".
 * @param counter the active model's token counter; the final text is counted as a whole, so the
 *   cap holds even when a tokenizer merges across line breaks.
 * @param maxTokens budget in tokens for the returned `text` (0 or less → nothing included).
 */
export function formatMemoriesForPrompt(memories: RetrievedMemory[], counter: TokenCounter, maxTokens: number): FormattedMemories {
  const included: RetrievedMemory[] = [];
  const lines = new Map<RetrievedMemory, string>();
  const render = (items: RetrievedMemory[]) => lostInTheMiddleOrder(items).map((m) => lines.get(m)!).join('\n');
  let used = 0;
  for (const memory of memories) {
    if (maxTokens <= 0) break;
    const line = formatMemoryLine(memory.memory);
    // Per-line estimate first (line + its "\n"), then the exact count of the whole candidate text.
    const lineTokens = counter.count(line) + (included.length > 0 ? 1 : 0);
    if (used + lineTokens > maxTokens + 2) continue;
    lines.set(memory, line);
    const candidate = [...included, memory];
    const total = counter.count(render(candidate));
    if (total > maxTokens) {
      lines.delete(memory);
      continue;
    }
    included.push(memory);
    used = total;
  }
  return { text: included.length > 0 ? render(included) : '', included, dropped: memories.length - included.length };
}
