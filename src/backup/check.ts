/**
 * Pass 1 of an import: the whole file is validated and inconsistent files are refused before
 * anything is written.
 */
import type { RecallDB } from '../db/schema';
import { isUsableVector } from '../memory/long-term/retrieval/vector';
import { settingsSchema, type Settings } from '../model/settings';
import { base64ToVector, refuse, type ExportFile } from './format';
import { readExportRecords, type FileRecord } from './reader';

/** What the check pass learned about a file (ids and dimensions, no records but its few settings). */
export interface ImportPlan {
  memoryIds: Set<string>;
  /** Dimension each embedding model's vectors must have. */
  dimensions: Map<string, number>;
  /** Records of the file, every section counted (the write pass's progress total). */
  records: number;
  /** The file's settings (v2), each value validated against its setting's schema; written at the import's commit. */
  settings: Partial<Settings>;
}

/** Decodes a file vector, or `null` when it cannot be used (see `isUsableVector`). */
export function decodeVector(m: ExportFile['memories'][number], where: string): Float32Array | null {
  if (m.embedding === null) return null;
  let vector: Float32Array;
  try {
    vector = base64ToVector(m.embedding);
  } catch (error) {
    throw refuse('damaged', `The export file is damaged: ${where}.embedding: ${(error as Error).message}.`, { problems: `${where}.embedding` });
  }
  if (vector.length === 0 || !m.embeddingModel)
    throw refuse('damaged', `The export file is damaged: ${where} has an embedding without a model id.`, { problems: `${where}.embeddingModel` });
  return isUsableVector(vector) ? vector : null;
}

/**
 * Pass 1: validates every record (`readExportRecords`) and refuses inconsistent files whole:
 * two memories, conversations or messages with one id, two messages at one position
 * (`conversationId` + `seq`), a message whose conversation is neither in the file nor stored.
 * Counts vector dimensions per embedding model.
 * @param embedder the current embedder (its vectors fix the dimension of its model).
 * @param onProgress called after each piece of the file with the bytes read and the records validated so far.
 * @param onRecords called with each piece's validated records, in file order, after they were
 *   checked (the write pass of a small file keeps them instead of reading the file again).
 * @throws ImportError naming the first problem; nothing is written.
 */
export async function checkFile(
  db: RecallDB,
  source: Blob,
  embedder: { modelId: string | null; dimension: number | null } | null,
  onProgress: (bytes: number, records: number) => void,
  onRecords?: (records: FileRecord[]) => void,
): Promise<ImportPlan> {
  const ids: Record<'memories' | 'conversations' | 'messages', Set<string>> = { memories: new Set(), conversations: new Set(), messages: new Set() };
  const positions = new Map<string, string>();
  const messageConversations = new Map<string, string>();
  const dimensionCounts = new Map<string, Map<number, number>>();
  let records = 0;
  const settings: Record<string, unknown> = {};
  const label = { memories: 'memories', conversations: 'conversations', messages: 'messages' } as const;
  await readExportRecords(
    source,
    async (batch) => {
      for (const r of batch) {
        // The profiles list sums up the namespaces of the records: not counted as records (the export's total leaves it out too).
        if (r.section === 'profiles') continue;
        records += 1;
        if (r.section === 'settings') {
          const parsed = settingsSchema.shape[r.value.key].safeParse(r.value.value);
          if (!parsed.success)
            throw refuse('damaged', `The export file is damaged: settings.${r.index} (${r.value.key}) is not a valid value.`, {
              problems: `settings.${r.index}`,
            });
          settings[r.value.key] = parsed.data;
          continue;
        }
        if (r.section !== 'memories' && r.section !== 'conversations' && r.section !== 'messages') continue;
        const seen = ids[r.section];
        if (seen.has(r.value.id)) throw refuse('inconsistent', `The file holds two ${label[r.section]} with the id "${r.value.id}"; it is inconsistent.`);
        seen.add(r.value.id);
        if (r.section === 'messages') {
          const position = `${r.value.conversationId}\u0000${r.value.seq}`;
          const other = positions.get(position);
          if (other !== undefined) {
            throw refuse(
              'inconsistent',
              `The file holds two messages at position ${r.value.seq} of conversation "${r.value.conversationId}" ("${other}" and "${r.value.id}"); it is inconsistent.`,
            );
          }
          positions.set(position, r.value.id);
          if (!messageConversations.has(r.value.conversationId)) messageConversations.set(r.value.conversationId, r.value.id);
        } else if (r.section === 'memories') {
          const vector = decodeVector(r.value, `memories.${r.index}`);
          if (vector && r.value.embeddingModel) {
            const counts = dimensionCounts.get(r.value.embeddingModel) ?? new Map<number, number>();
            counts.set(vector.length, (counts.get(vector.length) ?? 0) + 1);
            dimensionCounts.set(r.value.embeddingModel, counts);
          }
        }
      }
      onRecords?.(batch);
    },
    (bytes) => onProgress(bytes, records),
  );
  const orphans = [...messageConversations].filter(([conversationId]) => !ids.conversations.has(conversationId));
  if (orphans.length > 0) {
    const existing = new Set((await db.conversations.bulkGet(orphans.map(([c]) => c))).filter(Boolean).map((c) => c!.id));
    const missing = orphans.find(([c]) => !existing.has(c));
    if (missing) {
      throw refuse('damaged', `The export file is damaged: message ${missing[1]} belongs to conversation ${missing[0]}, which is not in the file.`, {
        problems: `messages: ${missing[1]}`,
      });
    }
  }
  const dimensions = new Map<string, number>();
  for (const [model, counts] of dimensionCounts) {
    if (embedder?.modelId === model && embedder.dimension) dimensions.set(model, embedder.dimension);
    else dimensions.set(model, [...counts].sort((a, b) => b[1] - a[1])[0]![0]);
  }
  if (embedder?.modelId && embedder.dimension) dimensions.set(embedder.modelId, embedder.dimension);
  return { memoryIds: ids.memories, dimensions, records, settings: settings as Partial<Settings> };
}
