/**
 * One builder for the `RetrievedMemory` values the prompt, token and ranking tests hand to the code
 * under test: a current `fact` in the default namespace, importance 0.5, never accessed, no source,
 * created 2026-11-01 12:00 UTC (`memoryRecord`'s defaults), updated 0, `hash` = its id, score 0.9 and lexical rank 1 unless overridden.
 */
import type { RetrievedMemory } from '../../src/model/context';
import { memoryRecord } from './memory-record';

/** What a test may change: fields of the memory, the fused score, the retrievers' ranks. */
export interface RetrievedMemoryOverrides {
  memory?: Partial<RetrievedMemory['memory']>;
  score?: number;
  ranks?: RetrievedMemory['ranks'];
}

/** A retrieved memory with the defaults above; `memory` overrides are applied last. */
export function retrievedMemory(id: string, text: string, overrides: RetrievedMemoryOverrides = {}): RetrievedMemory {
  const { embedding: _embedding, ...memory } = memoryRecord({ id, text, updatedAt: 0, hash: id });
  return {
    memory: { ...memory, ...overrides.memory },
    score: overrides.score ?? 0.9,
    ranks: overrides.ranks ?? { lexical: 1 },
  };
}
