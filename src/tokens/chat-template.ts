/**
 * Chat-template families: how a model wraps chat messages in special markers before
 * tokenizing them. Token counting needs this to know the tokens a prompt costs beyond the
 * message texts (role markers, separators, BOS, the reply primer).
 *
 * Rather than running a Jinja interpreter, we recognise the family of a model's
 * `chat_template` (from `tokenizer_config.json` or the GGUF key `tokenizer.chat_template`) by
 * its markers and render the family's fixed layout, as written in each family's reference
 * template:
 * - `chatml`: `<|im_start|>{role}\n{content}<|im_end|>\n`, primer `<|im_start|>assistant\n`
 *   (OpenAI ChatML; Qwen2/2.5/3, SmolLM2, many fine-tunes). Qwen2.5's template adds its default
 *   system message when the conversation has none; we copy that literal out of the template.
 *   ChatML is also what llama.cpp (and so wllama) falls back to when a GGUF has no template.
 * - `llama3`: `<|begin_of_text|>` once, then
 *   `<|start_header_id|>{role}<|end_header_id|>\n\n{content.trim()}<|eot_id|>`, primer
 *   `<|start_header_id|>assistant<|end_header_id|>\n\n` (Meta Llama 3/3.1/3.2). Llama 3.1+
 *   templates also open the system message with "Cutting Knowledge Date: December 2023\nToday
 *   Date: {d b Y}\n\n"; rendered when the template contains that text.
 * - `gemma`: `<bos>` once, `<start_of_turn>{user|model}\n{content.trim()}<end_of_turn>\n`, the
 *   system text is prepended to the first user turn followed by a blank line; primer
 *   `<start_of_turn>model\n` (Google Gemma 1/2/3).
 * - `phi3`: `<|{role}|>\n{content}<|end|>\n`, primer `<|assistant|>\n` (Microsoft Phi-3/3.5).
 *
 * Any other template (or none, for a Hugging Face tokenizer) is rendered as ChatML and flagged
 * `approximate`: content tokens are still exact, only the per-message overhead is a guess.
 */
import type { ChatMessage } from '../model/engine';

/** A recognised chat-template family (see module doc). */
export type ChatTemplateFamily = 'chatml' | 'llama3' | 'gemma' | 'phi3';

/** The family of a template and whether its layout is known (`approximate: false`) or guessed. */
export interface ChatTemplateInfo {
  family: ChatTemplateFamily;
  /** `true` when the template was missing or not recognised and ChatML layout is assumed. */
  approximate: boolean;
  /** Default system message the template inserts when the conversation has none (Qwen2.5), else `null`. */
  defaultSystem: string | null;
  /** Llama 3.1+: the system message starts with the knowledge-cutoff/date preamble. */
  datePreamble: boolean;
}

/** A prompt rendered in pieces. Each piece starts or ends at a special marker, so pieces can be tokenized separately. */
export interface RenderedChat {
  /** Text before the first message (BOS, injected default system message), possibly empty. */
  prefix: string;
  /** One rendered string per message, in order (Gemma folds the system message into the first user turn). */
  messages: string[];
  /** Reply primer (`add_generation_prompt`), empty when not requested. */
  primer: string;
}

/**
 * Recognises the family of a chat template from its markers.
 * @param template Jinja source of the template (`tokenizer_config.json#chat_template` or the
 *   GGUF key `tokenizer.chat_template`); `null`/empty when the model ships none.
 * @param llamaCppDefault `true` for GGUF models run by llama.cpp, whose fallback for a missing
 *   template is ChatML: the layout is then exact, not approximate.
 */
