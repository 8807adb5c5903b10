/**
 * The chat transcript as the side panel shows it, with streaming. Pure functions over an
 * immutable list (each returns a new array, or the same array when nothing changed), so the
 * Svelte state can simply be reassigned.
 *
 * A turn goes: `beginTurn` (the user's message and an empty streaming reply appear at once,
 * with temporary ids) → `applyDelta` for each `event.chatDelta` of that request id →
 * `completeTurn` with the stored records from `chat.send` (their content is authoritative and
 * replaces the streamed text), or `failTurn` when `chat.send` rejects. Deltas of unknown
 * request ids, or arriving after the turn ended, are ignored.
 */
import type { MemoryKind } from '../../model/memory';
import type { MessageRecord } from '../../model/records';
import type { ChatTurnResult } from '../../messaging/protocol';
import type { TranslationKey } from '../i18n/instance';

/** Status of a message on screen: the stored statuses plus `streaming`. */
export type UiMessageStatus = 'streaming' | 'complete' | 'aborted' | 'error';

/** One message on screen. */
export interface UiMessage {
  /** Stored message id, or a temporary `pending-…` id until the turn completes. */
  id: string;
  role: 'user' | 'assistant';
  content: string;
  status: UiMessageStatus;
  /** Error text when `status === 'error'`. */
  error?: string;
  /** Engine error code of `error`, when the core stored one (translated on screen). */
  errorCode?: MessageRecord['errorCode'];
  /** The `chat.send` request that produced it (only while this panel ran the turn). */
  requestId?: string;
  /** `true` until the core confirmed the message is stored. */
  pending?: boolean;
  /** A user message sent while another reply streams: waiting in this panel, sent when that reply ends (`queueTurn`). */
  queued?: true;
  createdAt: number;
  modelId?: string;
  /**
   * Explicit memory command handled by the core instead of the model (stored on both messages
   * of the turn; `affected` on the reply), so its card survives a reload and an export/import.
   */
  command?: MessageRecord['command'];
  /** The reply stopped at the answer-token limit. */
  truncated?: boolean;
  /** Token usage the engine reported for this reply. */
  usage?: MessageRecord['usage'];
}

/** Converts a stored message into a screen message (copies `command`, `truncated` and `usage` when stored). */
export function fromRecord(record: MessageRecord): UiMessage {
  const message: UiMessage = { id: record.id, role: record.role, content: record.content, status: record.status, createdAt: record.createdAt };
  if (record.error !== undefined) message.error = record.error;
  if (record.errorCode !== undefined) message.errorCode = record.errorCode;
  if (record.modelId !== undefined) message.modelId = record.modelId;
  if (record.command !== undefined) message.command = record.command;
  if (record.truncated) message.truncated = true;
  if (record.usage !== undefined) message.usage = record.usage;
  return message;
}

/** The "Saved to memory" / "Removed from memory" card under a command reply. */
export interface CommandCard {
  title: TranslationKey;
  items: { id: string; kind: MemoryKind; text: string }[];
}

/**
 * The memory-command card of a message, or `null` when there is none to show: not an assistant
 * reply, not a command, or a command that affected nothing (a "forget" that matched no memory
 * shows just its reply, no empty card).
 */
export function commandCard(message: Pick<UiMessage, 'role' | 'command'>): CommandCard | null {
  const command = message.command;
  if (message.role !== 'assistant' || !command?.affected?.length) return null;
  return { title: command.kind === 'remember' ? 'chat.command.remembered' : 'chat.command.forgot', items: command.affected.slice() };
}

/**
 * The answer-token limit a truncated reply hit, for the "cut off at N tokens" note.
 * @param reservedForAnswer the limit recorded in the reply's prompt trace
 *   (`trace.budget.reservedForAnswer`, the `maxTokens` the engine was given) when the trace is
 *   at hand; it is used first.
 * @returns that limit, else the completion tokens the engine reported (equal to the limit when it
 *   stopped there), else `null` (the note then names no number); `null` for replies that were not
 *   truncated.
 */
