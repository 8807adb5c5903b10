/**
 * Incremental exact counting for SentencePiece ("llama") GGUF counters (src/tokens/spm.ts
 * `countTokens`, src/tokens/gguf.ts): when no token contains a newline (`newlineIsolated`), a text
 * is counted as the sum of its cached stretches between newlines. Checked against
 * `LlamaSpmTokenizer.encode` of the whole text (itself checked against Google's SentencePiece in
 * tokens-gguf.test.ts) on the real stories260K vocabulary; against a synthetic vocabulary with
 * newline tokens, where the text must be counted whole; and for its cost (a prompt that changed
 * one line encodes that line only).
 */
import { existsSync, readFileSync } from 'node:fs';
import { GGUFValueType, serializeGgufMetadata, type GGUFTypedMetadata } from '@huggingface/gguf';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../../src/model/engine';
import type { RetrievedMemory } from '../../src/model/context';
import { assemblePrompt } from '../../src/prompt/assemble';
import { countPromptTokens, createGgufTokenCounter, readGgufMetadata, type ChatTokenCounter } from '../../src/tokens';
import { renderChat } from '../../src/tokens/chat-template';
import { makeChatCounter } from '../../src/tokens/counter';
import { LlamaSpmTokenizer } from '../../src/tokens/spm';
import { mulberry32 } from '../../bench/data/prng';
import { retrievedMemory } from '../helpers/retrieved-memory';

const STORIES = new URL('../../../shared/fixtures/models/stories260K/stories260K.gguf', import.meta.url);
const haveStories = existsSync(STORIES);
if (!haveStories) console.warn(`[tokens-spm-incremental] skipping stories260K tests: ${STORIES.pathname} not found (../shared absent)`);

const corpus = JSON.parse(readFileSync(new URL('../../bench/data/token-corpus.json', import.meta.url), 'utf8')) as {
  calibration: Record<'en' | 'zh', string[]>;
  heldOut: Record<'en' | 'zh', string[]>;
};
const en = [...corpus.calibration.en, ...corpus.heldOut.en];
const zh = [...corpus.calibration.zh, ...corpus.heldOut.zh];

/** Seams between two pieces of text: newlines with spaces around them, blank lines, special strings, ChatML markers. */
const SEAMS = [
  '\n',
  '\n\n',
  '\n\n\n',
  ' \n',
  '\n ',
  '  \n\n  ',
  '\r\n',
  '\n\t',
  '\n- ',
  '<s>',
  '</s>',
  '\n<s>\n',
  ' </s> ',
  '<unk>\n',
  '<|im_end|>\n<|im_start|>user\n',
  '。\n',
  '\n你',
  ' ',
];

/** `count` pieces of the corpus joined by random seams (seeded), sometimes with leading/trailing newlines or spaces. */
function texts(source: readonly string[], count: number, seed: number): string[] {
  const rand = mulberry32(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const parts = Array.from({ length: 2 + Math.floor(rand() * 6) }, () => {
      const t = pick(source);
      return rand() < 0.5 ? t : t.slice(0, 1 + Math.floor(rand() * t.length));
    });
    let text = parts.reduce((acc, p) => `${acc}${pick(SEAMS)}${p}`);
    const r = rand();
    if (r < 0.15) text = `\n${text}`;
    else if (r < 0.3) text = ` ${text}`;
    else if (r < 0.4) text = `<s>\n${text}`;
    if (rand() < 0.2) text = `${text}\n`;
    out.push(text);
  }
  return out;
}

/** Texts written by hand for the edges: empty lines, newline runs, specials next to newlines, spaces at line starts. */
const EDGES = [
  '',
  ' ',
  '\n',
  '\n\n\n',
  ' \n ',
  'a\n',
  '\na',
  '\n\nOnce upon a time\n\n',
  '  two spaces first\n   three on the next\n\n    four after a blank line',
  '<s>',
  '<s>\n',
  '\n<s>',
  '<s>\n</s>',
  'Lily said <s> hi\n</s> and <unk>\n\n<s>the end',
  '<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nTell me a story.<|im_end|>\n<|im_start|>assistant\n',
  '我的猫叫麻薯。\n它喜欢睡觉。\n\n 你好\n',
  'mixed 中文 and English\n中文开头的一行\n  缩进的中文',
  '\r\n\r\nwindows lines\r\nend\r\n',
];

