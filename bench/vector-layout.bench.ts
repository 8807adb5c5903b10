/**
 * Long-term index layout benchmark (`npm run bench -- vector-layout`; `-- --full` adds the large sizes).
 *
 * 1. Vector search side by side, per size (default 1k and 10k; `--full` adds 100k and 1M):
 *    random L2-normalized 384-d vectors (seeded mulberry32), 40 queries × 5 runs, top-10:
 *    - `tight`: the reference, `exactTopK` over ONE contiguous Float32Array;
 *    - `blocks`: the store's path, `BlockIndex.search` over 256-slot blocks with the validity check
 *      per slot (20 % of the memories invalid: they are skipped, as in the app);
 *    - `voy`: voy-search 0.6.3 (k-d tree, WASM), built from the same vectors; its recall@10 is
 *      checked against the exact answer. Not built at 1M (Voy pads to 768-d: > 3 GB of WASM memory).
 *    Also: the per-query set-up outside the scan (a search in a 1-memory namespace next to N
 *    others) and the index's bytes against the vectors' bytes.
 * 2. The store at 10k memories (`--full`: also 100k; rows + persisted index written directly; Dexie on fake-indexeddb,
 *    so absolute times are Node's, not Chrome's): open from the blocks + lexical snapshot, open
 *    with the lexical index rebuilt from the rows instead (the alternative to the snapshot), full
 *    rebuild from the rows (`rebuildIndexes`, the repair path), first hybrid search after opening,
 *    Memory-tab search (`memoryAdmin.list` with a search), one `add`, and the bytes stored per
 *    memory beyond its text, by part.
 * Median and p95 of every latency.
 */
import 'fake-indexeddb/auto';
import { RecallDB } from '../src/db/schema';
import type { MemoryRecord } from '../src/model/records';
import { createMemoryAdmin } from '../src/core/memory-admin';
import { createMemoryStore } from '../src/memory/long-term/store';
import { BlockIndex, exactTopK, layoutFromRows, type LexicalSnapshotRecord } from '../src/memory/long-term/retrieval/blocks';
import { LexicalIndex } from '../src/memory/long-term/retrieval/lexical';
import { loadVoy } from '../src/memory/long-term/retrieval/voy';
import { memoryHash } from '../src/memory/long-term/text';
import { createHashedEmbedder } from './data/hashed-embedder';
import { nodeVoyWasm } from './data/node-voy';
import { mulberry32, randomUnitVectors as randomUnit } from './data/prng';

const DIM = 384;
const K = 10;
const FULL = process.argv.includes('--full');

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const stats = (xs: number[]) => ({ median: +quantile(xs, 0.5).toFixed(3), p95: +quantile(xs, 0.95).toFixed(3) });

function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