export function truncatedAt(message: Pick<UiMessage, 'truncated' | 'usage'>, reservedForAnswer?: number | null): number | null {
  if (!message.truncated) return null;
  const positive = (n: number | null | undefined): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0;
  if (positive(reservedForAnswer)) return reservedForAnswer;
  const tokens = message.usage?.completionTokens;
  return positive(tokens) ? tokens : null;
}

/** Temporary ids of a turn's two messages. */
export const pendingIds = (requestId: string) => ({ user: `pending-user:${requestId}`, assistant: `pending-assistant:${requestId}` });

/**
 * Appends the user's message and an empty streaming assistant reply for request `requestId`
 * (above waiting messages; the request's own waiting message, if any, is replaced).
 */
export function beginTurn(list: readonly UiMessage[], turn: { requestId: string; text: string; now: number }): UiMessage[] {
  const ids = pendingIds(turn.requestId);
  // Its own waiting message goes; other waiting messages stay below the running turn.
  const rest = list.filter((m) => !(m.id === ids.user && m.queued));
  const firstWaiting = rest.findIndex((m) => m.queued);
  const at = firstWaiting < 0 ? rest.length : firstWaiting;
  return [
    ...rest.slice(0, at),
    { id: ids.user, role: 'user', content: turn.text, status: 'complete', pending: true, requestId: turn.requestId, createdAt: turn.now },
    { id: ids.assistant, role: 'assistant', content: '', status: 'streaming', pending: true, requestId: turn.requestId, createdAt: turn.now },
    ...rest.slice(at),
  ];
}

/** Appends a waiting user message of request `requestId` (sent later: `beginTurn` then replaces it). */
export function queueTurn(list: readonly UiMessage[], turn: { requestId: string; text: string; now: number }): UiMessage[] {
  const id = pendingIds(turn.requestId).user;
  return [...list, { id, role: 'user', content: turn.text, status: 'complete', pending: true, queued: true, requestId: turn.requestId, createdAt: turn.now }];
}

/** Removes the waiting user message of `requestId` (`queueTurn`); the same list when there is none. */
export function unqueueTurn(list: readonly UiMessage[], requestId: string): readonly UiMessage[] {
  const id = pendingIds(requestId).user;
  return list.some((m) => m.id === id && m.queued) ? list.filter((m) => !(m.id === id && m.queued)) : list;
}

/**
 * The list before message `id` (a turn being replaced: it and everything after it go), keeping
 * waiting messages (`queued`), which are sent after it. The same list when `id` is not in it.
 */
export function truncateBefore(list: readonly UiMessage[], id: string): readonly UiMessage[] {
  const index = list.findIndex((m) => m.id === id);
  return index < 0 ? list : [...list.slice(0, index), ...list.slice(index).filter((m) => m.queued)];
}

/** Appends `delta` to the streaming reply of `requestId`; ignores deltas of other or finished requests. */
export function applyDelta(list: readonly UiMessage[], event: { requestId: string; delta: string }): readonly UiMessage[] {
  const index = list.findIndex((m) => m.requestId === event.requestId && m.role === 'assistant' && m.status === 'streaming');
  if (index < 0 || event.delta === '') return list;
  const copy = list.slice();
  const target = copy[index]!;
  copy[index] = { ...target, content: target.content + event.delta };
  return copy;
}

/**
 * Follows a reply this panel did not start (another panel's, or one still running when this
 * panel was opened): `content` is the text so far (from `chat.live`) and replaces what is shown
 * when it is longer (pieces that arrived while it was requested are shown already and only the
 * beginning was missing; a shorter snapshot is older than what is shown), `delta` appends (from
 * `event.chatDelta`). When the list has no streaming reply of `requestId` yet, one is appended
 * after the stored messages (its user message is stored already).
 */
