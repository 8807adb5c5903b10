/**
 * The verbatim conversation as strategies see it: stored messages in order, grouped into
 * exchanges, with their token cost.
 */
import type { TokenCounter } from '../../model/tokens';
import type { RecallDB } from '../../db/schema';
import type { ContextMessage } from '../../model/context';
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
export async function loadContextMessages(
  db: RecallDB,
  conversationId: string,
  newUserText?: string,
  options: { afterSeq?: number } = {},
): Promise<ContextMessage[]> {
  const lower = options.afterSeq === undefined ? -Infinity : options.afterSeq;
  const rows = await db.messages
    .where('[conversationId+seq]')
    .between([conversationId, lower], [conversationId, Infinity], options.afterSeq === undefined, true)
    .toArray();
  const messages: ContextMessage[] = rows
    .filter((m) => m.status !== 'error' && m.content.trim() !== '' && !m.command)
    .map((m) => ({ id: m.id, seq: m.seq, role: m.role, content: m.content }));
  const last = messages[messages.length - 1];
  if (newUserText !== undefined && last?.role === 'user' && last.content.trim() === newUserText.trim()) messages.pop();
  return messages;
}

/**
 * The newest messages of a conversation, read newest first on the `[conversationId+seq]` index in
 * pages that double (from `firstPage` rows): after each page, `pick` gets the messages read so far
 * (filtered as by `loadContextMessages`, with its `newUserText` rule; oldest first) and returns
 * its answer, or `null` when it needs older messages. When the whole conversation has been read,
 * `pick`'s answer is taken whatever it is (`null` gives []). A turn thus reads rows in proportion
 * to what the strategy keeps, not to the conversation.
 * @param firstPage rows of the first read (≥ 1).
 */
export async function loadNewestMessages<T>(
  db: RecallDB,
  conversationId: string,
  newUserText: string | undefined,
  firstPage: number,
  pick: (messages: ContextMessage[], complete: boolean) => T[] | null,
): Promise<T[]> {
  for (let limit = Math.max(1, Math.floor(firstPage)); ; limit *= 2) {
    const rows = await db.messages
      .where('[conversationId+seq]')
      .between([conversationId, -Infinity], [conversationId, Infinity], true, true)
      .reverse()
      .limit(limit)
      .toArray();
    rows.reverse();
    const messages: ContextMessage[] = rows
      .filter((m) => m.status !== 'error' && m.content.trim() !== '' && !m.command)
      .map((m) => ({ id: m.id, seq: m.seq, role: m.role, content: m.content }));
    const last = messages[messages.length - 1];
    if (newUserText !== undefined && last?.role === 'user' && last.content.trim() === newUserText.trim()) messages.pop();
    const complete = rows.length < limit;
    const picked = pick(messages, complete);
    if (picked !== null) return picked;
    if (complete) return [];
  }
}

/**
 * The last `k` exchanges of a conversation (`groupExchanges` of `loadContextMessages`, last `k`
 * groups, flattened, oldest first), via `loadNewestMessages` from 2k + 4 rows until the rows read
 * hold k + 1 exchanges or the whole conversation: a turn reads O(k) rows. `k <= 0` reads nothing
 * and returns [].
 */
export async function loadLastExchanges(db: RecallDB, conversationId: string, k: number, newUserText?: string): Promise<ContextMessage[]> {
  if (k <= 0) return [];
  return loadNewestMessages(db, conversationId, newUserText, 2 * k + 4, (messages, complete) => {
    const groups = groupExchanges(messages);
    // Only the first group of a suffix can be cut short; with k + 1 groups the last k are whole.
    return groups.length > k || complete ? groups.slice(-k).flat() : null;
  });
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
