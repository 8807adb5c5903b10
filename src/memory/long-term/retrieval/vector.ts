/**
 * Vector index of long-term memories: Voy (k-d tree, exact nearest neighbours by squared
 * Euclidean distance) over L2-normalized embeddings, plus the vectors themselves in a `Map`.
 *
 * Why both: Voy returns ids without scores and can only `remove` an item given its original
 * vector, so the vectors are kept to compute exact cosine similarities (dot products of unit
 * vectors) and to remove items. The map is also the fallback: while Voy is (re)building, when an
 * operation on it failed, or when a filter leaves few eligible memories, search is an exact scan.
 *
 * Voy quirks handled here (voy-search 0.6.3 / kiddo 2.1, measured in this project):
 * - More than 32 points with the same value on one axis make kiddo panic ("Too many items with
 *   the same position on one axis"), e.g. 33 identical embeddings. Each vector given to Voy gets a
 *   deterministic per-id jitter of at most ±1e-6 per component, so no two coordinates coincide;
 *   similarities are recomputed from the unjittered vectors.
 * - A failed call poisons the Voy object ("recursive use of an object detected"): the object is
 *   dropped, search falls back to the exact scan, and a fresh object is rebuilt from the map
 *   (after two failures Voy is abandoned for this index and only the scan is used).
 * - Voy pads vectors to 768 dimensions; longer vectors are not indexed in Voy (scan only).
 * - The index holds vectors of one embedding model and one dimension: adding a vector of another
 *   model clears it; a vector of the same model with another dimension (or non-finite) is refused.
 */
import type { VoyClass, VoyInstance } from './voy';

/** A vector hit: memory id and cosine similarity (−1..1). */
export interface VectorHit {
  id: string;
  similarity: number;
}

/** Voy's fixed dimension (vectors are zero-padded to it). */
export const VOY_MAX_DIMENSION = 768;
/** Amplitude of the per-component jitter added to vectors given to Voy. */
const JITTER = 1e-6;
/** Items added to Voy per call while (re)building; the build yields to the event loop between batches. */
const BUILD_BATCH = 256;
/** Voy failures after which only the exact scan is used. */
const MAX_VOY_FAILURES = 2;

/** What the index is doing, for benchmarks and diagnostics. */
export interface VectorIndexStats {
  size: number;
  modelId: string | null;
  dimension: number | null;
  /** `true` when Voy holds every vector and answers searches. */
  voyReady: boolean;
  voyFailures: number;
}

/** Dot product of two vectors of the same length (= cosine similarity for unit vectors). */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) sum += a[i]! * b[i]!;
  return sum;
}

/** Returns `v / ‖v‖₂` (a copy); the zero vector is returned unchanged. */
export function l2normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i += 1) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  const out = new Float32Array(v.length);
  if (norm === 0) return out;
  for (let i = 0; i < v.length; i += 1) out[i] = v[i]! / norm;
  return out;
}

/** Cosine similarity of two vectors of the same length, of any norm (dot product over the norms; 0 for a zero vector or different lengths). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}


/**
 * Whether a vector can be indexed: at least one component, every component finite, norm > 0.
 * @param v any float vector.
 */
export function isUsableVector(v: Float32Array): boolean {
  if (v.length === 0) return false;
  let norm = 0;
  for (let i = 0; i < v.length; i += 1) {
    const x = v[i]!;
    if (!Number.isFinite(x)) return false;
    norm += x * x;
  }
  return norm > 0 && Number.isFinite(norm);
}

/** 32-bit FNV-1a of a string, seed of the per-id jitter. */
function seedOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i += 1) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0 || 1;
}

/** The vector Voy stores for `id`: `v` plus deterministic xorshift32 jitter in [−JITTER, JITTER). */
function jittered(id: string, v: Float32Array): number[] {
  let x = seedOf(id);
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = v[i]! + ((x >>> 0) / 4294967296 - 0.5) * 2 * JITTER;
  }
  return out;
}

const resource = (id: string, v: Float32Array) => ({ embeddings: [{ id, title: '', url: '', embeddings: jittered(id, v) }] });

/** Keeps the `k` best hits (highest similarity first) from an unsorted stream. */
class TopK {
  readonly hits: VectorHit[] = [];
  constructor(private readonly k: number) {}
  push(id: string, similarity: number): void {
    const hits = this.hits;
    if (hits.length === this.k && similarity <= hits[hits.length - 1]!.similarity) return;
    let i = hits.length;
    while (i > 0 && hits[i - 1]!.similarity < similarity) i -= 1;
    hits.splice(i, 0, { id, similarity });
    if (hits.length > this.k) hits.pop();
  }
}

/** The vector index (see module doc). Not thread-safe; one per memory store. */
export class VectorIndex {
  private readonly vectors = new Map<string, Float32Array>();
  private model: string | null = null;
  private voy: VoyInstance | null = null;
  private voyIds = new Set<string>();
  private building: Promise<void> | null = null;
  private failures = 0;
  private generation = 0;