export function detectChatTemplate(template: string | null | undefined, llamaCppDefault = false): ChatTemplateInfo {
  const t = typeof template === 'string' ? template : '';
  const base = { defaultSystem: null, datePreamble: false };
  if (t.includes('<|im_start|>')) {
    // Qwen2.5: `'<|im_start|>system\nYou are Qwen, … assistant.<|im_end|>\n'` as a literal in the else branch.
    const literal = /<\|im_start\|>system\\n([^'"<{}]+)<\|im_end\|>/.exec(t);
    return { ...base, family: 'chatml', approximate: false, defaultSystem: literal?.[1]?.replace(/\\n/g, '\n') ?? null };
  }
  if (t.includes('<|start_header_id|>')) {
    return { ...base, family: 'llama3', approximate: false, datePreamble: t.includes('Cutting Knowledge Date') };
  }
  if (t.includes('<start_of_turn>')) return { ...base, family: 'gemma', approximate: false };
  if (t.includes('<|assistant|>') && t.includes('<|end|>')) return { ...base, family: 'phi3', approximate: false };
  return { ...base, family: 'chatml', approximate: !(llamaCppDefault && t === '') };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `strftime('%d %b %Y')` of `date` (UTC), as Llama 3.1+ templates print "Today Date". */
function llamaDate(date: Date): string {
  return `${String(date.getUTCDate()).padStart(2, '0')} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

/**
 * Renders `messages` in the family's layout, in pieces (see `RenderedChat`).
 * @param options.bos BOS text for families that start with it (`<|begin_of_text|>`, `<bos>`).
 * @param options.addGenerationPrompt append the assistant reply primer (default `true`).
 * @param options.now date for the Llama 3.1 date preamble (default now).
 */
export function renderChat(
  info: ChatTemplateInfo,
  messages: readonly ChatMessage[],
  options: { bos?: string; addGenerationPrompt?: boolean; now?: Date } = {},
): RenderedChat {
  const gen = options.addGenerationPrompt ?? true;
  switch (info.family) {
    case 'chatml': {
      const wrap = (role: string, content: string) => `<|im_start|>${role}\n${content}<|im_end|>\n`;
      const prefix = info.defaultSystem && messages[0]?.role !== 'system' ? wrap('system', info.defaultSystem) : '';
      return { prefix, messages: messages.map((m) => wrap(m.role, m.content)), primer: gen ? '<|im_start|>assistant\n' : '' };
    }
    case 'llama3': {
      const wrap = (role: string, content: string) => `<|start_header_id|>${role}<|end_header_id|>\n\n${content.trim()}<|eot_id|>`;
      let prefix = options.bos ?? '<|begin_of_text|>';
      const rendered: string[] = [];
      let rest = messages;
      if (info.datePreamble) {
        const preamble = `Cutting Knowledge Date: December 2023\nToday Date: ${llamaDate(options.now ?? new Date())}\n\n`;
        const system = messages[0]?.role === 'system' ? messages[0].content.trim() : '';
        if (messages[0]?.role === 'system') rest = messages.slice(1);
        const sys = `<|start_header_id|>system<|end_header_id|>\n\n${preamble}${system}<|eot_id|>`;
        if (messages[0]?.role === 'system') rendered.push(sys);
        else prefix += sys;
      }
      rendered.push(...rest.map((m) => wrap(m.role, m.content)));
      return { prefix, messages: rendered, primer: gen ? '<|start_header_id|>assistant<|end_header_id|>\n\n' : '' };
    }
    case 'gemma': {
      // Gemma 3: `'<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') + content | trim`.
      const wrap = (role: string, prefix: string, content: string) => `<start_of_turn>${role}\n${prefix}${content.trim()}<end_of_turn>\n`;
      const rendered: string[] = [];
      let pendingSystem: string | null = null;
      for (const m of messages) {
        if (m.role === 'system' && rendered.length === 0 && pendingSystem === null) {
          pendingSystem = m.content;
          rendered.push(''); // the system message occupies no turn of its own
          continue;
        }
        const prefix = pendingSystem !== null && m.role === 'user' ? `${pendingSystem}\n\n` : '';
        if (m.role === 'user') pendingSystem = null;
        rendered.push(wrap(m.role === 'assistant' ? 'model' : m.role, prefix, m.content));
      }
      return { prefix: options.bos ?? '<bos>', messages: rendered, primer: gen ? '<start_of_turn>model\n' : '' };
    }
    case 'phi3':
      return {
        prefix: '',
        messages: messages.map((m) => `<|${m.role}|>\n${m.content}<|end|>\n`),
        primer: gen ? '<|assistant|>\n' : '',
      };
  }
}
