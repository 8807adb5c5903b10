/**
 * Prompt assembly under a token budget. A 1-token-per-character counter makes every expected
 * number computable by hand (template overhead 4 per message, reply primer 3).
 */
import { describe, expect, it } from 'vitest';
import type { TokenCounter } from '../../src/model/tokens';
import type { RetrievedMemory, ContextMessage, ShortTermContext } from '../../src/model/context';
import { retrievedMemory } from '../helpers/retrieved-memory';
import { assemblePrompt, fitText, PromptTooLongError, SECTION_SHARES, shortTermBudget } from '../../src/prompt/assemble';

const chars: TokenCounter = { id: 'test:chars', exact: true, count: (t) => t.length, perMessageOverhead: 4, replyPrimerTokens: 3 };
const empty: ShortTermContext = { summary: null, entities: [], retrieved: [], recent: [] };
const turn = (seq: number, role: 'user' | 'assistant', content: string): ContextMessage => ({ id: `m${seq}`, seq, role, content });
const memory = (id: string, text: string, conversationId: string | null = 'c1'): RetrievedMemory =>
  retrievedMemory(id, text, { memory: { sourceConversationId: conversationId, sourceMessageIds: ['u1', 'a1'] }, ranks: { lexical: 1, vector: 2 } });
/** Tokens of a message list under `chars`: Σ (content + 4) + 3. */
const tokensOf = (messages: { content: string }[]) => messages.reduce((n, m) => n + m.content.length + 4, 0) + 3;

