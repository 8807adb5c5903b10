/**
 * The verbatim conversation as strategies see it: stored messages in order, grouped into
 * exchanges, with their token cost.
 */
import type { TokenCounter } from '../../engines/types';
import type { RecallDB } from '../../db/schema';
import type { ContextMessage } from './types';
import { capChars, MAX_RECENT_TURN_CHARS } from '../../prompt/neutralize';

/**
 * Messages of a conversation that belong in a prompt, oldest first: complete and aborted
 * (partial) messages with text; failed (`status: 'error'`) and empty ones are skipped, and so are
 * explicit memory-command turns ("remember …", "忘记…"): they are handled outside the model, and
 * a forgotten fact must not come back through the transcript of the command that forgot it.
 * @param newUserText the message being answered. The chat core calls `load` before it stores
 *   the new message; a trailing user message with this exact text is therefore an earlier try
 *   of the same message whose reply failed, and is left out so the context never holds it twice.
 * @param options.afterSeq read only the messages with a higher `seq` (one range read on the
 *   `[conversationId+seq]` index): a summary strategy needs nothing at or below its fold
 *   watermark, so a turn's read does not grow with the conversation. Default: every message.
 */
export async function loadContextMessages(db: RecallDB, conversationId: string, newUserText?: string, options: { afterSeq?: number } = {}): Promise<ContextMessage[]> {
  const lower = options.afterSeq === undefined ? -Infinity : options.afterSeq;
  const rows = await db.messages.where('[conversationId+seq]').between([conversationId, lower], [conversationId, Infinity], options.afterSeq === undefined, true).toArray();
  const messages: ContextMessage[] = rows
    .filter((m) => m.status !== 'error' && m.content.trim() !== '' && !m.command)
    .map((m) => ({ id: m.id, seq: m.seq, role: m.role, content: m.content }));
  const last = messages[messages.length - 1];
  if (newUserText !== undefined && last?.role === 'user' && last.content.trim() === newUserText.trim()) messages.pop();
  return messages;
}

/**
 * The last `k` exchanges of a conversation (`groupExchanges` of `loadContextMessages`, last `k`
 * groups, flattened, oldest first), read newest first on the `[conversationId+seq]` index in
 * pages that double (from 2k + 4 rows) until the rows read hold k + 1 exchanges or the whole
 * conversation: a turn reads O(k) rows, not the conversation. Same filtering and retry rule as
 * `loadContextMessages` (`newUserText`). `k <= 0` reads nothing and returns [].
 */
export async function loadLastExchanges(db: RecallDB, conversationId: string, k: number, newUserText?: string): Promise<ContextMessage[]> {
  if (k <= 0) return [];
  for (let limit = 2 * k + 4; ; limit *= 2) {
    const rows = await db.messages.where('[conversationId+seq]').between([conversationId, -Infinity], [conversationId, Infinity], true, true).reverse().limit(limit).toArray();
    rows.reverse();
    const messages: ContextMessage[] = rows
      .filter((m) => m.status !== 'error' && m.content.trim() !== '' && !m.command)
      .map((m) => ({ id: m.id, seq: m.seq, role: m.role, content: m.content }));
    const last = messages[messages.length - 1];
    if (newUserText !== undefined && last?.role === 'user' && last.content.trim() === newUserText.trim()) messages.pop();
    const groups = groupExchanges(messages);
    // Only the first group of a suffix can be cut short; with k + 1 groups the last k are whole.
    if (groups.length > k || rows.length < limit) return groups.slice(-k).flat();
  }
}

/**
 * Groups messages into exchanges: each user message starts an exchange that holds it and the
 * replies after it (an exchange = one user message and the reply). Messages before the first
 * user message form an exchange of their own.
 */
export function groupExchanges(messages: readonly ContextMessage[]): ContextMessage[][] {
  const groups: ContextMessage[][] = [];
  for (const m of messages) {
    const current = groups[groups.length - 1];
    if (m.role === 'user' || !current) groups.push([m]);
    else current.push(m);
  }
  return groups;
}

/**
 * Tokens a message occupies in a prompt: its content, cut to `MAX_RECENT_TURN_CHARS` characters
 * as the prompt assembler sends it (so a 1 MB message costs a bounded count at every later turn),
 * plus the chat template's per-message overhead.
 */
export function messageTokens(counter: TokenCounter, message: Pick<ContextMessage, 'content'>): number {
  return counter.count(capChars(message.content, MAX_RECENT_TURN_CHARS)) + counter.perMessageOverhead;
}

/** Σ `messageTokens` over `messages`. */
export function messagesTokens(counter: TokenCounter, messages: readonly Pick<ContextMessage, 'content'>[]): number {
  let n = 0;
  for (const m of messages) n += messageTokens(counter, m);
  return n;
}