async function vectorSize(n: number) {
  const data = randomUnit(n, DIM, n);
  const queries = randomUnit(40, DIM, n + 1);
  const T = Date.UTC(2025, 0, 1);
  const rand = mulberry32(n + 2);
  const valid = new Uint8Array(n);
  const index = new BlockIndex();
  const batch = index.batch();
  for (let i = 0; i < n; i += 1) {
    valid[i] = rand() < 0.8 ? 1 : 0;
    batch.put(
      {
        id: `m${i}`,
        namespace: 'default',
        createdAt: T,
        updatedAt: T,
        validFrom: null,
        validUntil: valid[i] ? null : T - 1,
        importance: 0.5,
        pinned: false,
        current: 1,
        kind: 'fact',
        slot: null,
        normalized: '',
      },
      data.subarray(i * DIM, (i + 1) * DIM),
      'model',
    );
  }
  // The typed arrays of the live index's blocks, in memory (the stored records hold f16 vectors since schema v4: half of that).
  const typedBytes = () => {
    const { metas, vectorSegs } = index._internals();
    const blocks = [...[...metas.values()].flatMap((s) => s.blocks), ...[...vectorSegs.values()].flatMap((s) => s.blocks)];
    return blocks.reduce((sum, r) => sum + Object.values(r).reduce((a: number, v) => a + (ArrayBuffer.isView(v) ? v.byteLength : 0), 0), 0);
  };
  batch.put(
    {
      id: 'lonely',
      namespace: 'small',
      createdAt: T,
      updatedAt: T,
      validFrom: null,
      validUntil: null,
      importance: 0.5,
      pinned: false,
      current: 1,
      kind: 'fact',
      slot: null,
      normalized: '',
    },
    data.subarray(0, DIM),
    'model',
  );
  batch.commit();
  const indexBytes = typedBytes();
  // The tight reference scans the valid vectors packed in one array (the same work, no checks).
  const packedIds: number[] = [];
  for (let i = 0; i < n; i += 1) if (valid[i]) packedIds.push(i);
  const packed = new Float32Array(packedIds.length * DIM);
  packedIds.forEach((i, j) => packed.set(data.subarray(i * DIM, (i + 1) * DIM), j * DIM));

  const runs = n >= 1_000_000 ? 2 : 5;
  const tight: number[] = [];
  const blocks: number[] = [];
  const setup: number[] = [];
  let found = 0;
  let wanted = 0;
  for (let r = 0; r < runs; r += 1) {
    for (let qi = 0; qi < 40; qi += 1) {
      const q = queries.subarray(qi * DIM, (qi + 1) * DIM);
      let truth: [number, number][] = [];
      tight.push(time(() => (truth = exactTopK(q, packed, packedIds.length, DIM, K))));
      let got: { id: string }[] = [];
      blocks.push(time(() => (got = index.search('model', 'default', q, K, { now: T }))));
      setup.push(time(() => index.search('model', 'small', q, K, { now: T })));
      if (r === 0) {
        const ids = new Set(truth.map(([j]) => `m${packedIds[j]}`));
        wanted += ids.size;
        found += got.filter((h) => ids.has(h.id)).length;
      }
    }
  }
  const out: Record<string, unknown> = {
    n,
    tightMs: stats(tight),
    blocksMs: stats(blocks),
    blocksVsTight: +(quantile(blocks, 0.5) / quantile(tight, 0.5)).toFixed(3),
    blocksRecallAt10: found / wanted,
    setupMsOneMemoryNamespace: stats(setup),
    vectorBytes: n * DIM * 4,
    /** Typed arrays of all blocks (vectors, masks, meta columns) over the vectors' own bytes. */
    indexBytesOverVectors: +(indexBytes / (n * DIM * 4)).toFixed(3),
  };
  if (n >= 1_000_000) {
    out.voy = 'not built: Voy pads every vector to 768 floats; 1M vectors need > 3 GB of WASM memory';
    return out;
  }
  const Voy = await loadVoy(nodeVoyWasm);
  // Built as the app built it: `add` in batches (one constructor call with 100k items fails in the WASM).
  let voy!: InstanceType<typeof Voy>;
  let buildMs = 0;
  try {
    buildMs = time(() => {
      voy = new Voy();
      for (let start = 0; start < n; start += 1000) {
        const embeddings = [];
        for (let i = start; i < Math.min(n, start + 1000); i += 1)
          embeddings.push({ id: `m${i}`, title: '', url: '', embeddings: Array.from(data.subarray(i * DIM, (i + 1) * DIM)) });
        voy.add({ embeddings });
      }
    });
  } catch (error) {
    out.voy = `build failed: ${(error as Error).message}`;
    return out;
  }
  const voyMs: number[] = [];
  let voyFound = 0;
  let voyWanted = 0;
  for (let r = 0; r < runs; r += 1) {
    for (let qi = 0; qi < 40; qi += 1) {
      const q = queries.subarray(qi * DIM, (qi + 1) * DIM);
      let ids: string[] = [];
      voyMs.push(time(() => (ids = voy.search(new Float32Array(q), K).neighbors.map((x) => x.id))));
      if (r === 0) {
        const truth = new Set(exactTopK(q, data, n, DIM, K).map(([j]) => `m${j}`));
        voyWanted += truth.size;
        voyFound += ids.filter((id) => truth.has(id)).length;
      }
    }
  }
  voy.free();
  // Voy answers over every vector (no validity filter): compare with the tight scan over all n.
  const tightAll: number[] = [];
  for (let qi = 0; qi < 40; qi += 1) tightAll.push(time(() => exactTopK(queries.subarray(qi * DIM, (qi + 1) * DIM), data, n, DIM, K)));
  out.voy = {
    buildMs: +buildMs.toFixed(0),
    searchMs: stats(voyMs),
    tightAllMs: stats(tightAll),
    voyVsTightAll: +(quantile(voyMs, 0.5) / quantile(tightAll, 0.5)).toFixed(3),
    recallAt10: voyFound / voyWanted,
  };
  return out;
}