describe('assemblePrompt', () => {
  it('lays out system + sections, recent turns, user message, and counts every token', () => {
    const recent = [turn(0, 'user', 'hi there'), turn(1, 'assistant', 'hello!')];
    const out = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [memory('x', 'likes tea')],
      shortTerm: { ...empty, summary: 'they met', recent },
      userText: 'what do I like?',
      counter: chars,
      contextWindow: 2000,
      reserveForAnswer: 100,
      conversationTitles: new Map([['c1', 'First chat']]),
    });
    expect(out.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(out.messages[3]!.content).toBe('what do I like?');
    const system = out.messages[0]!.content;
    expect(system.startsWith('SYS\n\n<long_term_memories>\n')).toBe(true);
    expect(system).toContain('- [2026-11-01] likes tea');
    expect(system).toContain('<conversation_summary>\nSummary of the earlier part of this conversation:\nthey met\n</conversation_summary>');
    expect(out.sections.map((s) => s.kind)).toEqual(['system', 'memories', 'summary', 'recent', 'user']);
    // Section tokens add up to exactly what the messages cost.
    expect(out.budget.promptTokens).toBe(tokensOf(out.messages));
    expect(out.sections.reduce((n, s) => n + s.tokens, 0) + 3).toBe(out.budget.promptTokens);
    expect(out.sections.find((s) => s.kind === 'user')!.tokens).toBe(15 + 4);
    expect(out.sections.find((s) => s.kind === 'recent')!.tokens).toBe(8 + 4 + 6 + 4);
    expect(out.memories).toEqual([
      expect.objectContaining({ memoryId: 'x', sourceConversationId: 'c1', sourceConversationTitle: 'First chat', ranks: { lexical: 1, vector: 2 } }),
    ]);
    expect(out.budget).toMatchObject({ contextWindow: 2000, reservedForAnswer: 100, tokenizer: 'test:chars', exact: true });
  });

  it('drops the oldest whole turns first and never starts the history on a reply', () => {
    const recent = [
      turn(0, 'user', 'a'.repeat(40)),
      turn(1, 'assistant', 'b'.repeat(40)),
      turn(2, 'user', 'c'.repeat(10)),
      turn(3, 'assistant', 'd'.repeat(10)),
    ];
    // available = 200 − 50 − 3 = 147; instruction 3+4 = 7; user 2+4 = 6; free = 134.
    // Newest first: d 14, c 14, b 44 (72), a 44 would make 116 ≤ 134 → all fit.
    const all = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [],
      shortTerm: { ...empty, recent },
      userText: 'ok',
      counter: chars,
      contextWindow: 200,
      reserveForAnswer: 50,
      conversationTitles: new Map(),
    });
    expect(all.sections.find((s) => s.kind === 'recent')).toMatchObject({ items: 4, dropped: 0, tokens: 116 });
    // contextWindow 160 → free = 94: d, c (28), b (72) fit, a (116) does not; b is then a leading reply and goes too.
    const cut = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [],
      shortTerm: { ...empty, recent },
      userText: 'ok',
      counter: chars,
      contextWindow: 160,
      reserveForAnswer: 50,
      conversationTitles: new Map(),
    });
    expect(cut.messages.map((m) => m.content)).toEqual([expect.any(String), 'c'.repeat(10), 'd'.repeat(10), 'ok']);
    expect(cut.sections.find((s) => s.kind === 'recent')).toMatchObject({ items: 2, dropped: 2, tokens: 28 });
    expect(cut.budget.promptTokens).toBe(tokensOf(cut.messages));
  });

  it('leaves out a memory whose turns are sent verbatim, and keeps it when the context window drops those turns', () => {
    // The memory helper's source turns are u1 + a1.
    const msg = (id: string, seq: number, role: 'user' | 'assistant', content: string): ContextMessage => ({ id, seq, role, content });
    const recent = [
      msg('u1', 0, 'user', 'a'.repeat(400)),
      msg('a1', 1, 'assistant', 'b'.repeat(400)),
      msg('u2', 2, 'user', 'c'.repeat(10)),
      msg('a2', 3, 'assistant', 'd'.repeat(10)),
    ];
    const input = {
      systemInstruction: 'SYS',
      memories: [memory('x', 'likes tea')],
      shortTerm: { ...empty, recent },
      userText: 'ok',
      counter: chars,
      reserveForAnswer: 50,
      conversationTitles: new Map(),
    };
    // Window 2000: every turn fits (404 + 404 + 14 + 14 = 836 ≤ 2000 − 66), so the memory repeats them and is left out.
    const wide = assemblePrompt({ ...input, contextWindow: 2000 });
    expect(wide.sections.find((s) => s.kind === 'recent')).toMatchObject({ items: 4, dropped: 0 });
    expect(wide.memories).toEqual([]);
    expect(wide.sections.map((s) => s.kind)).not.toContain('memories');
    // Window 900: free = 900 − 50 − 3 − 7 − 6 = 834. Without the memory, d + c (28) + b (432) fit and a (836) does
    // not; b then leads and goes too. u1/a1 are not sent, so the memory goes in (its section fits the 208-token share).
    const narrow = assemblePrompt({ ...input, contextWindow: 900 });
    expect(narrow.sections.find((s) => s.kind === 'recent')).toMatchObject({ items: 2, dropped: 2 });
    expect(narrow.messages.map((m) => m.content).slice(1)).toEqual(['c'.repeat(10), 'd'.repeat(10), 'ok']);
    expect(narrow.memories.map((m) => m.memoryId)).toEqual(['x']);
    expect(narrow.messages[0]!.content).toContain('- [2026-11-01] likes tea');
    expect(narrow.budget.promptTokens).toBe(tokensOf(narrow.messages));
  });

  it('gives strategies the room left after the answer, instruction, message and the memories share', () => {
    // fixed = primer 3 + 'SYS' 3 + 'ok' 2 + 2 × overhead 4 = 16; free = 1000 − 100 − 16 = 884; × (1 − 0.25) = 663.
    expect(shortTermBudget({ systemInstruction: 'SYS', userText: 'ok', counter: chars, contextWindow: 1000, reserveForAnswer: 100 })).toBe(663);
    expect(shortTermBudget({ systemInstruction: 'SYS', userText: 'x'.repeat(2000), counter: chars, contextWindow: 1000, reserveForAnswer: 100 })).toBe(0);
  });

  it('does not send a retrieved past exchange again when its turns are already a memory in the prompt', () => {
    const exchange = (ids: string[], text: string) => ({ text, conversationId: 'c0', messageIds: ids, similarity: 0.8 });
    const out = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [memory('x', 'User: I like tea')], // source turns u1 + a1
      shortTerm: { ...empty, retrieved: [exchange(['u1', 'a1'], 'User: I like tea'), exchange(['u7', 'a7'], 'User: I have a cat')] },
      userText: 'q',
      counter: chars,
      contextWindow: 4000,
      reserveForAnswer: 100,
      conversationTitles: new Map(),
    });
    expect(out.memories.map((m) => m.memoryId)).toEqual(['x']);
    expect(out.sections.find((s) => s.kind === 'retrieved')).toMatchObject({ items: 1, dropped: 0 });
    const system = out.messages[0]!.content;
    expect(system.split('I like tea')).toHaveLength(2); // once, in the memories
    expect(system).toContain('User: I have a cat');
  });

  it('throws a clear error when the message alone does not fit', () => {
    const input = {
      systemInstruction: 'SYS',
      memories: [],
      shortTerm: empty,
      counter: chars,
      contextWindow: 100,
      reserveForAnswer: 50,
      conversationTitles: new Map(),
    };
    // available = 47; 7 + (40 + 4) = 51 > 47.
    expect(() => assemblePrompt({ ...input, userText: 'x'.repeat(40) })).toThrow(PromptTooLongError);
    expect(() => assemblePrompt({ ...input, userText: 'x'.repeat(36) })).not.toThrow(); // 7 + 40 = 47
  });

  it('shortens a summary longer than its share instead of dropping it', () => {
    const summary = 's'.repeat(500);
    const out = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [],
      shortTerm: { ...empty, summary },
      userText: 'q',
      counter: chars,
      contextWindow: 1000,
      reserveForAnswer: 100,
      conversationTitles: new Map(),
    });
    // free = 1000 − 100 − 3 − 7 − 5 = 885; summary cap = floor(885 · 0.4) = 354 tokens.
    const section = out.sections.find((s) => s.kind === 'summary')!;
    expect(SECTION_SHARES.summary).toBe(0.4);
    expect(section.tokens).toBeLessThanOrEqual(354);
    expect(section.tokens).toBeGreaterThan(340);
    expect(section.text).toMatch(/s+…\n<\/conversation_summary>$/);
    expect(section.items).toBe(1);
  });

  it('drops entity notes and retrieved exchanges from the end to fit their shares', () => {
    const entities = Array.from({ length: 20 }, (_, i) => ({ name: `E${i}`, summary: 'n'.repeat(20) }));
    const out = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [],
      shortTerm: { ...empty, entities },
      userText: 'q',
      counter: chars,
      contextWindow: 1000,
      reserveForAnswer: 100,
      conversationTitles: new Map(),
    });
    const section = out.sections.find((s) => s.kind === 'entities')!;
    // cap = floor(885 · 0.15) = 132; wrapper "\n\n<entities>\n" + intro (43) + "\n" … "\n</entities>" = 2+11+43+1+1+11 = 69 → 63 left;
    // each note "- Ei: nnn…" is 26 characters (+1 newline between): two take 53, three 80 → 2 kept.
    expect(section).toMatchObject({ items: 2, dropped: 18 });
    expect(section.tokens).toBeLessThanOrEqual(132);
  });
});

describe('fitText', () => {
  it('keeps text that fits and cuts the rest with an ellipsis', () => {
    expect(fitText('abcdef', chars, 6)).toBe('abcdef');
    expect(fitText('abcdef', chars, 4)).toBe('abc…');
    // ICU segments 我 | 喜欢 | 打篮球: the cut falls between words, not inside 喜欢.
    expect(fitText('我喜欢打篮球', chars, 3)).toBe('我…');
    expect(fitText('abc', chars, 0)).toBe('');
  });

  it('never cuts a word in two (issue 12 item 9: "test fact n…"); a single word longer than the room is cut inside', () => {
    // 13 "tokens" (characters) of room: "test fact n" + "…" would fit, but "n" starts a word.
    expect(fitText('test fact number 12', chars, 13)).toBe('test fact…');
    expect(fitText('Moved to Hangzhou. Works at Acme.', chars, 22)).toBe('Moved to Hangzhou…');
    expect(fitText('supercalifragilistic', chars, 6)).toBe('super…');
  });
});
