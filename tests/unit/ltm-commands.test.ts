import { afterEach, describe, expect, it } from 'vitest';
import type { RecallDB } from '../../src/db/schema';
import type { Embedder } from '../../src/engines/types';
import { findForgetMatches, parseMemoryCommand, runMemoryCommand } from '../../src/memory/long-term/commands';
import type { LongTermStore } from '../../src/memory/long-term/store';
import { openTestStore } from '../helpers/ltm-test-store';

let db: RecallDB;
afterEach(async () => db?.delete());

/** Friday 2024-05-10 14:30 local time. */
const NOW = new Date(2024, 4, 10, 14, 30).getTime();
const ctx = { namespace: 'default', conversationId: 'c1', messageId: 'm1', now: NOW };

async function setup() {
  const opened = await openTestStore({ now: NOW, name: 'cmd' });
  db = opened.db;
  return { store: opened.store };
}

describe('parseMemoryCommand', () => {
  it.each([
    ['Remember that my sister is called Ana', 'remember', 'my sister is called Ana'],
    ['remember: I am allergic to peanuts.', 'remember', 'I am allergic to peanuts.'],
    ['Please remember that I work at Acme', 'remember', 'I work at Acme'],
    ['记住我对花生过敏', 'remember', '我对花生过敏'],
    ['请记住：我女儿的生日是三月五号', 'remember', '我女儿的生日是三月五号'],
    ['帮我记住，下周三去看牙医', 'remember', '下周三去看牙医'],
    ['Forget my address', 'forget', 'my address'],
    ['forget that I live in Paris', 'forget', 'I live in Paris'],
    ['Please forget about the trip to Tokyo', 'forget', 'the trip to Tokyo'],
    ['忘记我住在深圳', 'forget', '我住在深圳'],
    ['请忘掉关于前男友的事', 'forget', '前男友'],
    ['Forget all about the trip to Tokyo', 'forget', 'the trip to Tokyo'],
    ['忘记所有关于前男友的事', 'forget', '前男友'],
    // Issue 12 item 7: 的事 / 的事情 / 的记忆 name the kind of thing, not what to search for.
    ['忘记所有关于生日的事', 'forget', '生日'],
    ['忘记关于生日的事情', 'forget', '生日'],
    ['删除关于生日的记忆', 'forget', '生日'],
    ['删掉我生日的记忆。', 'forget', '我生日'],
    ['delete the memory about my birthday', 'forget', 'my birthday'],
    ['Please remove my memories of the trip to Tokyo', 'forget', 'the trip to Tokyo'],
    ['Erase the memory about my old address', 'forget', 'my old address'],
    ['删除关于我的猫', 'forget', '我的猫'],
    ['can you remember that I work at Acme?', 'remember', 'I work at Acme'],
    ['Could you please remember: my sister is called Ana?', 'remember', 'my sister is called Ana'],
  ])('recognizes %j', (text, command, argument) => {
    expect(parseMemoryCommand(text)).toEqual({ command, argument });
  });

  it.each([
    'forget everything',
    'Please forget everything you know about me.',
    'forget all my memories',
    '忘记所有',
    '忘掉一切',
    '请删除全部记忆',
    '忘记关于我的所有事情',
  ])('recognizes %j as a request to forget everything', (text) => {
    expect(parseMemoryCommand(text)).toEqual({ command: 'forget', argument: '', all: true });
  });

  it.each([
    'Do you remember when we met?',
    'remember when we went to the beach?',
    'Remember me?',
    'Forget it, let us talk about music',
    'forget it',
    '忘记密码怎么办',
    '忘记带钥匙了',
    '记住了吗？',
    '记住了',
    'I forgot my keys',
    'forget everything else, focus on Rust',
    '忘记所有的烦恼吧',
    '我记得你说过',
    'What should I remember about Rust?',
    // A question stays a question unless it is a request to remember *that* something is so.
    'Can you remember my birthday?',
    'can you remember what my sister is called?',
    'Delete the file about my trip',
    '删除我的记忆',
    '',
  ])('leaves %j to the chat', (text) => {
    expect(parseMemoryCommand(text)).toBeNull();
  });
});

