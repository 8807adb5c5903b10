/**
 * Chat-template families (rendered strings written out from each family's reference template)
 * and the token-budget bar (hand-computed segments).
 */
import { describe, expect, it } from 'vitest';
import { detectChatTemplate, renderChat } from '../../src/tokens';

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
    expect(dated.messages[0]).toBe(
      '<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 05 Jul 2024\n\nBe brief.<|eot_id|>',
    );
    const noSystem = renderChat(detectChatTemplate('<|start_header_id|> Cutting Knowledge Date'), conv.slice(1), { now: new Date(Date.UTC(2024, 6, 5)) });
    expect(noSystem.prefix).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 05 Jul 2024\n\n<|eot_id|>',
    );
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
