/**
 * One builder for the `RetrievedMemory` values the prompt, token and ranking tests hand to the code
 * under test: a current `fact` in the default namespace, importance 0.5, never accessed, no source,
 * created 2026-11-01 12:00 UTC, `hash` = its id, score 0.9 and lexical rank 1 unless overridden.
 */
import type { RetrievedMemory } from '../../src/model/context';

/** What a test may change: fields of the memory, the fused score, the retrievers' ranks. */
export interface RetrievedMemoryOverrides {
  memory?: Partial<RetrievedMemory['memory']>;
  score?: number;
  ranks?: RetrievedMemory['ranks'];
}

/** A retrieved memory with the defaults above; `memory` overrides are applied last. */
export function retrievedMemory(id: string, text: string, overrides: RetrievedMemoryOverrides = {}): RetrievedMemory {
  return {
    memory: {
      id,
      namespace: 'default',
      kind: 'fact',
      text,
      importance: 0.5,
      createdAt: Date.UTC(2026, 10, 1, 12),
      updatedAt: 0,
      validFrom: null,
      validUntil: null,
      current: 1,
      lastAccessedAt: null,
      accessCount: 0,
      sourceConversationId: null,
      sourceMessageIds: [],
      pinned: false,
      hash: id,
      embeddingModel: null,
      ...overrides.memory,
    },
    score: overrides.score ?? 0.9,
    ranks: overrides.ranks ?? { lexical: 1 },
  };
}