type Kv = Record<string, { value: unknown; type: GGUFValueType; subType?: GGUFValueType }>;

/** A GGUF file (header only, no tensors) with the given key/values. */
function ggufBlob(kv: Kv): Blob {
  const typed = {
    version: { value: 3, type: GGUFValueType.UINT32 },
    tensor_count: { value: 0n, type: GGUFValueType.UINT64 },
    kv_count: { value: BigInt(Object.keys(kv).length), type: GGUFValueType.UINT64 },
    ...kv,
  } as unknown as GGUFTypedMetadata;
  return new Blob([serializeGgufMetadata(typed) as Uint8Array<ArrayBuffer>]);
}

/** A llama-type GGUF header for a synthetic vocabulary. */
function spmGguf(tokens: string[], scores: number[], types: number[]): Blob {
  return ggufBlob({
    'general.name': { value: 'synthetic', type: GGUFValueType.STRING },
    'tokenizer.ggml.model': { value: 'llama', type: GGUFValueType.STRING },
    'tokenizer.ggml.tokens': { value: tokens, type: GGUFValueType.ARRAY, subType: GGUFValueType.STRING },
    'tokenizer.ggml.scores': { value: scores, type: GGUFValueType.ARRAY, subType: GGUFValueType.FLOAT32 },
    'tokenizer.ggml.token_type': { value: types, type: GGUFValueType.ARRAY, subType: GGUFValueType.INT32 },
    'tokenizer.ggml.bos_token_id': { value: 1, type: GGUFValueType.UINT32 },
  });
}

let spm: LlamaSpmTokenizer;
let counter: ChatTokenCounter;
/** The counter as it was before counting by lines: the joined prompt encoded whole every time. */
let whole: ChatTokenCounter;

