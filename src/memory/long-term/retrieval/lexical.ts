/**
 * Lexical (full-text) index of long-term memories over MiniSearch (BM25+ ranking, MiniSearch's
 * defaults k1 = 1.2, b = 0.7, δ = 0.5), with the CJK-aware tokenizer of `./tokenize`.
 * It holds only ids and terms: texts and metadata stay in Dexie.
 *
 * Fields: `text` (the memory text), `topic` (boosted ×0.5), `phrases`, the first-person terms
 * of the text (`firstPersonTerms`: "my cat" → `1p:cat`; boost 1) and `chars`, its content-character
 * unigrams (`hanUnigrams`: Han characters without the function characters; boost
 * `CHAR_UNIGRAM_BOOST`). Queries are analysed the same way (words, Han bigrams, first-person
 * terms, content-character unigrams). MiniSearch multiplies a document's
 * summed BM25+ score by the number of query terms it matched, so a memory that matches
 * `1p:cat` as well as `cat` ranks well above one about someone else's cat.
 */
import MiniSearch, { type Options } from 'minisearch';
import { Bm25Scorer, type Bm25Hit, type MiniSearchInternals } from './bm25';
import { firstPersonTerms, hanUnigrams, tokenize } from './tokenize';
import { restoreChunks, serializeChunks, serializeChunksSync, type ChunkReader, type LexicalChunks } from './lexical-snapshot';
import type { LexicalManifestRecord } from './blocks/records';

/** One lexical hit: memory id, its BM25+ score (higher = better, unbounded) and the distinct query terms (as `tokenize` / `firstPersonTerms` produce them) it matched. */
export type LexicalHit = Bm25Hit;

interface LexicalDoc {
  id: string;
  text: string;
  topic: string;
  /** The text again, tokenized into its first-person terms. */
  phrases: string;
  /** The text again, tokenized into its content-character unigrams. */
  chars: string;
}

/**
 * Query terms: index terms, first-person terms and the content-character unigrams that are not
 * already a term (a one-character word such as 猫 is searched once, in every field).
 */
function queryTerms(text: string): string[] {
  const terms = [...tokenize(text), ...firstPersonTerms(text)];
  const present = new Set(terms);
  return [...terms, ...hanUnigrams(text).filter((c) => !present.has(c))];
}

/**
 * Query boost of the `chars` field (content-character unigrams) relative to `text` (1): low, so
 * single characters only decide between memories the words and bigrams do not separate, and
 * bring in memories that share no word. Calibrated on the benchmark's tuning seed 1 (1k rounds,
 * the Chinese questions, lexical MRR; see BENCHMARKS.md).
 */
export const CHAR_UNIGRAM_BOOST = 0.3;

/** Indexed fields in MiniSearch's order, with their query boosts. */
const FIELDS: ReadonlyArray<readonly [string, number]> = [
  ['text', 1],
  ['topic', 0.5],
  ['phrases', 1],
  ['chars', CHAR_UNIGRAM_BOOST],
];

/**
 * Version of the persisted snapshot (`toJSON`): the MiniSearch serialization wrapped with the
 * field set it was built with. 2 added the `chars` field; 3: terms of the tokenizer without light
 * verbs (go / get / take) and without `1p:` terms across another person's pronoun; 4: no Han bigram across a stop
 * word (`tokenize`: 什么时候要去 gives no 候要) and the Chinese light verbs 要 / 去 as function characters; a snapshot of another version (1 was
 * MiniSearch's bare JSON) is refused with `OutdatedLexicalSnapshotError`, and the store rebuilds
 * the index from the rows.
 */
export const LEXICAL_SNAPSHOT_VERSION = 4;

/** A lexical snapshot written by another version of `LexicalIndex` (its fields differ). */
export class OutdatedLexicalSnapshotError extends Error {
  constructor(found: unknown) {
    super(`Lexical snapshot version ${String(found)} is not ${LEXICAL_SNAPSHOT_VERSION}`);
    this.name = 'OutdatedLexicalSnapshotError';
  }
}

/** The parsed snapshot's MiniSearch part. @throws OutdatedLexicalSnapshotError for another version. */
function snapshotIndex(json: string): Parameters<typeof MiniSearch.loadJS>[0] {
  const parsed = JSON.parse(json) as { version?: unknown; index?: Parameters<typeof MiniSearch.loadJS>[0] };
  if (parsed?.version !== LEXICAL_SNAPSHOT_VERSION || !parsed.index) throw new OutdatedLexicalSnapshotError(parsed?.version ?? 1);
  return parsed.index;
}

