/**
 * The user's feedback on memories in a backup (format v2, optional sections; see `./format.ts`):
 * relevance feedback — "not relevant here" on a memory under a reply (`feedback`, `FeedbackRecord`)
 * — and review feedback — the hashes of rejected suggestions (`rejectedSuggestions`, the
 * `SuggestionRecord`s with `status: 'rejected'`). Without them a restore would bring back
 * memories the user had demoted and suggestions they had rejected.
 *
 * Export: every row, or one profile's (`namespace`); pending suggestions are not exported.
 * Import (in the import's commit transaction, so they land with the records or not at all), merged
 * without duplicates: a feedback row is skipped when its id is stored, when the same memory is
 * already marked under the same reply, or when its memory is not stored (after the import's
 * batches: a memory of the file skipped as a duplicate or as forgotten takes its feedback with it);
 * its query vector is kept only when usable and of its model's dimension (else ranking compares
 * the query's terms). A rejected hash is skipped when that namespace already rejected it; a
 * pending suggestion of that text becomes rejected (as the user's reject does).
 */
import type { RecallDB } from '../db/schema';
import type { FeedbackRecord, SuggestionRecord } from '../model/records';
import { isUsableVector, l2normalize } from '../memory/long-term/retrieval/vector';
import { base64ToVector, vectorToBase64, type FileFeedback, type FileRejectedSuggestion } from './format';

/** The rows of both sections a backup writes: all, or those of profile `namespace`. */
export async function feedbackForExport(
  db: RecallDB,
  options: { namespace?: string | undefined; includeEmbeddings: boolean },
): Promise<{ feedback: FileFeedback[]; rejectedSuggestions: FileRejectedSuggestion[] }> {
  const ns = options.namespace;
  const [feedback, rejected] = await Promise.all([
    ns === undefined ? db.feedback.toArray() : db.feedback.filter((f) => f.namespace === ns).toArray(),
    db.suggestions.filter((s) => s.status === 'rejected' && (ns === undefined || s.namespace === ns)).toArray(),
  ]);
  return {
    feedback: feedback.map((f) => ({
      ...f,
      embedding: options.includeEmbeddings && f.embedding ? vectorToBase64(f.embedding) : null,
      embeddingModel: options.includeEmbeddings && f.embedding ? f.embeddingModel : null,
    })),
    rejectedSuggestions: rejected.map(({ id, namespace, hash, kind, createdAt }) => ({ id, namespace, hash, kind, createdAt })),
  };
}

/** What `mergeFeedback` wrote and left out (counted in the import report's `added` / `skipped`). */
export interface FeedbackMerge {
  added: number;
  skipped: number;
}

/**
 * Merges the file's feedback rows and rejected hashes into the database (see module doc). Call
 * inside a transaction over `db.feedback`, `db.suggestions` and `db.memories`.
 * @param dimensions the dimension each embedding model's vectors must have (the import plan's).
 */
export async function mergeFeedback(
  db: RecallDB,
  file: { feedback: readonly FileFeedback[]; rejectedSuggestions: readonly FileRejectedSuggestion[] },
  dimensions: ReadonlyMap<string, number>,
): Promise<FeedbackMerge> {
  const out: FeedbackMerge = { added: 0, skipped: 0 };
  const [byId, memories, sameReply] = await Promise.all([
    db.feedback.bulkGet(file.feedback.map((f) => f.id)),
    db.memories.bulkGet(file.feedback.map((f) => f.memoryId)),
    db.feedback
      .where('messageId')
      .anyOf([...new Set(file.feedback.map((f) => f.messageId))])
      .toArray(),
  ]);
  const marked = new Set(sameReply.map((f) => `${f.memoryId}\u0000${f.messageId}`));
  const seenIds = new Set<string>();
  const rows: FeedbackRecord[] = [];
  file.feedback.forEach((f, i) => {
    const key = `${f.memoryId}\u0000${f.messageId}`;
    if (byId[i] || seenIds.has(f.id) || !memories[i] || marked.has(key)) {
      out.skipped += 1;
      return;
    }
    marked.add(key);
    seenIds.add(f.id);
    const vector = f.embedding !== null && f.embeddingModel ? decoded(f.embedding) : null;
    const usable = vector !== null && isUsableVector(vector) && vector.length === (dimensions.get(f.embeddingModel!) ?? vector.length);
    rows.push({ ...f, embedding: usable ? l2normalize(vector) : null, embeddingModel: usable ? f.embeddingModel : null });
  });
  if (rows.length > 0) await db.feedback.bulkAdd(rows);
  out.added += rows.length;

  const stored = await Promise.all(file.rejectedSuggestions.map((r) => db.suggestions.where('[namespace+hash]').equals([r.namespace, r.hash]).toArray()));
  const ids = await db.suggestions.bulkGet(file.rejectedSuggestions.map((r) => r.id));
  const takenIds = new Set(ids.flatMap((s) => (s ? [s.id] : [])));
  const done = new Set<string>();
  const writes: SuggestionRecord[] = [];
  file.rejectedSuggestions.forEach((r, i) => {
    const key = `${r.namespace}\u0000${r.hash}`;
    const here = stored[i]!;
    if (done.has(key) || here.some((s) => s.status === 'rejected')) {
      out.skipped += 1;
      return;
    }
    done.add(key);
    const pending = here[0];
    const id = pending ? pending.id : takenIds.has(r.id) ? crypto.randomUUID() : r.id;
    takenIds.add(id);
    writes.push(
      pending
        ? { ...pending, status: 'rejected', text: '', sourceMessageIds: [], createdAt: r.createdAt }
        : {
            id,
            namespace: r.namespace,
            hash: r.hash,
            status: 'rejected',
            kind: r.kind,
            text: '',
            importance: 0,
            validFrom: null,
            validUntil: null,
            sourceConversationId: null,
            sourceMessageIds: [],
            messageTime: r.createdAt,
            createdAt: r.createdAt,
          },
    );
  });
  if (writes.length > 0) await db.suggestions.bulkPut(writes);
  out.added += writes.length;
  return out;
}

/** A file vector, or `null` when its base64 does not decode (the row keeps its terms). */
function decoded(base64: string): Float32Array | null {
  try {
    return base64ToVector(base64);
  } catch {
    return null;
  }
}