describe('runMemoryCommand: remember', () => {
  it('stores a pinned memory at once, in the user language, with source ids and an absolute date', async () => {
    const { store } = await setup();
    const result = await runMemoryCommand(store, '帮我记住，下周三去看牙医', ctx);
    expect(result?.command).toBe('remember');
    expect(result?.affected).toHaveLength(1);
    const stored = await store.get(result!.affected[0]!.id);
    // 2024-05-10 is a Friday: "下周三" is Wednesday 2024-05-15.
    expect(stored).toMatchObject({
      text: '下周三（2024-05-15）去看牙医',
      kind: 'event',
      pinned: true,
      importance: 0.9,
      sourceConversationId: 'c1',
      sourceMessageIds: ['m1'],
      validFrom: NOW,
      validUntil: new Date(2024, 4, 16).getTime(),
      current: 1,
    });
    const history = await db.memoryHistory.where('memoryId').equals(stored!.id).toArray();
    expect(history.map((h) => [h.event, h.source])).toEqual([['ADD', 'user']]);
  });

  it('guesses kinds in English and Chinese', async () => {
    const { store } = await setup();
    const cases: [string, string][] = [
      ['remember that I prefer window seats', 'preference'],
      ['remember that my name is Lina', 'profile'],
      ['remember: always answer in Chinese', 'instruction'],
      ['记住我不喜欢香菜', 'preference'],
      ['记住我住在杭州', 'profile'],
      ['记住以后回答要简短', 'instruction'],
      ['remember that the office wifi password is tulip42', 'fact'],
    ];
    for (const [text, kind] of cases) {
      const r = await runMemoryCommand(store, text, ctx);
      expect([text, r?.affected[0]?.kind]).toEqual([text, kind]);
    }
  });

  it('pins an existing identical memory instead of adding a duplicate', async () => {
    const { store } = await setup();
    const { memory } = await store.add({ namespace: 'default', kind: 'preference', text: 'I prefer window seats', importance: 0.5 }, 'conversation:c0');
    const r = await runMemoryCommand(store, 'Remember that I prefer window seats', ctx);
    expect(r?.affected[0]?.id).toBe(memory.id);
    expect(await db.memories.count()).toBe(1);
    expect(await store.get(memory.id)).toMatchObject({ pinned: true, importance: 0.9 });
    const events = (await db.memoryHistory.where('memoryId').equals(memory.id).toArray()).map((h) => h.event);
    expect(events).toEqual(['ADD', 'PIN']);
  });
});

describe('runMemoryCommand: forget', () => {
  async function seed(store: LongTermStore) {
    const add = (text: string, kind: 'profile' | 'preference' | 'episodic' | 'fact', namespace = 'default') =>
      store.add({ namespace, kind, text }, 'conversation:c0').then((r) => r.memory);
    return {
      shenzhen: await add('我住在深圳', 'profile'),
      episode: await add('用户：我住在深圳，最近天气很热。\n助手：深圳夏天确实很热。', 'episodic'),
      hangzhou: await add('我妹妹住在杭州', 'profile'),
      pizza: await add('I love pizza with mushrooms', 'preference'),
      sushi: await add('I love sushi', 'preference'),
      other: await add('我住在深圳', 'profile', 'work'),
    };
  }

  it('removes matching memories from the store, the index and the history, and says what it removed', async () => {
    const { store } = await setup();
    const m = await seed(store);
    const r = await runMemoryCommand(store, '忘记我住在深圳', ctx);
    expect(r?.command).toBe('forget');
    expect(r?.affected.map((a) => a.id).sort()).toEqual([m.shenzhen.id, m.episode.id].sort());
    expect(r?.affected.find((a) => a.id === m.shenzhen.id)).toEqual({ id: m.shenzhen.id, kind: 'profile', text: '我住在深圳' });
    for (const id of [m.shenzhen.id, m.episode.id]) {
      expect(await store.get(id)).toBeUndefined();
      // Only a content-free FORGET marker stays in the history.
      const history = await db.memoryHistory.where('memoryId').equals(id).toArray();
      expect(history.map((h) => [h.event, h.oldText, h.newText, h.source])).toEqual([['FORGET', null, null, 'user']]);
    }
    // No history row of the default namespace still holds the text (the "work" copy is another profile).
    const rest = (await db.memoryHistory.toArray()).filter((h) => h.memoryId !== m.other.id);
    expect(JSON.stringify(rest)).not.toContain('深圳');
    const found = await store.search({ text: '深圳', namespace: 'default', k: 20, includeInvalid: true });
    expect(found.map((f) => f.memory.text).join('\n')).not.toContain('深圳');
    // Unrelated memories, and the same text in another namespace, stay.
    for (const keep of [m.hangzhou, m.pizza, m.sushi, m.other]) expect(await store.get(keep.id)).toBeDefined();
  });

  it('is conservative: half the words in common is not enough without a close embedding', async () => {
    const { store } = await setup();
    const m = await seed(store);
    const matches = await findForgetMatches(store, 'I love pizza', 'default');
    expect(matches.map((x) => x.id)).toEqual([m.pizza.id]);
    // "love" alone is in both preferences, "pizza" only in one: coverage 1 vs 0.5.
    expect(matches[0]!.coverage).toBe(1);
  });

  it('reports an empty result and changes nothing when nothing matches', async () => {
    const { store } = await setup();
    await seed(store);
    const before = await db.memoryHistory.count();
    const r = await runMemoryCommand(store, 'forget my passport number', ctx);
    expect(r).toEqual({ command: 'forget', affected: [] });
    expect(await db.memories.count()).toBe(6);
    expect(await db.memoryHistory.count()).toBe(before);
  });

  it('does not erase everything from a chat line: removes nothing and says so', async () => {
    const { store } = await setup();
    await seed(store);
    const before = await db.memoryHistory.count();
    expect(await runMemoryCommand(store, '忘记所有', ctx)).toEqual({ command: 'forget', affected: [], refused: 'forget_all' });
    expect(await runMemoryCommand(store, 'Forget everything.', ctx)).toEqual({ command: 'forget', affected: [], refused: 'forget_all' });
    expect(await db.memories.count()).toBe(6);
    expect(await db.memoryHistory.count()).toBe(before);
  });

  it('returns null for text that is not a command', async () => {
    const { store } = await setup();
    expect(await runMemoryCommand(store, 'How do I cook rice?', ctx)).toBeNull();
  });
});

