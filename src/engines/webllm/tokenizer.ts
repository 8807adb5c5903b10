/**
 * The WebLLM model's own tokenizer, for exact token counts. WebLLM downloads each model's
 * `tokenizer.json` and `mlc-chat-config.json` with the weights and keeps them in Cache Storage
 * (`webllm/model`, `webllm/config`, keyed by their Hugging Face URLs; see web-llm 0.2.86
 * `asyncLoadTokenizer`). Cache Storage belongs to the extension's origin, so the engine host reads
 * the same files the service worker cached and builds a Hugging Face tokenizer counter from them.
 */
import { prebuiltAppConfig, type AppConfig } from '@mlc-ai/web-llm';
import type { TokenCounter } from '../../model/tokens';
import { createHfTokenCounter } from '../../tokens';

/** Cache Storage names WebLLM uses (web-llm 0.2.86). */
export const WEBLLM_CACHES = { model: 'webllm/model', config: 'webllm/config' } as const;

/** `https://huggingface.co/mlc-ai/<id>` → `https://huggingface.co/mlc-ai/<id>/resolve/main/` (web-llm's own rule). */
export function webllmBaseUrl(modelUrl: string): string {
  let url = modelUrl.endsWith('/') ? modelUrl : `${modelUrl}/`;
  if (!/\/resolve\/[^/]+\/$/.test(url)) url += 'resolve/main/';
  return url;
}

async function cachedJson(storage: CacheStorage, cacheName: string, url: string): Promise<unknown> {
  const cache = await storage.open(cacheName);
  const response = await cache.match(new Request(url));
  return response ? response.json() : null;
}

/**
 * Builds an exact token counter for a WebLLM model from the files WebLLM cached when it loaded
 * the model. The chat-template family comes from the MLC `conv_template` (its `system_template`
 * carries the model's markers, e.g. `<|im_start|>` for Qwen's ChatML).
 * @param storage Cache Storage (default `globalThis.caches`; tests pass their own).
 * @returns `null` when the model is unknown or its tokenizer is not cached (e.g. before the
 *   first load finished) — the caller then uses the estimator. Never throws.
 */
export async function loadWebLLMTokenCounter(modelId: string, options: { storage?: CacheStorage; appConfig?: AppConfig } = {}): Promise<TokenCounter | null> {
  try {
    const storage = options.storage ?? globalThis.caches;
    const record = (options.appConfig ?? prebuiltAppConfig).model_list.find((m) => m.model_id === modelId);
    if (!storage || !record) return null;
    const base = webllmBaseUrl(record.model);
    const tokenizerJson = await cachedJson(storage, WEBLLM_CACHES.model, `${base}tokenizer.json`);
    if (!tokenizerJson) return null;
    const chatConfig = (await cachedJson(storage, WEBLLM_CACHES.config, `${base}mlc-chat-config.json`)) as {
      conv_template?: { system_template?: string; roles?: Record<string, string> };
    } | null;
    const template = chatConfig?.conv_template;
    const markers = [template?.system_template, ...Object.values(template?.roles ?? {})].filter(Boolean).join('\n');
    return createHfTokenCounter(tokenizerJson, markers ? { chat_template: markers } : undefined, { id: `hf:${modelId}` });
  } catch {
    return null;
  }
}
