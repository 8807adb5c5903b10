/**
 * Consolidation on the real store (Dexie + MiniSearch + Voy, hashed n-gram TEST embedder). The
 * scripted engine replaces the one boundary that cannot run here — an instruction-following LLM
 * making ADD/UPDATE/DELETE/NONE decisions; everything else runs for real.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecallDB } from '../../src/db/schema';
import type { ChatRequest } from '../../src/engines/types';
import {
  applyConsolidation,
  consolidate,
  parseDecision,
  planConsolidation,
  updateChangesMeaning,
  updateTextProblem,
  type ConsolidationContext,
} from '../../src/memory/long-term/consolidation';
import { prepareItem, type RawItem } from '../../src/memory/long-term/extraction/items';
import type { LongTermStore } from '../../src/memory/long-term/store';
import { createScriptedEngine, type ScriptedEngine } from '../helpers/scripted-engine';
import { openTestStore } from '../helpers/ltm-test-store';
import { withCreationTexts } from '../../src/db/history';

const T1 = new Date(2024, 2, 1, 10).getTime();
const T2 = new Date(2024, 4, 10, 14, 30).getTime();
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-/;

let db: RecallDB;
afterEach(async () => db?.delete());

async function setup() {
  const opened = await openTestStore({ now: T2, name: 'consolidation' });
  db = opened.db;
  return opened.store;
}

const items = (...raw: RawItem[]) => raw.map((r) => prepareItem(r, T2));

function context(store: LongTermStore, engine: ScriptedEngine | null, extra: Partial<ConsolidationContext> = {}): ConsolidationContext {
  return { store, namespace: 'default', engine, conversationId: 'c2', sourceMessageIds: ['u2'], messageTime: T2, ...extra };
}

async function seed(store: LongTermStore, text: string, kind: RawItem['kind'] | 'episodic' = 'profile', extra: { pinned?: boolean } = {}) {
  const { memory } = await store.add(
    { namespace: 'default', kind, text, createdAt: T1, validFrom: T1, sourceConversationId: 'c1', sourceMessageIds: ['u1'], ...extra },
    'conversation:c1',
  );
  return memory;
}

describe('consolidation without the LLM', () => {
  it('adds an item that has no related memory, with its source ids and times, and never calls the model', async () => {
    const store = await setup();
    await seed(store, 'I play the cello');
    const engine = createScriptedEngine(); // throws if called
    const out = await consolidate(items({ kind: 'preference', text: '我喜欢喝乌龙茶' }), context(store, engine));
    expect(out.actions.map((a) => [a.event, a.reason])).toEqual([['ADD', 'no-candidates']]);
    expect(out.summary).toMatchObject({ added: 1, updated: 0, invalidated: 0, unchanged: 0 });
    expect(engine.requests).toHaveLength(0);
    const added = await store.get(out.summary.memoryIds[0]!);
    expect(added).toMatchObject({
      kind: 'preference',
      text: '我喜欢喝乌龙茶',
      sourceConversationId: 'c2',
      sourceMessageIds: ['u2'],
      createdAt: T2,
      importance: 0.7,
      current: 1,
    });
    const history = await db.memoryHistory.where('memoryId').equals(added!.id).toArray();
    expect(history.map((h) => [h.event, h.source])).toEqual([['ADD', 'conversation:c2']]);
  });

  it('catches exact and near duplicates (and repeats inside one batch) without the model', async () => {
    const store = await setup();
    const tea = await seed(store, '我喜欢喝乌龙茶', 'preference');
    const city = await seed(store, 'Lives in Lisbon');
    const engine = createScriptedEngine();
    const before = await db.memoryHistory.count();
    const plan = await planConsolidation(
      items(
        { kind: 'profile', text: 'lives in LISBON.' },
        { kind: 'preference', text: '喜欢喝乌龙茶' },
        { kind: 'fact', text: 'Owns a red bike' },
        { kind: 'fact', text: 'owns a red bike!' },
      ),
      context(store, engine),
    );
    expect(plan.actions.map((a) => [a.event, a.reason, 'targetId' in a ? a.targetId : undefined])).toEqual([
      ['NOOP', 'exact-duplicate', city.id],
      ['NOOP', 'near-duplicate', tea.id],
      ['ADD', 'no-candidates', undefined],
      ['NOOP', 'batch-duplicate', undefined],
    ]);
    expect(engine.requests).toHaveLength(0);
    // Planning writes nothing.
    expect(await db.memoryHistory.count()).toBe(before);
    expect(await db.memories.count()).toBe(2);
  });

  it('never compares with episodic rounds or summaries', async () => {
    const store = await setup();
    await seed(store, 'User: I live in Shenzhen.\nAssistant: Nice city!', 'episodic');
    const out = await consolidate(items({ kind: 'profile', text: 'I live in Shenzhen' }), context(store, createScriptedEngine()));
    expect(out.actions.map((a) => a.event)).toEqual(['ADD']);
  });

  it('adds related items when no model is loaded', async () => {
    const store = await setup();
    await seed(store, 'I live in Shenzhen');
    const out = await consolidate(items({ kind: 'profile', text: 'I moved from Shenzhen to Hangzhou' }), context(store, null));
    expect(out.actions.map((a) => [a.event, a.reason])).toEqual([['ADD', 'no-candidates']]);
    expect(out.summary.invalidated).toBe(0);
  });
});

describe('consolidation with LLM decisions (scripted engine)', () => {
  it('English: a contradiction closes the old memory instead of erasing it', async () => {
    const store = await setup();
    const shenzhen = await seed(store, 'I live in Shenzhen');
    await seed(store, 'I work as a nurse');
    const engine = createScriptedEngine();
    engine.push((request: ChatRequest) => {
      const prompt = request.messages[1]!.content;
      const id = /(\d+): I live in Shenzhen/.exec(prompt)![1];
      return `{"event": "DELETE", "id": "${id}"}`;
    });
    const out = await consolidate(items({ kind: 'profile', text: 'I moved from Shenzhen to Hangzhou' }), context(store, engine));
    expect(out.summary).toMatchObject({ added: 1, invalidated: 1 });
    const request = engine.requests[0]!;
    expect(request.responseFormat?.type).toBe('json_object');
    expect(request.messages[1]!.content).toMatch(/^EXISTING:\n0: /);
    expect(request.messages[1]!.content).toContain('NEW: I moved from Shenzhen to Hangzhou');
    expect(JSON.stringify(request.messages)).not.toMatch(UUID);

    const newId = out.summary.memoryIds[0]!;
    expect(await store.get(shenzhen.id)).toMatchObject({ text: 'I live in Shenzhen', current: 0, validUntil: T2, supersededBy: newId });
    expect(await store.get(newId)).toMatchObject({ text: 'I moved from Shenzhen to Hangzhou', current: 1 });
    const history = await db.memoryHistory.where('memoryId').equals(shenzhen.id).toArray();
    expect(history.map((h) => [h.event, h.source])).toEqual([
      ['ADD', 'conversation:c1'],
      ['INVALIDATE', 'conversation:c2'],
    ]);
    // Current memories only by default; the past one stays queryable.
    const now = await store.search({ text: 'where do I live Shenzhen Hangzhou', namespace: 'default', now: T2 });
    expect(now.map((r) => r.memory.id)).toContain(newId);
    expect(now.map((r) => r.memory.id)).not.toContain(shenzhen.id);
    const all = await store.search({ text: 'Shenzhen', namespace: 'default', now: T2, includeInvalid: true });
    expect(all.map((r) => r.memory.id)).toEqual(expect.arrayContaining([shenzhen.id, newId]));
  });

  it('Chinese: 我从深圳搬到了杭州 makes Hangzhou current and Shenzhen past, in Chinese', async () => {
    const store = await setup();
    const shenzhen = await seed(store, '我住在深圳');
    const engine = createScriptedEngine();
    engine.push('{"event": "DELETE", "id": "0"}');
    const out = await consolidate(items({ kind: 'profile', text: '上个月从深圳搬到了杭州' }), context(store, engine));
    expect(engine.requests[0]!.messages[1]!.content).toBe('EXISTING:\n0: 我住在深圳\nNEW: 上个月（2024-04）从深圳搬到了杭州\nJSON:');
    const fresh = await store.get(out.summary.memoryIds[0]!);
    expect(fresh).toMatchObject({ text: '上个月（2024-04）从深圳搬到了杭州', current: 1, validFrom: new Date(2024, 3, 1).getTime() });
    expect(await store.get(shenzhen.id)).toMatchObject({ current: 0, supersededBy: fresh!.id });
  });

  it('UPDATE keeps the id and replaces the text with the merged one; history has old and new', async () => {
    const store = await setup();
    const tea = await seed(store, '喜欢喝茶', 'preference');
    const engine = createScriptedEngine();
    engine.push('{"event": "UPDATE", "id": "0", "text": "喜欢喝茶，尤其是乌龙茶"}');
    const out = await consolidate(items({ kind: 'preference', text: '最喜欢的茶是乌龙茶' }), context(store, engine));
    expect(out.summary).toMatchObject({ added: 0, updated: 1, memoryIds: [tea.id] });
    expect(await store.get(tea.id)).toMatchObject({ text: '喜欢喝茶，尤其是乌龙茶', sourceMessageIds: ['u1', 'u2'], importance: 0.7 });
    const last = (await db.memoryHistory.where('memoryId').equals(tea.id).toArray()).at(-1);
    expect(last).toMatchObject({ event: 'UPDATE', oldText: '喜欢喝茶', newText: '喜欢喝茶，尤其是乌龙茶', source: 'conversation:c2' });
  });

  it('NONE changes nothing', async () => {
    const store = await setup();
    await seed(store, 'I live in Shenzhen');
    const engine = createScriptedEngine();
    engine.push('{"event": "NONE", "id": "0"}');
    const before = await db.memoryHistory.count();
    const out = await consolidate(items({ kind: 'profile', text: 'I am based in Shenzhen' }), context(store, engine));
    expect(out.summary).toMatchObject({ added: 0, updated: 0, invalidated: 0, unchanged: 1 });
    expect(await db.memoryHistory.count()).toBe(before);
  });

  it('a pinned memory is never rewritten by the model', async () => {
    const store = await setup();
    const pinned = await seed(store, 'I live in Shenzhen', 'profile', { pinned: true });
    const engine = createScriptedEngine();
    engine.push('{"event": "UPDATE", "id": "0", "text": "I live in Shenzhen, Nanshan district"}');
    const out = await consolidate(items({ kind: 'profile', text: 'My flat in Shenzhen is in Nanshan' }), context(store, engine));
    expect(out.actions.map((a) => [a.event, a.reason])).toEqual([['ADD', 'pinned-target']]);
    expect((await store.get(pinned.id))!.text).toBe('I live in Shenzhen');
  });

  it('an unusable decision (a story, twice) falls back to ADD and is reported; nothing is closed', async () => {
    const store = await setup();
    const shenzhen = await seed(store, 'I live in Shenzhen');
    const engine = createScriptedEngine();
    engine.push('Once upon a time, there was a little boy named Tom.', 'The end.');
    const out = await consolidate(items({ kind: 'profile', text: 'I moved from Shenzhen to Hangzhou' }), context(store, engine));
    expect(out.actions.map((a) => [a.event, a.reason])).toEqual([['ADD', 'llm-failed']]);
    expect(out.llmCalls).toBe(2);
    expect(out.llmFailures[0]).toMatch(/unusable after 2 attempts: The reply contained no JSON object/);
    expect(await store.get(shenzhen.id)).toMatchObject({ current: 1, validUntil: null });
  });

  it('a bad id or a translated merge gets one corrective retry', async () => {
    const store = await setup();
    const tea = await seed(store, '喜欢喝茶', 'preference');
    const engine = createScriptedEngine();
    engine.push('{"event": "UPDATE", "id": "7", "text": "喜欢乌龙茶"}', '{"event": "UPDATE", "id": 0, "text": "喜欢喝茶和乌龙茶"}');
    await consolidate(items({ kind: 'preference', text: '也喜欢乌龙茶' }), context(store, engine));
    expect(engine.requests[1]!.messages[3]!.content).toContain('"id" must be one of the EXISTING ids 0 to 0 (got 7).');
    expect((await store.get(tea.id))!.text).toBe('喜欢喝茶和乌龙茶');

    expect(parseDecision('{"event": "UPDATE", "id": "0", "text": "Likes oolong tea"}', 1, '也喜欢乌龙茶', ['喜欢喝茶'])).toEqual({
      ok: false,
      message: 'The merged "text" must stay in Chinese (中文); never translate.',
    });
    expect(parseDecision('{"event": "noop"}', 2, 'x', ['a', 'b'])).toEqual({ ok: true, decision: { event: 'NONE', index: null } });
    expect(parseDecision('{"event": "DELETE"}', 2, 'x', ['a', 'b'])).toMatchObject({ ok: false });
  });

  it('an abort during a decision writes nothing', async () => {
    const store = await setup();
    await seed(store, 'I live in Shenzhen');
    const controller = new AbortController();
    const engine = createScriptedEngine();
    engine.push(() => {
      controller.abort();
      return '';
    });
    const before = { memories: await db.memories.count(), history: await db.memoryHistory.count() };
    await expect(
      consolidate(
        items({ kind: 'fact', text: 'Tea shop near Shenzhen station' }, { kind: 'fact', text: 'Owns a kayak' }),
        context(store, engine, { signal: controller.signal }),
      ),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect({ memories: await db.memories.count(), history: await db.memoryHistory.count() }).toEqual(before);
  });

  it('re-applying the same plan after a crash adds no duplicates', async () => {
    const store = await setup();
    await seed(store, 'I live in Shenzhen');
    const engine = createScriptedEngine();
    engine.push('{"event": "DELETE", "id": "0"}');
    const ctx = context(store, engine);
    const plan = await planConsolidation(items({ kind: 'profile', text: 'I moved from Shenzhen to Hangzhou' }, { kind: 'fact', text: 'Owns a kayak' }), ctx);
    await applyConsolidation(plan, ctx);
    const after = await db.memories.count();
    const second = await applyConsolidation(plan, ctx);
    expect(second).toMatchObject({ added: 0, invalidated: 0 });
    expect(await db.memories.count()).toBe(after);
  });
});

describe('same-slot candidates (a contradiction that shares no word)', () => {
  /** Replies `{"event": <event>, "id": <id of the line holding `needle`>}` (+ text), read from the prompt. */
  const replyFor = (needle: string, event: string, text?: string) => (request: ChatRequest) => {
    const line = request.messages[1]!.content.split('\n').find((l) => l.includes(needle));
    if (!line) return '{"event": "ADD"}';
    return JSON.stringify({ event, id: line.split(':')[0], ...(text ? { text } : {}) });
  };

  it('English: "Moved to Hangzhou" is compared with "Lives in Shenzhen", and an INVALIDATE reply closes it', async () => {
    const store = await setup();
    const shenzhen = await seed(store, 'Lives in Shenzhen');
    await seed(store, 'Works as a nurse');
    await seed(store, 'My sister Ana lives in Lisbon');
    const engine = createScriptedEngine();
    engine.push(replyFor('Lives in Shenzhen', 'INVALIDATE'));
    const out = await consolidate(items({ kind: 'profile', text: 'Moved to Hangzhou' }), context(store, engine));
    // The old memory is shown to the model; other slots and other subjects are not.
    expect(engine.requests[0]!.messages[1]!.content).toBe('EXISTING:\n0: Lives in Shenzhen\nNEW: Moved to Hangzhou\nJSON:');
    expect(out.actions.map((a) => [a.event, a.reason])).toEqual([['DELETE', 'llm']]);
    const newId = out.summary.memoryIds[0]!;
    expect(await store.get(shenzhen.id)).toMatchObject({ current: 0, validUntil: T2, supersededBy: newId });
    expect(await store.get(newId)).toMatchObject({ text: 'Moved to Hangzhou', current: 1 });
  });

  it('Chinese: 搬到了杭州 is compared with 我住在深圳, and an UPDATE reply keeps 深圳 as a past fact', async () => {
    const store = await setup();
    const shenzhen = await seed(store, '我住在深圳');
    await seed(store, '在一家医院当护士');
    const engine = createScriptedEngine();
    engine.push(replyFor('我住在深圳', 'UPDATE', '住在杭州'));
    const out = await consolidate(items({ kind: 'profile', text: '搬到了杭州' }), context(store, engine));
    expect(engine.requests[0]!.messages[1]!.content).toBe('EXISTING:\n0: 我住在深圳\nNEW: 搬到了杭州\nJSON:');
    expect(out.actions.map((a) => [a.event, a.reason])).toEqual([['DELETE', 'update-changes-meaning']]);
    const newId = out.summary.memoryIds[0]!;
    expect(await store.get(newId)).toMatchObject({ text: '住在杭州', current: 1 });
    expect(await store.get(shenzhen.id)).toMatchObject({ text: '我住在深圳', current: 0, validUntil: T2, supersededBy: newId });
  });

  it('a pet name, a job and an age find their slot across wordings', async () => {
    const store = await setup();
    const dog = await seed(store, 'My dog is called Rex');
    const job = await seed(store, '在腾讯当程序员');
    const age = await seed(store, 'I am 34 years old');
    const engine = createScriptedEngine({ fallback: '{"event": "ADD"}' });
    await planConsolidation(
      items(
        { kind: 'fact', text: 'Our dog got renamed Bolt' },
        { kind: 'profile', text: '跳槽到了阿里巴巴' },
        { kind: 'profile', text: 'Birthday was last week, turned 35' },
      ),
      context(store, engine),
    );
    const shown = engine.requests.map((r) => r.messages[1]!.content.split('\n')[1]);
    expect(shown).toEqual([`0: ${dog.text}`, `0: ${job.text}`, `0: ${age.text}`]);
  });

  it('unrelated slots are not added as candidates: the model is not asked', async () => {
    const store = await setup();
    await seed(store, 'Lives in Shenzhen');
    await seed(store, 'Works as a nurse');
    await seed(store, '我住在深圳');
    const engine = createScriptedEngine(); // throws if called
    const out = await consolidate(items({ kind: 'fact', text: 'Has a cat named Mimi' }, { kind: 'preference', text: '喜欢喝乌龙茶' }), context(store, engine));
    expect(out.actions.map((a) => [a.event, a.reason])).toEqual([
      ['ADD', 'no-candidates'],
      ['ADD', 'no-candidates'],
    ]);
    expect(engine.requests).toHaveLength(0);
  });
});

