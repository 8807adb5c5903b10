/**
 * The answer's share of the context window. Its own module, without imports, because the side
 * panel needs it too (Settings says when the loaded model caps the answer limit).
 */

/**
 * Most tokens an answer may be given with a model of `contextWindow` tokens: half the window, so
 * that a long answer limit never leaves the prompt (memories, history) without room. The tokens
 * reserved for the answer are `min(setting, maxAnswerTokensFor(window))`.
 */
export function maxAnswerTokensFor(contextWindow: number): number {
  return Math.floor(contextWindow / 2);
}