beforeAll(async () => {
  if (!haveStories) return;
  const blob = new Blob([readFileSync(STORIES)]);
  const md = await readGgufMetadata(blob);
  spm = new LlamaSpmTokenizer(
    { tokens: md['tokenizer.ggml.tokens'] as string[], scores: md['tokenizer.ggml.scores'] as number[], types: md['tokenizer.ggml.token_type'] as number[] },
    { addSpacePrefix: true },
  );
  counter = (await createGgufTokenCounter(blob))!;
  whole = makeChatCounter({
    id: 'test:stories-whole',
    countText: (text) => spm.encode(text).length,
    template: counter.chatTemplate,
    extraFixedTokens: 1,
    joined: true,
    bos: '<s>',
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('SentencePiece counting by lines (stories260K)', () => {
  it.skipIf(!haveStories)('stories260K is newline-isolated, and its counter says it is incremental', () => {
    expect(spm.newlineIsolated).toBe(true);
    expect(spm.wordIsolated).toBe(true);
    expect(counter.incremental).toBe(true);
    expect(whole.incremental).toBe(false);
  });

  it.skipIf(!haveStories)('countTokens and count equal encode(text).length on 400 English, Chinese and mixed texts and the hand-written edges', () => {
    const all = [...EDGES, ...texts(en, 200, 11), ...texts(zh, 120, 12), ...texts([...en, ...zh], 80, 13)];
    let multiLine = 0;
    for (const text of all) {
      if (text.includes('\n')) multiLine += 1;
      const expected = spm.encode(text).length;
      const label = JSON.stringify(text.slice(0, 60));
      expect(spm.countTokens(text), label).toBe(expected);
      expect(counter.count(text), label).toBe(expected);
    }
    expect(multiLine).toBeGreaterThan(300); // most texts really were counted in pieces
  });

  it.skipIf(!haveStories)('hands countPiece each stretch between newlines, with the space prefix where encode puts it', () => {
    const pieces: string[] = [];
    const n = spm.countTokens(' hello <s> world\nfoo\n\n bar</s>\n', (piece) => {
      pieces.push(piece);
      return spm.countPiece(piece);
    });
    // " hello " starts the text: prefix → "▁▁hello▁"; " world\nfoo\n\n bar" follows <s>: prefix,
    // then cut at the newlines (the empty stretch is not counted); "\n" after </s>: prefix → "▁".
    expect(pieces).toEqual(['▁▁hello▁', '▁▁world', 'foo', '▁bar', '▁']);
    expect(n).toBe(spm.encode(' hello <s> world\nfoo\n\n bar</s>\n').length);
  });

  it.skipIf(!haveStories)('countStretch hands countWord each word, cut before a "▁" that follows another code point than "▁"', () => {
    const words: string[] = [];
    const count = (stretch: string) =>
      spm.countStretch(stretch, (word) => {
        words.push(word);
        return spm.countPiece(word);
      });
    // Runs of "▁" stay with the word after them; a trailing "▁" is a word of its own.
    // Each count equals the stretch encoded whole.
    expect(count('▁▁hello▁')).toBe(spm.countPiece('▁▁hello▁'));
    expect(words).toEqual(['▁▁hello', '▁']);
    words.length = 0;
    expect(count('Lily▁said▁▁▁hi.')).toBe(spm.countPiece('Lily▁said▁▁▁hi.'));
    expect(words).toEqual(['Lily', '▁said', '▁▁▁hi.']);
    words.length = 0;
    expect(count('我的猫▁叫麻薯。')).toBe(spm.countPiece('我的猫▁叫麻薯。'));
    expect(words).toEqual(['我的猫', '▁叫麻薯。']);
  });

  it.skipIf(!haveStories)('countChat of rendered chats equals encode of the joined prompt plus BOS, as the whole-prompt count did', () => {
    const chats: ChatMessage[][] = [
      [{ role: 'user', content: 'Tell me a story.' }],
      [
        { role: 'system', content: 'Be kind.\n\nYou remember:\n- the cat is Mochi\n  - she sleeps a lot\n' },
        { role: 'user', content: '\n\nOnce upon a time\n' },
        { role: 'assistant', content: 'There was a girl named Lily.\n\n\nShe liked <s> and </s>.' },
        { role: 'user', content: '我的猫叫麻薯。\n 它喜欢睡觉。' },
      ],
      ...[0, 1, 2].map((k): ChatMessage[] =>
        texts([...en, ...zh], 4, 20 + k).map((content, i) => ({ role: i === 0 ? 'system' : i % 2 ? 'user' : 'assistant', content })),
      ),
    ];
    for (const messages of chats) {
      const r = renderChat(counter.chatTemplate, messages, { bos: '<s>' });
      const joined = r.prefix + r.messages.join('') + r.primer;
      expect(counter.countChat(messages)).toBe(spm.encode(joined).length + 1);
      expect(counter.countChat(messages)).toBe(whole.countChat(messages));
      expect(countPromptTokens(counter, messages)).toBe(countPromptTokens(whole, messages));
    }
    expect(counter.perMessageOverhead).toBe(whole.perMessageOverhead);
    expect(counter.replyPrimerTokens).toBe(whole.replyPrimerTokens);
  });

  it.skipIf(!haveStories)('an assembled prompt (memories, summary, recent turns; EN and ZH) counts as the whole-prompt count', () => {
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
        counter,
        contextWindow: 32_768,
        reserveForAnswer: 512,
        conversationTitles: new Map(),
      });
      expect(prompt.messages[0]!.content).toContain('<long_term_memories>');
      expect(prompt.budget.promptTokens, lang).toBe(countPromptTokens(whole, prompt.messages));
    }
  });
});

describe('SentencePiece counting by lines and words: cost', () => {
  it.skipIf(!haveStories)('a prompt that changed one memory line and the user message encodes the words never seen only', async () => {
    const fresh = (await createGgufTokenCounter(new Blob([readFileSync(STORIES)])))!;
    const spy = vi.spyOn(LlamaSpmTokenizer.prototype, 'countPiece');
    const lines = [...en.slice(0, 10), ...zh.slice(0, 10)].map((t) => `- ${t.replace(/\n/g, ' ')}`);
    const system = (memoryLines: string[]) => `You are Recall.\n\n<long_term_memories>\nThings you remember:\n${memoryLines.join('\n')}\n</long_term_memories>`;
    const messages = (memoryLines: string[], question: string): ChatMessage[] => [
      { role: 'system', content: system(memoryLines) },
      { role: 'user', content: en[20]!.replace(/\n/g, ' ') },
      { role: 'assistant', content: zh[20]!.replace(/\n/g, ' ') },
      { role: 'user', content: question },
    ];
    const first = fresh.countChat(messages(lines, 'And now?'));
    const seen = spy.mock.calls.map(([piece]) => piece);
    expect(seen.length).toBeGreaterThan(lines.length); // every line was new, encoded word by word
    expect(new Set(seen).size).toBe(seen.length); // and each word once
    spy.mockClear();
    // A changed memory line made of three words seen above and one never seen.
    const known = seen.filter((w) => /^\u2581[^\u2581<]+$/u.test(w)).slice(0, 3);
    expect(known).toHaveLength(3);
    const changed = [...lines];
    changed[7] = `-${known.join('')}\u2581Zorblax`.replace(/\u2581/g, ' ');
    const second = fresh.countChat(messages(changed, 'And then?'));
    // The ChatML markers are plain text here, so the user line is "And then?<|im_end|>": "And" was seen in "And now?…".
    expect(spy.mock.calls.map(([piece]) => piece)).toEqual(['▁Zorblax', '▁then?<|im_end|>']);
    expect(second).toBe(whole.countChat(messages(changed, 'And then?')));
    expect(first).toBe(whole.countChat(messages(lines, 'And now?')));
    // Counting it again encodes nothing.
    spy.mockClear();
    fresh.countChat(messages(changed, 'And then?'));
    expect(spy).not.toHaveBeenCalled();
  });
});

describe('SentencePiece vocabularies with a "▁" inside a token are not cut into words', () => {
  // "a▁b" (a merge across a word cut) and the llama-style run "▁▁" (allowed: its "▁"s are a prefix).
  const tokens = ['<unk>', '<s>', '</s>', '▁', 'a', 'b', '▁a', '▁b', 'a▁b', '▁▁', '<0x0A>'];
  const scores = [0, 0, 0, -1, -2, -3, -5, -3, -0.5, -4, 0];
  const types = [2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 6];
  const samples = ['a b', 'ba b', 'b a b', 'a  b', ' a b a', 'ab a b', '<s>ba b</s> b'];

  it('wordIsolated is false, and countTokens still equals encode (where a sum of words would not)', async () => {
    const synthetic = new LlamaSpmTokenizer({ tokens, scores, types }, { addSpacePrefix: true });
    expect(synthetic.wordIsolated).toBe(false);
    for (const text of samples) expect(synthetic.countTokens(text), JSON.stringify(text)).toBe(synthetic.encode(text).length);
    // Hand-computed: "ba b" → "▁ba▁b": the two "▁b" (−3) merge, leftmost first → ▁b a ▁b; then "a▁b" (−0.5)
    // → ▁b a▁b, 2 tokens. Cut into the words "▁ba" (▁b a, 2) and "▁b" (1) it would be 3.
    expect(synthetic.encode('ba b')).toEqual([7, 8]);
    expect(synthetic.countPiece('\u2581ba') + synthetic.countPiece('\u2581b')).toBe(3);
    expect(synthetic.countTokens('ba b')).toBe(2);
    const c = (await createGgufTokenCounter(spmGguf(tokens, scores, types)))!;
    for (const text of samples) expect(c.count(text), JSON.stringify(text)).toBe(synthetic.encode(text).length);
  });

  it('a vocabulary whose "▁"s are all prefixes ("▁▁" runs included) is cut into words, and counts like encode', () => {
    const plain = new LlamaSpmTokenizer({ tokens: tokens.map((t) => (t === 'a▁b' ? 'ab' : t)), scores, types }, { addSpacePrefix: true });
    expect(plain.wordIsolated).toBe(true);
    for (const text of [...samples, 'a   b  a', '  b a  ']) expect(plain.countTokens(text), JSON.stringify(text)).toBe(plain.encode(text).length);
  });
});

describe('SentencePiece vocabularies with newline tokens are counted whole', () => {
  // ids 0..2 special; "\n\n" and "a\n" let newlines merge with their neighbours.
  const tokens = ['<unk>', '<s>', '</s>', '▁', 'a', 'b', '\n', '\n\n', 'a\n', '▁a', '<0x0A>'];
  const scores = [0, 0, 0, -1, -2, -3, -4, -0.5, -0.7, -6, 0];
  const types = [2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 6];
  /** The vocabulary with some tokens renamed to newline-free strings (same ids, scores and types). */
  const renamed = (names: Record<string, string>) => tokens.map((t) => names[t] ?? t);
  const variants = {
    both: tokens,
    'only "\\n\\n"': renamed({ 'a\n': 'x' }),
    'only "a\\n"': renamed({ '\n\n': 'y' }),
  };
  const samples = ['a\n\nb', 'a\nb', '\n\n\na\n', 'b\na\n\n<s>\n\na', ' a\n a\n\n', 'ab\n\nba\nab', '<s>a\n</s>\n\n'];

  it('newlineIsolated is false, and countTokens still equals encode (where a sum of lines would not)', () => {
    for (const [name, variant] of Object.entries(variants)) {
      const synthetic = new LlamaSpmTokenizer({ tokens: variant, scores, types }, { addSpacePrefix: true });
      expect(synthetic.newlineIsolated, name).toBe(false);
      let differs = 0;
      for (const text of samples) {
        expect(synthetic.countTokens(text), `${name} ${JSON.stringify(text)}`).toBe(synthetic.encode(text).length);
        if (text.includes('<s>')) continue;
        // What counting by lines would give: the escaped text cut at its newlines, one token per newline.
        const lines = ` ${text}`.replace(/ /g, '\u2581').split('\n');
        const byLines = lines.length - 1 + lines.reduce((n, line) => n + synthetic.countPiece(line), 0);
        if (byLines !== synthetic.encode(text).length) differs += 1;
      }
      expect(differs, name).toBeGreaterThan(0);
    }
    // Hand-computed: "▁a\n\nb" → "\n\n" (−0.5) beats "a\n" (−0.7); "a\n\n" is no token, "▁a" (−6) is:
    // ▁a \n\n b, 3 tokens, where by lines it would be ▁a \n \n b, 4.
    expect(new LlamaSpmTokenizer({ tokens, scores, types }, { addSpacePrefix: true }).encode('a\n\nb')).toEqual([9, 7, 5]);
  });

  it('a GGUF counter on such a vocabulary counts like encode (incremental by words only: no token has an inner "▁")', async () => {
    for (const [name, variant] of Object.entries(variants)) {
      const synthetic = new LlamaSpmTokenizer({ tokens: variant, scores, types }, { addSpacePrefix: true });
      const c = (await createGgufTokenCounter(spmGguf(variant, scores, types)))!;
      expect(synthetic.wordIsolated, name).toBe(true);
      expect(c.incremental, name).toBe(true);
      for (const text of samples) expect(c.count(text), `${name} ${JSON.stringify(text)}`).toBe(synthetic.encode(text).length);
      const messages: ChatMessage[] = [
        { role: 'system', content: 'a\n\nb' },
        { role: 'user', content: 'ab\na\n\n' },
      ];
      const r = renderChat(c.chatTemplate, messages, { bos: '<s>' });
      expect(c.countChat(messages), name).toBe(synthetic.encode(r.prefix + r.messages.join('') + r.primer).length + 1);
    }
  });

  it('a vocabulary whose only newline token is "\\n" itself is newline-isolated', () => {
    const plain = new LlamaSpmTokenizer({ tokens: renamed({ '\n\n': 'y', 'a\n': 'x' }), scores, types }, { addSpacePrefix: true });
    expect(plain.newlineIsolated).toBe(true);
    for (const text of samples) expect(plain.countTokens(text), JSON.stringify(text)).toBe(plain.encode(text).length);
  });
});
