/**
 * TEST DOUBLES for the long-term memory tests of LTM-B (extraction, consolidation, commands,
 * maintenance, export). Not used by production code.
 *
 * - `createHashingTestEmbedder`: a deterministic TEST embedder (hashed character n-grams →
 *   L2-normalized vector). Texts sharing words/characters are close. It stands in for
 *   transformers.js where a test does not need the real runtime.
 * - `createMemoryStoreDouble`: an in-memory-index MemoryStore TEST DOUBLE over the real Dexie
 *   tables (memories + memoryHistory), brute-force search. Used only until LTM-A's
 *   `createMemoryStore` (src/memory/long-term/store.ts) is available; it follows the
 *   `MemoryStore` contract of src/memory/long-term/types.ts.
 */
import type { MemoryRecord, RecallDB } from '../../src/db/schema';
import type { Embedder } from '../../src/engines/types';
import { contentTerms, cosineSimilarity, normalizeForCompare, termCoverage } from '../../src/memory/long-term/extraction/language';
import type { SearchableStore } from '../../src/memory/long-term/commands';
import type { MemoryView, NewMemory } from '../../src/memory/long-term/types';

/** FNV-1a 32-bit hash of a string. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * TEST embedder: bag of character 1-, 2- and 3-grams (of the NFKC, lower-cased text), each hashed
 * into `dimension` buckets with a hashed sign, then L2-normalized. Deterministic.
 */
export function createHashingTestEmbedder(options: { dimension?: number; modelId?: string } = {}): Embedder & { calls: number } {
  const dimension = options.dimension ?? 256;
  const embedder = {
    modelId: options.modelId ?? 'test/hashing-ngrams',
    dimension,
    calls: 0,
    async embed(texts: string[]) {
      embedder.calls += 1;
      return texts.map((text) => {
        const v = new Float32Array(dimension);
        const t = ` ${normalizeForCompare(text)} `;
        const chars = Array.from(t);
        for (let n = 1; n <= 3; n++) {
          for (let i = 0; i + n <= chars.length; i++) {
            const gram = chars.slice(i, i + n).join('');
            if (gram.trim() === '') continue;
            const h = fnv1a(`${n}:${gram}`);
            v[h % dimension]! += (h & 0x80000000 ? -1 : 1) * (n === 1 ? 0.5 : 1);
          }
        }
        let norm = 0;
        for (const x of v) norm += x * x;
        norm = Math.sqrt(norm) || 1;
        for (let i = 0; i < dimension; i++) v[i]! /= norm;
        return v;
      });
    },
  };
  return embedder;
}

/**
 * TEST DOUBLE of `createMemoryStore` (see module doc). Each write is one Dexie transaction over
 * memories + memoryHistory, like the real store. `failNextAdd` makes the next `add` throw (to test
 * that callers stop cleanly).
 */
