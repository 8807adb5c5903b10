/**
 * Claude data export (`conversations.json`): a list of conversations (or one), each
 * `{ uuid, name | title, created_at, updated_at, chat_messages: [{ uuid, sender, text, content?, created_at, attachments?, files? }] }`.
 * `sender` is `human` or `assistant`; the text is `text`, else the `text` items of `content`.
 * Attachments and files become "[file]". Times are ISO 8601.
 */
import type { ImportedConversation, ImportedMessage } from '../model/history-import';
import { asObject, finishConversation, placeOf, refuseFile, toEpochMs, type ParseContext } from './shared';

/** `true` when `value` looks like one Claude conversation (has a `chat_messages` list). */
export function isClaudeConversation(value: unknown): boolean {
  return Array.isArray(asObject(value)?.chat_messages);
}

function textOf(message: Record<string, unknown>): string {
  let text = typeof message.text === 'string' ? message.text : '';
  if (!text.trim() && Array.isArray(message.content)) {
    text = message.content
      .map((part) => asObject(part))
      .flatMap((part) => (part?.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
      .join('\n');
  }
  const files = [message.attachments, message.files].reduce<number>((n, list) => n + (Array.isArray(list) ? list.length : 0), 0);
  return [text.trim(), ...Array.from({ length: files }, () => '[file]')].filter(Boolean).join('\n');
}

/**
 * Reads a Claude export (`value`: the parsed `conversations.json`).
 * @returns conversations with at least one message, in file order; sourceId `claude:<uuid>`.
 * @throws HistoryImportError `bad_conversation` naming the conversation when one has no id.
 */
export function parseClaude(value: unknown, context: ParseContext): ImportedConversation[] {
  const list = Array.isArray(value) ? value : [value];
  const out: ImportedConversation[] = [];
  list.forEach((item, index) => {
    const c = asObject(item);
    const title = typeof c?.name === 'string' ? c.name : typeof c?.title === 'string' ? c.title : '';
    if (!c || typeof c.uuid !== 'string' || !c.uuid || !Array.isArray(c.chat_messages)) {
      throw refuseFile('bad_conversation', context, 'This conversation has no id or no messages.', placeOf(title, index));
    }
    const createdAt = toEpochMs(c.created_at);
    const messages: ImportedMessage[] = c.chat_messages.flatMap((raw) => {
      const m = asObject(raw);
      const role = m?.sender === 'human' ? 'user' : m?.sender === 'assistant' ? 'assistant' : null;
      if (!m || !role) return [];
      return [{ role, text: textOf(m), at: toEpochMs(m.created_at) ?? createdAt ?? context.now }];
    });
    const done = finishConversation({ sourceId: `claude:${c.uuid}`, title, createdAt, updatedAt: toEpochMs(c.updated_at), messages }, context, index);
    if (done) out.push(done);
  });
  return out;
}
