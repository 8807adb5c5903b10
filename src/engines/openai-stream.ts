/**
 * Accumulates an OpenAI-shaped streaming chat completion (the chunk format both WebLLM and
 * wllama emit: `choices[0].delta.content`, `choices[0].finish_reason`, `usage` on the last chunk).
 */
import type { ChatResult, FinishReason } from './types';
import type { TokenUsage } from '../model/engine';

/** The fields of an OpenAI chat-completion chunk this module reads. */
export interface OpenAIChunk {
  choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
}

/** Text, finish reason and usage gathered so far. */
export interface StreamedCompletion {
  content: string;
  finish: string | null;
  usage: TokenUsage | null;
}

/** An empty accumulator. */
export function startCompletion(): StreamedCompletion {
  return { content: '', finish: null, usage: null };
}

/** Adds one chunk: appends and forwards its text delta, records finish reason and usage (tokens). */
export function addChunk(state: StreamedCompletion, chunk: OpenAIChunk, onDelta?: (delta: string) => void): void {
  const choice = chunk.choices?.[0];
  const delta = choice?.delta?.content;
  if (delta) {
    state.content += delta;
    onDelta?.(delta);
  }
  if (choice?.finish_reason) state.finish = choice.finish_reason;
  if (chunk.usage) state.usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
}

/** The `ChatResult` of a finished (or aborted) stream: `length` when the token limit ended it, `abort` when stopped, else `stop`. */
export function finishCompletion(state: StreamedCompletion, aborted: boolean): ChatResult {
  const finishReason: FinishReason = aborted || state.finish === 'abort' ? 'abort' : state.finish === 'length' ? 'length' : 'stop';
  return { content: state.content, finishReason, usage: state.usage };
}
