/**
 * Import files (`recall-export` v1, `src/backup/`) for benchmarks: N episodic memories, for seeding
 * the real extension through its own `memory.import` request, and N messages (`messagesFileJson`,
 * written by the backup writer).
 *
 * Texts: the rounds of the retrieval benchmark's bilingual conversation (`generate.ts`, seed 2:
 * `User: …\nAssistant: …`, half English, half Chinese), duplicates dropped (the import would skip
 * them), so N memories have N distinct texts. The generator's templates give about 75k distinct
 * rounds; beyond that, repeated rounds come back with their date appended (`… (2024-07-03)`). Vectors: seeded random unit vectors (the dimension
 * of the embedder that will load them, e.g. 384 like MiniLM), marked as made by `embeddingModel`,
 * so nothing is re-embedded after the import.
 */
import { EXPORT_FORMAT, EXPORT_VERSION, exportAll, vectorToBase64, type ExportFile } from '../../src/backup';
import { RecallDB } from '../../src/db/schema';
import { memoryHash } from '../../src/memory/long-term/text';
import { generateBenchmark } from './generate';
import { mulberry32 } from './prng';

/** Memories of a seed file, before they are split into import files. */
export type SeedMemory = ExportFile['memories'][number];

/**
 * `count` memories with distinct texts and `dimension`-d unit vectors of `embeddingModel`.
 * Ids are `seed-<i>`. Take a larger set from one call and split it (e.g. for N and 2N): two calls
 * with different counts generate different conversations, whose texts may coincide.
 * @throws Error when even dated repeats cannot give `count` distinct texts.
 */
export function seedMemories(count: number, options: { dimension: number; embeddingModel: string; seed?: number }): SeedMemory[] {
  const rng = mulberry32((options.seed ?? 2) * 31);
  const texts: string[] = [];
  const seen = new Set<string>();
  // Generate a conversation large enough for `count` distinct rounds (≈ 95 % are distinct).
  const rounds = Math.max(200, Math.ceil(count * 1.15) + 100);
  const data = generateBenchmark({ rounds, seed: options.seed ?? 2 });
  const turns = data.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns));
  const repeats: string[] = [];
  for (let i = 0; i + 1 < turns.length && texts.length < count; i += 2) {
    const text = `User: ${turns[i]!.text}\nAssistant: ${turns[i + 1]!.text}`;
    const hash = memoryHash(text);
    if (seen.has(hash)) {
      repeats.push(`${text} (${new Date(Date.UTC(2024, 6, 1) + (i % 730) * 43_200_000).toISOString().slice(0, 10)})`);
      continue;
    }
    seen.add(hash);
    texts.push(text);
  }
  for (const text of repeats) {
    if (texts.length >= count) break;
    const hash = memoryHash(text);
    if (seen.has(hash)) continue;
    seen.add(hash);
    texts.push(text);
  }
  if (texts.length < count) throw new Error(`seedMemories: only ${texts.length} distinct texts for ${count}`);
  const start = Date.UTC(2024, 6, 1);
  const year = 365 * 86_400_000;
  return texts.map((text, i) => {
    const v = new Float32Array(options.dimension);
    let norm = 0;
    for (let j = 0; j < v.length; j++) {
      v[j] = rng() * 2 - 1;
      norm += v[j]! * v[j]!;
    }
    norm = Math.sqrt(norm);
    for (let j = 0; j < v.length; j++) v[j]! /= norm;
    const at = start + Math.floor((i / count) * year);
    return {
      id: `seed-${i}`,
      namespace: 'default',
      kind: 'episodic',
      text,
      embedding: vectorToBase64(v),
      embeddingModel: options.embeddingModel,
      importance: 0.5,
      createdAt: at,
      updatedAt: at,
      validFrom: null,
      validUntil: null,
      current: 1,
      lastAccessedAt: null,
      accessCount: 0,
      sourceConversationId: null,
      sourceMessageIds: [],
      pinned: false,
      hash: memoryHash(text),
    };
  });
}

/** The JSON of an import file holding `memories` (no history, conversations or messages). */
export function importFileJson(memories: SeedMemory[]): string {
  const file: ExportFile = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: Date.now(),
    memories,
    memoryHistory: [],
    conversations: [],
    messages: [],
  };
  return JSON.stringify(file);
}

/**
 * The JSON of an export file holding `messages` messages in `conversations` conversations (no
 * memories), written by the backup writer itself (`exportAll`) from a throw-away database
 * (fake-indexeddb in Node: the caller loads `fake-indexeddb/auto`, as `bench/run.ts` does).
 * Messages alternate user / assistant, English and Chinese (`Message i: … 第i条消息 …`), one
 * second apart; conversations get equal shares (the last one the rest).
 */
export async function messagesFileJson(messages: number, conversations = 20): Promise<string> {
  const db = new RecallDB(`bench-messages-file-${crypto.randomUUID()}`);
  try {
    const t0 = Date.UTC(2025, 0, 1);
    const per = Math.ceil(messages / conversations);
    await db.conversations.bulkAdd(
      Array.from({ length: conversations }, (_, c) => ({
        id: `conv-${c}`,
        title: `Conversation ${c}`,
        namespace: 'default',
        strategy: { kind: 'summary-buffer' as const, maxTokens: 2000 },
        createdAt: t0,
        updatedAt: t0 + messages * 1000,
      })),
    );
    await db.messages.bulkAdd(
      Array.from({ length: messages }, (_, i) => {
        const seq = i % per;
        const user = seq % 2 === 0;
        return {
          id: `msg-${String(i).padStart(7, '0')}`,
          conversationId: `conv-${Math.floor(i / per)}`,
          seq,
          role: user ? ('user' as const) : ('assistant' as const),
          content: user
            ? `Message ${i}: I am planning item ${i} of my week, 第${i}条消息, and I would like some advice.`
            : `Reply ${i}: here is a short suggestion for item ${i}. 这是第${i}条回复。`,
          createdAt: t0 + i * 1000,
          status: 'complete' as const,
        };
      }),
    );
    return (await exportAll(db, { now: () => t0 + messages * 1000 })).json;
  } finally {
    await db.delete();
  }
}
