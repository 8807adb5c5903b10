/**
 * The shape of an extraction reply: the issue's `{topic, facts[], preferences[]}` with a kind
 * per fact.
 *
 * ```json
 * {"topic": "出差", "facts": [{"kind": "event", "text": "下周三（2024-05-15）去北京出差", "date": "2024-05-15"}],
 *  "preferences": [{"text": "不喜欢坐飞机"}]}
 * ```
 * Two schemas: `extractionReplySchema` is the strict one the model is asked for (its JSON Schema,
 * `EXTRACTION_JSON_SCHEMA`, goes into `responseFormat` so grammar-constrained engines enforce it);
 * `normalizeExtractionReply` accepts the near misses small models produce (bare strings instead of
 * objects, `fact`/`content` instead of `text`, kind synonyms, a top-level array) and returns items.
 */
import { z } from 'zod';
import { FACT_KINDS, type FactKind } from '../../../model/memory';
import type { RawItem } from './items';

/** Most items kept from one reply; more is a runaway generation. */
export const MAX_ITEMS_PER_REPLY = 20;

/** Strict reply schema (what the prompt and the grammar ask for). */
export const extractionReplySchema = z.object({
  topic: z.string(),
  facts: z.array(
    z.object({
      kind: z.enum(FACT_KINDS),
      text: z.string(),
      date: z.string().optional(),
    }),
  ),
  preferences: z.array(z.object({ text: z.string() })),
});

/** Strict reply type. */
export type ExtractionReply = z.infer<typeof extractionReplySchema>;

/** JSON Schema of the strict reply, for `ResponseFormat.schema` (no `$schema` key: some grammar compilers reject it). */
export const EXTRACTION_JSON_SCHEMA: Record<string, unknown> = (() => {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(extractionReplySchema) as Record<string, unknown>;
  return schema;
})();

const KIND_SYNONYMS: Record<string, FactKind> = {
  profile: 'profile',
  personal: 'profile',
  identity: 'profile',
  person: 'profile',
  bio: 'profile',
  个人信息: 'profile',
  个人: 'profile',
  preference: 'preference',
  preferences: 'preference',
  like: 'preference',
  likes: 'preference',
  dislike: 'preference',
  偏好: 'preference',
  喜好: 'preference',
  event: 'event',
  events: 'event',
  plan: 'event',
  plans: 'event',
  schedule: 'event',
  appointment: 'event',
  事件: 'event',
  计划: 'event',
  日程: 'event',
  fact: 'fact',
  facts: 'fact',
  info: 'fact',
  information: 'fact',
  other: 'fact',
  事实: 'fact',
  instruction: 'instruction',
  instructions: 'instruction',
  rule: 'instruction',
  directive: 'instruction',
  request: 'instruction',
  指令: 'instruction',
  要求: 'instruction',
};

const textOf = z.union([
  z.string(),
  z
    .object({
      text: z.string().optional(),
      fact: z.string().optional(),
      memory: z.string().optional(),
      content: z.string().optional(),
      value: z.string().optional(),
    })
    .passthrough(),
]);

const lenientItem = textOf.transform((v) => {
  if (typeof v === 'string') return { text: v, kind: undefined as string | undefined, date: undefined as string | undefined };
  const rec = v as Record<string, unknown>;
  const text = v.text ?? v.fact ?? v.memory ?? v.content ?? v.value ?? '';
  const kind = typeof rec.kind === 'string' ? rec.kind : typeof rec.type === 'string' ? rec.type : typeof rec.category === 'string' ? rec.category : undefined;
  const date = typeof rec.date === 'string' ? rec.date : undefined;
  return { text, kind, date };
});

const lenientReply = z.union([
  z
    .object({
      topic: z.unknown().optional(),
      facts: z.array(lenientItem).optional(),
      preferences: z.array(lenientItem).optional(),
      memories: z.array(lenientItem).optional(),
      items: z.array(lenientItem).optional(),
    })
    .passthrough()
    .refine((o) => ['facts', 'preferences', 'memories', 'items'].some((k) => k in o), {
      message: 'expected an object with "facts" and "preferences" arrays',
    }),
  z.array(lenientItem).transform((facts) => ({ facts }) as Record<string, unknown>),
]);

/** Items of one reply, after normalization. */
export interface NormalizedReply {
  topic: string;
  items: RawItem[];
  /** Items dropped because they were empty or beyond `MAX_ITEMS_PER_REPLY`. */
  droppedCount: number;
}

/**
 * Validates a parsed reply leniently and returns its items (`facts` with their kinds, unknown
 * kinds → `fact`; `preferences` → kind `preference`). Empty texts are dropped; items beyond
 * `MAX_ITEMS_PER_REPLY` are dropped; duplicates (same trimmed text) are merged.
 * @returns `{ ok: false, message }` with a short zod message when the shape is wrong.
 */
export function normalizeExtractionReply(value: unknown): { ok: true; reply: NormalizedReply } | { ok: false; message: string } {
  const parsed = lenientReply.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, message: `The JSON did not have the expected shape (${issue ? `${issue.path.join('.') || 'root'}: ${issue.message}` : 'invalid'}).` };
  }
  const data = parsed.data as Record<string, unknown> & {
    topic?: unknown;
    facts?: { text: string; kind?: string; date?: string }[];
    preferences?: { text: string; kind?: string; date?: string }[];
    memories?: { text: string; kind?: string; date?: string }[];
    items?: { text: string; kind?: string; date?: string }[];
  };
  const topic = typeof data.topic === 'string' ? data.topic.trim().slice(0, 80) : '';
  const all: RawItem[] = [];
  let dropped = 0;
  const push = (raw: { text: string; kind?: string; date?: string }, fallback: FactKind) => {
    const text = raw.text.trim();
    if (!text) {
      dropped += 1;
      return;
    }
    const kind = (raw.kind && KIND_SYNONYMS[raw.kind.trim().toLowerCase()]) || fallback;
    all.push({ kind, text, ...(topic ? { topic } : {}), ...(raw.date ? { date: raw.date } : {}) });
  };
  for (const f of [...(data.facts ?? []), ...(data.memories ?? []), ...(data.items ?? [])]) push(f, 'fact');
  for (const p of data.preferences ?? []) push(p, 'preference');
  const seen = new Set<string>();
  const items: RawItem[] = [];
  for (const item of all) {
    if (seen.has(item.text)) continue;
    seen.add(item.text);
    if (items.length >= MAX_ITEMS_PER_REPLY) {
      dropped += 1;
      continue;
    }
    items.push(item);
  }
  return { ok: true, reply: { topic, items, droppedCount: dropped } };
}
