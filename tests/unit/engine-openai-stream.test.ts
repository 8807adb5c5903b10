import { describe, expect, it } from 'vitest';
import { addChunk, finishCompletion, startCompletion } from '../../src/engines/openai-stream';

describe('OpenAI stream accumulation', () => {
  it('joins deltas, forwards them, and keeps the last finish reason and usage', () => {
    const state = startCompletion();
    const seen: string[] = [];
    addChunk(state, { choices: [{ delta: { content: '你好' } }] }, (d) => seen.push(d));
    addChunk(state, { choices: [{ delta: { content: null } }] }, (d) => seen.push(d));
    addChunk(state, { choices: [{ delta: { content: '，世界' }, finish_reason: 'length' }] }, (d) => seen.push(d));
    addChunk(state, { choices: [], usage: { prompt_tokens: 12, completion_tokens: 3 } });
    expect(seen).toEqual(['你好', '，世界']);
    expect(finishCompletion(state, false)).toEqual({ content: '你好，世界', finishReason: 'length', usage: { promptTokens: 12, completionTokens: 3 } });
    expect(finishCompletion(state, true).finishReason).toBe('abort');
    expect(finishCompletion(startCompletion(), false)).toEqual({ content: '', finishReason: 'stop', usage: null });
  });
});