/** CPU time (ms) of one slice of `LexicalIndex.fromJSONAsync` and `toJSONSliced` between two pauses. */
export const LOAD_SLICE_MS = 8;

/** The `index` part of MiniSearch 7.2's serialization: `[term, { fieldId: { shortDocId: term frequency } }]`. */
type SerializedTerms = Array<[string, Record<string, Record<string, number>>]>;

/** The private fields of MiniSearch 7.2.0 that its `toJSON` serializes (read by `LexicalIndex.toJSONSliced`). */
interface SerializedFields {
  _index: Iterable<[string, Map<number, Map<number, number>>]>;
  _documentCount: number;
  _nextId: number;
  _documentIds: Map<number, unknown>;
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _storedFields: Map<number, unknown>;
  _dirtCount: number;
}

/** A MiniSearch index of memory texts (and topics, boosted ×0.5) keyed by memory id. */
export class LexicalIndex {
  /** The terms MiniSearch's `add` analysed (every field's), collected while `set` runs (`null`: not collecting). */
  private readonly added: { terms: string[] | null } = { terms: null };
  private index = this.create();
  private scorer = new Bm25Scorer(FIELDS);

  /**
   * Restores an index saved with `toJSON` (MiniSearch's own serialization; no re-tokenization).
   * @throws OutdatedLexicalSnapshotError when `json` is a snapshot of another version (`LEXICAL_SNAPSHOT_VERSION`).
   * @throws Error when `json` is not a snapshot.
   */
  static fromJSON(json: string): LexicalIndex {
    const index = new LexicalIndex();
    index.index = MiniSearch.loadJS<LexicalDoc>(snapshotIndex(json), index.options());
    index.scorer = new Bm25Scorer(FIELDS);
    return index;
  }

  /**
   * `fromJSON` in slices of about `sliceMs` of CPU time, awaiting `pause()` between them, so a
   * store opening in the background keeps answering messages while a large snapshot loads. Same
   * result as `fromJSON`. The `JSON.parse` of the whole string is one step; MiniSearch's document
   * maps are restored by its own `loadJS` (one step, O(memories)); the term postings — most of the
   * work — are then filled here term by term from the parsed object, as MiniSearch 7.2's
   * `loadJSAsync` does (through its private `_index`; the version is pinned, see `./bm25.ts`).
   * MiniSearch's own `loadJSAsync` paused with a `setTimeout(0)` after every 1,000 keys of every
   * posting list: thousands of timers, each clamped to ≥ 4 ms in a browser, so at 10k memories its
   * load took seconds of wall time for ~0.3 s of CPU (the cold-start bench's "lexical snapshot
   * parse"), with every write of the store queued behind it.
   * @param pause awaited between slices (default: a 0 ms timer; the store passes `scheduler.yield`).
   * @param sliceMs CPU time (ms) between two pauses.
   * @throws OutdatedLexicalSnapshotError (rejects) for a snapshot of another version; Error when `json` is not a snapshot.
   */
  static async fromJSONAsync(
    json: string,
    pause: () => Promise<void> = () => new Promise((r) => setTimeout(r, 0)),
    sliceMs = LOAD_SLICE_MS,
  ): Promise<LexicalIndex> {
    const { index: terms, ...rest } = snapshotIndex(json) as Parameters<typeof MiniSearch.loadJS>[0] & { index: SerializedTerms; serializationVersion: number };
    const index = new LexicalIndex();
    index.index = MiniSearch.loadJS<LexicalDoc>({ ...rest, index: [] }, index.options());
    index.scorer = new Bm25Scorer(FIELDS);
    const target = (index.index as unknown as { _index: { set(term: string, fields: Map<number, Map<number, number>>): void } })._index;
    let deadline = performance.now() + sliceMs;
    for (const [term, data] of terms) {
      const fields = new Map<number, Map<number, number>>();
      for (const fieldId of Object.keys(data)) {
        // MiniSearch's serialization version 1 nested each entry in `ds`.
        const entry = rest.serializationVersion === 1 ? (data[fieldId] as unknown as { ds: Record<string, number> }).ds : data[fieldId]!;
        const postings = new Map<number, number>();
        for (const shortId of Object.keys(entry)) postings.set(parseInt(shortId, 10), entry[shortId]!);
        fields.set(parseInt(fieldId, 10), postings);
      }
      target.set(term, fields);
      if (performance.now() >= deadline) {
        await pause();
        deadline = performance.now() + sliceMs;
      }
    }
    return index;
  }

