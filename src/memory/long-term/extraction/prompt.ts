/**
 * The extraction prompt: turns one exchange (user message + assistant reply) into memory items.
 *
 * Adapted, in our own words, from Mem0's FACT_RETRIEVAL prompt (mem0ai/mem0,
 * `mem0/configs/prompts.py`: "Personal Information Organizer" — store facts, preferences, plans;
 * answer JSON `{"facts": [...]}`; detect the user's language and record facts in it; today's
 * date in the prompt) and extended with the issue's `{topic, facts[], preferences[]}` shape and a
 * kind per fact. Kept short, with a single example, so small local models (Qwen2.5-1.5B) follow
 * it. The example is in Chinese on purpose: it shows that Chinese stays Chinese and how a relative
 * date ("下周三") becomes absolute.
 */
import type { ChatMessage } from '../../../model/engine';
import type { TokenCounter } from '../../../model/tokens';
import { formatLocalDate, formatLocalDateTime, weekdayName } from './dates';
import { writesChinese } from '../../../text/language';
import { truncateMiddle } from '../../../text/terms';

/** What extraction reads. Times in ms epoch. */
export interface ExtractionExchange {
  userText: string;
  assistantText: string;
  /** Time of the user message: relative dates are resolved against it. */
  messageTime: number;
  /**
   * Texts of the long-term memories (not episodic rounds) injected into that turn's prompt
   * (`PromptTrace.memories`): an item repeating one is not a new fact (`./guards.ts`). Not shown to the model.
   */
  injected?: readonly string[];
}

/**
 * The system prompt. `messageTime` gives the date (and weekday) relative dates are resolved
 * against; `chinese` (the user writes Chinese, `writesChinese`) makes the language rule explicit.
 */
export function extractionSystemPrompt(messageTime: number, chinese: boolean): string {
  const languageRule = chinese
    ? '- The user writes Chinese: write every item in Chinese (中文). Never translate into English.'
    : "- Write every item in the user's own language. Never translate.";
  return [
    'You pick out what a personal assistant should remember about the user from one chat exchange.',
    'Reply with one JSON object only:',
    '{"topic": "<2-5 words>", "facts": [{"kind": "profile|event|fact|instruction", "text": "...", "date": "YYYY-MM-DD"}], "preferences": [{"text": "..."}]}',
    'Rules:',
    "- Only what the user says about themselves, their life and their wishes; not the assistant's ideas, not general knowledge.",
    '- One short, self-contained item per fact.',
    '- kind: profile = who the user is (name, home, job, family); event = something at a time (add "date"); instruction = how the assistant should answer; fact = anything else lasting. Likes and dislikes go in "preferences".',
    languageRule,
    `- The message was sent on ${formatLocalDate(messageTime)} (${weekdayName(messageTime)}). Write dates as YYYY-MM-DD instead of "yesterday", "next week", "昨天", "下周三".`,
    '- Nothing to remember: {"topic": "", "facts": [], "preferences": []}',
    'Example (sent on 2024-05-10, Friday):',
    'User: 我下周三要去北京出差，不太喜欢坐飞机。',
    '{"topic": "出差", "facts": [{"kind": "event", "text": "2024-05-15去北京出差", "date": "2024-05-15"}], "preferences": [{"text": "不太喜欢坐飞机"}]}',
  ].join('\n');
}

/** Token counting used for budgeting: the model's counter when there is one, else 1 token per character (an over-estimate for English, close for Chinese). */
function counter(tokens: TokenCounter | null): (text: string) => number {
  return tokens ? (t) => tokens.count(t) : (t) => Array.from(t).length;
}

/** Shortens `text` (keeping head and tail) until it has at most `maxTokens` tokens. */
export function fitToTokens(text: string, maxTokens: number, count: (text: string) => number): string {
  if (maxTokens <= 0) return '';
  if (count(text) <= maxTokens) return text;
  let lo = 0;
  let hi = Array.from(text).length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(truncateMiddle(text, mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return truncateMiddle(text, lo);
}

/**
 * The messages of one extraction request, fitted into the context window:
 * system prompt + one user message holding the exchange. The user text gets up to 75% of the
 * room left after the system prompt and the answer reservation (`maxAnswerTokens`), the assistant
 * reply the rest (it matters less: facts come from the user).
 * @param contextWindow tokens of the model's context window (prompt + answer).
 */
export function buildExtractionMessages(
  exchange: ExtractionExchange,
  options: { contextWindow: number; maxAnswerTokens: number; tokens: TokenCounter | null },
): ChatMessage[] {
  const count = counter(options.tokens);
  const system = extractionSystemPrompt(exchange.messageTime, writesChinese(exchange.userText));
  const frame = `Exchange (sent on ${formatLocalDateTime(exchange.messageTime)}, ${weekdayName(exchange.messageTime)}):\nUser: \nAssistant: \n\nJSON:`;
  const overhead = 16; // chat-template tokens of two messages, rounded up
  const room = Math.max(0, options.contextWindow - options.maxAnswerTokens - count(system) - count(frame) - overhead);
  const user = fitToTokens(exchange.userText.trim(), Math.floor(room * 0.75), count);
  const assistant = fitToTokens(exchange.assistantText.trim(), room - count(user), count);
  return [
    { role: 'system', content: system },
    {
      role: 'user',
      content: `Exchange (sent on ${formatLocalDateTime(exchange.messageTime)}, ${weekdayName(exchange.messageTime)}):\nUser: ${user}\nAssistant: ${assistant}\n\nJSON:`,
    },
  ];
}

/**
 * The follow-up after an unusable reply (bounded retry): the bad reply (shortened) as the
 * assistant turn, then what was wrong. Error text is in English (the prompt language).
 */
export function retryMessages(badReply: string, problem: string): ChatMessage[] {
  return [
    { role: 'assistant', content: truncateMiddle(badReply.trim() || '(empty)', 200) },
    { role: 'user', content: `${problem} Reply again with only the JSON object described above.` },
  ];
}
