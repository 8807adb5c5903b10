/**
 * Search and ranking of the long-term store: hybrid retrieval (BM25 + exact vector scan, convex score fusion,
 * recency/importance weighting, time filters), nearest neighbours, slot lookups and the rounds
 * that state a fact. Reads the live indexes of `IndexSync` and the rows of the top hits only.
 */
import type { Embedder } from '../../../engines/types';
import type { RecallDB } from '../../../db/schema';
import type { MemoryRecord, MemoryView } from '../../../model/records';
import type { LongTermStore, RetrievalQuery, SearchOptions } from '../types';
import type { RetrievedMemory } from '../../../model/context';
import type { SlotKey } from '../slots';
import { contentTerms, termCoverage } from '../../../text/terms';
import { l2normalize } from '../retrieval/vector';
import { compareIds, memorySlotLabel, type BlockHit, type MemoryMeta, type ScanFilter } from '../retrieval/blocks';
import {
  CURRENT_STATE_WEIGHTING,
  DEFAULT_WEIGHTING,
  convexFusion,
  fusionWeightsFor,
  recencyTieBreak,
  SAME_SLOT_MARGIN,
  SLOT_MATCH_WEIGHT,
  weightedScore,
  weightingForCandidate,
  type FusionWeights,
} from '../retrieval/fusion';
import { demoteByFeedback, type FeedbackSignal } from '../retrieval/feedback';
import { aboutAnotherPerson, querySubject, SUBJECT_MISMATCH_PENALTY } from '../retrieval/subject';
import { applyTimeBoost, asksForCurrentState, parseSessionReference, parseTimeFilter, sessionWindow, TIME_MATCH_WEIGHT } from '../retrieval/time-filter';
import type { IndexSync } from './index-sync';
import { toView } from './rows';
import { slotOnlyMembers } from './slot-only';
import { EngineError } from '../../../model/errors';

/** A term that is one Han character. */
const SINGLE_HAN = /^\p{Script=Han}$/u;

/** Share of a fact's content words a round's text must contain to count as stating it (`roundsStating`). */
export const ROUND_COVERAGE = 0.75;

/** One string per slot key, for comparing in the index (`null` when the text is about no slot). */
const slotLabel = (key: SlotKey | null): string | null => (key ? `${key.subject}:${key.slot}` : null);

/**
 * The time window a query names: a time expression (`parseTimeFilter`) or, failing that, an
 * ordinal session (`parseSessionReference`, resolved over `times()`: when the namespace's memories
 * were stated). `rest` is the query without the expression. `null` when it names none.
 */
function timeWindowOf(text: string, now: number, times: () => number[]): { start: number; end: number; rest: string } | null {
  const filter = parseTimeFilter(text, now);
  if (filter) return filter;
  const session = parseSessionReference(text);
  const window = session ? sessionWindow(session.ordinal, times(), now) : null;
  return session && window ? { ...window, rest: session.rest } : null;
}

/** `hits` (best first) followed by the window's hits that are not in it. */
function withWindowHits<T extends { id: string }>(hits: T[], inWindow: readonly T[]): T[] {
  if (inWindow.length === 0) return hits;
  const seen = new Set(hits.map((h) => h.id));
  return [...hits, ...inWindow.filter((h) => !seen.has(h.id))];
}

/** What the search functions read. */
export interface SearchContext {
  db: RecallDB;
  sync: IndexSync;
  /** The current embedder, or `null` while none is loaded. */
  embedder: () => Embedder | null;
  /** Clock (ms epoch). */
  now: () => number;
  /** Default weights of the lexical and vector lists in convex fusion. */
  /** Store-wide override of the fusion weights (else the embedder's calibrated weights). */
  fusionWeights: FusionWeights | undefined;
  /** "Not relevant here" rows of a namespace (`store/feedback.ts`), for the demotion stage of hybrid searches; absent: none. */
  feedback?: (namespace: string) => Promise<readonly FeedbackSignal[]>;
}

