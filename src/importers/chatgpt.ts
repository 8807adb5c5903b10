/**
 * ChatGPT data export (`conversations.json`): a list of conversations, each a message tree in
 * `mapping` (node id → `{ parent, children, message }`). The branch the user saw is the path from
 * `current_node` up the `parent` chain (an edited message starts a new branch; the others are
 * left out). Kept: user and assistant messages addressed to everyone (`recipient` "all"), of
 * content type `text` or `multimodal_text`, not hidden (`metadata.is_visually_hidden_from_conversation`).
 * Left out: system and tool messages, tool calls (`recipient` other than "all", e.g. "browser"),
 * thoughts and reasoning recaps. Non-text parts become short placeholders ("[image]", "[audio]",
 * "[file]"). Times: `create_time` is seconds since the epoch (float).
 */
import type { ImportedConversation, ImportedMessage } from '../model/history-import';
import { asObject, finishConversation, placeOf, refuseFile, toEpochMs, type ParseContext } from './shared';

/** `true` when `value` looks like one ChatGPT conversation (has a `mapping` object). */
export function isChatGptConversation(value: unknown): boolean {
  const o = asObject(value);
  return o !== null && asObject(o.mapping) !== null;
}

/** The placeholder of a non-text part of a message. */
function partText(part: unknown): string {
  if (typeof part === 'string') return part;
  const o = asObject(part);
  const type = typeof o?.content_type === 'string' ? o.content_type : '';
  if (type.includes('image')) return '[image]';
  if (type.includes('audio')) return '[audio]';
  if (typeof o?.text === 'string') return o.text;
  return '[file]';
}

/** Node ids of the branch the user saw, root first: `current_node` up its parents; when it is missing, the newest leaf's. */
function currentBranch(mapping: Record<string, unknown>, currentNode: unknown): string[] {
  let node = typeof currentNode === 'string' && mapping[currentNode] ? currentNode : null;
  if (node === null) {
    // Some exports name a node that is not in `mapping`: take the newest node with no child in it.
    let best = -1;
    for (const [id, value] of Object.entries(mapping)) {
      const n = asObject(value);
      const children = Array.isArray(n?.children) ? n.children : [];
      if (children.some((c) => typeof c === 'string' && mapping[c])) continue;
      const at = toEpochMs(asObject(n?.message)?.create_time) ?? 0;
      if (at >= best) [best, node] = [at, id];
    }
  }
  const chain: string[] = [];
  const seen = new Set<string>();
  while (node !== null && !seen.has(node) && mapping[node]) {
    seen.add(node);
    chain.push(node);
    const parent = asObject(mapping[node])?.parent;
    node = typeof parent === 'string' ? parent : null;
  }
  return chain.reverse();
}

/** The message of a mapping node as an imported message, or `null` when it is left out (see module doc). */
function messageOf(node: unknown, fallbackAt: number): ImportedMessage | null {
  const message = asObject(asObject(node)?.message);
  if (!message) return null;
  const role = asObject(message.author)?.role;
  if (role !== 'user' && role !== 'assistant') return null;
  if (asObject(message.metadata)?.is_visually_hidden_from_conversation === true) return null;
  if (typeof message.recipient === 'string' && message.recipient !== 'all') return null;
  const content = asObject(message.content);
  const type = content?.content_type;
  if (type !== 'text' && type !== 'multimodal_text') return null;
  const parts = Array.isArray(content?.parts) ? content.parts : [];
  const text = parts.map(partText).join('\n').trim();
  return text ? { role, text, at: toEpochMs(message.create_time) ?? fallbackAt } : null;
}

/**
 * Reads a ChatGPT export: `value` is the parsed `conversations.json` (a list, or one conversation).
 * @returns the conversations with at least one kept message, in file order; sourceId `chatgpt:<id>`.
 * @throws HistoryImportError `bad_conversation` naming the conversation when one has no id or no usable tree.
 */
export function parseChatGpt(value: unknown, context: ParseContext): ImportedConversation[] {
  const list = Array.isArray(value) ? value : [value];
  const out: ImportedConversation[] = [];
  list.forEach((item, index) => {
    const c = asObject(item);
    const mapping = asObject(c?.mapping);
    const id = c?.conversation_id ?? c?.id;
    if (!c || !mapping || typeof id !== 'string' || !id) {
      throw refuseFile('bad_conversation', context, 'This conversation has no id or no messages.', placeOf(c?.title, index));
    }
    const createdAt = toEpochMs(c.create_time);
    const messages = currentBranch(mapping, c.current_node).flatMap((nodeId) => messageOf(mapping[nodeId], createdAt ?? context.now) ?? []);
    const title = typeof c.title === 'string' ? c.title : '';
    const done = finishConversation({ sourceId: `chatgpt:${id}`, title, createdAt, updatedAt: toEpochMs(c.update_time), messages }, context, index);
    if (done) out.push(done);
  });
  return out;
}
