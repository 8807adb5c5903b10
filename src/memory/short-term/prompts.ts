/**
 * Prompts of the LLM-driven strategies.
 *
 * - Progressive summary: LangChain's `ConversationSummaryMemory` / `ConversationSummaryBufferMemory`
 *   prompt ("Progressively summarize the lines of conversation provided, adding onto the previous
 *   summary returning a new summary", langchain `memory/prompt.py` `_DEFAULT_SUMMARIZER_TEMPLATE`),
 *   extended with what must survive (names, preferences, gender, events with dates: issue 3), a
 *   length cap (Letta caps its compaction summary at about 300 words), the language rule and a
 *   JSON answer so a malformed reply can be told apart from a summary.
 * - Entity notes: LangChain's `ConversationEntityMemory` extraction and summarization prompts
 *   (`_DEFAULT_ENTITY_EXTRACTION_TEMPLATE`, `_DEFAULT_ENTITY_SUMMARIZATION_TEMPLATE`) merged into
 *   one call per exchange that returns every named entity with its updated note.
 * Instructions are in English (small models follow English instructions best) with an explicit
 * Chinese line when the conversation is Chinese, so the output stays in the user's language.
 */
import type { ResponseFormat } from '../../engines/types';
import type { ChatMessage } from '../../model/engine';
import type { DominantLanguage } from '../../text/language';
import type { ContextMessage, EntityNote } from '../../model/context';

/** Lines of conversation as the prompts show them: `User: …` / `Assistant: …`, one message per paragraph. */
export function formatLines(messages: readonly Pick<ContextMessage, 'role' | 'content'>[]): string {
  return messages.map((m) => `${m.role === 'user' ? 'User' : m.role === 'assistant' ? 'Assistant' : 'System'}: ${m.content.trim()}`).join('\n');
}

/** Sentence telling the model which language to write in. */
function languageRule(language: DominantLanguage): string {
  if (language === 'zh') return 'The conversation is in Chinese: write in Simplified Chinese. 请用简体中文写。';
  if (language === 'en') return 'The conversation is in English: write in English.';
  return 'The conversation mixes languages: write in the language the user mostly uses; keep Chinese text in Chinese.';
}

/** Approximate word (English) and character (Chinese) equivalents of a token budget. */
function lengthRule(maxTokens: number): string {
  const words = Math.max(20, Math.floor(maxTokens * 0.7));
  const chars = Math.max(30, Math.floor(maxTokens * 1.4));
  return `At most ${words} words (in Chinese at most ${chars} characters).`;
}

/** JSON Schema of the summarizer's answer (for engines with grammar-constrained decoding). */
export const SUMMARY_FORMAT: ResponseFormat = {
  type: 'json_object',
  schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'], additionalProperties: false },
};

/**
 * Messages asking for a new progressive summary.
 * @param previous the stored summary (`''` for none); it appears once, as "Previous summary".
 * @param lines the messages to fold in, oldest first; each appears once.
 * @param targetTokens length the summary should stay under (tokens).
 */
export function summaryPrompt(
  previous: string,
  lines: readonly Pick<ContextMessage, 'role' | 'content'>[],
  targetTokens: number,
  language: DominantLanguage,
): ChatMessage[] {
  const system = [
    'You maintain the running summary of a conversation between a user and an AI assistant.',
    'Progressively summarize the new lines of conversation, adding onto the previous summary, and return the new summary.',
    'Rules:',
    "- Keep every name (people, pets, places, projects), the user's preferences, likes and dislikes, gender and pronouns, relationships, important events with their dates, decisions, plans and open questions.",
    '- Keep what the previous summary says unless the new lines correct it; drop small talk.',
    '- Write plain sentences in the third person ("The user …" / "用户……"). Never translate names or quotes.',
    `- ${lengthRule(targetTokens)}`,
    `- ${languageRule(language)}`,
    'Answer with one JSON object and nothing else: {"summary": "<the new summary>"}',
  ].join('\n');
  const user = `Previous summary:\n${previous.trim() || '(none)'}\n\nNew lines of conversation:\n${formatLines(lines)}\n\nReturn the JSON object with the new summary.`;
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

/** JSON Schema of the entity extractor's answer. */
export const ENTITY_FORMAT: ResponseFormat = {
  type: 'json_object',
  schema: {
    type: 'object',
    properties: {
      entities: {
        type: 'array',
        items: { type: 'object', properties: { name: { type: 'string' }, summary: { type: 'string' } }, required: ['name', 'summary'] },
      },
    },
    required: ['entities'],
  },
};

/**
 * Messages asking for the named entities of one exchange with their updated notes.
 * @param known stored notes of entities already mentioned in the exchange.
 * @param noteTokens length each note should stay under (tokens).
 */
export function entityPrompt(
  known: readonly EntityNote[],
  exchange: readonly Pick<ContextMessage, 'role' | 'content'>[],
  noteTokens: number,
  language: DominantLanguage,
): ChatMessage[] {
  const system = [
    'You keep short notes about the named entities of a conversation: people, pets, places, organisations, projects, products and events.',
    'From the exchange below, list every named entity that is mentioned. For each, write an updated note that merges the known note (if any) with the new facts from the exchange.',
    'Rules:',
    '- Keep names exactly as written, gender, relationships, preferences, dates and events.',
    '- Do not list the user or the assistant themselves. If there are no named entities, return an empty list.',
    `- Each note: ${lengthRule(noteTokens)}`,
    `- ${languageRule(language)}`,
    'Answer with one JSON object and nothing else: {"entities": [{"name": "<name>", "summary": "<note>"}]}',
  ].join('\n');
  const notes = known.length ? known.map((n) => `- ${n.name}: ${n.summary}`).join('\n') : '(none)';
  const user = `Known notes:\n${notes}\n\nExchange:\n${formatLines(exchange)}\n\nReturn the JSON object.`;
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}