describe('UPDATE replies are checked before they rewrite a memory', () => {
  it('{"event":"UPDATE","id":"0","text":"ok"} leaves "Lives in Shenzhen" as it is and stores "Lives in Hangzhou"', async () => {
    const store = await setup();
    const shenzhen = await seed(store, 'Lives in Shenzhen');
    const engine = createScriptedEngine();
    engine.push('{"event":"UPDATE","id":"0","text":"ok"}');
    const out = await consolidate(items({ kind: 'profile', text: 'Lives in Hangzhou' }), context(store, engine));
    expect(out.actions.map((a) => [a.event, a.reason])).toEqual([['ADD', 'invalid-update']]);
    expect(out.llmFailures).toEqual([
      'UPDATE for "Lives in Hangzhou" refused, the item is added instead: the merged text "ok" is not grounded in the new fact or the old memory (0% of its words occur in them)',
    ]);
    expect(await store.get(shenzhen.id)).toMatchObject({ text: 'Lives in Shenzhen', current: 1 });
    expect(await store.get(out.summary.memoryIds[0]!)).toMatchObject({ text: 'Lives in Hangzhou', current: 1 });
    const history = await db.memoryHistory.where('memoryId').equals(shenzhen.id).toArray();
    expect(history.map((h) => h.event)).toEqual(['ADD']);
  });

  it('a plausible UPDATE that changes the meaning keeps the past state: old closed, merged text a new memory, history on both', async () => {
    const store = await setup();
    const shenzhen = await seed(store, 'Lives in Shenzhen');
    const engine = createScriptedEngine();
    engine.push('{"event":"UPDATE","id":"0","text":"Lives in Hangzhou"}');
    const out = await consolidate(items({ kind: 'profile', text: 'Lives in Hangzhou now' }), context(store, engine));
    expect(out.summary).toMatchObject({ added: 1, updated: 0, invalidated: 1 });
    const newId = out.summary.memoryIds[0]!;
    expect(await store.get(newId)).toMatchObject({ text: 'Lives in Hangzhou', current: 1, createdAt: T2 });
    expect(await store.get(shenzhen.id)).toMatchObject({ text: 'Lives in Shenzhen', current: 0, validUntil: T2, supersededBy: newId });
    const history = await withCreationTexts(db, await db.memoryHistory.where('memoryId').equals(shenzhen.id).toArray());
    expect(history.map((h) => [h.event, h.oldText, h.newText])).toEqual([
      ['ADD', null, 'Lives in Shenzhen'],
      ['INVALIDATE', 'Lives in Shenzhen', 'Lives in Shenzhen'],
    ]);
  });

  it('other ungrounded merges fall back to ADD: a story, one that drops the new fact, one far too long', async () => {
    const store = await setup();
    const tea = await seed(store, '喜欢喝茶', 'preference');
    const long = `喜欢喝茶${'，'.repeat(1)}${'也喜欢乌龙茶'.repeat(10)}`;
    for (const text of ['从前有一只小兔子', '喜欢喝茶', long]) {
      const engine = createScriptedEngine();
      engine.push(JSON.stringify({ event: 'UPDATE', id: '0', text }));
      const plan = await planConsolidation(items({ kind: 'preference', text: '也喜欢乌龙茶' }), context(store, engine));
      expect(plan.actions.map((a) => [a.event, a.reason])).toEqual([['ADD', 'invalid-update']]);
    }
    expect((await store.get(tea.id))!.text).toBe('喜欢喝茶');
  });

  it('updateTextProblem and updateChangesMeaning on hand-made cases', () => {
    expect(updateTextProblem('Lives in Hangzhou, moved from Shenzhen', 'Moved to Hangzhou', 'Lives in Shenzhen')).toBeNull();
    expect(updateTextProblem('Lives in Porto', 'Moved to Hangzhou', 'Lives in Shenzhen')).toMatch(/drops the new fact \(0% of its words kept\)/);
    expect(updateTextProblem('...', 'Moved to Hangzhou', 'Lives in Shenzhen')).toMatch(/has no content words/);
    expect(updateChangesMeaning('Lives in Shenzhen', 'Lives in Hangzhou')).toBe(true);
    expect(updateChangesMeaning('Lives in Shenzhen', 'Lives in Shenzhen, Nanshan district')).toBe(false);
    expect(updateChangesMeaning('喜欢喝茶', '喜欢喝茶，尤其是乌龙茶')).toBe(false);
    expect(updateChangesMeaning('我住在深圳', '住在杭州')).toBe(true);
  });
});
