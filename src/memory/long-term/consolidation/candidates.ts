/**
 * Step 1 of consolidation: the existing memories related to a new item (vector and lexical hits
 * of the extracted kinds, plus the current memories of the same slot and subject), ranked.
 */
import type { MemoryRecord } from '../../../model/records';
import type { PreparedItem } from '../extraction/items';
import { contentTerms, termCoverage } from '../../../text/terms';
import { cosineSimilarity } from '../retrieval/vector';
import { memorySlot } from '../slots';
import { CANDIDATE_KINDS, type Candidate, type ConsolidationContext, type ConsolidationOptions } from './types';

/**
 * The related current memories of `item` (see the module doc of `./index.ts`, step 1): at most
 * `o.candidates`, same-slot ones first, then by cosine + content-word coverage.
 * @param vector the item's embedding, `null` without an embedder (lexical and slot hits only).
 * @throws the store's read errors.
 */
export async function findCandidates(
  item: PreparedItem,
  vector: Float32Array | null,
  ctx: ConsolidationContext,
  o: ConsolidationOptions,
): Promise<Candidate[]> {
  const byId = new Map<string, Candidate>();
  const terms = contentTerms(item.text);
  const similarityTo = async (id: string): Promise<number | null> => {
    if (!vector) return null;
    const record: MemoryRecord | undefined = await ctx.store.get(id);
    return record?.embedding && record.embedding.length === vector.length ? cosineSimilarity(vector, record.embedding) : null;
  };
  if (vector) {
    for (const hit of await ctx.store.nearest(vector, { namespace: ctx.namespace, k: o.candidates * 3 })) {
      if (!CANDIDATE_KINDS.has(hit.memory.kind)) continue;
      byId.set(hit.memory.id, { memory: hit.memory, similarity: hit.similarity, coverage: termCoverage(terms, hit.memory.text), sameSlot: false });
    }
  }
  const lexicalHits = await ctx.store.search({ text: item.text, namespace: ctx.namespace, k: o.candidates * 3, now: ctx.messageTime }, { timeFilters: false });
  for (const hit of lexicalHits) {
    if (!CANDIDATE_KINDS.has(hit.memory.kind) || byId.has(hit.memory.id)) continue;
    byId.set(hit.memory.id, {
      memory: hit.memory,
      similarity: await similarityTo(hit.memory.id),
      coverage: termCoverage(terms, hit.memory.text),
      sameSlot: false,
    });
  }
  // Same subject and slot ("Lives in Shenzhen" / "Moved to Hangzhou"): a candidate even with no shared word.
  for (const memory of await ctx.store.inSlot(memorySlot(item.text), { namespace: ctx.namespace, k: o.candidates, kinds: [...CANDIDATE_KINDS] })) {
    const known = byId.get(memory.id);
    if (known) known.sameSlot = true;
    else byId.set(memory.id, { memory, similarity: await similarityTo(memory.id), coverage: termCoverage(terms, memory.text), sameSlot: true });
  }
  const score = (c: Candidate) => (c.similarity ?? 0) + c.coverage + (c.sameSlot ? 1 : 0);
  return [...byId.values()]
    .filter((c) => c.memory.current === 1 && (c.sameSlot || (c.similarity ?? 0) >= o.candidateMinSimilarity || c.coverage > 0))
    .sort((a, b) => score(b) - score(a))
    .slice(0, o.candidates);
}
