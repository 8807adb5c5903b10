/**
 * The lexical snapshot's formats side by side in Node (`npm run bench -- lexical-snapshot`; `--full`
 * adds 100k): the single-record JSON snapshot of earlier builds (`LexicalIndex.toJSON` /
 * `fromJSONAsync`: one `JSON.parse` of the whole string, then the postings in 8 ms slices) against
 * the chunked snapshot (`retrieval/lexical-snapshot.ts`: one record per 1,024 short ids, each parsed
 * and merged in 8 ms slices; `fromChunks` over an in-memory reader, so IndexedDB's cost is not in it —
 * the coldstart bench measures that in Chromium).
 *
 * Per size: N memories of the coldstart bench's texts (`seedMemories`), indexed as the store does
 * (`indexLexical`); then, `runs` times each: the load (CPU time, longest task = the longest
 * stretch of CPU between two pauses), the write of the whole
 * snapshot (sliced), and the write after one more memory is added (the legacy format serializes
 * everything again; the chunked one only the chunks that changed: bytes written).
 * Median and p95 of `runs` runs (p95 of 5 runs = the largest).
 */
import { defineBench } from './lib/bench';
import { formatBytes, formatMs, summarize } from './lib/stats';
import { seedMemories } from './data/memory-file';
import { LexicalIndex } from '../src/memory/long-term/retrieval/lexical';
import { LEXICAL_CHUNK_DOCS, type LexicalChunks } from '../src/memory/long-term/retrieval/lexical-snapshot';
import type { LexicalManifestRecord, MemoryIndexRecord } from '../src/memory/long-term/retrieval/blocks/records';
import { indexLexical } from '../src/memory/long-term/store/index-sync';
import { INDEXED_TEXT_VERSION } from '../src/memory/long-term/text';
import { LEXICAL_SNAPSHOT_VERSION } from '../src/memory/long-term/retrieval/lexical';

interface Params {
  sizes: number[];
  runs: number;
}

/** CPU time of this process so far (ms, user + system): the machine is shared, so work is timed in CPU, not wall time. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** A pause that lets other tasks run, recording the longest stretch of CPU between two pauses (ms). */
function pacer(): { pause: () => Promise<void>; longest: () => number; start: () => void } {
  let last = 0;
  let longest = 0;
  return {
    start: () => {
      last = cpuMs();
      longest = 0;
    },
    pause: async () => {
      longest = Math.max(longest, cpuMs() - last);
      await new Promise((r) => setImmediate(r));
      last = cpuMs();
    },
    longest: () => Math.max(longest, cpuMs() - last),
  };
}

function build(n: number): LexicalIndex {
  const index = new LexicalIndex();
  for (const m of seedMemories(n, { dimension: 1, embeddingModel: 'none' }))
    indexLexical(index, { id: m.id, kind: m.kind, text: m.text, topic: undefined, createdAt: m.createdAt, speakers: undefined });
  return index;
}

/** The records of a chunked write, kept by key (an in-memory `memoryIndex`). */
function store(chunks: LexicalChunks, into: Map<string, MemoryIndexRecord>, gen: number): void {
  const { put, remove, clearChunks } = chunks.records(gen, INDEXED_TEXT_VERSION, LEXICAL_SNAPSHOT_VERSION);
  if (clearChunks) for (const k of [...into.keys()]) if (k.startsWith('lexical|')) into.delete(k);
  for (const k of remove) into.delete(k);
  for (const r of put) into.set(r.key, r);
  chunks.commit(gen);
}

/** Runs `fn` with `p` reset: its result, its CPU ms and its longest stretch between pauses (CPU ms). */
async function timed<T>(p: ReturnType<typeof pacer>, fn: () => Promise<T>): Promise<[T, number, number]> {
  p.start();
  const t = cpuMs();
  const out = await fn();
  return [out, cpuMs() - t, p.longest()];
}

const KEYS = ['load', 'loadLongest', 'write', 'writeLongest', 'add', 'addLongest'] as const;
type Samples = Record<(typeof KEYS)[number], number[]>;
const blank = (): Samples => Object.fromEntries(KEYS.map((k) => [k, [] as number[]])) as Samples;

