/**
 * Chat-template families (rendered strings written out from each family's reference template)
 * and the token-budget bar (hand-computed segments).
 */
import { describe, expect, it } from 'vitest';
import { budgetBar, detectChatTemplate, renderChat } from '../../src/tokens';
import type { PromptSection } from '../../src/prompt/types';

const conv = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: ' Hi ' },
  { role: 'assistant' as const, content: 'Hello!' },
];

describe('detectChatTemplate / renderChat', () => {
  it('recognises families by their markers', () => {
    expect(detectChatTemplate("{{ '<|im_start|>' + message['role'] }}").family).toBe('chatml');
    expect(detectChatTemplate('<|start_header_id|> Cutting Knowledge Date')).toMatchObject({ family: 'llama3', datePreamble: true });
    expect(detectChatTemplate('<start_of_turn>')).toMatchObject({ family: 'gemma', approximate: false });
    expect(detectChatTemplate('<|user|> <|assistant|> <|end|>')).toMatchObject({ family: 'phi3' });
    expect(detectChatTemplate('[INST] {{ message }} [/INST]')).toMatchObject({ family: 'chatml', approximate: true });
    expect(detectChatTemplate(null)).toMatchObject({ family: 'chatml', approximate: true });
    expect(detectChatTemplate(null, true)).toMatchObject({ family: 'chatml', approximate: false });
  });

  it('renders ChatML', () => {
    const r = renderChat(detectChatTemplate('<|im_start|>'), conv);
    expect(r.prefix + r.messages.join('') + r.primer).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n Hi <|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(renderChat(detectChatTemplate('<|im_start|>'), conv, { addGenerationPrompt: false }).primer).toBe('');
  });

  it('renders Llama 3 (content trimmed) and the 3.1 date preamble', () => {
    const r = renderChat(detectChatTemplate('<|start_header_id|>'), conv);
    expect(r.prefix + r.messages.join('') + r.primer).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    const dated = renderChat(detectChatTemplate('<|start_header_id|> Cutting Knowledge Date'), conv, { now: new Date(Date.UTC(2024, 6, 5)) });
    expect(dated.messages[0]).toBe('<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 05 Jul 2024\n\nBe brief.<|eot_id|>');
    const noSystem = renderChat(detectChatTemplate('<|start_header_id|> Cutting Knowledge Date'), conv.slice(1), { now: new Date(Date.UTC(2024, 6, 5)) });
    expect(noSystem.prefix).toBe('<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 05 Jul 2024\n\n<|eot_id|>');
  });

  it('renders Gemma (system folded into the first user turn, assistant → model)', () => {
    const r = renderChat(detectChatTemplate('<start_of_turn>'), conv);
    expect(r.prefix + r.messages.join('') + r.primer).toBe(
      '<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n<start_of_turn>model\n',
    );
  });

  it('renders Phi-3', () => {
    const r = renderChat(detectChatTemplate('<|assistant|><|end|>'), conv.slice(1));
    expect(r.prefix + r.messages.join('') + r.primer).toBe('<|user|>\n Hi <|end|>\n<|assistant|>\nHello!<|end|>\n<|assistant|>\n');
  });

  it('copies the default system message out of a Qwen2.5-style template', () => {
    const tpl = "{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}";
    const info = detectChatTemplate(tpl);
    expect(info.defaultSystem).toBe('You are Qwen, created by Alibaba Cloud. You are a helpful assistant.');
    expect(renderChat(info, [{ role: 'user', content: 'x' }]).prefix).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n',
    );
    expect(renderChat(info, conv).prefix).toBe('');
  });
});

describe('budgetBar', () => {
  const section = (kind: PromptSection['kind'], tokens: number): PromptSection => ({ kind, text: '', tokens, items: 1, dropped: 0 });

  it('groups sections and derives template, reserved and free tokens', () => {
    const sections = [section('system', 100), section('memories', 200), section('summary', 150), section('entities', 30), section('retrieved', 20), section('recent', 400), section('user', 50)];
    // Σ sections = 950; prompt = 1000 → template 50; free = 4096 − 1000 − 1024 = 2072.
    const bar = budgetBar(sections, { contextWindow: 4096, reservedForAnswer: 1024, promptTokens: 1000, tokenizer: 'hf:x', exact: true });
    expect(Object.fromEntries(bar.segments.map((s) => [s.kind, s.tokens]))).toEqual({
      system: 100, memories: 200, summary: 200, recent: 400, user: 50, template: 50, reserved: 1024, free: 2072,
    });
    expect(bar.segments.reduce((a, s) => a + s.tokens, 0)).toBe(4096);
    expect(bar.segments.find((s) => s.kind === 'reserved')!.fraction).toBeCloseTo(0.25, 10);
    expect(bar).toMatchObject({ overflow: false, overflowTokens: 0, estimated: false, tokenizer: 'hf:x' });
    expect(bar.segments[0]!.label).toEqual({ en: 'System', zh_CN: '系统指令' });
  });

  it('reports overflow when prompt + answer exceed the window', () => {
    const bar = budgetBar([section('recent', 3900)], { contextWindow: 4096, reservedForAnswer: 512, promptTokens: 3950, tokenizer: 'estimator:v1', exact: false });
    expect(bar.overflow).toBe(true);
    expect(bar.overflowTokens).toBe(3950 + 512 - 4096);
    expect(bar.segments.find((s) => s.kind === 'free')!.tokens).toBe(0);
    expect(bar.estimated).toBe(true);
  });
});
