/**
 * The conversation rounds (episodic memories) that state a fact follow the fact: deleting it in the
 * memory manager offers them for removal (they would bring it back into prompts), "forget …"
 * removes them with the fact and lists them, and a round whose fact was superseded by a
 * contradiction is marked as past in the prompt. The whole core runs (tests/helpers/core-harness.ts);
 * only the chat model is scripted (an instruction-following LLM cannot run here).
 */
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/index';
import type { RecallDB } from '../../src/db/schema';
import { noteTakingEngine, useTestCores } from '../helpers/core-harness';
import { createScriptedEngine } from '../helpers/scripted-engine';

const FACT = 'Diary password is swordfish';
const cores = useTestCores();
let core: Core | null = null;
let db: RecallDB | null = null;

/** Chat turns answer "Noted."; an extraction about the secret (swordfish) extracts the fact, any other nothing. */
const engine = () => noteTakingEngine('swordfish', FACT);

async function planted(c: Core, d: RecallDB) {
  const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
  const turn = await c.chat.send({ conversationId: conversation.id, text: 'The code of my journal is swordfish', requestId: 'r1' });
  await c.jobs.drain();
  const all = await d.memories.toArray();
  return { turn, fact: all.find((m) => m.text === FACT)!, round: all.find((m) => m.kind === 'episodic')! };
}

/** The system prompt of a fresh conversation's turn asking about the journal code. */
async function promptFor(c: Core, d: RecallDB, text: string): Promise<string> {
  const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
  const turn = await c.chat.send({ conversationId: conversation.id, text, requestId: crypto.randomUUID() });
  return (await d.promptTraces.get(turn.assistantMessage.id))!.trace.messages[0]!.content;
}

describe('rounds that state a fact', () => {
  it('deleting a fact returns the rounds stating it; removing them keeps the fact out of later prompts', async () => {
    const chat = engine();
    ({ core, db } = await cores.start({ chat: () => chat }));
    const { fact, round } = await planted(core, db);
    expect(round.sourceMessageIds).toContain(fact.sourceMessageIds[0]);
    const { rounds } = await core.memoryAdmin.delete(fact.id);
    expect(rounds.map((r) => r.id)).toEqual([round.id]);
    // Kept, the round still brings the secret back (this is why the panel offers to remove it)…
    expect(await promptFor(core, db, 'what is the code of my journal?')).toContain('swordfish');
    // …removed (as the panel's "Remove them" does), it is gone from prompts.
    expect((await core.memoryAdmin.delete(round.id)).rounds).toEqual([]);
    await core.jobs.drain();
    expect(await promptFor(core, db, 'what is the code of my journal?')).not.toContain('swordfish');
  });

  it('"forget …" removes the fact and the rounds that state it, and its reply lists them', async () => {
    const chat = engine();
    ({ core, db } = await cores.start({ chat: () => chat }));
    const { turn, fact, round } = await planted(core, db);
    const forget = await core.chat.send({ conversationId: turn.userMessage.conversationId, text: 'forget my diary password', requestId: 'f' });
    // The round says "journal code", not "diary password": it goes because the forgotten fact came from it.
    expect(forget.assistantMessage.command?.affected?.map((a) => a.id).sort()).toEqual([fact.id, round.id].sort());
    expect(forget.assistantMessage.content).toContain('The code of my journal is swordfish');
    expect(forget.assistantMessage.content).toContain(FACT);
    expect((await db.memories.toArray()).filter((m) => m.text.includes('swordfish'))).toEqual([]);
  });

  it('marks a round whose fact was superseded as past in the prompt', async () => {
    const chat = createScriptedEngine({
      fallback: (request) => (request.responseFormat?.type === 'json_object' ? '{"topic": "x", "facts": [], "preferences": []}' : 'Noted.'),
    });
    ({ core, db } = await cores.start({ chat: () => chat }));
    const c = core;
    const conversation = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    const first = await c.chat.send({ conversationId: conversation.id, text: 'I live in Shenzhen', requestId: 'a' });
    await c.jobs.drain();
    // Facts as consolidation stores them; then the contradiction closes the old one (store.invalidate with supersededBy).
    const old = await c.store.add({ namespace: 'default', kind: 'profile', text: 'Lives in Shenzhen', sourceMessageIds: [first.userMessage.id] }, 'test');
    const fresh = await c.store.add({ namespace: 'default', kind: 'profile', text: 'Lives in Hangzhou', sourceMessageIds: ['elsewhere'] }, 'test');
    const movedAt = new Date(2026, 4, 3, 12).getTime(); // 2026-05-03, local time
    await c.store.invalidate(old.memory.id, movedAt, 'test', fresh.memory.id);
    const system = await promptFor(c, db, 'do I live in Shenzhen?');
    const line = system.split('\n').find((l) => l.includes('User: I live in Shenzhen'));
    expect(line).toMatch(/\(past, superseded on 2026-05-03\)$/);
    expect(system).not.toContain('Lives in Shenzhen'); // the closed fact itself is not current
  });
});