  /**
   * The index as a versioned snapshot (a JSON string `{ version, index }`, `index` MiniSearch's
   * own serialization; at 10k short memories ≈ 1–2 MB), for `fromJSON`.
   */
  toJSON(): string {
    return JSON.stringify({ version: LEXICAL_SNAPSHOT_VERSION, index: this.index });
  }

  /**
   * `toJSON` in slices, off the caller's turn: the same string, byte for byte, built a slice at a
   * time (each term's postings serialized as MiniSearch 7.2's `toJSON` does, from its private
   * fields — the version is pinned, see `./bm25.ts`), awaiting `pause()` between slices so a large
   * index never blocks the thread in one long task (at 10k memories a whole `toJSON` took
   * 0.3–0.7 s of CPU here). A slice ends after `slice.terms` terms or `slice.ms` of CPU time,
   * whichever comes first (default: `LOAD_SLICE_MS`; a fixed 2,000 terms was ~250 ms at 10k
   * memories, whose few thousand terms carry long posting lists). The index must not change
   * until it resolves (the store runs it inside its write queue).
   * @param pause awaited between slices (the store yields to the event loop).
   * @param slice.terms terms per slice at most (default: no limit); slice.ms CPU time (ms) per slice.
   */
  async toJSONSliced(pause: () => Promise<void>, slice: { terms?: number; ms?: number } = {}): Promise<string> {
    const { terms: termsPerSlice = Infinity, ms: sliceMs = LOAD_SLICE_MS } = slice;
    const ms = this.index as unknown as SerializedFields;
    const slices: string[] = [];
    let terms: string[] = [];
    let deadline = performance.now() + sliceMs;
    for (const [term, fieldIndex] of ms._index) {
      const data: Record<number, Record<number, number>> = {};
      for (const [fieldId, freqs] of fieldIndex) data[fieldId] = Object.fromEntries(freqs);
      terms.push(JSON.stringify([term, data]));
      if (terms.length >= termsPerSlice || performance.now() >= deadline) {
        slices.push(terms.join(','));
        terms = [];
        await pause();
        deadline = performance.now() + sliceMs;
      }
    }
    if (terms.length > 0) slices.push(terms.join(','));
    // The fields of MiniSearch's `toJSON` in its order, `index` and `serializationVersion` last.
    const head = JSON.stringify({
      documentCount: ms._documentCount,
      nextId: ms._nextId,
      documentIds: Object.fromEntries(ms._documentIds),
      fieldIds: ms._fieldIds,
      fieldLength: Object.fromEntries(ms._fieldLength),
      averageFieldLength: ms._avgFieldLength,
      storedFields: Object.fromEntries(ms._storedFields),
      dirtCount: ms._dirtCount,
    });
    return `{"version":${LEXICAL_SNAPSHOT_VERSION},"index":${head.slice(0, -1)},"index":[${slices.join(',')}],"serializationVersion":2}}`;
  }

  /**
   * Restores an index from a chunked snapshot (`./lexical-snapshot.ts`: `manifest` and the chunks it
   * lists, read through `read`), parsed and merged in slices of `sliceMs` of CPU with `pause()` between.
   * @throws OutdatedLexicalSnapshotError (rejects) for another `LEXICAL_SNAPSHOT_VERSION`;
   *   TornLexicalSnapshotError when its chunks disagree with the manifest; SyntaxError for a chunk that is not JSON.
   */
  static async fromChunks(manifest: LexicalManifestRecord, read: ChunkReader, pause: () => Promise<void>, sliceMs = LOAD_SLICE_MS): Promise<LexicalIndex> {
    if (manifest.version !== LEXICAL_SNAPSHOT_VERSION) throw new OutdatedLexicalSnapshotError(manifest.version);
    const index = new LexicalIndex();
    const empty = { ...manifest.head, documentIds: {}, fieldLength: {}, storedFields: {}, index: [], serializationVersion: 2 };
    index.index = MiniSearch.loadJS<LexicalDoc>(empty, index.options());
    await restoreChunks(index.index as MiniSearch<never>, manifest, read, pause, sliceMs);
    index.scorer = new Bm25Scorer(FIELDS);
    return index;
  }

