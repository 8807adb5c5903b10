/**
 * Exact token counting with a Hugging Face tokenizer (`tokenizer.json` + `tokenizer_config.json`,
 * the files that come with a WebLLM/transformers.js model), through `@huggingface/tokenizers`
 * (the tokenizer implementation of transformers.js).
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { detectChatTemplate } from './chat-template';
import { makeChatCounter, splitsAtLineStarts, type ChatTokenCounter } from './counter';
import { PromptError } from '../model/errors';

/** Thrown when tokenizer files are missing or malformed. */
export class TokenizerLoadError extends PromptError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('tokenizer_load', message, options);
    this.name = 'TokenizerLoadError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Text of a special token field of `tokenizer_config.json` (a string or `{ content }`). */
function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (isRecord(value) && typeof value.content === 'string') return value.content;
  return undefined;
}

/**
 * Creates an exact counter from a Hugging Face tokenizer.
 * @param tokenizerJson parsed `tokenizer.json` (must have a `model`).
 * @param tokenizerConfig parsed `tokenizer_config.json`: its `chat_template` sets the template
 *   family (see `chat-template.ts`; ChatML, flagged approximate, when absent or unknown) and its
 *   `bos_token` the BOS text. A `chat_template` given as a list of named templates uses `default`.
 * @param options.id counter id (default `hf:<model type>`), e.g. `hf:Qwen/Qwen2.5-1.5B-Instruct`.
 * @returns a `ChatTokenCounter`; `count` counts without BOS/EOS, with special-token strings
 *   parsed as single tokens; `specialTokens` lists every entry of `added_tokens` (the tokenizer
 *   matches each in text as one id, whatever its `special` flag); incremental (per cached line)
 *   when `splitsAtLineStarts` holds for `tokenizerJson` (Qwen2.x, Llama 3.x), else whole texts.
 * @throws TokenizerLoadError when `tokenizerJson` is not a tokenizer definition.
 */
export function createHfTokenCounter(tokenizerJson: unknown, tokenizerConfig?: unknown, options: { id?: string } = {}): ChatTokenCounter {
  if (!isRecord(tokenizerJson) || !isRecord(tokenizerJson.model)) {
    throw new TokenizerLoadError('tokenizer.json is not a tokenizer definition (no "model" object)');
  }
  const config = isRecord(tokenizerConfig) ? tokenizerConfig : {};
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(tokenizerJson, config);
  } catch (error) {
    throw new TokenizerLoadError(`Cannot build the tokenizer: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  let template: unknown = config.chat_template;
  if (Array.isArray(template)) {
    template = template.find((t) => isRecord(t) && t.name === 'default')?.template;
  }
  const modelType = typeof tokenizerJson.model.type === 'string' ? tokenizerJson.model.type : 'unknown';
  const bos = tokenText(config.bos_token);
  const added = Array.isArray(tokenizerJson.added_tokens) ? tokenizerJson.added_tokens : [];
  // Every added token, not only `special: true` ones: the tokenizer matches all of them in text as
  // single ids (Qwen2.5's `<tool_call>` is `special: false` and still one token).
  const specialTokens = added.filter((t): t is { content: string } => isRecord(t) && typeof t.content === 'string').map((t) => t.content);
  return makeChatCounter({
    specialTokens,
    id: options.id ?? `hf:${modelType}`,
    countText: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids.length,
    template: detectChatTemplate(typeof template === 'string' ? template : null),
    ...(bos !== undefined ? { bos } : {}),
    incremental: splitsAtLineStarts(tokenizerJson),
  });
}