  /** @param Voy the loaded Voy class (see `loadVoy`), or `null` to use only the exact scan. */
  constructor(private readonly Voy: VoyClass | null) {}

  /** Number of vectors. */
  get size(): number {
    return this.vectors.size;
  }

  /** Embedding model of the vectors held (`null` when empty). */
  get modelId(): string | null {
    return this.model;
  }

  /** Whether `id` has a vector. */
  has(id: string): boolean {
    return this.vectors.has(id);
  }

  /** The stored (normalized) vector of `id`. */
  get(id: string): Float32Array | undefined {
    return this.vectors.get(id);
  }

  /** Size, model, dimension and Voy state (see `VectorIndexStats`). */
  stats(): VectorIndexStats {
    const first = this.vectors.values().next();
    return {
      size: this.vectors.size,
      modelId: this.model,
      dimension: first.done ? null : first.value.length,
      voyReady: this.voy !== null && this.building === null && this.voyIds.size === this.vectors.size,
      voyFailures: this.failures,
    };
  }

  /**
   * Adds or replaces the vector of `id` (normalized here). A vector of another model than the
   * one held clears the index first (vectors of different models are not comparable). A vector
   * of the same model but another dimension than the index's, or with a NaN/±Infinity component
   * or a zero norm, is refused: the index is left unchanged (the id's old vector is removed, so
   * the memory is found by keywords only until it is re-embedded).
   * @returns `true` when the vector was stored, `false` when it was refused.
   */
  set(id: string, vector: Float32Array, modelId: string): boolean {
    if (!isUsableVector(vector)) {
      this.delete(id);
      return false;
    }
    const v = l2normalize(vector);
    if (this.model !== modelId) this.clear();
    const dimension = this.stats().dimension;
    if (dimension !== null && dimension !== v.length) {
      console.warn(`[vector] refused a ${v.length}-d vector for ${id}: the index holds ${dimension}-d vectors of ${modelId}`);
      this.delete(id);
      return false;
    }
    this.model = modelId;
    const old = this.vectors.get(id);
    this.vectors.set(id, v);
    if (!this.voy) {
      if (!this.building && this.voyUsable(v.length)) void this.build();
      return true;
    }
    this.withVoy((voy) => {
      if (old && this.voyIds.has(id)) voy.remove(resource(id, old));
      voy.add(resource(id, v));
      this.voyIds.add(id);
    });
    return true;
  }

  /**
   * Replaces the whole index with `entries` (all of model `modelId`) and rebuilds Voy in the
   * background. The index's dimension is `dimension` when given (the current embedder's), else
   * the most common one among the entries (ties: the first seen); vectors of another dimension,
   * with a non-finite component or a zero norm are left out, so one malformed vector can never
   * decide the dimension and hide every other vector.
   * @returns the build promise (resolves when Voy holds every vector); searches work meanwhile.
   */
  replaceAll(entries: Iterable<[string, Float32Array]>, modelId: string | null, dimension?: number | null): Promise<void> {
    this.clear();
    const usable = [...entries].filter(([, vector]) => isUsableVector(vector));
    let wanted = dimension ?? null;
    if (wanted === null) {
      const counts = new Map<number, number>();
      for (const [, vector] of usable) counts.set(vector.length, (counts.get(vector.length) ?? 0) + 1);
      let best = 0;
      for (const [dim, count] of counts) if (count > best) [wanted, best] = [dim, count];
    }
    for (const [id, vector] of usable) if (vector.length === wanted) this.vectors.set(id, l2normalize(vector));
    this.model = this.vectors.size > 0 ? modelId : null;
    return this.rebuild();
  }

  /** Removes the vector of `id` (no-op when absent). */
  delete(id: string): void {
    const old = this.vectors.get(id);
    if (!old) return;
    this.vectors.delete(id);
    if (this.voy && this.voyIds.has(id)) {
      this.withVoy((voy) => {
        voy.remove(resource(id, old));
        this.voyIds.delete(id);
      });
    }
    if (this.vectors.size === 0) this.model = null;
  }

  /** Drops every vector and the Voy index. */
  clear(): void {
    this.vectors.clear();
    this.dropVoy();
    this.model = null;
  }

  /**
   * Resolves when Voy holds every vector (or cannot be used). Searches work before that, with
   * the exact scan.
   */
  async whenReady(): Promise<void> {
    while (this.building) await this.building;
  }