export default defineBench<Params>({
  name: 'lexical-snapshot',
  title: 'Lexical snapshot: single record vs chunks (Node)',
  method:
    'N memories of the coldstart texts indexed as the store does; the single-record JSON snapshot (`fromJSONAsync`: one `JSON.parse`, then postings in 8 ms slices) against the chunked one (`fromChunks`: 1,024 short ids per record, each parsed and merged in 8 ms slices), read from memory. Times are CPU ms of the process (the machine is shared); "longest task" is the longest stretch of CPU between two pauses; Writes: the whole snapshot in slices, and after one more memory is added (written = JSON characters put). Median / p95 of 5 runs.',
  quick: { sizes: [10_000], runs: 5 },
  full: { sizes: [10_000, 100_000], runs: 5 },
  async run(params, ctx) {
    const rows: (string | number)[][] = [];
    const raw: Record<string, unknown> = {};
    for (const n of params.sizes) {
      ctx.log(`lexical-snapshot: ${n} memories`);
      const live = build(n);
      const json = live.toJSON();
      const records = new Map<string, MemoryIndexRecord>();
      store(live.snapshotChunksSync(), records, 1);
      const manifest = records.get('lexical') as LexicalManifestRecord;
      const read = async (keys: string[]) => keys.map((k) => records.get(k));
      const chunkBytes = [...records.values()].reduce((s, r) => s + ('json' in r ? r.json.length : 0), 0);
      const p = pacer();
      const legacy = blank();
      const chunked = blank();
      let addChars = 0;
      const note = (into: Samples, total: 'load' | 'write' | 'add', [, cpu, longest]: [unknown, number, number]) => {
        into[total].push(cpu);
        into[`${total}Longest`].push(longest);
      };
      for (let run = 0; run < params.runs; run++) {
        const extra = `(2025-06-0${(run % 9) + 1}) User: I bought a red kite today\nAssistant: Nice, where will you fly it?`;
        // Single record: load, whole write, write after one add.
        let a: [LexicalIndex, number, number] | null = await timed(p, () => LexicalIndex.fromJSONAsync(json, p.pause));
        note(legacy, 'load', a);
        let loaded: LexicalIndex | null = a[0];
        a = null;
        note(legacy, 'write', await timed(p, () => loaded!.toJSONSliced(p.pause)));
        loaded.set(`extra-${run}`, extra);
        note(legacy, 'add', await timed(p, () => loaded!.toJSONSliced(p.pause)));
        loaded = null;
        // Chunks: load, a whole write (an index never written in chunks), write after one add.
        let b: [LexicalIndex, number, number] | null = await timed(p, () => LexicalIndex.fromChunks(manifest, read, p.pause));
        note(chunked, 'load', b);
        loaded = b[0];
        b = null;
        let unwritten: LexicalIndex | null = LexicalIndex.fromJSON(json);
        note(chunked, 'write', await timed(p, () => unwritten!.snapshotChunks(p.pause)));
        unwritten = null;
        loaded.set(`extra-${run}`, extra);
        let one: [LexicalChunks, number, number] | null = await timed(p, () => loaded!.snapshotChunks(p.pause));
        note(chunked, 'add', one);
        addChars = [...one[0].changed.values()].reduce((s, j) => s + j.length, 0) + JSON.stringify(one[0].head).length;
        one = null;
        loaded = null;
      }
      const ms = (xs: number[]) => `${formatMs(summarize(xs).median)} / ${formatMs(summarize(xs).p95)}`;
      const row = (format: string, chars: number, count: number, x: Samples, written: number) => [
        n,
        format,
        formatBytes(chars),
        count,
        ms(x.load),
        ms(x.loadLongest),
        ms(x.write),
        ms(x.writeLongest),
        ms(x.add),
        ms(x.addLongest),
        formatBytes(written),
      ];
      rows.push(row('single record', json.length, 1, legacy, json.length));
      rows.push(row(`chunks of ${LEXICAL_CHUNK_DOCS} short ids`, chunkBytes, manifest.chunks.length, chunked, addChars));
      raw[n] = { legacy, chunked, addChars };
    }
    return {
      tables: [
        {
          title: 'Lexical snapshot load and write (CPU ms, median / p95 of 5 runs; Node, read from memory; sizes in JSON characters)',
          columns: [
            'memories',
            'format',
            'size',
            'records',
            'load',
            'longest task (load)',
            'write (sliced)',
            'longest task (write)',
            'write after one add',
            'longest task (that write)',
            'written after one add',
          ],
          rows,
        },
      ],
      raw,
    };
  },
});
