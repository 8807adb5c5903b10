/**
 * Formats retrieved long-term memories for the prompt, under a token budget, ordered so the
 * most relevant sit at both ends of the section: models use the start and the end of a long
 * context best and the middle worst (N. F. Liu et al., "Lost in the Middle: How Language Models
 * Use Long Contexts", TACL 2024). The placement is LangChain's `LongContextReorder`: by relevance,
 * items alternate between the front and the back, so the least relevant end up in the middle.
 *
 * A retrieved round with neighbours (`RetrievedMemory.neighbours`, the rounds before and after it)
 * is one unit: one line holding the rounds in conversation order, when that line fits; else the
 * round with its next round, then with its previous one, then alone.
 */
import type { TokenCounter } from '../model/tokens';
import type { RetrievedMemory } from '../model/context';
import type { MemoryView } from '../model/records';
import { wordPrefix } from '../text/cut';
import { labelSpeakers } from '../text/speakers';

/** Result of `formatMemoriesForPrompt`. */
export interface FormattedMemories {
  /** One line per memory, `- [YYYY-MM-DD] text` (date when it was said, local time), '' when none fits. */
  text: string;
  /** The memories in `text`, in relevance order (best first), not in line order. */
  included: RetrievedMemory[];
  /** Memories left out because they did not fit in `maxTokens`. */
  dropped: number;
  /** For each memory of `included` shown with neighbour rounds: those rounds, in conversation order. Absent when no memory was shown with any. */
  neighbours?: Map<RetrievedMemory, MemoryView[]>;
  /** The memories of `included` whose line was cut to fit (`fitMemoryLine` shortened it). Absent when none was. */
  shortened?: Set<RetrievedMemory>;
}

const pad = (n: number) => String(n).padStart(2, '0');
const localDate = (ms: number) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
};

/**
 * One memory as a prompt line: `- [2024-05-03] I moved to Hangzhou`, with its speakers named when
 * its conversation names them (`labelSpeakers`: `- [2024-05-03] Mia: I moved … / Jonas: …`; the
 * role labels of a round otherwise). Line breaks inside the text become " / "; a memory whose validity ended gets ` (no longer true since YYYY-MM-DD)`; a round
 * stating a superseded fact (`pastSince`) gets ` (past, superseded on YYYY-MM-DD)`.
 */
export function formatMemoryLine(memory: RetrievedMemory['memory'], maxChars = Infinity): string {
  return `- [${localDate(memory.createdAt)}] ${memoryBody(memory, maxChars)}`;
}

/** What a memory's line is made of, computed once for all its lengths (`bodyAt`). */
interface BodyParts {
  /** The text with its speakers named and line breaks flattened to " / ". */
  flat: string;
  /** `flat`'s length in code points. */
  length: number;
  /** The validity marks after the text (`''` when none). */
  marks: string;
}

/** The parts of `memory`'s body (see `memoryBody`). */
function bodyParts(memory: RetrievedMemory['memory']): BodyParts {
  const flat = labelSpeakers(memory)
    .trim()
    .replace(/\s*\n+\s*/gu, ' / ');
  const ended = memory.validUntil !== null && memory.current === 0 ? ` (no longer true since ${localDate(memory.validUntil)})` : '';
  const past = !ended && memory.pastSince !== undefined ? ` (past, superseded on ${localDate(memory.pastSince)})` : '';
  return { flat, length: Array.from(flat).length, marks: `${ended}${past}` };
}

/** The body of `parts` cut to `maxChars` code points: at a word boundary (`wordPrefix`: never mid-word, CJK between words or characters) with "…". */
function bodyAt(parts: BodyParts, maxChars: number): string {
  const text = parts.length > maxChars ? `${wordPrefix(parts.flat, maxChars)}…` : parts.flat;
  return `${text}${parts.marks}`;
}

/** A memory's text as in its line, without the `- [date] ` prefix (speakers named, flattened, cut to `maxChars`, marks added). */
function memoryBody(memory: RetrievedMemory['memory'], maxChars = Infinity): string {
  return bodyAt(bodyParts(memory), maxChars);
}

/**
 * Adjacent rounds (conversation order) as one prompt line: `- [2025-03-04] Mia: … / Jonas: … / Mia: …`;
 * a round said on another day than the one before it gets its own `[YYYY-MM-DD] `. Never shortened.
 * @param rounds at least one memory.
 */
export function formatUnitLine(rounds: readonly RetrievedMemory['memory'][]): string {
  const parts = rounds.map((m, i) => {
    const date = localDate(m.createdAt);
    return i > 0 && date !== localDate(rounds[i - 1]!.createdAt) ? `[${date}] ${memoryBody(m)}` : memoryBody(m);
  });
  return `- [${localDate(rounds[0]!.createdAt)}] ${parts.join(' / ')}`;
}

