/**
 * Long-term memory vocabulary: the memory kinds (one list, with the subsets derived from it),
 * the history events, the namespace a conversation gets by default, the text cap, and the shapes
 * Leaf module: imports nothing.
 */
/**
 * Kinds of a fact, in the order the memory manager lists them: what extraction produces, what the
 * user may add by hand, and what consolidation and maintenance compare and merge.
 */
export const FACT_KINDS = ['profile', 'preference', 'fact', 'event', 'instruction'] as const;

/** Kind of a fact (see `FACT_KINDS`). */
export type FactKind = (typeof FACT_KINDS)[number];

/**
 * Every kind of long-term memory item, in the order the memory manager lists them: the facts,
 * then `episodic` (a stored exchange, user + reply) and `summary` (a conversation summary).
 */
export const MEMORY_KINDS = [...FACT_KINDS, 'episodic', 'summary'] as const;

/** Kind of a long-term memory item (see `MEMORY_KINDS`). */
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** Events recorded in the memory history (`MemoryHistoryRecord.event`). */
export const MEMORY_EVENTS = ['ADD', 'UPDATE', 'DELETE', 'INVALIDATE', 'MERGE', 'EXPIRE', 'FORGET', 'PIN', 'UNPIN', 'IMPORT'] as const;

/** Event recorded in the memory history. */
export type MemoryEvent = (typeof MEMORY_EVENTS)[number];

/** Explicit memory commands, answered without the model ("remember …" / "记住…", "forget …" / "忘记…"). */
export const MEMORY_COMMANDS = ['remember', 'forget'] as const;

/** An explicit memory command (see `MEMORY_COMMANDS`). */
export type MemoryCommand = (typeof MEMORY_COMMANDS)[number];

/** A memory a command stored or removed, as the turn reports it. */
export interface AffectedMemory {
  id: string;
  kind: MemoryKind;
  text: string;
}

/**
 * The namespace of a conversation created without one (the only one the side panel offers today).
 * Use it only where a conversation or a memory is created; every query takes the namespace of the
 * conversation (or of the request) explicitly, so no profile reads another's memories.
 */
export const DEFAULT_NAMESPACE = 'default';

/**
 * Longest memory text (characters, UTF-16 code units as `String.length` counts them) the store
 * accepts on add and update. A memory is a fact or one exchange, not a document: a longer text
 * (a pasted 1 MB "remember …", an edit) is refused with `MemoryTextTooLongError`, and an episodic
 * round is cut to fit (`episodicText`), so no stored text can make every later turn slow.
 */
export const MAX_MEMORY_TEXT_CHARS = 8_000;

/**
 * Memories in the memory manager's first page, and added by each "Show more" (the panel asks the
 * core for one more, to know whether more match). At 10k memories a 200-row page was two thirds of
 * the first search's time (reading the rows, sending them to the panel).
 */
export const MEMORY_LIST_PAGE_SIZE = 50;
