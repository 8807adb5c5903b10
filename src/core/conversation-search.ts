/**
 * Conversation search for the drawer: which conversations mention every word of a query, in their
 * title or in any of their messages, with a snippet of the message that matched; and messages in
 * brief by id (where a memory came from).
 *
 * Matching is substring search on normalized text (Unicode NFKC, lower case), one term per
 * whitespace-separated word of the query, every term required (AND) somewhere in the
 * conversation. Substrings rather than words, so Chinese (no spaces) and word beginnings typed
 * so far ("hangz") match. One pass over the `messages` table in primary-key order (`each`), so the
 * cost grows with the stored messages; nothing is indexed for it.
 */
import type { RecallDB } from '../db/schema';
import type { ConversationSearchHit, MessageSnippet } from '../messaging/protocol';
import { MESSAGE_SNIPPET_CHARS } from '../model/records';
import { MessagingError } from '../model/errors';
import { cutAtWord } from '../text/cut';

/** Most ids one `messageSnippets` call reads. */
export const MAX_SNIPPET_IDS = 500;

/** Most hits `searchConversations` returns by default. */
export const CONVERSATION_SEARCH_LIMIT = 50;

/** Characters of context kept on each side of the first matched term in a snippet. */
const SNIPPET_CONTEXT_CHARS = 40;

/** NFKC + lower case: the form both the query and the texts are compared in. */
function normalize(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** The query's terms (normalized, whitespace-separated, deduplicated); empty for a blank query. */
export function searchTerms(query: string): string[] {
  return [...new Set(normalize(query).split(/\s+/u).filter(Boolean))];
}

/**
 * `text` (NFKC, whitespace collapsed) cut around the first occurrence of `term` (normalized, see
 * `searchTerms`), with `SNIPPET_CONTEXT_CHARS` code points on each side and "…" marking each cut;
 * from the start when `term` is not in it.
 */
export function snippetAround(text: string, term: string): string {
  const chars = Array.from(text.normalize('NFKC').replace(/\s+/gu, ' ').trim());
  const lower = chars.map((c) => c.toLowerCase());
  const wanted = Array.from(term);
  let at = 0;
  for (let i = 0; i + wanted.length <= lower.length; i += 1) {
    if (wanted.every((c, j) => lower[i + j] === c)) {
      at = i;
      break;
    }
  }
  const from = Math.max(0, at - SNIPPET_CONTEXT_CHARS);
  const to = Math.min(chars.length, at + wanted.length + SNIPPET_CONTEXT_CHARS);
  return `${from > 0 ? '…' : ''}${chars.slice(from, to).join('')}${to < chars.length ? '…' : ''}`;
}

/**
 * The conversations that contain every term of `query` (see module doc): title matches first,
 * then by `updatedAt`, newest first; at most `limit` (default `CONVERSATION_SEARCH_LIMIT`). Each
 * hit names the newest message containing the most terms (`messageId`, `snippet` around its first
 * matched term); both `null` when the title alone matched. A blank query returns `[]`.
 * @throws whatever Dexie throws reading the tables.
 */
export async function searchConversations(db: RecallDB, query: string, limit = CONVERSATION_SEARCH_LIMIT): Promise<ConversationSearchHit[]> {
  const terms = searchTerms(query);
  if (terms.length === 0) return [];
  // A temporary chat is not kept, so it is not found either.
  const conversations = (await db.conversations.toArray()).filter((c) => !c.temporary);
  /** Per conversation: terms found so far, message count, and the best message. */
  const found = new Map<
    string,
    { terms: Set<string>; messageCount: number; best: { id: string; seq: number; hits: number; text: string; term: string } | null }
  >();
  for (const c of conversations) {
    const title = normalize(c.title);
    found.set(c.id, { terms: new Set(terms.filter((t) => title.includes(t))), messageCount: 0, best: null });
  }
  await db.messages.each((m) => {
    const entry = found.get(m.conversationId);
    if (!entry) return;
    entry.messageCount += 1;
    const text = normalize(m.content);
    const hits = terms.filter((t) => text.includes(t));
    if (hits.length === 0) return;
    for (const t of hits) entry.terms.add(t);
    const best = entry.best;
    if (!best || hits.length > best.hits || (hits.length === best.hits && m.seq > best.seq))
      entry.best = { id: m.id, seq: m.seq, hits: hits.length, text: m.content, term: hits[0]! };
  });
  const hits: (ConversationSearchHit & { inTitle: boolean })[] = [];
  for (const c of conversations) {
    const entry = found.get(c.id)!;
    if (entry.terms.size < terms.length) continue;
    const title = normalize(c.title);
    const inTitle = terms.every((t) => title.includes(t));
    hits.push({
      id: c.id,
      title: c.title,
      updatedAt: c.updatedAt,
      messageCount: entry.messageCount,
      messageId: inTitle ? null : (entry.best?.id ?? null),
      snippet: inTitle || !entry.best ? null : snippetAround(entry.best.text, entry.best.term),
      inTitle,
    });
  }
  hits.sort((a, b) => Number(b.inTitle) - Number(a.inTitle) || b.updatedAt - a.updatedAt);
  return hits.slice(0, limit).map(({ inTitle: _, ...hit }) => hit);
}

/**
 * The messages of `ids` that still exist, each as a `MessageSnippet` (whitespace collapsed, cut at
 * a word boundary to `MESSAGE_SNIPPET_CHARS`), in the order of `ids`; missing ids are left out.
 * @throws MessagingError('bad_request') for more than `MAX_SNIPPET_IDS` ids.
 */
export async function messageSnippets(db: RecallDB, ids: string[]): Promise<MessageSnippet[]> {
  if (ids.length > MAX_SNIPPET_IDS) throw new MessagingError('bad_request', `messages.snippets takes at most ${MAX_SNIPPET_IDS} ids`);
  const rows = await db.messages.bulkGet([...new Set(ids)]);
  return rows.flatMap((m) =>
    m
      ? [
          {
            id: m.id,
            conversationId: m.conversationId,
            role: m.role,
            snippet: cutAtWord(m.content.replace(/\s+/gu, ' ').trim(), MESSAGE_SNIPPET_CHARS),
            createdAt: m.createdAt,
          },
        ]
      : [],
  );
}
