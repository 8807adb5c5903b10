/**
 * The token counter every layer counts with (prompt budget, strategies, memory lines). It is
 * implemented in `src/tokens/` (the model's own tokenizer, or an estimator) and handed out by
 * the engines (`ChatEngine.tokenCounter()`). Leaf module: imports nothing from `src/`.
 */

/**
 * Counts tokens with a model's own tokenizer (or an estimator when none is loaded).
 * All counts are tokens.
 */
export interface TokenCounter {
  /** Identifies the tokenizer, e.g. `hf:Qwen/Qwen2.5-1.5B-Instruct` or `estimator:v1`. */
  readonly id: string;
  /** `true` when counts come from the model's real tokenizer, `false` for an estimate. */
  readonly exact: boolean;
  /** Number of tokens of `text` without special tokens. */
  count(text: string): number;
  /**
   * Tokens a chat template adds around one message (role markers, separators), e.g. 5 for
   * ChatML's `<|im_start|>role\n … <|im_end|>\n` minus the content.
   */
  readonly perMessageOverhead: number;
  /** Tokens the template adds once to prime the assistant reply (e.g. `<|im_start|>assistant\n` = 3). */
  readonly replyPrimerTokens: number;
}
