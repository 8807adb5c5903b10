// One file (over ~300 lines): `assembleOnce` is one budgeted pass over every prompt section; the
// section shares, intros and fitting helpers exist only for it.
/**
 * Working memory: assembles one turn's prompt from the system instruction, long-term memories,
 * the short-term context (summary, entities, retrieved exchanges, recent turns) and the user
 * message, under a token budget that reserves room for the answer.
 *
 * Layout (chat messages):
 *   system:    instruction + <about_user> + <long_term_memories> + <conversation_summary> + <entities> + <related_past_exchanges>
 *   user/assistant …: recent turns, verbatim, oldest first
 *   user:      the new message
 * The most important context sits at the start (instruction, memories) and the end (recent turns,
 * user message) of the prompt ("lost in the middle", Liu et al. 2023).
 *
 * Budget (tokens): available = contextWindow − reserveForAnswer − replyPrimer. The instruction
 * and the user message always go in. Memories, summary, entities and retrieved exchanges each get
 * at most a share of what is left (`SECTION_SHARES`); recent turns get the rest, dropping the
 * oldest whole messages first (the stored conversation is never changed).
 *
 * Every piece of stored text (memories, summary, entity notes, retrieved exchanges) passes
 * `neutralizerFor(counter).stored` after being cut to `MAX_INJECTED_TEXT_CHARS`, and its
 * continuation lines are indented (`indentContinuation`), so it cannot close its section, open
 * another, or inject a chat-template control token; recent turns (cut to `MAX_RECENT_TURN_CHARS`)
 * and the user message pass `.turn` (special tokens only). Each section records what was
 * neutralized (`PromptSection.neutralized`). The messages come back sealed (`sealNeutralized`, frozen):
 * the engine boundary passes them through without scanning them again.
 */
import type { ChatMessage } from '../model/engine';
import type { TokenCounter } from '../model/tokens';
import type { RetrievedMemory, ContextMessage, ShortTermContext } from '../model/context';
import type { MemoryView, SpeakerNames } from '../model/records';
import { formatMemoriesForPrompt } from './memory-lines';
import { wordPrefix } from '../text/cut';
import { countPromptTokens } from '../tokens/prompt'; // not the index: it would bring the GGUF and HF tokenizers onto the start-up path
import { capChars, indentContinuation, MAX_INJECTED_TEXT_CHARS, MAX_RECENT_TURN_CHARS, mergeReports, neutralizerFor, sealNeutralized } from './neutralize';
import type { MemoryCitation, NeutralizedReport, PromptBudget, PromptSection, PromptSectionKind } from '../model/trace';
import { PromptError } from '../model/errors';
import type { PromptPage } from '../model/page';
import { pageSection } from './page-section';

import { PROFILE_SHARE, SECTION_SHARES } from './shares';
import { profileSection } from './profile-section';
export { SECTION_SHARES };

/**
 * `text` in at most `maxTokens` tokens: whole when it fits, else its longest prefix ending on a
 * word boundary (`wordPrefix`: never mid-word) that fits with "…" appended (binary search over
 * code points). Empty string when nothing fits.
 */
