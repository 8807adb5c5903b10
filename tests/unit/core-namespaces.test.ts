/**
 * Profiles (namespaces) never read each other's memories: a secret planted in `default` — by a
 * chat turn (episodic round + extracted fact), by "remember …" and by the memory manager — must
 * not appear in any prompt section, search (lexical, vector, hybrid), retrieval or memory list of
 * the `work` namespace, whatever its short-term strategy. The whole core runs (tests/helpers/
 * core-harness.ts); only the chat model is scripted (an instruction-following LLM cannot run here).
 */
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/index';
import type { RecallDB } from '../../src/db/schema';
import type { StrategyConfig } from '../../src/model/strategies';
import { noteTakingEngine, useTestCores } from '../helpers/core-harness';

const SECRET = 'swordfish';
const cores = useTestCores();
let core: Core | null = null;
let db: RecallDB | null = null;

/** Chat turns answer "Noted."; an extraction about the secret (SECRET) extracts the fact, any other nothing. */
const engine = () => noteTakingEngine(SECRET, `Diary password is ${SECRET}`);

const STRATEGIES: StrategyConfig[] = [{ kind: 'vector', k: 2, topK: 4 }, { kind: 'summary-buffer', maxTokens: 2000 }, { kind: 'full-buffer' }];

describe('namespaces (profiles) are isolated', () => {
  it('a secret of `default` reaches no prompt, search, retrieval or list of `work`, and does reach `default`', async () => {
    const chat = engine();
    ({ core, db } = await cores.start({ chat: () => chat }));
    const c = core;
    const home = await c.conversations.create({ strategy: { kind: 'full-buffer' } });
    expect(home.namespace).toBe('default');
    await c.chat.send({ conversationId: home.id, text: `My diary password is ${SECRET}`, requestId: 'h1' });
    await c.chat.send({ conversationId: home.id, text: `remember that the safe word is ${SECRET}`, requestId: 'h2' });
    await c.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: `Locker password ${SECRET}` });
    await c.jobs.drain();
    const planted = (await db.memories.toArray()).filter((m) => m.text.includes(SECRET));
    // The episodic round, the extracted fact, the remembered fact and the manual one, all in `default`, all embedded.
    expect(planted.map((m) => m.kind).sort()).toEqual(['episodic', 'fact', 'fact', 'fact']);
    expect(planted.every((m) => m.namespace === 'default' && m.embedding !== null)).toBe(true);

    const query = `what is my diary password ${SECRET}?`;
    for (const strategy of STRATEGIES) {
      const work = await c.conversations.create({ strategy, namespace: 'work' });
      const before = chat.requests.length;
      const turn = await c.chat.send({ conversationId: work.id, text: 'what is my diary password?', requestId: `w-${strategy.kind}` });
      const trace = (await db.promptTraces.get(turn.assistantMessage.id))!.trace;
      expect(JSON.stringify(trace), strategy.kind).not.toContain(SECRET);
      // Nor did any model call made for this turn see it.
      expect(JSON.stringify(chat.requests.slice(before)), strategy.kind).not.toContain(SECRET);
      await c.jobs.drain();
    }
    for (const mode of ['lexical', 'vector', 'hybrid'] as const) {
      const hits = await c.store.search({ text: query, namespace: 'work', k: 50, includeInvalid: true }, { mode });
      expect(hits.map((h) => h.memory.text).join('\n'), mode).not.toContain(SECRET);
    }
    const vector = (await c.store.embed(query))!;
    expect((await c.store.nearest(vector, { namespace: 'work', k: 50, includeInvalid: true })).map((h) => h.memory.text).join('\n')).not.toContain(SECRET);
    expect(JSON.stringify(await c.longTerm.retrieve({ text: query, namespace: 'work', k: 50 }))).not.toContain(SECRET);
    expect(JSON.stringify(await c.memoryAdmin.list({ namespace: 'work', includeInvalid: true }))).not.toContain(SECRET);
    expect(await c.memoryAdmin.list({ namespace: 'work', search: SECRET, includeInvalid: true })).toEqual([]);

    // The same questions in `default` do find it (so the checks above could fail).
    const vectorHome = await c.conversations.create({ strategy: { kind: 'vector', k: 1, topK: 4 } });
    const turn = await c.chat.send({ conversationId: vectorHome.id, text: 'what is my diary password?', requestId: 'h3' });
    const trace = (await db.promptTraces.get(turn.assistantMessage.id))!.trace;
    expect(trace.messages[0]!.content).toContain(SECRET);
    for (const mode of ['lexical', 'vector', 'hybrid'] as const) {
      const hits = await c.store.search({ text: query, namespace: 'default', k: 50 }, { mode });
      expect(hits.map((h) => h.memory.text).join('\n'), mode).toContain(SECRET);
    }
    expect((await c.memoryAdmin.list({ namespace: 'default', search: SECRET })).length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a memory list without a namespace instead of defaulting to one', async () => {
    ({ core, db } = await cores.start());
    await expect(core.memoryAdmin.list({} as never)).rejects.toThrow('memory.list needs a namespace');
  });
});