/**
 * Stands in for a multilingual sentence embedder (the default paraphrase-multilingual-MiniLM cannot
 * run here: no weights offline, and no multilingual fixture model exists): each text maps to the
 * concepts it names, in English or Chinese, one dimension per concept, so a translation lands on
 * the same direction. A fake of the embedding boundary only; everything else is the real store.
 */
function conceptEmbedder(): Embedder {
  const concepts: RegExp[] = [/birthday|生日/giu, /\bwork|工作/giu, /\bdogs?\b|狗/giu, /shenzhen|深圳/giu];
  return {
    modelId: 'test/concepts',
    dimension: concepts.length,
    embed: async (texts) =>
      texts.map((text) => {
        const v = new Float32Array(concepts.length);
        concepts.forEach((re, i) => (v[i] = (text.match(re) ?? []).length));
        const norm = Math.hypot(...v) || 1;
        return v.map((x) => x / norm);
      }),
  };
}

describe('runMemoryCommand: forget across languages', () => {
  it('"forget my birthday" finds the Chinese 生日 memory by its embedding when the embedder is multilingual', async () => {
    const opened = await openTestStore({ now: NOW, name: 'cmd-xl', embedder: conceptEmbedder() });
    db = opened.db;
    const add = (text: string) => opened.store.add({ namespace: 'default', kind: 'profile', text }, 'conversation:c0').then((r) => r.memory);
    const birthday = await add('我的生日');
    const work = await add('我在深圳工作');
    const dog = await add('I have a dog');
    const r = await runMemoryCommand(opened.store, 'forget my birthday', ctx);
    expect(r?.affected.map((a) => a.id)).toEqual([birthday.id]);
    expect(await opened.store.get(birthday.id)).toBeUndefined();
    for (const keep of [work, dog]) expect(await opened.store.get(keep.id)).toBeDefined();
  });

  it('the cross-lingual rule does not fire on surface similarity: with the n-gram test embedder the 生日 memory stays', async () => {
    const { store } = await setup();
    const birthday = (await store.add({ namespace: 'default', kind: 'profile', text: '我的生日' }, 'conversation:c0')).memory;
    expect(await runMemoryCommand(store, 'forget my birthday', ctx)).toEqual({ command: 'forget', affected: [] });
    expect(await store.get(birthday.id)).toBeDefined();
  });

  it('「忘记所有关于生日的事」 removes the 生日 memory (the parser no longer searches for 的事)', async () => {
    const { store } = await setup();
    const birthday = (await store.add({ namespace: 'default', kind: 'profile', text: '我的生日是三月五号' }, 'conversation:c0')).memory;
    const other = (await store.add({ namespace: 'default', kind: 'profile', text: '我住在深圳' }, 'conversation:c0')).memory;
    for (const line of ['忘记所有关于生日的事', '忘记关于生日的事情', '删除关于生日的记忆']) {
      const again = (await store.add({ namespace: 'default', kind: 'profile', text: '我的生日是三月五号' }, 'conversation:c0')).memory;
      const r = await runMemoryCommand(store, line, ctx);
      expect(r?.affected.map((a) => a.text)).toEqual(['我的生日是三月五号']);
      expect(await store.get(again.id)).toBeUndefined();
    }
    expect(await store.get(birthday.id)).toBeUndefined();
    expect(await store.get(other.id)).toBeDefined();
  });
});
