/**
 * Writing a consolidation plan to the store, one transaction per change with its history entry.
 */
import type { PreparedItem } from '../extraction/items';
import type { ConsolidationContext, ConsolidationPlan, ConsolidationSummary } from './types';

/**
 * Applies a plan to the store: ADD → `store.add`; UPDATE → `store.update` (text, importance =
 * max, source message ids merged, an event's end date follows the new item); DELETE → add the new
 * item (with the action's `text` when it has one: an UPDATE that changed the meaning), then
 * `store.invalidate(old, messageTime, source, newId)`; NOOP → nothing.
 * @throws the store's errors (each change is its own transaction; what was applied before stays,
 *   and re-running the same plan is harmless).
 */
export async function applyConsolidation(plan: ConsolidationPlan, ctx: ConsolidationContext): Promise<ConsolidationSummary> {
  const source = ctx.source ?? (ctx.conversationId ? `conversation:${ctx.conversationId}` : 'extraction');
  const summary: ConsolidationSummary = { added: 0, updated: 0, invalidated: 0, unchanged: 0, memoryIds: [] };
  const add = async (item: PreparedItem) => {
    const { memory, created } = await ctx.store.add(
      {
        namespace: ctx.namespace,
        kind: item.kind,
        text: item.text,
        ...(item.topic ? { topic: item.topic } : {}),
        importance: item.importance,
        validFrom: item.validFrom,
        validUntil: item.validUntil,
        sourceConversationId: ctx.conversationId,
        sourceMessageIds: ctx.sourceMessageIds,
        createdAt: ctx.messageTime,
      },
      source,
    );
    if (created) summary.added += 1;
    else summary.unchanged += 1;
    summary.memoryIds.push(memory.id);
    return memory;
  };
  for (const action of plan.actions) {
    switch (action.event) {
      case 'ADD':
        await add(action.item);
        break;
      case 'UPDATE': {
        const old = await ctx.store.get(action.targetId);
        if (!old || old.current === 0) {
          await add(action.item);
          break;
        }
        const updated = await ctx.store.update(
          action.targetId,
          {
            text: action.text,
            importance: Math.max(old.importance, action.item.importance),
            sourceMessageIds: [...new Set([...old.sourceMessageIds, ...ctx.sourceMessageIds])],
            ...(old.kind === 'event' && action.item.kind === 'event' ? { validUntil: action.item.validUntil } : {}),
          },
          source,
          'UPDATE',
        );
        summary.updated += 1;
        summary.memoryIds.push(updated.id);
        break;
      }
      case 'DELETE': {
        const fresh = await add(action.text === undefined ? action.item : { ...action.item, text: action.text });
        const old = await ctx.store.get(action.targetId);
        if (old && old.current === 1 && old.id !== fresh.id) {
          await ctx.store.invalidate(action.targetId, ctx.messageTime, source, fresh.id);
          summary.invalidated += 1;
        }
        break;
      }
      case 'NOOP':
        summary.unchanged += 1;
        break;
    }
  }
  return summary;
}