  /**
   * The chunks of a snapshot write that changed since this index's last committed write (all of them
   * the first time), serialized in slices of `sliceMs` of CPU with `pause()` between
   * (`serializeChunks`; `chunkDocs` default `LEXICAL_CHUNK_DOCS`). The index must not change until it resolves.
   */
  snapshotChunks(pause: () => Promise<void>, options: { sliceMs?: number; chunkDocs?: number } = {}): Promise<LexicalChunks> {
    return serializeChunks(this.index as MiniSearch<never>, pause, options.sliceMs ?? LOAD_SLICE_MS, options.chunkDocs);
  }

  /** `snapshotChunks` in one synchronous step (inside a transaction; see `serializeChunksSync`). */
  snapshotChunksSync(chunkDocs?: number): LexicalChunks {
    return serializeChunksSync(this.index as MiniSearch<never>, chunkDocs);
  }

  private create(): MiniSearch<LexicalDoc> {
    return new MiniSearch<LexicalDoc>(this.options());
  }

  /** MiniSearch's options; its `tokenize` also hands each field's terms to `added` while `set` collects them. */
  private options(): Options<LexicalDoc> {
    const added = this.added;
    return {
      idField: 'id',
      fields: FIELDS.map(([name]) => name),
      storeFields: [],
      tokenize: (text: string, field?: string) => {
        const terms = field === 'phrases' ? firstPersonTerms(text) : field === 'chars' ? hanUnigrams(text) : tokenize(text);
        // A loop, not `push(...terms)`: a spread call throws a RangeError past ~120k terms (V8's argument limit).
        if (added.terms) for (const term of terms) added.terms.push(term);
        return terms;
      },
      // Terms are already normalized by `tokenize`.
      processTerm: (term: string) => term,
      searchOptions: { boost: Object.fromEntries(FIELDS), combineWith: 'OR', tokenize: queryTerms },
    };
  }

  /** Number of indexed memories. */
  get size(): number {
    return this.index.documentCount;
  }

  /** Whether `id` is indexed. */
  has(id: string): boolean {
    return this.index.has(id);
  }

  /** Indexes (or re-indexes) one memory. */
  set(id: string, text: string, topic?: string): void {
    if (this.index.has(id)) {
      this.scorer.discarding(this.index as unknown as MiniSearchInternals, id);
      this.index.discard(id);
    }
    // The terms MiniSearch's own analysis gives (every field's), for the postings cache: analysed once, not again here.
    const terms: string[] = [];
    this.added.terms = terms;
    try {
      this.index.add({ id, text, topic: topic ?? '', phrases: text, chars: text });
    } finally {
      this.added.terms = null;
    }
    const ms = this.index as unknown as MiniSearchInternals;
    this.scorer.appendDocument(ms, ms._nextId - 1, () => terms);
  }

  /** Removes one memory; unknown ids are ignored. */
  delete(id: string): void {
    if (this.index.has(id)) {
      this.scorer.discarding(this.index as unknown as MiniSearchInternals, id);
      this.index.discard(id);
    }
  }

  /** Drops everything. */
  clear(): void {
    this.index = this.create();
    this.scorer = new Bm25Scorer(FIELDS);
  }

  /**
   * BM25+ search. A document matches when it shares at least one term with the query (OR
   * semantics). No prefix or fuzzy matching: word forms are conflated by the stemmer ("moved",
   * "moving" → "move"), so "live" no longer matches "Liverpool".
   * @param text query in any language.
   * @param limit maximum hits returned (after `filter`).
   * @param filter keeps a hit when it returns true (applied to every match before `limit`, so
   *   filtering never starves the result).
   * @returns hits, best first.
   */
  search(text: string, limit: number, filter?: (id: string) => boolean): LexicalHit[] {
    if (!text.trim() || this.index.documentCount === 0) return [];
    // The scoring of `MiniSearch.search` with these options, bit for bit and in the same order,
    // from cached copies of its postings (see `./bm25.ts`).
    return this.scorer.search(
      this.index as unknown as MiniSearchInternals,
      queryTerms(text).filter((t) => !!t),
      limit,
      filter,
    );
  }
}
