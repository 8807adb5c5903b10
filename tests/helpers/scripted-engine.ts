/**
 * A `ChatEngine` whose replies are scripted by the test. It stands in for the one boundary
 * that cannot run here (a real LLM that follows instructions: WebLLM needs a GPU and model
 * hubs). Everything above it — prompts, parsing, storage — runs for real.
 */
import type { ChatEngine, ChatRequest, ChatResult } from '../../src/engines/types';
import type { TokenCounter } from '../../src/model/tokens';

/** A scripted reply: a fixed string, or a function of the request. */
export type ScriptedReply = string | ((request: ChatRequest) => string);

export interface ScriptedEngine extends ChatEngine {
  /** Every request received, in order. */
  readonly requests: ChatRequest[];
  /** Queue replies (consumed in order; when empty, `fallback` answers). */
  push(...replies: ScriptedReply[]): void;
}

/**
 * @param options.fallback reply when the queue is empty (default: throws, so unexpected calls fail the test).
 * @param options.contextWindow tokens (default 4096).
 * @param options.tokenCounter counter to expose (default none).
 */
export function createScriptedEngine(
  options: { fallback?: ScriptedReply; contextWindow?: number; tokenCounter?: TokenCounter; modelId?: string } = {},
): ScriptedEngine {
  const queue: ScriptedReply[] = [];
  const requests: ChatRequest[] = [];
  let loaded = true;
  return {
    kind: 'scripted',
    get modelId() {
      return loaded ? (options.modelId ?? 'scripted') : null;
    },
    requests,
    push: (...replies) => void queue.push(...replies),
    contextWindow: () => (loaded ? (options.contextWindow ?? 4096) : null),
    tokenCounter: () => options.tokenCounter ?? null,
    isLoaded: () => loaded,
    async complete(request, onDelta): Promise<ChatResult> {
      requests.push(request);
      const next = queue.shift() ?? options.fallback;
      if (next === undefined) throw new Error(`Scripted engine: no reply queued for request #${requests.length}`);
      const content = typeof next === 'function' ? next(request) : next;
      // Stream in a few pieces so streaming code paths run.
      let sent = '';
      for (const piece of content.match(/[\s\S]{1,8}/g) ?? []) {
        if (request.signal?.aborted) return { content: sent, finishReason: 'abort', usage: null };
        sent += piece;
        onDelta?.(piece);
      }
      return { content, finishReason: 'stop', usage: null };
    },
    async unload() {
      loaded = false;
    },
  };
}
