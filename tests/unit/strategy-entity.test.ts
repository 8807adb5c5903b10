/**
 * Entity memory: notes extracted per exchange in the background and injected when the new
 * message names the entity. The extractor LLM is faked at the ChatEngine boundary with the
 * scripted engine (a real instruction-following model cannot run in unit tests).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createStrategy, ENTITY_JOB, readEntityState, registerShortTermJobs } from '../../src/memory/short-term';
import { createScriptedEngine, type ScriptedEngine } from '../helpers/scripted-engine';
import { createHarness, wordCounter, type Harness } from '../../bench/data/strategy-harness';

let h: Harness;
let engine: ScriptedEngine;
let t = 1_000_000;
afterEach(async () => h?.close());

function setup() {
  t = 1_000_000;
  engine = createScriptedEngine({ contextWindow: 8192 });
  h = createHarness({ counter: wordCounter(), engine, now: () => t });
  registerShortTermJobs(h.jobs, h.deps);
}
const entities = (...list: [string, string][]) => JSON.stringify({ entities: list.map(([name, summary]) => ({ name, summary })) });

describe('entity strategy', () => {
  it('stores notes of the entities named in each exchange and injects those named in the new message', async () => {
    setup();
    const s = createStrategy({ kind: 'entity', k: 1 }, h.deps);
    await h.addExchange('c1', 'My cat Mochi is eleven and lives with me in Hangzhou.', 'Mochi sounds lovely!');
    engine.push(entities(['Mochi', "The user's 11-year-old cat."], ['Hangzhou', 'City where the user lives.']));
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    expect(engine.requests).toHaveLength(0); // background only
    await h.jobs.start();
    await h.jobs.drain();
    await h.addExchange('c1', '我妹妹小雨下个月去北京面试。', '祝小雨面试顺利！');
    engine.push(entities(['小雨', '用户的妹妹，下个月去北京面试。'], ['北京', '小雨面试的城市。']));
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.drain();

    const ctx = await s.load('c1', { userText: 'Is mochi too old for a long train ride?', budgetTokens: 1000 });
    expect(ctx.entities).toEqual([{ name: 'Mochi', summary: "The user's 11-year-old cat." }]);
    // Window k = 1: only the last exchange verbatim.
    expect(ctx.recent.map((m) => m.content)).toEqual(['我妹妹小雨下个月去北京面试。', '祝小雨面试顺利！']);
    // Chinese names match inside a sentence without spaces.
    const zh = await s.load('c1', { userText: '小雨的面试是哪天来着？', budgetTokens: 1000 });
    expect(zh.entities).toEqual([{ name: '小雨', summary: '用户的妹妹，下个月去北京面试。' }]);
    // Latin names must stand as whole words: "Mochiato" does not name Mochi.
    expect((await s.load('c1', { userText: 'A Mochiato please', budgetTokens: 1000 })).entities).toEqual([]);
    // The prompt of the second exchange got no known notes (no stored entity was named in it).
    expect(engine.requests[1]!.messages[1]!.content).toContain('Known notes:\n(none)');
    // English then Chinese: a bilingual conversation, so the prompt keeps Chinese text in Chinese.
    expect(engine.requests[1]!.messages[0]!.content).toContain('keep Chinese text in Chinese');
  });

  it('updates an entity in place and gives the model its known note', async () => {
    setup();
    const s = createStrategy({ kind: 'entity' }, h.deps);
    await h.addExchange('c1', 'Mochi is my cat.', 'Cute!');
    engine.push(entities(['Mochi', "The user's cat."]));
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.start();
    await h.jobs.drain();
    const first = await h.db.entities.toArray();
    await h.addExchange('c1', 'Mochi turned eleven today!', 'Happy birthday, Mochi!');
    engine.push(entities(['mochi', "The user's cat; turned eleven."]));
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.drain();
    expect(engine.requests[1]!.messages[1]!.content).toContain("Known notes:\n- Mochi: The user's cat.");
    const after = await h.db.entities.toArray();
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: first[0]!.id, key: 'mochi', summary: "The user's cat; turned eleven.", lastSeenSeq: 3 });
  });

  it('drops hallucinated names, the speakers themselves, and notes in the wrong language', async () => {
    setup();
    const s = createStrategy({ kind: 'entity' }, h.deps);
    await h.addExchange('c1', 'I met Priya at the Lisbon office.', 'How was it?');
    engine.push(
      entities(
        ['Lily', 'A little girl who loved to play in the park.'], // a story character, not in the exchange
        ['User', 'The person talking.'],
        ['Priya', '用户在里斯本办公室见到的人。'], // English conversation, Chinese note
        ['Lisbon', 'City of the office where the user met Priya.'],
      ),
    );
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.start();
    await h.jobs.drain();
    expect((await h.db.entities.toArray()).map((e) => e.name)).toEqual(['Lisbon']);
    expect(await readEntityState(h.db, 'c1')).toMatchObject({ processedSeq: 1, lastError: null });
  });

  for (const [what, reply] of [
    ["a children's story", 'Once upon a time there was a dog named Max who loved the sun.'],
    ['an empty reply', ''],
    ['truncated JSON', '{"entities": [{"name": "Mochi", "summary": "The user'],
    ['the wrong shape', '{"names": ["Mochi"]}'],
  ] as const) {
    it(`leaves notes and watermark unchanged on ${what}`, async () => {
      setup();
      const s = createStrategy({ kind: 'entity' }, h.deps);
      await h.addExchange('c1', 'Mochi is my cat.', 'Cute!');
      engine.push(entities(['Mochi', "The user's cat."]));
      await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
      await h.jobs.start();
      await h.jobs.drain();
      await h.addExchange('c1', 'Mochi hates the vet.', 'Many cats do.');
      engine.push(reply);
      await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
      await h.jobs.drain();
      expect((await h.db.entities.toArray()).map((e) => [e.name, e.summary])).toEqual([['Mochi', "The user's cat."]]);
      const state = await readEntityState(h.db, 'c1');
      expect(state.processedSeq).toBe(1);
      expect(state.lastError).toBeTruthy();
      expect(await h.db.jobs.where('status').equals('queued').first()).toMatchObject({ type: ENTITY_JOB, attempts: 1 });
      // The next prompt still works with the stored note.
      expect((await s.load('c1', { userText: 'Should Mochi see the vet?', budgetTokens: 1000 })).entities).toEqual([
        { name: 'Mochi', summary: "The user's cat." },
      ]);
      // A good reply heals it, and only the unprocessed exchange is sent.
      engine.push(entities(['Mochi', "The user's cat; hates the vet."]));
      t += 2_000;
      await h.jobs.drain();
      expect((await h.db.entities.toArray())[0]!.summary).toBe("The user's cat; hates the vet.");
      expect(engine.requests.at(-1)!.messages[1]!.content).toContain('User: Mochi hates the vet.');
      expect(engine.requests.at(-1)!.messages[1]!.content).not.toContain('User: Mochi is my cat.');
    });
  }

  it('is idempotent: a re-run after all exchanges are processed calls no model', async () => {
    setup();
    await h.addExchange('c1', 'Mochi is my cat.', 'Cute!');
    engine.push(entities(['Mochi', "The user's cat."]));
    const s = createStrategy({ kind: 'entity' }, h.deps);
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.start();
    await h.jobs.drain();
    await s.onExchange('c1', { userMessageId: 'u', assistantMessageId: 'a' });
    await h.jobs.drain();
    expect(engine.requests).toHaveLength(1);
  });
});
