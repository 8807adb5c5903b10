/**
 * Review before saving and Recently learned (issue 14 item 2), through the whole core and its
 * request handlers (tests/helpers/core-harness.ts). Only the chat model is scripted (an
 * instruction-following LLM cannot run here): chat turns answer "Noted.", extraction of a message
 * naming the trigger word lists the fact.
 */
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/index';
import { CORE_HANDLERS } from '../../src/core/handlers';
import type { RecallDB } from '../../src/db/schema';
import { DEFAULT_NAMESPACE } from '../../src/model/memory';
import { noteTakingEngine, useTestCores } from '../helpers/core-harness';
import { memoryHash } from '../../src/memory/long-term/text';

const cores = useTestCores();
const NS = DEFAULT_NAMESPACE;
const FACT = 'Keeps bees in the garden';

/** Calls a request handler of the core as the panel would (sender checks are the registration's). */
function call<K extends keyof typeof CORE_HANDLERS>(core: Core, type: K, data: Parameters<(typeof CORE_HANDLERS)[K]>[1]) {
  return (CORE_HANDLERS[type] as (c: Core, d: typeof data, ctx: { startedAt: number }) => ReturnType<(typeof CORE_HANDLERS)[K]>)(core, data, { startedAt: 0 });
}

async function say(core: Core, text: string): Promise<void> {
  const conversation = await core.conversations.create({ strategy: { kind: 'full-buffer' } });
  await core.chat.send({ conversationId: conversation.id, text, requestId: crypto.randomUUID() });
  await core.jobs.drain();
}

const facts = async (db: RecallDB) => (await db.memories.toArray()).filter((m) => m.kind !== 'episodic').map((m) => m.text);

describe('review before saving', () => {
  it('is off by default: extraction saves at once, and Recently learned undoes it without a tombstone', async () => {
    const { core, db } = await cores.start({ chat: () => noteTakingEngine('bees', FACT) });
    expect(await call(core, 'review.status', { namespace: NS })).toEqual({ enabled: false, pending: 0 });
    await say(core, 'I keep bees in my garden.');
    expect(await facts(db)).toEqual([FACT]);
    const recent = await call(core, 'review.recent', { namespace: NS });
    expect(recent.map((r) => r.memory.text)).toEqual([FACT]);
    await call(core, 'review.undo', { id: recent[0]!.memory.id });
    expect(await facts(db)).toEqual([]);
    expect(await db.tombstones.count()).toBe(0);
    const history = await db.memoryHistory.where('memoryId').equals(recent[0]!.memory.id).toArray();
    expect(history.map((h) => h.event)).toEqual(['ADD', 'DELETE']);
    expect(await call(core, 'review.recent', { namespace: NS })).toEqual([]);
  });

  it('with review on, an extracted fact waits in Suggested until accepted, then it is stored and retrieved', async () => {
    const { core, db } = await cores.start({ chat: () => noteTakingEngine('bees', FACT) });
    expect(await call(core, 'review.set', { namespace: NS, enabled: true })).toEqual({ enabled: true, pending: 0 });
    await say(core, 'I keep bees in my garden.');
    expect(await facts(db)).toEqual([]);
    expect(await call(core, 'review.status', { namespace: NS })).toEqual({ enabled: true, pending: 1 });
    const [suggestion] = await call(core, 'review.suggestions', { namespace: NS });
    expect(suggestion).toMatchObject({ text: FACT, kind: 'fact', status: 'pending' });
    // Another namespace has its own switch and list.
    expect(await call(core, 'review.status', { namespace: 'work' })).toEqual({ enabled: false, pending: 0 });

    const memory = await call(core, 'review.accept', { id: suggestion!.id, text: 'Keeps two bee hives in the garden' });
    expect(memory).toMatchObject({ text: 'Keeps two bee hives in the garden', kind: 'fact', sourceMessageIds: suggestion!.sourceMessageIds });
    expect(await call(core, 'review.status', { namespace: NS })).toEqual({ enabled: true, pending: 0 });
    const found = await core.longTerm.retrieve({ namespace: NS, text: 'bee hives', k: 5 });
    expect(found.map((r) => r.memory.text)).toContain('Keeps two bee hives in the garden');
  });

  it('never suggests a rejected text again, and "remember …" skips review', async () => {
    const { core, db } = await cores.start({ chat: () => noteTakingEngine('bees', FACT) });
    await call(core, 'review.set', { namespace: NS, enabled: true });
    await say(core, 'I keep bees in my garden.');
    const [suggestion] = await call(core, 'review.suggestions', { namespace: NS });
    await call(core, 'review.reject', { id: suggestion!.id });
    const rejected = await db.suggestions.get(suggestion!.id);
    expect(rejected).toMatchObject({ status: 'rejected', text: '', hash: memoryHash(FACT) });
    await expect(call(core, 'review.accept', { id: suggestion!.id })).rejects.toMatchObject({ code: 'not_found' });

    await say(core, 'Did I say I keep bees in the garden?');
    expect(await call(core, 'review.suggestions', { namespace: NS })).toEqual([]);
    expect(await facts(db)).toEqual([]);

    await say(core, 'Remember that I play the cello');
    expect(await facts(db)).toEqual(['I play the cello']);
    expect(await call(core, 'review.suggestions', { namespace: NS })).toEqual([]);
  });
});
