/**
 * Issue 8, fault "huge inputs": a 1 MB message or memory text must not make every later turn
 * slow. Sizes are capped in characters, declared once (MAX_MEMORY_TEXT_CHARS at store time,
 * MAX_INJECTED_TEXT_CHARS / MAX_RECENT_TURN_CHARS before any token is counted). Proven by the
 * characters handed to the token counter (not by timing), on the real prompt assembler, strategy
 * helper, memory store (Dexie on fake-indexeddb) and "remember …" command.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { describeCommand } from '../../src/core/chat-service';
import type { RecallDB } from '../../src/db/schema';
import type { MessageRecord } from '../../src/model/records';
import type { TokenCounter } from '../../src/model/tokens';
import { runMemoryCommand } from '../../src/memory/long-term/commands';
import { episodicText } from '../../src/memory/long-term/index';
import { MemoryTextTooLongError } from '../../src/memory/long-term/text';
import { MAX_MEMORY_TEXT_CHARS } from '../../src/model/memory';
import type { RetrievedMemory, ShortTermContext } from '../../src/model/context';
import { retrievedMemory } from '../helpers/retrieved-memory';
import { messageTokens } from '../../src/memory/short-term/messages';
import { assemblePrompt } from '../../src/prompt/assemble';
import { capChars, MAX_INJECTED_TEXT_CHARS, MAX_RECENT_TURN_CHARS } from '../../src/prompt/neutralize';
import { openTestStore } from '../helpers/ltm-test-store';

const MB = 1024 * 1024;

/** 1 token per character (every expected number computable by hand), recording what it is given. */
function recordingCounter() {
  const lengths: number[] = [];
  const counter: TokenCounter = {
    id: 'test:chars',
    exact: true,
    count: (t) => {
      lengths.push(t.length);
      return t.length;
    },
    perMessageOverhead: 4,
    replyPrimerTokens: 3,
  };
  return { counter, lengths, total: () => lengths.reduce((a, b) => a + b, 0), max: () => Math.max(0, ...lengths) };
}

const memory = (id: string, text: string): RetrievedMemory => retrievedMemory(id, text);
const empty: ShortTermContext = { summary: null, entities: [], retrieved: [], recent: [] };

describe('capChars', () => {
  it('cuts to the cap plus "…", never splits a surrogate pair, leaves short text alone', () => {
    expect(capChars('a'.repeat(10), 4)).toBe('aaaa…');
    expect(capChars('ab😀c', 3)).toBe('ab…'); // index 2–3 is one emoji: cut before it
    expect(capChars('short', 5)).toBe('short');
    expect(capChars('x'.repeat(10 * MB), MAX_INJECTED_TEXT_CHARS)).toHaveLength(MAX_INJECTED_TEXT_CHARS + 1);
  });
});

describe('prompt assembly with oversized stored text', () => {
  it('a retrieved 10 MB memory is cut to MAX_INJECTED_TEXT_CHARS before any token is counted', () => {
    const rec = recordingCounter();
    const out = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [memory('huge', 'x'.repeat(10 * MB)), memory('small', 'likes tea')],
      shortTerm: empty,
      userText: 'hi',
      counter: rec.counter,
      contextWindow: 100_000,
      reserveForAnswer: 1000,
      conversationTitles: new Map(),
    });
    // free = 100000 − 1000 − 3 − (3+4) − (2+4) = 98983; memories 25 % = 24745; one line ≤ half = 12372 tokens,
    // so the 8,000-character cut (+ "…") fits whole, after its date prefix.
    expect(out.messages[0]!.content).toContain(`- [2026-11-01] ${'x'.repeat(MAX_INJECTED_TEXT_CHARS)}…\n`);
    expect(out.messages[0]!.content).toContain('- [2026-11-01] likes tea');
    // No count ever saw more than the cut memory plus the section around it; all counting together
    // is a small multiple of the cap, not of 10 MB.
    expect(rec.max()).toBeLessThan(MAX_INJECTED_TEXT_CHARS + 400);
    expect(rec.total()).toBeLessThan(20 * MAX_INJECTED_TEXT_CHARS);
    // The citation still shows the stored memory (its id and kind), not a copy of 10 MB in the prompt.
    expect(out.memories.map((m) => m.memoryId)).toEqual(['huge', 'small']);
  });

  it('a 10 MB summary, entity note and retrieved exchange are cut the same way', () => {
    const rec = recordingCounter();
    const out = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [],
      shortTerm: {
        ...empty,
        summary: 's'.repeat(10 * MB),
        entities: [{ name: 'Ana', summary: 'e'.repeat(10 * MB) }],
        retrieved: [{ text: 'r'.repeat(10 * MB), conversationId: 'c0', messageIds: [], similarity: null }],
      },
      userText: 'hi',
      counter: rec.counter,
      contextWindow: 200_000,
      reserveForAnswer: 1000,
      conversationTitles: new Map(),
    });
    const system = out.messages[0]!.content;
    expect(system).toContain(`\n${'s'.repeat(MAX_INJECTED_TEXT_CHARS)}…\n</conversation_summary>`);
    expect(system).toContain(`\n- Ana: ${'e'.repeat(MAX_INJECTED_TEXT_CHARS - 'Ana: '.length)}…\n</entities>`);
    expect(system).toContain(`\n${'r'.repeat(MAX_INJECTED_TEXT_CHARS)}…\n</related_past_exchanges>`);
    expect(rec.max()).toBeLessThan(3 * MAX_INJECTED_TEXT_CHARS + 1000); // the whole system message
    expect(rec.total()).toBeLessThan(30 * MAX_INJECTED_TEXT_CHARS);
  });

  it('a 1 MB earlier message costs at most MAX_RECENT_TURN_CHARS of counting at a later turn', () => {
    const rec = recordingCounter();
    const recent = [
      { id: 'u0', seq: 0, role: 'user' as const, content: 'y'.repeat(MB) },
      { id: 'a0', seq: 1, role: 'assistant' as const, content: 'that is long' },
    ];
    const out = assemblePrompt({
      systemInstruction: 'SYS',
      memories: [],
      shortTerm: { ...empty, recent },
      userText: 'and now?',
      counter: rec.counter,
      contextWindow: 100_000,
      reserveForAnswer: 1000,
      conversationTitles: new Map(),
    });
    expect(out.messages[1]!.content).toBe(`${'y'.repeat(MAX_RECENT_TURN_CHARS)}…`);
    expect(rec.max()).toBeLessThanOrEqual(MAX_RECENT_TURN_CHARS + 1 + 100);
    // The short-term strategies count turns with the same cut.
    rec.lengths.length = 0;
    expect(messageTokens(rec.counter, recent[0]!)).toBe(MAX_RECENT_TURN_CHARS + 1 + 4);
    expect(rec.max()).toBe(MAX_RECENT_TURN_CHARS + 1);
  });
});