export function fitText(text: string, counter: TokenCounter, maxTokens: number): string {
  if (counter.count(text) <= maxTokens) return text;
  const chars = Array.from(text);
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (counter.count(`${wordPrefix(text, mid)}…`) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? `${wordPrefix(text, lo)}…` : '';
}

/**
 * Room (tokens) the prompt assembler can give to the short-term sections (summary, entities,
 * retrieved exchanges, recent turns) of a turn: what is left of the context window after the
 * answer reserve, the reply primer, the instruction and the user message (each with its
 * chat-template overhead), minus the long-term memories' share (`SECTION_SHARES.memories`). This
 * is the `budgetTokens` a context strategy is loaded with, so that a strategy limit larger than
 * the model can hold (summary + buffer's `maxTokens` on a small window) folds in time instead of
 * having the assembler drop unsummarized turns. Never negative.
 */
export function shortTermBudget(input: Pick<AssembleInput, 'systemInstruction' | 'userText' | 'counter' | 'contextWindow' | 'reserveForAnswer'>): number {
  const { counter } = input;
  const userText = neutralizerFor(counter).turn(input.userText).text;
  const fixed = counter.replyPrimerTokens + counter.count(input.systemInstruction) + counter.count(userText) + 2 * counter.perMessageOverhead;
  const free = input.contextWindow - input.reserveForAnswer - fixed;
  return Math.max(0, Math.floor(free * (1 - SECTION_SHARES.memories)));
}

/** Whether a user message fits a model's prompt at all, in tokens (`promptFit`). */
export interface PromptFit {
  /** Tokens the instruction and the message need (each with its per-message overhead). */
  neededTokens: number;
  /** Tokens the window leaves for them: context window − answer reserve − reply primer, at least 0. */
  availableTokens: number;
  /** `neededTokens <= availableTokens`: the turn can be assembled (the optional sections then shrink to fit). */
  fits: boolean;
}

/**
 * The check `assemblePrompt` starts with, on its own: do the system instruction and the user
 * message (neutralized as a recent turn) fit the window once the answer is reserved? The panel
 * asks for it before sending (`chat.measure`); a message that does not fit makes
 * `assemblePrompt` throw `PromptTooLongError` with these same two numbers.
 */
export function promptFit(input: Pick<AssembleInput, 'systemInstruction' | 'userText' | 'counter' | 'contextWindow' | 'reserveForAnswer'>): PromptFit {
  const { counter } = input;
  const overhead = counter.perMessageOverhead;
  const available = input.contextWindow - input.reserveForAnswer - counter.replyPrimerTokens;
  const neededTokens = counter.count(input.systemInstruction) + overhead + counter.count(neutralizerFor(counter).turn(input.userText).text) + overhead;
  return { neededTokens, availableTokens: Math.max(0, available), fits: neededTokens <= available };
}

/** Thrown when the instruction and the user message alone do not fit the context window. */
export class PromptTooLongError extends PromptError {
  constructor(
    readonly neededTokens: number,
    readonly availableTokens: number,
  ) {
    super(
      'prompt_too_long',
      `The message needs ${neededTokens} tokens but the model has room for ${availableTokens}. Shorten it or load a model with a larger context window.`,
      {
        params: { neededTokens, availableTokens },
      },
    );
    this.name = 'PromptTooLongError';
  }
}

/** Input of `assemblePrompt`. Token values are tokens; `now` is ms since the epoch. */
export interface AssembleInput {
  systemInstruction: string;
  /** Retrieved long-term memories, best first. */
  memories: RetrievedMemory[];
  shortTerm: ShortTermContext;
  userText: string;
  counter: TokenCounter;
  contextWindow: number;
  reserveForAnswer: number;
  /** Titles of conversations, for memory citations. */
  conversationTitles: ReadonlyMap<string, string>;
  /** The user's profile lines ("what Recall knows about me"), placed as `<about_user>` under `PROFILE_SHARE` (`./profile-section.ts`). */
  profile?: readonly string[];
  /** The page the user attached to this message (`<current_page>`, `page-section.ts`), passages best first. */
  page?: PromptPage;
}

/** Output of `assemblePrompt`. */
export interface AssembledPrompt {
  messages: ChatMessage[];
  sections: PromptSection[];
  memories: MemoryCitation[];
  budget: PromptBudget;
}

/** Wraps a section body in XML-style delimiters the model can tell apart. */
function wrap(tag: string, intro: string, body: string): string {
  return `<${tag}>\n${intro}\n${body}\n</${tag}>`;
}

const INTROS = {
  memories: 'Things you remember about the user, from earlier conversations or earlier in this one (dates are when they were said):',
  summary: 'Summary of the earlier part of this conversation:',
  entities: 'Notes on people, places and things mentioned:',
  retrieved: 'Related exchanges from past conversations:',
} as const;

/** `true` when every source turn of the memory is among `sent` (a memory with no source turns never is). */
function coveredBy(r: Pick<RetrievedMemory, 'memory'>, sent: ReadonlySet<string>): boolean {
  return r.memory.sourceMessageIds.length > 0 && r.memory.sourceMessageIds.every((id) => sent.has(id));
}

/**
 * `r` without the neighbour rounds whose source turns are all in `sent` (they go into the prompt
 * verbatim); the same object when none is. `cache` keeps one object per memory and kept set, so
 * passes over the same turns give the same objects.
 */
function withoutCoveredNeighbours(r: RetrievedMemory, sent: ReadonlySet<string>, cache: Map<string, RetrievedMemory>): RetrievedMemory {
  const { before, after } = r.neighbours ?? {};
  const keepBefore = before !== undefined && !coveredBy({ memory: before }, sent);
  const keepAfter = after !== undefined && !coveredBy({ memory: after }, sent);
  if (keepBefore === (before !== undefined) && keepAfter === (after !== undefined)) return r;
  const key = `${r.memory.id}\u0000${keepBefore}\u0000${keepAfter}`;
  let out = cache.get(key);
  if (!out) {
    const { neighbours: _neighbours, ...rest } = r;
    out = keepBefore || keepAfter ? { ...rest, neighbours: { ...(keepBefore ? { before } : {}), ...(keepAfter ? { after } : {}) } } : rest;
    cache.set(key, out);
  }
  return out;
}

/** Most assembly passes `assemblePrompt` makes while settling which memories the recent turns already cover. */
const MAX_PASSES = 4;

/**
 * Builds the prompt. Pure: no I/O.
 *
 * A memory whose source turns all go into the prompt verbatim as recent turns adds nothing and is
 * left out — but only when those turns are really sent: which recent turns fit depends on how
 * much the memories take, so the prompt is assembled again with the memories of the turns that
 * did not fit put back, until the memories stop changing (at most `MAX_PASSES` assemblies; one
 * when no memory comes from a dropped turn). This way a fact is never in neither place because
 * the context window dropped its turn.
 * @throws PromptTooLongError when the instruction plus the user message exceed the available budget.
 */
export function assemblePrompt(input: AssembleInput): AssembledPrompt {
  // Each memory's text is cut and neutralized once for all passes; citations keep the stored text.
  const gate = neutralizerFor(input.counter);
  const prepared = new Map<RetrievedMemory, Prepared>();
  // A memory's text, its speaker names and its neighbour rounds' all pass the gate.
  const gateView = (m: MemoryView): { view: MemoryView; report: NeutralizedReport } => {
    const n = gate.stored(capChars(m.text, MAX_INJECTED_TEXT_CHARS));
    const names = m.speakers ? Object.entries(m.speakers).map(([role, name]) => [role, gate.stored(capChars(name ?? '', 200))] as const) : [];
    const renamed = names.some(([role, g]) => g.text !== m.speakers![role as keyof SpeakerNames]);
    const view =
      n.text === m.text && !renamed
        ? m
        : { ...m, text: n.text, ...(m.speakers ? { speakers: Object.fromEntries(names.map(([role, g]) => [role, g.text])) } : {}) };
    return { view, report: mergeReports([n, ...names.map(([, g]) => g)]) };
  };
  const all = input.memories.map((r) => {
    const main = gateView(r.memory);
    const before = r.neighbours?.before ? gateView(r.neighbours.before) : null;
    const after = r.neighbours?.after ? gateView(r.neighbours.after) : null;
    const same = main.view === r.memory && before?.view === r.neighbours?.before && after?.view === r.neighbours?.after;
    const p: RetrievedMemory = same
      ? r
      : {
          ...r,
          memory: main.view,
          ...(r.neighbours ? { neighbours: { ...(before ? { before: before.view } : {}), ...(after ? { after: after.view } : {}) } } : {}),
        };
    prepared.set(p, { original: r, report: mergeReports([main.report, ...(before ? [before.report] : []), ...(after ? [after.report] : [])]) });
    return p;
  });
  const trimmed = new Map<string, RetrievedMemory>();
  const uncovered = (sent: ReadonlySet<string>) =>
    all
      .filter((r) => !coveredBy(r, sent))
      .map((r) => {
        const t = withoutCoveredNeighbours(r, sent, trimmed);
        if (t !== r && !prepared.has(t)) prepared.set(t, prepared.get(r)!);
        return t;
      });
  let memories = uncovered(new Set(input.shortTerm.recent.map((m) => m.id)));
  for (let pass = 1; ; pass++) {
    const { prompt, sentRecentIds } = assembleOnce({ ...input, memories }, prepared);
    if (pass >= MAX_PASSES) return prompt;
    const next = uncovered(sentRecentIds);
    // Same memories as this pass (the usual case: none came from a dropped turn): nothing to redo.
    if (next.length === memories.length && next.every((r, i) => r === memories[i])) return prompt;
    memories = next;
  }
}

/** A memory as placed in the prompt: the stored one and what neutralizing its text replaced. */
interface Prepared {
  original: RetrievedMemory;
  report: NeutralizedReport;
}

/** `report` when it replaced something, else nothing (the `neutralized` field of a section). */
const neutralizedField = (report: NeutralizedReport) => (report.count > 0 ? { neutralized: { count: report.count, pieces: report.pieces } } : {});

/**
 * One assembly with the memories as given (already prepared by `assemblePrompt`; `prepared` maps
 * them to the stored memories); also returns the ids of the recent turns it sent.
 */
function assembleOnce(input: AssembleInput, prepared: ReadonlyMap<RetrievedMemory, Prepared>): { prompt: AssembledPrompt; sentRecentIds: Set<string> } {
  const { counter } = input;
  const gate = neutralizerFor(counter);
  const overhead = counter.perMessageOverhead;
  const available = input.contextWindow - input.reserveForAnswer - counter.replyPrimerTokens;
  const instructionTokens = counter.count(input.systemInstruction) + overhead;
  const user = gate.turn(input.userText);
  const userTokens = counter.count(user.text) + overhead;
  if (instructionTokens + userTokens > available) {
    throw new PromptTooLongError(instructionTokens + userTokens, Math.max(0, available));
  }
  const freeBeforePage = available - instructionTokens - userTokens;
  // Separator between system-message parts ("\n\n") is counted with each added part.
  const partTokens = (text: string) => counter.count(`\n\n${text}`);
  // The attached page takes its share first (the user asked about it); the others share the rest.
  const page = input.page ? pageSection(input.page, counter, Math.floor(freeBeforePage * SECTION_SHARES.page), gate) : null;
  const free = freeBeforePage - (page?.tokens ?? 0);

  const sections: PromptSection[] = [];
  const systemParts: string[] = [input.systemInstruction];
  let used = 0;

  // The user's profile, under its own share, right after the instruction.
  const profile = profileSection(input.profile ?? [], counter, Math.floor(free * PROFILE_SHARE));
  if (profile.text) {
    systemParts.push(profile.text);
    used += profile.section!.tokens;
  }
  if (profile.section) sections.push(profile.section);

  // Long-term memories, capped and ordered by the retrieval module (most relevant at the ends).
  const memoryCap = Math.floor(free * SECTION_SHARES.memories);
  const wrapperTokens = partTokens(wrap('long_term_memories', INTROS.memories, ''));
  const formatted =
    input.memories.length > 0 && memoryCap > wrapperTokens
      ? formatMemoriesForPrompt(input.memories, counter, memoryCap - wrapperTokens)
      : { text: '', included: [] as RetrievedMemory[], dropped: input.memories.length, neighbours: undefined };
  const memoryCitations: MemoryCitation[] = formatted.included
    .map((p) => ({ r: prepared.get(p)?.original ?? p, cut: 'shortened' in formatted && formatted.shortened?.has(p) === true }))
    .map(({ r, cut }) => ({
      memoryId: r.memory.id,
      kind: r.memory.kind,
      text: r.memory.text,
      score: r.score,
      ranks: r.ranks,
      sourceConversationId: r.memory.sourceConversationId,
      sourceConversationTitle: r.memory.sourceConversationId ? (input.conversationTitles.get(r.memory.sourceConversationId) ?? null) : null,
      sourceMessageIds: r.memory.sourceMessageIds,
      createdAt: r.memory.createdAt,
      ...(r.memory.sourceUrl ? { sourceUrl: r.memory.sourceUrl, sourceTitle: r.memory.sourceTitle ?? r.memory.sourceUrl } : {}),
      ...(cut ? { shortened: true as const } : {}),
    }));
  if (formatted.included.length > 0) {
    const text = wrap('long_term_memories', INTROS.memories, formatted.text);
    const tokens = partTokens(text);
    systemParts.push(text);
    used += tokens;
    const report = mergeReports(formatted.included.map((p) => prepared.get(p)?.report ?? { count: 0, pieces: [] }));
    sections.push({ kind: 'memories', text, tokens, items: formatted.included.length, dropped: formatted.dropped, ...neutralizedField(report) });
  } else if (input.memories.length > 0) {
    sections.push({ kind: 'memories', text: '', tokens: 0, items: 0, dropped: input.memories.length });
  }

  // Past exchanges the vector strategy retrieved that are already in the memories section (the
  // same turns, stored as an episodic memory) would be sent twice: leave them out.
  const inMemories = new Set(
    formatted.included.flatMap((r) => [...r.memory.sourceMessageIds, ...(formatted.neighbours?.get(r) ?? []).flatMap((m) => m.sourceMessageIds)]),
  );
  const retrieved = input.shortTerm.retrieved.filter((r) => r.messageIds.length === 0 || !r.messageIds.every((id) => inMemories.has(id)));

  // Optional short-term sections, each under its share. Entity notes and retrieved exchanges are
  // dropped from the end; a summary too long for its share is shortened, never dropped.
  // Stored text → one item: cut, neutralized, continuation lines indented.
  const storedItem = (prefix: string, text: string) => {
    const n = gate.stored(capChars(text.trim(), MAX_INJECTED_TEXT_CHARS));
    return { text: indentContinuation(`${prefix}${n.text}`), report: n as NeutralizedReport };
  };
  const optional: { kind: PromptSectionKind; tag: string; intro: string; items: string[]; reports: NeutralizedReport[]; share: number }[] = [];
  const summaryItems = input.shortTerm.summary?.trim() ? [storedItem('', input.shortTerm.summary)] : [];
  const entityItems = input.shortTerm.entities.map((e) => storedItem('- ', `${e.name}: ${e.summary}`));
  const retrievedItems = retrieved.map((r) => storedItem('', r.text));
  for (const [kind, tag, intro, items, share] of [
    ['summary', 'conversation_summary', INTROS.summary, summaryItems, SECTION_SHARES.summary],
    ['entities', 'entities', INTROS.entities, entityItems, SECTION_SHARES.entities],
    ['retrieved', 'related_past_exchanges', INTROS.retrieved, retrievedItems, SECTION_SHARES.retrieved],
  ] as const) {
    optional.push({ kind, tag, intro, items: items.map((i) => i.text), reports: items.map((i) => i.report), share });
  }
  for (const section of optional) {
    if (section.items.length === 0) continue;
    const cap = Math.floor(free * section.share);
    let kept = section.items.length;
    let text = wrap(section.tag, section.intro, section.items.join('\n'));
    if (section.kind === 'summary' && partTokens(text) > cap) {
      const wrapper = partTokens(wrap(section.tag, section.intro, ''));
      const shortened = fitText(section.items[0]!, counter, cap - wrapper - 2); // 2: a token merge at the seams
      if (shortened) text = wrap(section.tag, section.intro, shortened);
    }
    while (kept > 0 && partTokens(text) > cap) {
      kept -= 1;
      text = wrap(section.tag, section.intro, section.items.slice(0, kept).join('\n'));
    }
    if (kept === 0) {
      sections.push({ kind: section.kind, text: '', tokens: 0, items: 0, dropped: section.items.length });
      continue;
    }
    const tokens = partTokens(text);
    systemParts.push(text);
    used += tokens;
    sections.push({
      kind: section.kind,
      text,
      tokens,
      items: kept,
      dropped: section.items.length - kept,
      ...neutralizedField(mergeReports(section.reports.slice(0, kept))),
    });
  }

  if (page) {
    systemParts.push(page.text);
    sections.push({ kind: 'page', text: page.text, tokens: page.tokens, items: page.items, dropped: page.dropped, ...neutralizedField(page.report) });
  } else if (input.page) {
    sections.push({ kind: 'page', text: '', tokens: 0, items: 0, dropped: input.page.passages.length + (input.page.selection ? 1 : 0) });
  }

  // Recent turns: newest first until the budget is spent; never start on an assistant reply.
  // Each turn is cut to MAX_RECENT_TURN_CHARS before it is counted (a 1 MB message stays cheap).
  const recentBudget = free - used;
  const recent: { m: ContextMessage; content: string; tokens: number; report: NeutralizedReport }[] = [];
  let recentTokens = 0;
  for (let i = input.shortTerm.recent.length - 1; i >= 0; i--) {
    const m = input.shortTerm.recent[i]!;
    const n = gate.turn(capChars(m.content, MAX_RECENT_TURN_CHARS));
    const t = counter.count(n.text) + overhead;
    if (recentTokens + t > recentBudget) break;
    recent.unshift({ m, content: n.text, tokens: t, report: n });
    recentTokens += t;
  }
  while (recent[0]?.m.role === 'assistant') recentTokens -= recent.shift()!.tokens;
  const recentDropped = input.shortTerm.recent.length - recent.length;

  const systemText = systemParts.join('\n\n');
  // Every piece passed `gate` above: sealed, the engine boundary does not scan it again.
  const messages: ChatMessage[] = sealNeutralized(
    [{ role: 'system', content: systemText }, ...recent.map((r) => ({ role: r.m.role, content: r.content })), { role: 'user', content: user.text }],
    gate,
  );
  sections.unshift({ kind: 'system', text: input.systemInstruction, tokens: instructionTokens, items: 1, dropped: 0 });
  if (recent.length > 0 || recentDropped > 0) {
    sections.push({
      kind: 'recent',
      text: recent.map((r) => `${r.m.role}: ${r.content}`).join('\n'),
      tokens: recentTokens,
      items: recent.length,
      dropped: recentDropped,
      ...neutralizedField(mergeReports(recent.map((r) => r.report))),
    });
  }
  sections.push({ kind: 'user', text: user.text, tokens: userTokens, items: 1, dropped: 0, ...neutralizedField(user) });

  // The whole prompt is counted once more as the engine will see it (exact with the model's own
  // tokenizer and chat template); sections are counted piecewise and may differ by a few tokens.
  const promptTokens = countPromptTokens(counter, messages);
  const prompt: AssembledPrompt = {
    messages,
    sections,
    memories: memoryCitations,
    budget: {
      contextWindow: input.contextWindow,
      reservedForAnswer: input.reserveForAnswer,
      promptTokens,
      tokenizer: counter.id,
      exact: counter.exact,
    },
  };
  return { prompt, sentRecentIds: new Set(recent.map((r) => r.m.id)) };
}

/** English weekday names by `Date.getUTCDay()` (0 = Sunday). */
const UTC_WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

/**
 * The default system instruction. `now` (ms) gives the model today's date, which it needs to
 * read dated memories ("last week") correctly.
 */
export function defaultSystemInstruction(now: number): string {
  const date = new Date(now);
  const iso = date.toISOString().slice(0, 10);
  // What `toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' })` says, without building a formatter each turn (~0.5 ms).
  const weekday = UTC_WEEKDAYS[date.getUTCDay()]!;
  return [
    "You are Recall, a private assistant that runs entirely on the user's device.",
    'Always answer in the language the user writes in.',
    'Use what you remember about the user when it helps; if memories conflict, trust the most recent one.',
    `Today is ${iso} (${weekday}).`,
  ].join(' ');
}