  /**
   * Nearest memories to `query` by cosine similarity, best first.
   * @param query embedding of the query (normalized here); must come from `modelId`'s model.
   * @param k number of hits wanted.
   * @param filter keeps an id when true (namespace, validity, time…). Voy results are filtered
   *   after an over-fetch that widens until `k` hits pass or the whole index was read, so a
   *   selective filter cannot starve the result.
   * @param eligibleCount how many ids pass `filter`, when the caller knows it: with few eligible
   *   ids (under a quarter of the index, or 512 or fewer) an exact scan of just those is cheaper
   *   than over-fetching from Voy.
   * @param eligibleIds the ids that pass `filter`, to scan only them (optional).
   */
  search(query: Float32Array, k: number, filter?: (id: string) => boolean, eligibleCount?: number, eligibleIds?: Iterable<string>): VectorHit[] {
    if (k <= 0 || this.vectors.size === 0) return [];
    const q = l2normalize(query);
    const first = this.vectors.values().next().value as Float32Array;
    if (first.length !== q.length) return [];
    const total = this.vectors.size;
    const eligible = eligibleCount ?? total;
    const voyReady = this.stats().voyReady;
    if (!voyReady || eligible <= 512 || eligible * 4 < total) return this.scan(q, k, filter, eligibleIds);
    const fromVoy = this.searchVoy(q, k, filter, eligible);
    return fromVoy ?? this.scan(q, k, filter, eligibleIds);
  }

  /** Exact scan: dot product with every (eligible) vector. */
  private scan(q: Float32Array, k: number, filter?: (id: string) => boolean, ids?: Iterable<string>): VectorHit[] {
    const top = new TopK(k);
    if (ids) {
      for (const id of ids) {
        const v = this.vectors.get(id);
        if (v && (!filter || filter(id))) top.push(id, dot(q, v));
      }
    } else {
      for (const [id, v] of this.vectors) if (!filter || filter(id)) top.push(id, dot(q, v));
    }
    return top.hits;
  }

  /** Voy search with over-fetch and widening; `null` when Voy failed (caller scans). */
  private searchVoy(q: Float32Array, k: number, filter: ((id: string) => boolean) | undefined, eligible: number): VectorHit[] | null {
    const total = this.vectors.size;
    let fetch = Math.min(total, Math.ceil((k * total) / Math.max(1, eligible)) * 2 + 10);
    const query = new Float32Array(q);
    for (;;) {
      let ids: string[] | null = null;
      this.withVoy((voy) => {
        ids = voy.search(query, fetch).neighbors.map((n) => n.id);
      });
      if (ids === null) return null;
      const top = new TopK(k);
      for (const id of ids as string[]) {
        const v = this.vectors.get(id);
        if (v && (!filter || filter(id))) top.push(id, dot(q, v));
      }
      if (top.hits.length >= k || fetch >= total) return top.hits;
      fetch = Math.min(total, fetch * 4);
    }
  }

  private voyUsable(dimension: number): boolean {
    return this.Voy !== null && this.failures < MAX_VOY_FAILURES && dimension <= VOY_MAX_DIMENSION;
  }

  /** Runs `fn` on the Voy object; on failure drops it and schedules a rebuild. */
  private withVoy(fn: (voy: VoyInstance) => void): void {
    if (!this.voy) return;
    try {
      fn(this.voy);
    } catch (error) {
      this.failures += 1;
      console.warn(`[ltm] Voy index failed (${this.failures}/${MAX_VOY_FAILURES}), using exact scan and rebuilding:`, error);
      this.dropVoy();
      const first = this.vectors.values().next();
      if (!first.done && this.voyUsable(first.value.length)) void this.build();
    }
  }

  private dropVoy(): void {
    this.generation += 1;
    try {
      this.voy?.free();
    } catch {
      // a poisoned object cannot be freed; its memory is lost with it
    }
    this.voy = null;
    this.voyIds = new Set();
    this.building = null;
  }

  /**
   * (Re)builds Voy from the map in batches of `BUILD_BATCH`, yielding to the event loop between
   * batches so messages keep being served. Vectors set or deleted meanwhile are applied to the
   * new object directly.
   */
  rebuild(): Promise<void> {
    this.dropVoy();
    const first = this.vectors.values().next();
    if (first.done || !this.voyUsable(first.value.length)) return Promise.resolve();
    return this.build();
  }

  private build(): Promise<void> {
    const generation = this.generation;
    const run = async () => {
      this.voy = new this.Voy!();
      this.voyIds = new Set();
      const ids = Array.from(this.vectors.keys());
      for (let start = 0; start < ids.length; start += BUILD_BATCH) {
        if (generation !== this.generation) return;
        const batch = ids.slice(start, start + BUILD_BATCH).filter((id) => this.vectors.has(id) && !this.voyIds.has(id));
        if (batch.length > 0) {
          const embeddings = batch.map((id) => resource(id, this.vectors.get(id)!).embeddings[0]!);
          this.withVoy((voy) => {
            voy.add({ embeddings });
            batch.forEach((id) => this.voyIds.add(id));
          });
          if (generation !== this.generation) return;
        }
        await new Promise<void>((resolve) => setTimeout(resolve, 0));
      }
    };
    const promise: Promise<void> = run().finally(() => {
      if (this.building === promise) this.building = null;
    });
    this.building = promise;
    return promise;
  }
}