const WORDS =
  'coffee tea violin river mountain sister brother doctor train flight window garden book movie piano city lake bike car dog cat nurse teacher market summer winter morning evening dinner lunch trip'.split(
    ' ',
  );
const ZH = ['我喜欢喝咖啡', '我妹妹住在杭州', '明天早上开会', '我对花生过敏', '周末去爬山', '我每天跑步'];

/** Bytes of a value as IndexedDB would hold it, roughly: UTF-8 strings, 8-byte numbers, typed arrays' bytes, key names. */
function bytesOf(v: unknown): number {
  if (typeof v === 'string') return new TextEncoder().encode(v).length;
  if (typeof v === 'number') return 8;
  if (typeof v === 'boolean' || v === null || v === undefined) return 1;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (Array.isArray(v)) return v.reduce((s: number, x) => s + bytesOf(x), 0);
  return Object.entries(v as object).reduce((s, [k, x]) => s + k.length + bytesOf(x), 0);
}

async function storeAt(n: number) {
  const rand = mulberry32(5);
  const embedder = createHashedEmbedder(DIM);
  const T = Date.UTC(2025, 5, 1);
  const texts = Array.from({ length: n }, (_, i) =>
    i % 7 === 0 ? `${ZH[i % ZH.length]} ${i}` : Array.from({ length: 10 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ') + ` #${i}`,
  );
  const vectors = await embedder.embed(texts);
  const rows: MemoryRecord[] = texts.map((text, i) => ({
    id: crypto.randomUUID(),
    namespace: 'default',
    kind: 'episodic',
    text,
    embedding: vectors[i]!,
    embeddingModel: embedder.modelId,
    importance: 0.3,
    createdAt: T - i * 60_000,
    updatedAt: T - i * 60_000,
    validFrom: T - i * 60_000,
    validUntil: null,
    current: 1,
    lastAccessedAt: null,
    accessCount: 0,
    sourceConversationId: crypto.randomUUID(),
    sourceMessageIds: [crypto.randomUUID(), crypto.randomUUID()],
    pinned: false,
    hash: memoryHash(text),
  }));
  const db = new RecallDB(`bench-layout-${crypto.randomUUID()}`);
  const layout = layoutFromRows(rows, 1);
  const lexical = new LexicalIndex();
  for (const r of rows) lexical.set(r.id, r.text);
  const snapshot: LexicalSnapshotRecord = { key: 'lexical', gen: 1, json: lexical.toJSON() };
  await db.memories.bulkAdd(rows.map(({ embedding: _e, ...row }) => row as MemoryRecord));
  await db.memoryIndex.bulkPut([...layout.records, snapshot]);
  await db.memoryHistory.bulkAdd(
    rows.map((r) => ({ memoryId: r.id, event: 'ADD' as const, oldText: null, newText: r.text, at: r.createdAt, source: 'bench' })),
  );

  const open = async () => createMemoryStore({ db, embedder: () => embedder, now: () => T, loadVoyWasm: nodeVoyWasm });
  const openMs: number[] = [];
  const firstSearchMs: number[] = [];
  for (let r = 0; r < 5; r += 1) {
    const t = performance.now();
    const store = await open();
    openMs.push(performance.now() - t);
    const s = performance.now();
    await store.search({ text: 'coffee with my sister', namespace: 'default' });
    firstSearchMs.push(performance.now() - s);
  }
  // Where the open time goes (same steps as the store's open).
  const readMs: number[] = [];
  const blocksMs: number[] = [];
  const lexicalMs: number[] = [];
  for (let r = 0; r < 5; r += 1) {
    let t = performance.now();
    const records = await db.memoryIndex.toArray();
    readMs.push(performance.now() - t);
    t = performance.now();
    BlockIndex.fromRecords(records);
    blocksMs.push(performance.now() - t);
    t = performance.now();
    LexicalIndex.fromJSON((records.find((x) => x.key === 'lexical') as LexicalSnapshotRecord).json);
    lexicalMs.push(performance.now() - t);
  }
  const mem = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const memBefore = mem();
  const store = await open();
  // What one open store holds (blocks, id maps, lexical index), over the vectors' own bytes (fake-indexeddb's copy is not counted).
  const memoryOverVectors = +((mem() - memBefore) / (n * DIM * 4)).toFixed(2);
  const warm: number[] = [];
  for (let r = 0; r < 20; r += 1) {
    const s = performance.now();
    await store.search({ text: WORDS[r % WORDS.length]! + ' ' + WORDS[(r * 7) % WORDS.length], namespace: 'default' });
    warm.push(performance.now() - s);
  }
  const admin = createMemoryAdmin(db, store);
  const tab: number[] = [];
  for (let r = 0; r < 10; r += 1) {
    const s = performance.now();
    await admin.list({ namespace: 'default', search: WORDS[r]!.slice(0, 4) });
    tab.push(performance.now() - s);
  }
  const add: number[] = [];
  for (let r = 0; r < 20; r += 1) {
    const s = performance.now();
    await store.add({ namespace: 'default', kind: 'fact', text: `bench fact number ${r} about ${WORDS[r]}` }, 'bench');
    add.push(performance.now() - s);
  }
  // Without the snapshot: the lexical index rebuilt from the rows at open.
  await store.flushSnapshot();
  const snap = await db.memoryIndex.get('lexical');
  const noSnapshotMs: number[] = [];
  for (let r = 0; r < 3; r += 1) {
    await db.memoryIndex.delete('lexical');
    const t = performance.now();
    const s2 = await open();
    noSnapshotMs.push(performance.now() - t);
    await s2.flushSnapshot();
  }
  if (snap) await db.memoryIndex.put(snap);
  const rebuildMs: number[] = [];
  for (let r = 0; r < 3; r += 1) {
    const t = performance.now();
    await store.rebuildIndexes();
    rebuildMs.push(performance.now() - t);
  }

  const raw = (await db.memories.toCollection().raw().limit(500).toArray()) as MemoryRecord[];
  const textBytes = raw.reduce((s, r) => s + bytesOf(r.text), 0) / raw.length;
  const rowBeyondText = raw.reduce((s, r) => s + bytesOf(r) - bytesOf(r.text), 0) / raw.length;
  // Index entries: key + primary key (36) per entry: namespace, kind, hash, current, each sourceMessageId.
  const indexEntries =
    raw.reduce(
      (s, r) =>
        s +
        (bytesOf(r.namespace) +
          bytesOf(r.kind) +
          bytesOf(r.hash) +
          8 +
          r.sourceMessageIds.reduce((a, m) => a + bytesOf(m), 0) +
          (4 + r.sourceMessageIds.length) * 36),
      0,
    ) / raw.length;
  const blockBytes = (await db.memoryIndex.toArray()).filter((r) => r.key !== 'lexical' && r.key !== 'header').reduce((s, r) => s + bytesOf(r), 0) / (n + 20);
  const historyBeyondText = 36 + 8 + 8 + 10 + 5 + 40; // memoryId, at, ++id, source, event, key names (its newText is a second copy of the text)
  await db.delete();
  return {
    n,
    openFromBlocksAndSnapshotMs: stats(openMs),
    memoryOverVectors,
    openParts: {
      readIndexTableMs: stats(readMs),
      blocksFromRecordsMs: stats(blocksMs),
      lexicalFromSnapshotMs: stats(lexicalMs),
      snapshotBytes: snapshot.json.length,
    },
    firstHybridSearchAfterOpenMs: stats(firstSearchMs),
    warmHybridSearchMs: stats(warm),
    openWithLexicalRebuiltFromRowsMs: stats(noSnapshotMs),
    fullRebuildFromRowsMs: stats(rebuildMs),
    memoryTabSearchMs: stats(tab),
    addMs: stats(add),
    bytesPerMemory: {
      text: +textBytes.toFixed(0),
      rowBeyondText: +rowBeyondText.toFixed(0),
      indexEntries: +indexEntries.toFixed(0),
      blocks: +blockBytes.toFixed(0),
      historyBeyondText,
      historyTextCopy: +textBytes.toFixed(0),
      totalBeyondText: +(rowBeyondText + indexEntries + blockBytes + historyBeyondText + textBytes).toFixed(0),
    },
  };
}

export default {
  name: 'long-term index layout (exact blocks vs tight scan vs Voy; store open, Memory-tab search, bytes)',
  async run() {
    const sizes = FULL ? [1_000, 10_000, 100_000, 1_000_000] : [1_000, 10_000];
    const vector = [];
    for (const n of sizes) {
      const r = await vectorSize(n);
      console.log(JSON.stringify(r));
      vector.push(r);
    }
    const store = [];
    for (const n of FULL ? [10_000, 100_000] : [10_000]) {
      const r = await storeAt(n);
      console.log(JSON.stringify(r, null, 2));
      store.push(r);
    }
    return { dim: DIM, k: K, vector, store };
  },
};
