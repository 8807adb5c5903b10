/**
 * Writing a backup file: the export as a stream of text pieces (tables read in pages of
 * `EXPORT_PAGE_SIZE` records, one record per line), as UTF-8 bytes, or as one string.
 */
import type { RecallDB } from '../db/schema';
import { readSettings } from '../db/settings';
import type { MemoryRecord, ProfileRecord } from '../model/records';
import type { TransferProgress } from '../model/backup';
import { PORTABLE_SETTING_KEYS } from '../model/settings';
import { feedbackForExport } from './feedback';
import { EXPORT_FORMAT, EXPORT_VERSION, vectorToBase64, type ExportFile } from './format';

/** Records read per page when exporting. */
export const EXPORT_PAGE_SIZE = 500;

const pad = (n: number) => String(n).padStart(2, '0');

/** File name of an export made at `exportedAt` (ms epoch, local date), e.g. `recall-export-2024-05-10.json`. */
export function exportFileName(exportedAt: number): string {
  const d = new Date(exportedAt);
  return `recall-export-${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}.json`;
}

/** One exported memory: the record with its vector as base64 (or `null`). */
function exportedMemory(m: MemoryRecord, includeEmbeddings: boolean): ExportFile['memories'][number] {
  return {
    ...m,
    embedding: includeEmbeddings && m.embedding ? vectorToBase64(m.embedding) : null,
    embeddingModel: includeEmbeddings && m.embedding ? m.embeddingModel : null,
  };
}

/**
 * Reads a table in pages of `pageSize` records by an index (keyset pagination: each page starts
 * after the last key of the previous one), so memory holds one page at a time.
 */
async function* pagesOf<T, K extends string | number | (string | number)[]>(
  first: () => Promise<T[]>,
  after: (key: K) => Promise<T[]>,
  keyOf: (record: T) => K,
): AsyncGenerator<T[]> {
  let page = await first();
  while (page.length > 0) {
    yield page;
    page = await after(keyOf(page[page.length - 1]!));
  }
}

/**
 * The export file as a stream of text pieces (version 2, one record per line; see `./format.ts`):
 * memories, their history, conversations, messages, entity notes, strategy states, the stored
 * portable settings (`PORTABLE_SETTING_KEYS`: only keys the user set), "not relevant here" feedback
 * and rejected suggestions' hashes (`./feedback.ts`) and, last, the namespaces the memories,
 * conversations and rejected suggestions use (`profiles`, gathered while they are written).
 * Tables are read in pages of `pageSize` records (default `EXPORT_PAGE_SIZE`), each page in its
 * own read, so the export of a store of any size holds one page at a time. Records changed while
 * the export runs may or may not be in it (each record is whole either way).
 * @param options.namespace export one profile only: its memories with their history, its
 *   conversations with their messages, entity notes and strategy states, its feedback and
 *   rejected suggestions (default: every profile).
 * @param options.includeEmbeddings write vectors as base64 (default `true`; a 384-d vector is
 *   1,536 bytes = 2,048 base64 characters). Without them, the importing side re-embeds.
 * @param options.onProgress called after each page with records written / total records.
 */
