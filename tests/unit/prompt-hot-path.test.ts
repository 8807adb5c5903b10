/**
 * The turn's prompt helpers made cheaper (issue 9, turn overhead) give what they gave before:
 * `fitMemoryLine` builds a memory's line parts once per binary search instead of once per probe,
 * and `defaultSystemInstruction` names the weekday from a table instead of building an
 * `Intl.DateTimeFormat` each turn. Each is checked against the code it replaced (the references
 * below), with the estimator and with a character counter.
 */
import { describe, expect, it } from 'vitest';
import { defaultSystemInstruction } from '../../src/prompt/assemble';
import { fitMemoryLine, formatMemoryLine, MIN_SHORTENED_LINE_TOKENS } from '../../src/prompt/memory-lines';
import { labelSpeakers } from '../../src/text/speakers';
import { createTokenEstimator } from '../../src/tokens';
import type { RetrievedMemory } from '../../src/model/context';
import type { TokenCounter } from '../../src/model/tokens';
import { retrievedMemory } from '../helpers/retrieved-memory';

/** `fitMemoryLine` as it was: every probe formats the line from the memory (`formatMemoryLine`). */
function referenceFit(memory: RetrievedMemory['memory'], counter: TokenCounter, maxTokens: number): string | null {
  const whole = formatMemoryLine(memory);
  if (counter.count(whole) <= maxTokens) return whole;
  if (maxTokens < MIN_SHORTENED_LINE_TOKENS) return null;
  let lo = 0;
  let hi = Array.from(labelSpeakers(memory).trim()).length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (counter.count(formatMemoryLine(memory, mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? formatMemoryLine(memory, lo) : null;
}

const day = (d: number) => new Date(2025, 4, d, 10).getTime();
const MEMORIES: RetrievedMemory['memory'][] = [
  retrievedMemory(
    'en',
    'User: I moved to Hangzhou last spring, and I love the tea there.\nAssistant: That sounds lovely — Hangzhou is famous for Longjing tea!',
  ).memory,
  retrievedMemory('zh', '用户：我叫艾玛，住在里斯本。\n助手：好的，艾玛！你在里斯本住了多久？\n用户：大概三年了，2021年10月搬来的。', {
    memory: { createdAt: day(4), updatedAt: day(4), speakers: { user: 'Emma', assistant: 'Recall' } },
  }).memory,
  retrievedMemory('ended', 'I live in Shenzhen and commute to the office by metro every single working day of the week', {
    memory: { createdAt: day(1), updatedAt: day(1), validUntil: day(20), current: 0 },
  }).memory,
  retrievedMemory('past', 'User: My rent is 1800 dollars a month for the flat near the river.\nAssistant: Noted.', {
    memory: { createdAt: day(2), updatedAt: day(2), pastSince: day(9) },
  }).memory,
];

describe('fitMemoryLine', () => {
  it('gives the line the per-probe formatting gave, at every budget', () => {
    const chars: TokenCounter = { id: 'test:chars', exact: true, count: (t) => t.length, perMessageOverhead: 0, replyPrimerTokens: 0 };
    let shortened = 0;
    for (const counter of [createTokenEstimator(), chars]) {
      for (const memory of MEMORIES) {
        for (let maxTokens = 0; maxTokens <= counter.count(formatMemoryLine(memory)) + 1; maxTokens += 1) {
          const line = fitMemoryLine(memory, counter, maxTokens);
          expect(line, `${memory.id} at ${maxTokens} (${counter.id})`).toBe(referenceFit(memory, counter, maxTokens));
          if (line !== null && line !== formatMemoryLine(memory)) shortened += 1;
        }
      }
    }
    expect(shortened).toBeGreaterThan(100); // the binary search really ran
  });
});

describe('defaultSystemInstruction', () => {
  it("names the weekday as Intl's en-US formatter does, for every day of a week", () => {
    for (let d = 0; d < 7; d += 1) {
      const now = Date.UTC(2026, 11, 1 + d, 23, 59);
      const weekday = new Date(now).toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' });
      expect(defaultSystemInstruction(now)).toContain(`Today is ${new Date(now).toISOString().slice(0, 10)} (${weekday}).`);
    }
  });
});
