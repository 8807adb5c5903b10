/**
 * Subject agreement (`retrieval/subject.ts`) and the tokenizer's version-4 rules, found by reading
 * the failing questions of the 10k-round benchmark on its calibration seeds: a question about the
 * user was answered by what the user said about someone else ("My neighbour wears size 40 shoes."),
 * and Chinese question framing made junk terms (候要 across 什么时候|要, the light verbs 要 / 去).
 * Real store (Dexie on fake-indexeddb, MiniSearch), lexical search; nothing faked.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecallDB } from '../../src/db/schema';
import { createMemoryStore } from '../../src/memory/long-term/store';
import type { MetaBlockRecord } from '../../src/memory/long-term/retrieval/blocks';
import { recencyTieBreak } from '../../src/memory/long-term/retrieval/fusion';
import { aboutAnotherPerson, memorySubject, querySubject } from '../../src/memory/long-term/retrieval/subject';
import { tokenize } from '../../src/memory/long-term/retrieval/tokenize';
import { statedSubject } from '../../src/memory/long-term/slots';
import { normalizeMemoryText } from '../../src/memory/long-term/text';
import { openTestStore } from '../helpers/ltm-test-store';
import { nodeVoyWasm } from '../../bench/data/node-voy';

describe('statedSubject / memorySubject', () => {
  it('reads whom a statement is about from where it starts', () => {
    expect(statedSubject('My neighbour wears size 40 shoes.')).toBe('neighbour');
    expect(statedSubject('My brother-in-law wears size 42 shoes.')).toBe('in-law');
    expect(statedSubject('My best friend recommends the Hardcore History podcast.')).toBe('friend');
    expect(statedSubject('I wear size 38 shoes.')).toBe('user');
    expect(statedSubject('I had dinner with my sister.')).toBe('user'); // the user's dinner, not the sister's
    expect(statedSubject('我邻居对海鲜过敏。')).toBe('neighbour');
    expect(statedSubject('我好朋友每个周五去攀岩。')).toBe('friend');
    expect(statedSubject('我同事的老婆是医生。')).toBe('colleague'); // the possessor comes first
    expect(statedSubject('提醒一下，我芝麻过敏。')).toBe('user'); // the second clause starts with 我
    expect(statedSubject('Can you remind me how remote work works?')).toBeNull(); // questions state nothing
  });

  it('reads the user turn of an episodic round from the normalized text (lower case, one line)', () => {
    expect(memorySubject(normalizeMemoryText('User: My cousin wears size 40 shoes.\nAssistant: My sister said so.'))).toBe('relative');
    expect(memorySubject(normalizeMemoryText('User: I wear size 38 shoes.\nAssistant: My neighbour too.'))).toBe('user');
  });

  it('flags another person only: not the user, the household or the one asked about', () => {
    expect(querySubject("What's my shoe size?")).toBe('user');
    expect(querySubject('我老婆是做什么工作的？')).toBe('partner');
    expect(aboutAnotherPerson('user', 'neighbour')).toBe(true);
    expect(aboutAnotherPerson('partner', 'colleague')).toBe(true);
    expect(aboutAnotherPerson('user', 'user')).toBe(false);
    expect(aboutAnotherPerson('pet', 'cat')).toBe(false); // 我家的猫 answers 我养了什么宠物
    expect(aboutAnotherPerson('sister', 'sister')).toBe(false);
    expect(aboutAnotherPerson('user', null)).toBe(false);
  });
});

describe('recencyTieBreak with subjects', () => {
  it('does not group memories that match the same terms but are about different people', () => {
    const matched = new Map([
      ['mine', ['shoe', 'size']],
      ['neighbour', ['shoe', 'size']],
    ]);
    const time = (id: string) => (id === 'neighbour' ? 2 : 1);
    // Without subjects the newer one goes first (same terms, same thing); with them nothing moves.
    expect(recencyTieBreak(['mine', 'neighbour'], matched, time)).toEqual(['neighbour', 'mine']);
    expect(recencyTieBreak(['mine', 'neighbour'], matched, time, 2, { subjectOf: (id) => (id === 'mine' ? 'user' : 'neighbour') })).toEqual([
      'mine',
      'neighbour',
    ]);
  });
});

describe('tokenize, version 4', () => {
  it('forms no Han bigram across a stop word and drops the light verbs 要 / 去', () => {
    // 什么时候|要|去|复诊 gave 候要, 要去, 去复 besides 复诊.
    expect(tokenize('我什么时候要去复诊？')).toEqual(['复', '诊', '复诊']);
    // 去|哪里|吃饭 gave 里吃.
    expect(tokenize('我现在喜欢去哪里吃饭？')).not.toContain('里吃');
    // Dictionary words that hold a light verb stay terms.
    expect(tokenize('这很重要')).toEqual(['重要']);
    expect(tokenize('过去的事')).toContain('过去');
  });
});

describe('a question about the user among other people’s facts (real store, lexical)', () => {
  const dbs: RecallDB[] = [];
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.delete();
  });
  const DAY = 86_400_000;
  const NOW = Date.UTC(2025, 6, 2, 10);

  async function storeWith(rounds: [string, number][]) {
    const { db, store, setNow } = await openTestStore({ now: NOW, embedder: null, name: `subject-${dbs.length}` });
    dbs.push(db);
    const ids: string[] = [];
    for (const [user, daysAgo] of rounds) {
      setNow(NOW - daysAgo * DAY);
      ids.push(
        (await store.add({ namespace: 'default', kind: 'episodic', text: `User: ${user}\nAssistant: Got it.`, createdAt: NOW - daysAgo * DAY }, 'test')).memory
          .id,
      );
    }
    setNow(NOW);
    return { store, ids };
  }

  it('the user’s own statement ranks first, above newer facts about a neighbour and a cousin', async () => {
    const { store, ids } = await storeWith([
      ['I wear size 38 shoes.', 200],
      ['My neighbour wears size 40 shoes.', 30],
      ['My cousin wears size 44 shoes.', 10],
    ]);
    const hits = await store.search({ text: "What's my shoe size?", namespace: 'default', k: 3 }, { mode: 'lexical' });
    expect(hits.map((h) => h.memory.id)[0]).toBe(ids[0]);
  });

  it('in Chinese: 我对什么过敏？ finds 我芝麻过敏, not the neighbour’s or the roommate’s allergy', async () => {
    const { store, ids } = await storeWith([
      ['提醒一下，我芝麻过敏。', 200],
      ['我邻居对海鲜过敏。', 30],
      ['我室友对芒果过敏。', 10],
    ]);
    const hits = await store.search({ text: '我对什么过敏？', namespace: 'default', k: 3 }, { mode: 'lexical' });
    expect(hits.map((h) => h.memory.id)[0]).toBe(ids[0]);
  });

  /** The meta block records of `db` (as IndexedDB holds them). */
  const metaBlocks = async (db: RecallDB) => (await db.memoryIndex.toArray()).filter((r): r is MetaBlockRecord => 'type' in r && r.type === 'meta');
  /** The stored `subjects` column value of memory `id` (`undefined`: no such column). */
  const storedSubject = (blocks: MetaBlockRecord[], id: string) => {
    for (const b of blocks) {
      const s = b.ids.indexOf(id);
      if (s >= 0) return b.subjects?.[s];
    }
    throw new Error(`no meta slot for ${id}`);
  };
  const reopen = (db: RecallDB) =>
    createMemoryStore({ db, embedder: () => null, now: () => NOW, loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer> });
  const shoeRounds: [string, number][] = [
    ['I wear size 38 shoes.', 200],
    ['My neighbour wears size 40 shoes.', 30],
    ['My cousin wears size 44 shoes.', 10],
  ];

  it('the subject is a meta column written with the memory; a store written before it opens, gets it from the rows, and ranks as before', async () => {
    const { store, ids } = await storeWith(shoeRounds);
    await store.flushSnapshot();
    const db = dbs.at(-1)!;
    // Written at add time: `memorySubject` of each text (by hand: user, neighbour, relative).
    const written = await metaBlocks(db);
    expect(ids.map((id) => storedSubject(written, id))).toEqual(['user', 'neighbour', 'relative']);
    // What the previous version left: meta blocks of the same classifier version without the column.
    await db.memoryIndex.bulkPut(written.map(({ subjects: _s, ...old }) => old));
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    const reopened = await reopen(db);
    expect(info).toHaveBeenCalledWith('[ltm] the persisted memory index has an older layout; rebuilding it');
    info.mockRestore();
    expect(reopened.indexStats().open.via).toBe('rebuilt');
    const rebuilt = await metaBlocks(db);
    expect(ids.map((id) => storedSubject(rebuilt, id))).toEqual(['user', 'neighbour', 'relative']);
    const hits = await reopened.search({ text: "What's my shoe size?", namespace: 'default', k: 3 }, { mode: 'lexical' });
    expect(hits[0]!.memory.id).toBe(ids[0]);
    // The rebuilt blocks carry the column: the next open reads them as they are.
    expect((await reopen(db)).indexStats().open.via).toBe('blocks');
  });

  it('a search reads the stored subject, it does not classify the candidates again', async () => {
    const { store, ids } = await storeWith(shoeRounds);
    await store.flushSnapshot();
    const db = dbs.at(-1)!;
    expect((await (await reopen(db)).search({ text: "What's my shoe size?", namespace: 'default', k: 3 }, { mode: 'lexical' }))[0]!.memory.id).toBe(ids[0]);
    // Mark the user's own statement as a neighbour's (a column value only a read of it can see):
    // it now loses the subject penalty, and another memory ranks first.
    const blocks = await metaBlocks(db);
    const b = blocks.find((x) => x.ids.includes(ids[0]!))!;
    b.subjects![b.ids.indexOf(ids[0]!)] = 'neighbour';
    await db.memoryIndex.put(b);
    const tampered = await reopen(db);
    expect(tampered.indexStats().open.via).toBe('blocks');
    const hits = await tampered.search({ text: "What's my shoe size?", namespace: 'default', k: 3 }, { mode: 'lexical' });
    expect(hits[0]!.memory.id).not.toBe(ids[0]);
  });
});
