/**
 * The language-model path of the profile rebuild: the model condenses the user's profile,
 * instruction and preference memories into at most `ABOUT_ME_MAX_LINES` short lines, as JSON
 * `{"lines": ["...", ...]}` (grammar-constrained where the engine supports it, read by the one
 * model-reply slicer `src/text/json-reply.ts`). Every line must be grounded in the memories — the
 * extraction guards' rules (`../extraction/guards.ts`) with the memories' texts as the user's
 * words: content words shared, no invented name or number, not the assistant about itself — else
 * it is dropped. One call, no retry: the rules are a good profile already.
 */
import type { ChatEngine } from '../../../engines/types';
import { ABOUT_ME_MAX_LINES } from '../../../model/about-me';
import type { MemoryRecord } from '../../../model/records';
import { parseJsonReply } from '../../../text/json-reply';
import { capChars } from '../../../prompt/neutralize';
import { guardItems } from '../extraction/guards';

/** JSON Schema of the reply (for grammar-constrained decoding). */
export const PROFILE_JSON_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: { lines: { type: 'array', items: { type: 'string' }, maxItems: ABOUT_ME_MAX_LINES } },
  required: ['lines'],
};

/** Memories shown to the model at most (the best ranked), and characters per memory. */
const MAX_SHOWN = 40;
const MAX_SHOWN_CHARS = 300;

/** The request's messages: an instruction and the memories, one per line. */
export function profileMessages(memories: readonly MemoryRecord[]): { role: 'system' | 'user'; content: string }[] {
  const list = memories
    .slice(0, MAX_SHOWN)
    .map((m) => `- (${m.kind}) ${capChars(m.text.replace(/\s+/gu, ' ').trim(), MAX_SHOWN_CHARS)}`)
    .join('\n');
  return [
    {
      role: 'system',
      content: [
        'You write a short profile of the user from what a personal assistant remembers about them.',
        `Reply with one JSON object only: {"lines": ["...", ...]} with at most ${ABOUT_ME_MAX_LINES} short lines.`,
        '- First who the user is (name, home, work, family), then how they want to be answered, then their preferences.',
        '- Use only what the memories say; merge repeats; if two memories conflict, keep the later one.',
        "- Keep each line in the memory's language. Never translate.",
      ].join('\n'),
    },
    { role: 'user', content: `Memories:\n${list}\n\nJSON:` },
  ];
}

/**
 * Asks `engine` for the profile lines of `memories` (see module doc).
 * @returns the grounded lines in the model's order, or `null` when the reply is unusable or no line is grounded.
 * @throws the engine's errors; the abort reason when `options.signal` aborts.
 */
export async function llmProfileLines(engine: ChatEngine, memories: readonly MemoryRecord[], options: { signal?: AbortSignal } = {}): Promise<string[] | null> {
  const result = await engine.complete({
    messages: profileMessages(memories),
    maxTokens: 320,
    temperature: 0,
    responseFormat: { type: 'json_object', schema: PROFILE_JSON_SCHEMA },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  options.signal?.throwIfAborted();
  const json = parseJsonReply(result.content, { objectOnly: true });
  if (!json.ok || !Array.isArray(json.value.lines)) return null;
  const raw = json.value.lines.filter((l): l is string => typeof l === 'string' && l.trim() !== '').map((text) => ({ text: text.trim() }));
  const source = memories.map((m) => m.text).join('\n');
  const { kept } = guardItems(raw, { userText: source, injected: [] });
  return kept.length > 0 ? kept.map((l) => l.text) : null;
}