describe('memory text cap at store time', () => {
  let db: RecallDB | undefined;
  afterEach(async () => {
    await db?.delete();
    db = undefined;
  });

  it('add and update refuse a text over MAX_MEMORY_TEXT_CHARS with a clear error and store nothing', async () => {
    const opened = await openTestStore({ name: 'huge' });
    db = opened.db;
    const { store } = opened;
    const ok = await store.add({ namespace: 'default', kind: 'fact', text: 'a'.repeat(MAX_MEMORY_TEXT_CHARS) }, 'user');
    expect(ok.created).toBe(true);
    const tooLong = 'b'.repeat(MAX_MEMORY_TEXT_CHARS + 1);
    const add = store.add({ namespace: 'default', kind: 'fact', text: tooLong }, 'user');
    await expect(add).rejects.toBeInstanceOf(MemoryTextTooLongError);
    await expect(store.add({ namespace: 'default', kind: 'fact', text: tooLong }, 'user')).rejects.toThrow(
      `This memory is ${MAX_MEMORY_TEXT_CHARS + 1} characters long; a memory can hold at most ${MAX_MEMORY_TEXT_CHARS}. Shorten it; nothing was saved.`,
    );
    await expect(store.update(ok.memory.id, { text: tooLong }, 'user')).rejects.toBeInstanceOf(MemoryTextTooLongError);
    const all = await db.memories.toArray();
    expect(all.map((m) => m.text)).toEqual(['a'.repeat(MAX_MEMORY_TEXT_CHARS)]);
    expect(await db.memoryHistory.count()).toBe(1); // the one ADD
  });

  it('"remember …" with a 1 MB text is refused in words (EN and ZH) and stores nothing', async () => {
    const opened = await openTestStore({ name: 'huge-cmd' });
    db = opened.db;
    const ctx = { namespace: 'default', conversationId: 'c1', messageId: 'm1' };
    const en = await runMemoryCommand(opened.store, `remember that ${'z'.repeat(MB)}`, ctx);
    expect(en).toEqual({ command: 'remember', affected: [], refused: 'too_long' });
    expect(describeCommand(en!, 'remember that …')).toBe(
      `That is too long to keep as one memory (at most ${MAX_MEMORY_TEXT_CHARS} characters). Shorten it and say “remember …” again. Nothing was saved.`,
    );
    const zh = await runMemoryCommand(opened.store, `记住${'长'.repeat(MAX_MEMORY_TEXT_CHARS + 1)}`, ctx);
    expect(zh?.refused).toBe('too_long');
    expect(describeCommand(zh!, '记住…')).toContain(`最多 ${MAX_MEMORY_TEXT_CHARS} 个字符`);
    expect(await db.memories.count()).toBe(0);
  });

  it('an episodic round of a 1 MB message is cut to fit the store', () => {
    const user = { id: 'u', content: 'q'.repeat(MB), status: 'complete', role: 'user' } as MessageRecord;
    const reply = { id: 'a', content: 'w'.repeat(MB), status: 'complete', role: 'assistant' } as MessageRecord;
    const text = episodicText(user, reply);
    const half = MAX_MEMORY_TEXT_CHARS / 2 - 16;
    expect(text).toBe(`User: ${'q'.repeat(half)}…\nAssistant: ${'w'.repeat(half)}…`);
    expect(text.length).toBeLessThanOrEqual(MAX_MEMORY_TEXT_CHARS);
  });
});