/** The store's read side (`LongTermStore`'s search, nearest, inSlot, embed, roundsStating) plus `activeModel`. */
export interface StoreSearch extends Pick<LongTermStore, 'search' | 'nearest' | 'inSlot' | 'embed' | 'roundsStating'> {
  /** The model whose vectors answer: the current embedder's, else the one with most vectors (`null`: none). */
  activeModel(): string | null;
}

/** Creates the read side of a store over `ctx` (see `StoreSearch`). */
export function createStoreSearch(ctx: SearchContext): StoreSearch {
  const { db, sync, now } = ctx;
  /** Whether a search already set the profiling marks (see `search`). */
  let searchMarked = false;

  async function embed(text: string): Promise<Float32Array | null> {
    const embedder = ctx.embedder();
    if (!embedder) return null;
    const [vector] = await embedder.embed([text]);
    if (!vector) throw new EngineError('embedding', `Embedder ${embedder.modelId} returned no vector`);
    return l2normalize(vector);
  }

  function activeModel(): string | null {
    const current = ctx.embedder()?.modelId;
    if (current) return current;
    let best: string | null = null;
    let most = 0;
    for (const [model, { count }] of sync.index.vectorCounts()) if (count > most) [best, most] = [model, count];
    return best;
  }

  /**
   * The lexical list while the lexical index loads (`IndexSync.lexicalReady` false): memories of
   * `ns` whose catalog text (`normalizeMemoryText`) contains query content terms (`contentTerms`;
   * substring match), most terms first, then newest; at most `depth`. O(catalog size) per call.
   * `score` is the number of matched terms (the lexical score `convexFusion` normalizes by its maximum).
   */
  function catalogMatches(ns: string, text: string, depth: number, isEligible: (id: string) => boolean): { id: string; terms: string[]; score: number }[] {
    const terms = contentTerms(text);
    if (terms.length === 0) return [];
    const found: { id: string; terms: string[]; at: number }[] = [];
    sync.index.forEachText(ns, (id, normalized, at) => {
      let hit: string[] | null = null; // allocated for a match only (most memories match no term)
      for (const term of terms) if (normalized.includes(term)) (hit ??= []).push(term);
      if (hit && isEligible(id)) found.push({ id, terms: hit, at });
    });
    found.sort((a, b) => b.terms.length - a.terms.length || b.at - a.at);
    return found.slice(0, depth).map(({ id, terms: hit }) => ({ id, terms: hit, score: hit.length }));
  }

  async function search(query: RetrievalQuery, options: SearchOptions = {}): Promise<RetrievedMemory[]> {
    const t = query.now ?? now();
    const k = Math.max(1, Math.floor(query.k ?? 8));
    const mode = options.mode ?? 'hybrid';
    const depth = options.depth ?? Math.max(50, 5 * k);
    const ns = query.namespace;
    const index = sync.index;
    if (index.count(ns) === 0) return [];
    const weighting = options.weighting ?? (options.timeFilters !== false && asksForCurrentState(query.text) ? CURRENT_STATE_WEIGHTING : DEFAULT_WEIGHTING);
    const scan: ScanFilter = { now: t, includeInvalid: query.includeInvalid === true, range: null };
    const live = index;
    const isEligible = (id: string) => live.accepts(id, ns, scan);
    // A time the query names is a window that boosts, never a filter (`applyTimeBoost`).
    const timeOf = (id: string) => live.meta(id)!.createdAt;
    const filter = options.timeFilters === false ? null : timeWindowOf(query.text, t, () => live.idsWhere(ns, scan).map(timeOf));
    const text = filter ? filter.rest : query.text;
    const windowScan: ScanFilter | null = filter ? { ...scan, range: { start: filter.start, end: filter.end } } : null;
    // The window's members, read once from the meta columns (what `accepts(id, ns, windowScan)` says
    // for each id): the window lists, the boost and the tie-break ask about an id many times.
    const windowIds = windowScan ? live.idsWhere(ns, windowScan) : [];
    const windowSet = new Set(windowIds);
    const inWindow = (id: string) => windowSet.has(id);
    // An empty window has no window hits: its lists are not searched.
    const windowSearch = windowScan !== null && windowIds.length > 0;

    // Cold start: until the lexical snapshot is loaded, the lexical list comes from the catalog.
    const fromCatalog = mode !== 'vector' && !sync.lexicalReady;
    // With a time window, each list is also searched inside it, so the window's candidates are
    // found at any depth (the same scores: one query, one index).
    const lexicalOf = (accept: (id: string) => boolean) => (fromCatalog ? catalogMatches(ns, text, depth, accept) : sync.lexical.search(text, depth, accept));
    const lexicalHits = mode === 'vector' ? [] : withWindowHits(lexicalOf(isEligible), windowSearch ? lexicalOf(inWindow) : []);
    const lexicalIds = lexicalHits.map((h) => h.id);
    let vectorHits: { id: string; score: number }[] = [];
    // Whether the vector list was searched (`convexFusion`: an unsearched list's weight is dropped).
    let vectorSearched = false;
    const embedder = ctx.embedder();
    let q: Float32Array | null = null;
    if (mode !== 'lexical' && embedder && text.trim() && sync.index.vectorCounts().has(embedder.modelId)) {
      q = query.timeStep ? await query.timeStep('queryEmbedding', () => embed(text)) : await embed(text);
      const asHits = (hits: BlockHit[]) => hits.map((h) => ({ id: h.id, score: h.similarity }));
      // The window's list scores its members only (`searchAmong`: the hits a scan filtered to the
      // window gives, without a second pass over every vector).
      if (q) {
        const inWindowHits = windowSearch ? asHits(sync.index.searchAmong(embedder.modelId, ns, q, depth, windowIds)) : [];
        [vectorHits, vectorSearched] = [withWindowHits(asHits(sync.index.search(embedder.modelId, ns, q, depth, scan)), inWindowHits), true];
      }
    }

    const vectorIds = vectorHits.map((h) => h.id);
    const weights = options.fusion ?? ctx.fusionWeights ?? fusionWeightsFor(embedder?.modelId);
    const fused = convexFusion(mode === 'vector' ? null : lexicalHits, vectorSearched ? vectorHits : null, weights);
    // Same subject and slot as the question ("Where do I work now?" → user:work): candidates even
    // with no shared word ("New job! I'm a product manager at KPMG now."), see `SLOT_MATCH_WEIGHT`.
    const querySlot = mode === 'vector' ? null : memorySlotLabel(text);
    // Each candidate's columns are read once (the tie-break's sort asks for them per comparison).
    const metas = new Map<string, MemoryMeta>();
    const metaOfId = (id: string): MemoryMeta => {
      let m = metas.get(id);
      if (!m) metas.set(id, (m = sync.index.meta(id)!));
      return m;
    };
    /** Whether `id` is a member of the asked slot in `ns` that is valid at `t` (what `BlockIndex.forEachInSlot` visits). */
    const isSlotMember = (id: string): boolean => {
      if (!querySlot || !index.has(id)) return false;
      const m = metaOfId(id);
      return m.namespace === ns && m.slot === querySlot && (m.validUntil === null || m.validUntil > t);
    };
    // The asked slot's members that a list found (`inQuerySlot`: their relevance gains the slot's) and
    // those no list found (slot-only: their relevance is the slot's alone; they are ranked on the
    // columns after the feedback is read, and only the few that can reach the top k join, `slotOnlyMembers`).
    // `rankEverySlotMember` (the reference): every member joins the candidates as a listed one.
    const inQuerySlot = new Set<string>();
    if (querySlot) {
      for (const id of fused.keys()) if (isSlotMember(id) && isEligible(id)) inQuerySlot.add(id);
      if (options.rankEverySlotMember)
        for (const id of index.slotMembers(ns, querySlot, t)) {
          if (inQuerySlot.has(id) || !isEligible(id)) continue;
          fused.set(id, 0);
          inQuerySlot.add(id);
        }
      for (const id of inQuerySlot) fused.set(id, fused.get(id)! + SLOT_MATCH_WEIGHT);
    }
    /** Whether a memory is current at query time `t` (not superseded, not expired). */
    const isCurrentAt = (m: MemoryMeta): boolean => m.current === 1 && (m.validUntil ?? Infinity) > t;
    // Another person's fact does not answer a question about the user (`retrieval/subject.ts`).
    const asked = querySubject(text);
    if (mode !== 'vector') {
      for (const [id, relevance] of fused) {
        const m = sync.index.has(id) ? metaOfId(id) : null;
        if (m && aboutAnotherPerson(asked, m.subject)) fused.set(id, relevance - SUBJECT_MISMATCH_PENALTY);
      }
    }
    // Relevance feedback: memories marked "not relevant here" under a similar query rank last (`retrieval/feedback.ts`).
    const feedback = ctx.feedback && mode === 'hybrid' ? await ctx.feedback(ns) : [];
    // Of a large slot, only the members that can reach the top k and the places the later passes
    // can empty: one per superseded candidate with matched terms (moved below current ones), one per feedback row.
    let movable = 0;
    for (const h of lexicalHits) {
      if (!sync.index.has(h.id)) continue;
      if (!isCurrentAt(metaOfId(h.id))) movable += 1;
    }
    const slotOnly =
      querySlot && !options.rankEverySlotMember
        ? slotOnlyMembers(index, {
            namespace: ns,
            label: querySlot,
            now: t,
            listed: fused,
            asked,
            window: windowScan,
            weighting: weightingForCandidate(weighting, true, true),
            head: k + movable + feedback.length,
            // Without the tie-break no group reorders them: any margin keeps a superset of the best `head` by rank.
            margin: options.recencyTieBreak === false ? Infinity : SAME_SLOT_MARGIN,
          })
        : { count: 0, inWindow: 0, kept: [] };
    let ranked: { id: string; score: number }[];
    if (fused.size === 0 && slotOnly.count === 0 && windowScan) {
      // "What did I say last week?": nothing to match on but a time range — newest first.
      ranked = windowIds
        .map((id) => ({ id, score: 0, at: metaOfId(id).validFrom ?? metaOfId(id).createdAt }))
        .sort((a, b) => b.at - a.at)
        .map(({ id, score }) => ({ id, score }));
    } else {
      // The slot-only members are boosted on the columns already (`slotOnlyMembers`).
      if (filter && windowScan)
        applyTimeBoost(fused, filter, inWindow, () => windowIds, k, TIME_MATCH_WEIGHT, { inside: slotOnly.inWindow, has: isSlotMember });
      // A candidate's final score: relevance weighted by its age and importance (slot members by the slot's weighting).
      const finalScore = (m: MemoryMeta, relevance: number, inSlot: boolean) =>
        weightedScore(relevance, t - m.updatedAt, m.pinned ? 1 : m.importance, weightingForCandidate(weighting, querySlot !== null, inSlot));
      ranked = [];
      for (const [id, relevance] of fused) {
        if (!sync.index.has(id)) continue;
        ranked.push({ id, score: finalScore(metaOfId(id), relevance, inQuerySlot.has(id)) });
      }
      for (const c of slotOnly.kept) ranked.push(c);
      ranked.sort((a, b) => b.score - a.score || compareIds(a.id, b.id));
      if (options.recencyTieBreak !== false) {
        // Tied candidates trade places and scores (the score is the position's), so scores stay in rank order.
        const scoreOf = new Map(ranked.map((r) => [r.id, r.score]));
        const order = recencyTieBreak(
          ranked.map((r) => r.id),
          // Single Han characters (the unigram field, one-character words) say too little about what a memory is about to group it.
          new Map(lexicalHits.map((h) => [h.id, h.terms.filter((term) => !SINGLE_HAN.test(term))])),
          (id) => metaOfId(id).validFrom ?? metaOfId(id).createdAt,
          undefined,
          {
            slotOf: (id) => metaOfId(id).slot,
            scoreOf: (id) => scoreOf.get(id) ?? 0,
            slotMargin: SAME_SLOT_MARGIN,
            isCurrent: (id) => isCurrentAt(metaOfId(id)),
            subjectOf: (id) => metaOfId(id).subject,
            ...(windowScan ? { inWindow } : {}),
          },
        );
        const before = ranked;
        ranked = order.map((id, i) => ({ id, score: before[i]!.score }));
      }
    }
    if (feedback.length > 0) ranked = demoteByFeedback(ranked, { terms: contentTerms(text), embedding: q, embeddingModel: q && embedder!.modelId }, feedback);
    const top = ranked.slice(0, k);
    // The first search of a store sets `recall:store.search.*` marks (the cold-start bench's
    // per-phase profile; later searches set none, so marks do not pile up).
    const mark = !searchMarked;
    searchMarked = true;
    if (mark) performance.mark('recall:store.search.rows');
    // Rows (texts) are read for the top-k only.
    const records = await db.memories.bulkGet(top.map((r) => r.id));
    if (mark) performance.mark('recall:store.search.end');
    const byId = new Map(records.flatMap((r) => (r ? [[r.id, r] as const] : [])));
    const lexicalRank = new Map(lexicalIds.map((id, i) => [id, i + 1]));
    const vectorRank = new Map(vectorIds.map((id, i) => [id, i + 1]));
    const results: RetrievedMemory[] = [];
    for (const { id, score } of top) {
      const record = byId.get(id);
      if (!record) continue; // removed between the index lookup and the read
      const ranks: RetrievedMemory['ranks'] = {};
      if (lexicalRank.has(id)) ranks.lexical = lexicalRank.get(id)!;
      if (vectorRank.has(id)) ranks.vector = vectorRank.get(id)!;
      results.push({ memory: toView(record), score, ranks, ...(fromCatalog ? { lexicalFrom: 'catalog' as const } : {}) });
    }
    return results;
  }

  return {
    embed,
    activeModel,
    search,

    async nearest(vector, options) {
      const model = activeModel();
      if (!model) return [];
      const hits = sync.index.search(model, options.namespace, l2normalize(vector), options.k, { now: now(), includeInvalid: options.includeInvalid === true });
      const records = await db.memories.bulkGet(hits.map((h) => h.id));
      const byId = new Map(records.flatMap((r) => (r ? [[r.id, r] as const] : [])));
      return hits.flatMap((h) => {
        const record = byId.get(h.id);
        return record ? [{ memory: toView(record), similarity: h.similarity }] : [];
      });
    },

    async inSlot(key, options) {
      const label = slotLabel(key);
      if (label === null) return [];
      const ids = sync.index.inSlot(options.namespace, label, now(), options.kinds ? new Set<string>(options.kinds) : null);
      const records = await db.memories.bulkGet(ids.slice(0, Math.max(0, options.k)).map((x) => x.id));
      return records.flatMap((r) => (r ? [toView(r)] : []));
    },

    async roundsStating(fact: Pick<MemoryRecord, 'id' | 'namespace' | 'kind' | 'text' | 'sourceMessageIds'>) {
      if (fact.kind === 'episodic') return [];
      const bySource = fact.sourceMessageIds.length > 0 ? await db.memories.where('sourceMessageIds').anyOf(fact.sourceMessageIds).toArray() : [];
      const terms = contentTerms(fact.text);
      const byText =
        terms.length === 0
          ? []
          : await search({ text: fact.text, namespace: fact.namespace, k: 50, includeInvalid: true }, { mode: 'lexical', timeFilters: false }).then((hits) =>
              hits.map((h) => h.memory).filter((m) => m.kind === 'episodic' && termCoverage(terms, m.text) >= ROUND_COVERAGE),
            );
      const rounds = new Map<string, MemoryView>();
      for (const m of [...bySource.map(toView), ...byText]) {
        if (m.kind === 'episodic' && m.namespace === fact.namespace && m.id !== fact.id) rounds.set(m.id, m);
      }
      return [...rounds.values()].sort((a, b) => b.createdAt - a.createdAt);
    },
  };
}