/**
 * The lines `memory` may take, best first, each with the neighbour rounds it shows: the whole
 * unit (before, memory, after), the memory with its next round, with its previous round — each only
 * when it fits in `maxTokens` whole — then the memory alone (`fitMemoryLine`, shortened if needed).
 */
function unitLines(memory: RetrievedMemory, counter: TokenCounter, maxTokens: number): { line: string; shown: MemoryView[] }[] {
  const { before, after } = memory.neighbours ?? {};
  const options: MemoryView[][] = [];
  if (before && after) options.push([before, after]);
  if (after) options.push([after]);
  if (before) options.push([before]);
  const out: { line: string; shown: MemoryView[] }[] = [];
  for (const shown of options) {
    const line = formatUnitLine([...(shown.includes(before!) ? [before!] : []), memory.memory, ...(shown.includes(after!) ? [after!] : [])]);
    if (counter.count(line) <= maxTokens) out.push({ line, shown });
  }
  const alone = fitMemoryLine(memory.memory, counter, maxTokens);
  if (alone !== null) out.push({ line: alone, shown: [] });
  return out;
}

/** A memory line is never shortened below this many tokens (a stub that short says nothing). */
export const MIN_SHORTENED_LINE_TOKENS = 24;

/**
 * The line of `memory` in at most `maxTokens`: whole when it fits, else its text cut (at a word
 * boundary, `wordPrefix`, with "…") to the longest prefix that fits, found by binary search.
 * `null` when even a short line does not fit (`maxTokens < MIN_SHORTENED_LINE_TOKENS`).
 */
export function fitMemoryLine(memory: RetrievedMemory['memory'], counter: TokenCounter, maxTokens: number): string | null {
  const whole = formatMemoryLine(memory);
  if (counter.count(whole) <= maxTokens) return whole;
  if (maxTokens < MIN_SHORTENED_LINE_TOKENS) return null;
  // The line at `maxChars` is `formatMemoryLine(memory, maxChars)`, from parts built once for the whole search.
  const prefix = `- [${localDate(memory.createdAt)}] `;
  const parts = bodyParts(memory);
  const lineAt = (maxChars: number) => `${prefix}${bodyAt(parts, maxChars)}`;
  let lo = 0;
  let hi = Array.from(labelSpeakers(memory).trim()).length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (counter.count(lineAt(mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? lineAt(lo) : null;
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
 * Memories are taken in relevance order (`memories` is best first, as retrieval returns them).
 * No line takes more than half of `maxTokens` (one long episodic round must not crowd out the
 * rest): a longer memory is shortened with `fitMemoryLine`. One that does not fit what is left
 * is shortened to fit when at least `MIN_SHORTENED_LINE_TOKENS` remain, else skipped (a shorter,
 * less relevant one may still fit). A memory with neighbour rounds takes the largest unit line
 * that fits (`formatUnitLine`: before + it + after, it + after, before + it), else its own line.
 * The kept lines are ordered with `lostInTheMiddleOrder` and joined with "\n".
 * @param counter the active model's token counter; the final text is counted as a whole, so the
 *   cap holds even when a tokenizer merges across line breaks.
 * @param maxTokens budget in tokens for the returned `text` (0 or less → nothing included).
 */
export function formatMemoriesForPrompt(memories: RetrievedMemory[], counter: TokenCounter, maxTokens: number): FormattedMemories {
  const included: RetrievedMemory[] = [];
  const lines = new Map<RetrievedMemory, string>();
  const neighbours = new Map<RetrievedMemory, MemoryView[]>();
  const shortened = new Set<RetrievedMemory>();
  const render = (items: RetrievedMemory[]) =>
    lostInTheMiddleOrder(items)
      .map((m) => lines.get(m)!)
      .join('\n');
  let used = 0;
  const perLineCap = Math.max(MIN_SHORTENED_LINE_TOKENS, Math.floor(maxTokens / 2));
  for (const memory of memories) {
    if (maxTokens <= 0) break;
    const separator = included.length > 0 ? 1 : 0;
    const room = Math.min(perLineCap, maxTokens - used - separator);
    for (const { line, shown } of unitLines(memory, counter, room)) {
      lines.set(memory, line);
      // The whole candidate text is counted again: the cap holds even when a tokenizer merges across "\n".
      const total = counter.count(render([...included, memory]));
      if (total > maxTokens) {
        lines.delete(memory);
        continue;
      }
      included.push(memory);
      if (shown.length > 0) neighbours.set(memory, shown);
      else if (line !== formatMemoryLine(memory.memory)) shortened.add(memory);
      used = total;
      break;
    }
  }
  return {
    text: included.length > 0 ? render(included) : '',
    included,
    dropped: memories.length - included.length,
    ...(neighbours.size > 0 ? { neighbours } : {}),
    ...(shortened.size > 0 ? { shortened } : {}),
  };
}