export function followTurn(
  list: readonly UiMessage[],
  turn: { requestId: string; now: number } & ({ content: string } | { delta: string }),
): readonly UiMessage[] {
  const index = list.findIndex((m) => m.requestId === turn.requestId && m.role === 'assistant' && m.status === 'streaming');
  if (index < 0) {
    const content = 'content' in turn ? turn.content : turn.delta;
    const placeholder: UiMessage = {
      id: pendingIds(turn.requestId).assistant,
      role: 'assistant',
      content,
      status: 'streaming',
      pending: true,
      requestId: turn.requestId,
      createdAt: turn.now,
    };
    return [...list, placeholder];
  }
  if ('delta' in turn) return applyDelta(list, turn);
  if (turn.content.length <= list[index]!.content.length) return list;
  const copy = list.slice();
  copy[index] = { ...copy[index]!, content: turn.content };
  return copy;
}

/**
 * Replaces the turn's temporary messages with the stored ones. When the turn was a memory
 * command, the stored reply carries it; `result.command` fills in for a core that did not store it.
 */
export function completeTurn(list: readonly UiMessage[], requestId: string, result: ChatTurnResult): UiMessage[] {
  const ids = pendingIds(requestId);
  const user = fromRecord(result.userMessage);
  const assistant = fromRecord(result.assistantMessage);
  if (result.command && !assistant.command) assistant.command = result.command;
  const out: UiMessage[] = [];
  let placed = false;
  for (const message of list) {
    if (message.id === ids.user || message.id === ids.assistant) {
      if (!placed) out.push(user, assistant);
      placed = true;
    } else if (message.id !== user.id && message.id !== assistant.id) {
      out.push(message);
    }
  }
  if (!placed) out.push(user, assistant);
  return out;
}

/**
 * Marks the turn's reply as failed with `error`, keeping whatever text streamed so far. The
 * user's message keeps `pending: true` (not known to be stored) so the caller can offer it again.
 */
export function failTurn(list: readonly UiMessage[], requestId: string, error: string): UiMessage[] {
  const ids = pendingIds(requestId);
  return list.map((m) => (m.id === ids.assistant ? { ...m, status: 'error', error } : m));
}

/** The last assistant message that is stored (not pending, not streaming), for the context view and the budget bar. */
export function lastStoredAssistant(list: readonly UiMessage[]): UiMessage | undefined {
  for (let i = list.length - 1; i >= 0; i -= 1) {
    const m = list[i]!;
    if (m.role === 'assistant' && !m.pending && m.status !== 'streaming') return m;
  }
  return undefined;
}

/**
 * After `chat.send` rejected, decides what to show from the messages the core actually stored
 * (`stored`, from `messages.list`) and the local failed turn.
 *
 * - If the core stored the turn's user message (matched by text, at or after the turn began),
 *   the stored messages are shown; when no stored assistant reply follows it, the local failed
 *   reply (status `error`) stays under it so the error remains visible.
 * - Otherwise the local transcript is kept and `userStored` is `false`: the caller puts the
 *   text back in the input so nothing the user typed is lost.
 */
export function reconcileFailedTurn(
  local: readonly UiMessage[],
  stored: readonly MessageRecord[],
  requestId: string,
): { list: UiMessage[]; userStored: boolean } {
  const ids = pendingIds(requestId);
  const localUser = local.find((m) => m.id === ids.user);
  const localReply = local.find((m) => m.id === ids.assistant);
  if (!localUser) return { list: local.slice(), userStored: false };
  const userIndex = findLastIndex(stored, (m) => m.role === 'user' && m.content === localUser.content && m.createdAt >= localUser.createdAt - 60_000);
  if (userIndex < 0) return { list: local.slice(), userStored: false };
  const list = stored.map(fromRecord);
  const replied = stored.slice(userIndex + 1).some((m) => m.role === 'assistant');
  if (!replied && localReply) list.splice(userIndex + 1, 0, localReply);
  return { list, userStored: true };
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i -= 1) if (predicate(items[i]!)) return i;
  return -1;
}
