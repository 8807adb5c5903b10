/**
 * Write-time supersession of episodic rounds (`consolidation/supersede.ts`) and its use in ranking
 * (`recencyTieBreak`'s superseded-below-current rule). Real Dexie (fake-indexeddb), real store and
 * indexes; embeddings: the hashed n-gram TEST embedder. Nothing else is faked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecallDB } from '../../src/db/schema';
import type { MessageRecord } from '../../src/model/records';
import { storeEpisodes } from '../../src/memory/long-term';
import { supersedes, statementsOf, userTurnOf } from '../../src/memory/long-term/consolidation/supersede';
import { recencyTieBreak } from '../../src/memory/long-term/retrieval/fusion';
import { openTestStore } from '../helpers/ltm-test-store';

const round = (user: string) => ({ kind: 'episodic' as const, text: `User: ${user}\nAssistant: Noted.` });

describe('supersedes (pure)', () => {
  const cases: [older: string, newer: string, expected: boolean][] = [
    // A changed value: 2 of the old topic terms (training, race) repeated, 10k → marathon.
    ["I'm training for a 10k race.", 'Changed plans: I am training for a marathon race now.', true],
    ['My favourite band is Coldplay.', 'My favourite band these days is Radiohead.', true],
    ['My favourite restaurant is The Green Fork.', 'These days my favourite place to eat is Bombay Palace, not The Green Fork.', true],
    // A changed time of the same thing (topic 理发 / dentist appointment; times are values, not topics).
    ['我下周五上午十点半要去理发。', '我下周二上午九点要去理发。', true],
    ['I have a dentist appointment next Monday at 9am.', 'Reminder for myself: dentist appointment on Tuesday at 2pm.', true],
    // Not the same thing: another appointment at the same time, one shared word, another subject.
    ['我下周一中午十一点要去办签证。', '我下周二中午十一点要去看牙医。', false],
    ['I have a dentist appointment next Monday at 9am.', 'Reminder for myself: haircut appointment on Tuesday at 2pm.', false],
    // Two reminders about different things share only their frame (提醒一下).
    ['提醒一下，我周四上午十点半约了复诊。', '提醒一下，我周四上午十点半约了看牙医。', false],
    ['I pay 1800 dollars rent every month.', 'The landlord raised my rent to 2100 dollars a month.', true],
    ['My favourite restaurant is The Green Fork.', 'My favourite dish is mushroom risotto.', false],
    ["I'm training for a 10k race.", 'My sister is training for a marathon race.', false],
    ['I have a cat called Miso.', 'My colleague has a cat called Pepper.', false],
    // Two slots of one subject are two attributes; the same slot alone is not enough (classifier false positives).
    ['健身时间换了，现在是周三。', '今天好累，一直在忙作息时间的事。', false],
    // A question states nothing.
    ['I live in Boston with my parents.', 'Where do I live now?', false],
  ];
  for (const [older, newer, expected] of cases) {
    it(`${older} → ${newer}: ${expected}`, () => expect(supersedes(round(newer), round(older))).toBe(expected));
  }

  it("reads an episodic round's user turn and its statements only", () => {
    expect(userTurnOf({ kind: 'episodic', text: 'User: I moved. Where is the post office?\nAssistant: Near the station.' })).toBe(
      'I moved. Where is the post office?',
    );
    expect(statementsOf('I moved. Where is the post office?')).toBe('I moved.');
    expect(userTurnOf({ kind: 'fact', text: 'Lives in Denver' })).toBe('Lives in Denver');
  });
});

describe('recencyTieBreak: superseded below current', () => {
  it('a non-current candidate goes just below the last current one after it that shares a matched term; the others keep their order', () => {
    const matched = new Map<string, string[]>([
      ['old', ['race']],
      ['pottery', ['sign']],
      ['new', ['race']],
      ['other', ['race']],
    ]);
    const ranked = ['old', 'pottery', 'new', 'other'];
    const isCurrent = (id: string) => id !== 'old';
    // One matched term forms no group (minTerms 2), so only the superseded rule moves anything.
    expect(recencyTieBreak(ranked, matched, () => 0, 2, { isCurrent })).toEqual(['pottery', 'new', 'other', 'old']);
    // Sharing one matched term is enough ("rent" for ["pay", "rent"] and ["rent"]).
    const rent = new Map<string, string[]>([
      ['old', ['pay', 'rent']],
      ['new', ['rent']],
    ]);
    expect(recencyTieBreak(['old', 'new'], rent, () => 0, 2, { isCurrent })).toEqual(['new', 'old']);
    // Without currency information nothing moves.
    expect(recencyTieBreak(ranked, matched, () => 0, 2, {})).toEqual(ranked);
    // A non-current candidate with no current one after it sharing a matched term stays.
    expect(recencyTieBreak(['old', 'pottery'], matched, () => 0, 2, { isCurrent })).toEqual(['old', 'pottery']);
  });
});

describe('storeEpisodes marks the rounds a new round supersedes (real store)', () => {
  const dbs: RecallDB[] = [];
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.delete();
  });
  const DAY = 86_400_000;
  const T0 = Date.UTC(2024, 10, 16, 10);

  it('the earlier round is superseded (not current, still valid, updatedAt kept), ranks below its restatement, and another subject is left alone', async () => {
    const { db, store, setNow } = await openTestStore({ now: T0, name: 'supersede' });
    dbs.push(db);
    const turns: [string, number][] = [
      ["I'm training for a 10k race.", T0],
      ['A few weeks ago I signed up for a pottery course at the community centre.', T0 + 10 * DAY],
      ['Changed plans: I am training for a marathon race now.', T0 + 49 * DAY],
      ['My sister is training for a half marathon race.', T0 + 60 * DAY],
    ];
    const messages: MessageRecord[] = turns.flatMap(([text, at], i) => [
      { id: `u${i}`, conversationId: 'c', seq: 2 * i, role: 'user', content: text, createdAt: at, status: 'complete' },
      { id: `a${i}`, conversationId: 'c', seq: 2 * i + 1, role: 'assistant', content: 'Noted.', createdAt: at + 30_000, status: 'complete' },
    ]);
    await db.messages.bulkPut(messages);
    for (const [i, [, at]] of turns.entries()) {
      setNow(at + 60_000);
      await storeEpisodes({ store, db }, [{ conversationId: 'c', namespace: 'default', userMessageId: `u${i}`, assistantMessageId: `a${i}` }]);
    }
    const rows = await db.memories.toArray();
    const byUser = (i: number) => rows.find((r) => r.sourceMessageIds.includes(`u${i}`))!;
    const [tenK, pottery, marathon, sister] = [0, 1, 2, 3].map(byUser);
    expect(tenK!.supersededBy).toBe(marathon!.id);
    expect(tenK!.current).toBe(0);
    expect(tenK!.validUntil).toBeNull();
    expect(tenK!.updatedAt).toBe(T0); // marking it changed nothing it says: recency still reads the time it was said
    expect([pottery, marathon, sister].map((m) => [m!.current, m!.supersededBy])).toEqual([
      [1, undefined],
      [1, undefined],
      [1, undefined],
    ]);
    // "race" alone matches both race rounds (no group of two terms): the restatement now ranks above the round it superseded.
    setNow(T0 + 200 * DAY);
    const ids = (await store.search({ text: 'Which race did I sign up for?', namespace: 'default', k: 5 }, { mode: 'lexical' })).map((r) => r.memory.id);
    expect(ids.indexOf(marathon!.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(marathon!.id)).toBeLessThan(ids.indexOf(tenK!.id));
    // Still found (valid): a superseded round is demoted, never hidden.
    expect(ids).toContain(tenK!.id);
  });
});
