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
 * steps in one transaction (keyed reads and one key range per round, no scan; see
 * `expandNeighbours`). A round whose messages are gone (conversation deleted) has no neighbours.
 */
import type { RecallDB } from '../../../db/schema';
import type { RetrievedMemory, RoundNeighbours } from '../../../model/context';
import type { MemoryRecord, MemoryView, MessageRecord } from '../../../model/records';

/**
 * The memories that cite each message (`db.memories`' multi-entry `sourceMessageIds` index),
 * read at most once per retrieval: neighbour expansion reads the adjacent messages' citers (the
 * neighbour rounds) and the past-round marks (`markPastRounds`) read every shown round's
 * messages' citers, which include those — so one retrieval shares one `CitingReads`. A read made
 * inside a Dexie transaction runs in it; a cached read is the value it gave then.
 */
export class CitingReads {
  private readonly reads = new Map<string, Promise<MemoryRecord[]>>();
  constructor(private readonly db: RecallDB) {}
  /**
   * The memories citing `messageId` (one keyed index read, the first time only).
   * @throws what Dexie throws when the table cannot be read.
   */
  of(messageId: string): Promise<MemoryRecord[]> {
    let read = this.reads.get(messageId);
    if (!read) {
      read = this.db.memories.where('sourceMessageIds').equals(messageId).toArray();
      this.reads.set(messageId, read);
      read.catch(() => undefined); // awaited by whoever asked; a read asked ahead must not be an unhandled rejection
    }
    return read;
  }
  /** Whether the citers of `messageId` were asked for already (read or being read). */
  has(messageId: string): boolean {
    return this.reads.has(messageId);
  }
  /** Starts the reads of `messageIds` without waiting (asked ahead, inside the caller's transaction). */
  prefetch(messageIds: Iterable<string>): void {
    for (const id of messageIds) void this.of(id);
  }
}

/** Options of `expandNeighbours`. */
export interface NeighbourOptions {
  /** Time of the query (ms epoch): a neighbour whose validity ended by then is not brought. */
  now: number;
  /**
   * The retrieval's shared citing reads (see `CitingReads`; default: a fresh one). The hits'
   * own messages' citers are asked for ahead, in the same transaction, for `markPastRounds`.
   */
  citing?: CitingReads;
}

/**
 * Attaches to each episodic round of `results` its adjacent rounds (same conversation and
 * namespace, episodic, valid at `options.now`) and makes each round appear once: results are
 * walked best first; a round already shown — as an earlier hit or as an earlier hit's neighbour —
 * is neither attached again nor kept as its own entry (a later hit that is an earlier hit's
 * neighbour is folded into that unit, so a unit is never two entries). Other memories pass
 * through unchanged. Returns new objects for the rounds that gained neighbours, the same objects
 * otherwise, in the same order (minus the folded ones).
 *
 * Reads, in one read-only transaction, for R rounds among the results: one `bulkGet` of their
 * first and last messages (with their citers asked ahead, see `NeighbourOptions.citing`); one
 * `[conversationId+seq]` range per round from the message before its first to the message after
 * its last (both neighbours' messages in one request); then the citers of those adjacent messages.
 * @throws what Dexie throws when the tables cannot be read.
 */
export async function expandNeighbours(db: RecallDB, results: readonly RetrievedMemory[], options: NeighbourOptions): Promise<RetrievedMemory[]> {
  const rounds = results.filter((r) => r.memory.kind === 'episodic' && r.memory.sourceConversationId !== null && r.memory.sourceMessageIds.length > 0);
  if (rounds.length === 0) return [...results];
  const citing = options.citing ?? new CitingReads(db);
  const found = await db.transaction('r', db.messages, db.memories, async () => {
    citing.prefetch(new Set(rounds.flatMap((r) => r.memory.sourceMessageIds)));
    const edgeIds = [...new Set(rounds.flatMap((r) => [r.memory.sourceMessageIds[0]!, r.memory.sourceMessageIds[r.memory.sourceMessageIds.length - 1]!]))];
    const edges = new Map((await db.messages.bulkGet(edgeIds)).flatMap((m): [string, MessageRecord][] => (m ? [[m.id, m]] : [])));
    // The position (conversation, seq) right before each round's first message and right after its last.
    const adjacent = (r: RetrievedMemory, side: 'before' | 'after') => {
      const ids = r.memory.sourceMessageIds;
      const edge = edges.get(side === 'before' ? ids[0]! : ids[ids.length - 1]!);
      if (!edge || edge.conversationId !== r.memory.sourceConversationId) return null;
      const seq = side === 'before' ? edge.seq - 1 : edge.seq + 1;
      return seq >= 0 ? { conversationId: edge.conversationId, seq } : null;
    };
    const lookups = rounds.flatMap((r) => (['before', 'after'] as const).map((side) => ({ r, side, at: adjacent(r, side) })));
    // One request per round: the `[conversationId+seq]` range from its `before` to its `after`
    // position (a round's own messages lie between); a round with one side only reads that key.
    const messages = await Promise.all(
      rounds.map(async (r, i) => {
        const before = lookups[2 * i]!.at;
        const after = lookups[2 * i + 1]!.at;
        const from = before ?? after;
        if (!from) return [undefined, undefined] as const;
        const to = after ?? before!;
        const range = await db.messages
          .where('[conversationId+seq]')
          .between([from.conversationId, from.seq], [to.conversationId, to.seq], true, true)
          .toArray();
        const at = (pos: { seq: number } | null) => (pos ? range.find((m) => m.seq === pos.seq) : undefined);
        return [at(before), at(after)] as const;
      }),
    );
    const adjacentMessages = lookups.map((_, i) => messages[i >> 1]![i & 1]);
    const messageIds = [...new Set(adjacentMessages.flatMap((m) => (m ? [m.id] : [])))];
    const citers = await Promise.all(messageIds.map((id) => citing.of(id)));
    const roundOf = new Map(messageIds.map((id, i) => [id, citers[i]!]));
    const found: Record<'before' | 'after', Map<RetrievedMemory, MemoryRecord>> = { before: new Map(), after: new Map() };
    lookups.forEach(({ r, side }, i) => {
      const message = adjacentMessages[i];
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
