/**
 * Chatbot UI export: `{ version, history: [{ id, name, messages: [{ role, content }] }], folders, prompts }`.
 * It records no times: every message is dated at the import (`ParseContext.now`).
 */
import type { ImportedConversation, ImportedMessage } from '../model/history-import';
import { asObject, finishConversation, placeOf, refuseFile, type ParseContext } from './shared';

/** `true` when `value` looks like a Chatbot UI export (an object with a `history` list and a `version`). */
export function isChatbotUiExport(value: unknown): boolean {
  const o = asObject(value);
  return o !== null && Array.isArray(o.history) && o.version !== undefined;
}

/**
 * Reads a Chatbot UI export.
 * @returns conversations with at least one user or assistant message; sourceId `chatbotui:<id>`.
 * @throws HistoryImportError `bad_conversation` naming the conversation when one has no id or no message list.
 */
export function parseChatbotUi(value: unknown, context: ParseContext): ImportedConversation[] {
  const history = asObject(value)?.history;
  const out: ImportedConversation[] = [];
  (Array.isArray(history) ? history : []).forEach((item, index) => {
    const c = asObject(item);
    const title = typeof c?.name === 'string' ? c.name : '';
    if (!c || typeof c.id !== 'string' || !c.id || !Array.isArray(c.messages)) {
      throw refuseFile('bad_conversation', context, 'This conversation has no id or no messages.', placeOf(title, index));
    }
    const messages: ImportedMessage[] = c.messages.flatMap((raw) => {
      const m = asObject(raw);
      if ((m?.role !== 'user' && m?.role !== 'assistant') || typeof m.content !== 'string') return [];
      return [{ role: m.role, text: m.content, at: context.now }];
    });
    const done = finishConversation({ sourceId: `chatbotui:${c.id}`, title, createdAt: context.now, updatedAt: context.now, messages }, context, index);
    if (done) out.push(done);
  });
  return out;
}