export async function* exportChunks(
  db: RecallDB,
  options: { includeEmbeddings?: boolean; exportedAt?: number; pageSize?: number; namespace?: string; onProgress?: (progress: TransferProgress) => void } = {},
): AsyncGenerator<string> {
  const includeEmbeddings = options.includeEmbeddings ?? true;
  const n = Math.max(1, options.pageSize ?? EXPORT_PAGE_SIZE);
  const ns = options.namespace;
  // Conversations left out with their messages, entity notes and strategy states: a temporary chat
  // is not kept (issue 14), and a one-profile export leaves out the other profiles' conversations.
  const temporary = new Set((await db.conversations.filter((c) => c.temporary === true || (ns !== undefined && c.namespace !== ns)).primaryKeys()) as string[]);
  // A one-profile export: that profile's memories and their history only.
  const scopedMemories = ns === undefined ? null : new Set((await db.memories.filter((m) => m.namespace === ns).primaryKeys()) as string[]);
  const keepMemory = (m: MemoryRecord) => scopedMemories === null || scopedMemories.has(m.id);
  const memoryCounts: Promise<[number, number]> =
    scopedMemories === null
      ? Promise.all([db.memories.count(), db.memoryHistory.count()])
      : db.memoryHistory
          .where('memoryId')
          .anyOf([...scopedMemories])
          .count()
          .then((history) => [scopedMemories.size, history]);
  const ofTemporary = (table: 'messages' | 'entities' | 'strategyState') =>
    temporary.size > 0
      ? db
          .table(table)
          .where('conversationId')
          .anyOf([...temporary])
          .count()
      : Promise.resolve(0);
  const [{ settings, stored }, settingRows, left, ...counts] = await Promise.all([
    readSettings(db),
    db.settings.bulkGet([...PORTABLE_SETTING_KEYS]),
    Promise.all([ofTemporary('messages'), ofTemporary('entities'), ofTemporary('strategyState')]).then((n) => temporary.size + n.reduce((a, b) => a + b, 0)),
    memoryCounts.then(([memories]) => memories),
    memoryCounts.then(([, history]) => history),
    db.conversations.count(),
    db.messages.count(),
    db.entities.count(),
    db.strategyState.count(),
  ]);
  const portable = settingRows.flatMap((row) =>
    row && stored.has(row.key as (typeof PORTABLE_SETTING_KEYS)[number]) ? [{ key: row.key, value: row.value }] : [],
  );
  // "Not relevant here" rows and rejected hashes (optional sections, `./feedback.ts`): few rows, read whole.
  const choices = await feedbackForExport(db, { namespace: ns, includeEmbeddings });
  const namespaces = new Set<string>(choices.rejectedSuggestions.map((r) => r.namespace));
  // Profile names (v9 `profiles`): a restored profile keeps its name, not only its namespace.
  const names = new Map((await db.profiles.toArray()).map((p) => [p.id, p] as const));
  const total = counts.reduce((a, b) => a + b, 0) + portable.length + choices.feedback.length + choices.rejectedSuggestions.length - left;
  let done = 0;
  yield `{\n  "format": ${JSON.stringify(EXPORT_FORMAT)},\n  "version": ${EXPORT_VERSION},\n  "exportedAt": ${options.exportedAt ?? Date.now()},\n  "embeddingModel": ${JSON.stringify(settings.embeddingModelId)}`;
  const sections: [string, AsyncGenerator<unknown[]>][] = [
    [
      'memories',
      mapPages(
        keptOnly(
          pagesOf(
            () => db.memories.orderBy(':id').limit(n).toArray(),
            (k: string) => db.memories.where(':id').above(k).limit(n).toArray(),
            (m) => m.id,
          ),
          keepMemory,
        ),
        (m) => {
          namespaces.add(m.namespace);
          return exportedMemory(m, includeEmbeddings);
        },
      ),
    ],
    [
      'memoryHistory',
      mapPages(
        keptOnly(
          pagesOf(
            () => db.memoryHistory.orderBy(':id').limit(n).toArray(),
            (k: number) => db.memoryHistory.where(':id').above(k).limit(n).toArray(),
            (h) => h.id!,
          ),
          (h) => scopedMemories === null || scopedMemories.has(h.memoryId),
        ),
        ({ id: _id, ...h }) => h,
      ),
    ],
    [
      'conversations',
      mapPages(
        keptOnly(
          pagesOf(
            () => db.conversations.orderBy(':id').limit(n).toArray(),
            (k: string) => db.conversations.where(':id').above(k).limit(n).toArray(),
            (c) => c.id,
          ),
          (c) => !temporary.has(c.id),
        ),
        (c) => {
          namespaces.add(c.namespace);
          return c;
        },
      ),
    ],
    [
      'messages',
      keptOnly(
        pagesOf(
          () => db.messages.orderBy('[conversationId+seq]').limit(n).toArray(),
          (k: [string, number]) => db.messages.where('[conversationId+seq]').above(k).limit(n).toArray(),
          (m) => [m.conversationId, m.seq] as [string, number],
        ),
        (m) => !temporary.has(m.conversationId),
      ),
    ],
    [
      'entities',
      keptOnly(
        pagesOf(
          () => db.entities.orderBy(':id').limit(n).toArray(),
          (k: string) => db.entities.where(':id').above(k).limit(n).toArray(),
          (e) => e.id,
        ),
        (e) => !temporary.has(e.conversationId),
      ),
    ],
    [
      'strategyState',
      keptOnly(
        pagesOf(
          () => db.strategyState.orderBy(':id').limit(n).toArray(),
          (k: [string, string]) => db.strategyState.where(':id').above(k).limit(n).toArray(),
          (r) => [r.conversationId, r.strategy] as [string, string],
        ),
        (r) => !temporary.has(r.conversationId),
      ),
    ],
    ['settings', onePage(portable)],
    ['feedback', onePage(choices.feedback)],
    ['rejectedSuggestions', onePage(choices.rejectedSuggestions)],
    // Written last: the namespaces met in the memories and conversations above.
    ['profiles', onePage(() => [...namespaces].sort().map((namespace) => profileEntry(namespace, names.get(namespace))))],
  ];
  for (const [name, pages] of sections) {
    yield `,\n  ${JSON.stringify(name)}: [`;
    let first = true;
    for await (const page of pages) {
      const lines: string[] = [];
      for (const record of page) {
        lines.push(`${first ? '' : ','}\n    ${JSON.stringify(record)}`);
        first = false;
      }
      yield lines.join('');
      if (name === 'profiles') continue; // not counted in `total`: known only at the end
      done += page.length;
      options.onProgress?.({ phase: 'export', done, total });
    }
    yield first ? ']' : '\n  ]';
  }
  yield '\n}\n';
}

