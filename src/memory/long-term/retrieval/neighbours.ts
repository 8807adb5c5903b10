/**
 * Neighbour expansion of retrieved episodic rounds: a hit brings the round right before it and the
 * round right after it in the same conversation (`RetrievedMemory.neighbours`). In dialogs the
 * answer is often the turn after the best lexical hit: the other speaker asks "Which cuisine do you
 * like?" (what the question matches), the user answers "Sichuan, definitely" (which shares no word
 * with the question) in the next round. The prompt shows a hit and its neighbours as one memory
 * unit when they fit the memory section's budget (`src/prompt/memory-lines.ts`).
 *
 * Adjacency comes from the messages: a round cites its user message and reply
 * (`sourceMessageIds`); the message just before the first and just after the last, by
 * `[conversationId+seq]`, belong to the adjacent rounds, found by `sourceMessageIds`. Three batched
 * reads in one transaction (keyed index reads, no scan). A round whose messages are gone
 * (conversation deleted) has no neighbours.
 */
import type { RecallDB } from '../../../db/schema';
import type { RetrievedMemory, RoundNeighbours } from '../../../model/context';
import type { MemoryRecord, MemoryView, MessageRecord } from '../../../model/records';

/** Options of `expandNeighbours`. */
export interface NeighbourOptions {
  /** Time of the query (ms epoch): a neighbour whose validity ended by then is not brought. */
  now: number;
}

/**
 * Attaches to each episodic round of `results` its adjacent rounds (same conversation and
 * namespace, episodic, valid at `options.now`) and makes each round appear once: results are
 * walked best first; a round already shown — as an earlier hit or as an earlier hit's neighbour —
 * is neither attached again nor kept as its own entry (a later hit that is an earlier hit's
 * neighbour is folded into that unit, so a unit is never two entries). Other memories pass
 * through unchanged. Returns new objects for the rounds that gained neighbours, the same objects
 * otherwise, in the same order (minus the folded ones).
 * @throws what Dexie throws when the tables cannot be read.
 */
export async function expandNeighbours(db: RecallDB, results: readonly RetrievedMemory[], options: NeighbourOptions): Promise<RetrievedMemory[]> {
  const rounds = results.filter((r) => r.memory.kind === 'episodic' && r.memory.sourceConversationId !== null && r.memory.sourceMessageIds.length > 0);
  if (rounds.length === 0) return [...results];
  const found = await db.transaction('r', db.messages, db.memories, async () => {
    const edgeIds = [...new Set(rounds.flatMap((r) => [r.memory.sourceMessageIds[0]!, r.memory.sourceMessageIds[r.memory.sourceMessageIds.length - 1]!]))];
    const edges = new Map((await db.messages.bulkGet(edgeIds)).flatMap((m): [string, MessageRecord][] => (m ? [[m.id, m]] : [])));
    // The message right before each round's first and right after its last.
    const adjacent = (r: RetrievedMemory, side: 'before' | 'after') => {
      const ids = r.memory.sourceMessageIds;
      const edge = edges.get(side === 'before' ? ids[0]! : ids[ids.length - 1]!);
      if (!edge || edge.conversationId !== r.memory.sourceConversationId) return null;
      return { conversationId: edge.conversationId, seq: side === 'before' ? edge.seq - 1 : edge.seq + 1 };
    };
    const lookups = rounds.flatMap((r) => (['before', 'after'] as const).map((side) => ({ r, side, at: adjacent(r, side) })));
    // One keyed read per position (an `anyOf` over the compound keys walks far more slowly here).
    const messages = await Promise.all(
      lookups.map(({ at }) => (at && at.seq >= 0 ? db.messages.where('[conversationId+seq]').equals([at.conversationId, at.seq]).first() : undefined)),
    );
    const messageIds = [...new Set(messages.flatMap((m) => (m ? [m.id] : [])))];
    const citing = await Promise.all(messageIds.map((id) => db.memories.where('sourceMessageIds').equals(id).toArray()));
    const roundOf = new Map(messageIds.map((id, i) => [id, citing[i]!]));
    const found: Record<'before' | 'after', Map<RetrievedMemory, MemoryRecord>> = { before: new Map(), after: new Map() };
    lookups.forEach(({ r, side }, i) => {
      const message = messages[i];
      if (!message) return;
      const round = (roundOf.get(message.id) ?? []).find(
        (m) =>
          m.kind === 'episodic' &&
          m.id !== r.memory.id &&
          m.namespace === r.memory.namespace &&
          m.sourceConversationId === r.memory.sourceConversationId &&
          (m.validUntil === null || m.validUntil > options.now),
      );
      if (round) found[side].set(r, round);
    });
    return found;
  });
  const shown = new Set<string>();
  const out: RetrievedMemory[] = [];
  for (const r of results) {
    if (shown.has(r.memory.id)) continue; // folded into an earlier unit
    shown.add(r.memory.id);
    const neighbours: RoundNeighbours = {};
    for (const side of ['before', 'after'] as const) {
      const round = found[side].get(r);
      if (round && !shown.has(round.id)) {
        shown.add(round.id);
        neighbours[side] = viewOf(round);
      }
    }
    out.push(neighbours.before || neighbours.after ? { ...r, neighbours } : r);
  }
  return out;
}

/** A row read through Dexie as a view: without its vector (the store's reading hook may have put it back). */
function viewOf(record: MemoryRecord): MemoryView {
  const { embedding: _embedding, pending: _pending, ...view } = record;
  return view;
}