export function createMemoryStoreDouble(
  db: RecallDB,
  options: { embedder?: () => Embedder | null; now?: () => number } = {},
): SearchableStore & { rebuildIndexes(): Promise<void>; failNextAdd: boolean } {
  const now = options.now ?? Date.now;
  const embedderOf = options.embedder ?? (() => null);
  const view = (m: MemoryRecord): MemoryView => {
    const { embedding: _e, ...rest } = m;
    return rest;
  };
  const hashOf = (text: string) => String(fnv1a(normalizeForCompare(text)));
  async function embed(text: string): Promise<Float32Array | null> {
    const e = embedderOf();
    return e ? ((await e.embed([text]))[0] ?? null) : null;
  }
  const store = {
    failNextAdd: false,
    get: (id: string) => db.memories.get(id),
    embed,
    async add(input: NewMemory, source: string) {
      if (store.failNextAdd) {
        store.failNextAdd = false;
        throw new Error('store double: add failed');
      }
      const hash = hashOf(input.text);
      const existing = await db.memories
        .where('hash')
        .equals(hash)
        .and((m) => m.namespace === input.namespace && m.current === 1)
        .first();
      if (existing) return { memory: existing, created: false };
      const t = input.createdAt ?? now();
      const embedding = await embed(input.text);
      const memory: MemoryRecord = {
        id: crypto.randomUUID(),
        namespace: input.namespace,
        kind: input.kind,
        text: input.text,
        ...(input.topic ? { topic: input.topic } : {}),
        embedding,
        embeddingModel: embedding ? embedderOf()!.modelId : null,
        importance: input.importance ?? 0.5,
        createdAt: t,
        updatedAt: t,
        validFrom: input.validFrom ?? null,
        validUntil: input.validUntil ?? null,
        current: input.validUntil != null && input.validUntil <= now() ? 0 : 1,
        lastAccessedAt: null,
        accessCount: 0,
        sourceConversationId: input.sourceConversationId ?? null,
        sourceMessageIds: input.sourceMessageIds ?? [],
        pinned: input.pinned ?? false,
        hash,
      };
      await db.transaction('rw', db.memories, db.memoryHistory, async () => {
        await db.memories.add(memory);
        await db.memoryHistory.add({ memoryId: memory.id, event: 'ADD', oldText: null, newText: memory.text, at: now(), source });
      });
      return { memory, created: true };
    },
    async update(id: string, patch: Parameters<SearchableStore['update']>[1], source: string, event: Parameters<SearchableStore['update']>[3] = 'UPDATE') {
      const old = await db.memories.get(id);
      if (!old) throw new Error(`store double: unknown memory ${id}`);
      const textChanged = patch.text !== undefined && patch.text !== old.text;
      const embedding = textChanged ? await embed(patch.text!) : old.embedding;
      const next: MemoryRecord = {
        ...old,
        ...patch,
        embedding,
        embeddingModel: textChanged ? (embedding ? embedderOf()!.modelId : null) : old.embeddingModel,
        hash: textChanged ? hashOf(patch.text!) : old.hash,
        updatedAt: now(),
      };
      const until = next.validUntil;
      next.current = until != null && until <= now() ? 0 : 1;
      await db.transaction('rw', db.memories, db.memoryHistory, async () => {
        await db.memories.put(next);
        await db.memoryHistory.add({ memoryId: id, event, oldText: old.text, newText: next.text, at: now(), source });
      });
      return next;
    },
    async invalidate(id: string, at: number, source: string, supersededBy?: string) {
      const old = await db.memories.get(id);
      if (!old) throw new Error(`store double: unknown memory ${id}`);
      await db.transaction('rw', db.memories, db.memoryHistory, async () => {
        await db.memories.update(id, { validUntil: at, current: 0, updatedAt: now(), ...(supersededBy ? { supersededBy } : {}) });
        await db.memoryHistory.add({ memoryId: id, event: 'INVALIDATE', oldText: old.text, newText: null, at: now(), source });
      });
    },
    async remove(ids: string[], event: 'DELETE' | 'FORGET', source: string) {
      await db.transaction('rw', db.memories, db.memoryHistory, async () => {
        for (const id of ids) {
          const old = await db.memories.get(id);
          if (!old) continue;
          await db.memories.delete(id);
          if (event === 'FORGET') await db.memoryHistory.where('memoryId').equals(id).delete();
          else await db.memoryHistory.add({ memoryId: id, event, oldText: old.text, newText: null, at: now(), source });
        }
      });
    },
    async nearest(vector: Float32Array, o: { namespace: string; k: number; includeInvalid?: boolean }) {
      const rows = await db.memories.where('namespace').equals(o.namespace).toArray();
      return rows
        .filter((m) => m.embedding && (o.includeInvalid || m.current === 1))
        .map((m) => ({ memory: view(m), similarity: cosineSimilarity(vector, m.embedding!) }))
        .sort((a, b) => b.similarity - a.similarity)
        .slice(0, o.k);
    },
    async search(q: { text: string; namespace: string; k?: number; includeInvalid?: boolean }) {
      const rows = (await db.memories.where('namespace').equals(q.namespace).toArray()).filter((m) => q.includeInvalid || m.current === 1);
      const terms = contentTerms(q.text);
      const lexical = rows
        .map((m) => ({ m, s: termCoverage(terms, m.text) }))
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s);
      const v = await embed(q.text);
      const vector = v
        ? rows
            .filter((m) => m.embedding)
            .map((m) => ({ m, s: cosineSimilarity(v, m.embedding!) }))
            .sort((a, b) => b.s - a.s)
            .slice(0, q.k ?? 8)
        : [];
      // Reciprocal rank fusion (Cormack et al. 2009, k = 60).
      const fused = new Map<string, { m: MemoryRecord; score: number; ranks: { lexical?: number; vector?: number } }>();
      lexical.forEach((x, i) => {
        const e = fused.get(x.m.id) ?? { m: x.m, score: 0, ranks: {} };
        e.score += 1 / (60 + i + 1);
        e.ranks.lexical = i + 1;
        fused.set(x.m.id, e);
      });
      vector.forEach((x, i) => {
        const e = fused.get(x.m.id) ?? { m: x.m, score: 0, ranks: {} };
        e.score += 1 / (60 + i + 1);
        e.ranks.vector = i + 1;
        fused.set(x.m.id, e);
      });
      return [...fused.values()]
        .sort((a, b) => b.score - a.score)
        .slice(0, q.k ?? 8)
        .map((e) => ({ memory: view(e.m), score: e.score, ranks: e.ranks }));
    },
    async rebuildIndexes() {},
  };
  return store;
}