/** One page of records (none when empty); `records` may be a function, called when the page is read. */
async function* onePage<T>(records: T[] | (() => T[])): AsyncGenerator<T[]> {
  const page = typeof records === 'function' ? records() : records;
  if (page.length > 0) yield page;
}

/** Every page with only the records `keep` accepts (a page may come out shorter, or empty). */
async function* keptOnly<T>(pages: AsyncGenerator<T[]>, keep: (record: T) => boolean): AsyncGenerator<T[]> {
  for await (const page of pages) yield page.every(keep) ? page : page.filter(keep);
}

/** Maps every record of every page with `fn`. */
async function* mapPages<T, U>(pages: AsyncGenerator<T[]>, fn: (record: T) => U): AsyncGenerator<U[]> {
  for await (const page of pages) yield page.map(fn);
}

/**
 * `exportChunks` as UTF-8 bytes, gathered into pieces of about `pieceBytes` (default 1 MiB) for
 * efficient file writes.
 */
export async function* exportBytes(db: RecallDB, options: Parameters<typeof exportChunks>[1] & { pieceBytes?: number } = {}): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  const limit = options.pieceBytes ?? 1 << 20;
  let parts: string[] = [];
  let size = 0;
  for await (const text of exportChunks(db, options)) {
    parts.push(text);
    size += text.length;
    if (size >= limit) {
      yield encoder.encode(parts.join(''));
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield encoder.encode(parts.join(''));
}

/**
 * Exports everything as one JSON string. For small stores and tests only: the extension writes
 * `exportBytes` into a file instead (a string of a large store exceeds what a message can carry).
 * @returns `fileName` like `recall-export-2024-05-10.json` (local date) and the JSON text.
 */
export async function exportAll(db: RecallDB, options: { includeEmbeddings?: boolean; now?: () => number } = {}): Promise<{ fileName: string; json: string }> {
  const exportedAt = (options.now ?? Date.now)();
  const parts: string[] = [];
  for await (const text of exportChunks(db, {
    exportedAt,
    ...(options.includeEmbeddings !== undefined ? { includeEmbeddings: options.includeEmbeddings } : {}),
  }))
    parts.push(text);
  return { fileName: exportFileName(exportedAt), json: parts.join('') };
}

/** One `profiles` entry: the namespace, with its name and creation time when a profile row names it. */
function profileEntry(namespace: string, profile: ProfileRecord | undefined): { namespace: string; name?: string; createdAt?: number } {
  return profile && profile.name ? { namespace, name: profile.name, createdAt: profile.createdAt } : { namespace };
}
