/** The bilingual slot classifier used for consolidation candidates, and the store's same-slot listing (nothing faked but the test embedder). */
import { describe, expect, it, vi } from 'vitest';
import { memorySlot, sameSlot, SLOT_CLASSIFIER_VERSION, statementSlot } from '../../src/memory/long-term/slots';
import { createMemoryStore } from '../../src/memory/long-term/store';
import type { MetaBlockRecord } from '../../src/memory/long-term/retrieval/blocks/records';
import { openTestStore } from '../helpers/ltm-test-store';
import { nodeVoyWasm } from '../../bench/data/node-voy';

describe('memorySlot', () => {
  const cases: [string, string | null][] = [
    ['Lives in Shenzhen', 'user:residence'],
    ['Moved to Hangzhou', 'user:residence'],
    ['我住在深圳', 'user:residence'],
    ['搬到了杭州', 'user:residence'],
    ['My sister Ana lives in Lisbon', 'sister:residence'],
    ['我妹妹住在里斯本', 'sister:residence'],
    ['Works as a nurse at Ruijin', 'user:work'],
    ['I work at a pet shop', 'user:work'],
    ['在腾讯当程序员', 'user:work'],
    ['跳槽到了阿里巴巴', 'user:work'],
    ['Studies physics at Fudan University', 'user:school'],
    ['去年从浙江大学毕业', 'user:school'],
    ['I am 34 years old', 'user:age'],
    ['我今年34岁', 'user:age'],
    ['My phone number is 555-0100', 'user:phone'],
    ['手机号是13800000000', 'user:phone'],
    ['My dog is called Rex', 'dog:name'],
    ['我的狗叫旺财', 'dog:name'],
    ['My boss is called Tom', 'colleague:name'],
    ['Married to Lena', 'user:partner'],
    ['我老婆是小丽', 'user:partner'],
    ['Has two cats', 'user:pet'],
    ['Likes oolong tea', null],
    ['喜欢喝乌龙茶', null],
    // Routine slots (version 2), checked before residence: "moved" here is not about a home.
    ['My gym days moved to Sundays.', 'user:schedule'],
    ["I've been moved from Project Atlas to Project Nova.", 'user:project'],
    ['What am I working on at the moment?', 'user:project'],
    ['现在我负责推荐系统，支付系统交接出去了。', 'user:project'],
    ['健身时间换了，现在是晚上。', 'user:schedule'],
    ["Update on my diet: I'm vegan now.", 'user:diet'],
    ['这个月开始我改吃纯素了。', 'user:diet'],
    ['My sister is vegetarian', 'sister:diet'],
    ['Priya left the team, my new manager is Tom.', 'user:manager'],
    ['I report to Priya.', 'user:manager'],
    ['我现在向黄总汇报，陈总已经走了。', 'user:manager'],
    // work: about someone's job, not every "work".
    ['Where do I work now?', 'user:work'],
    ["I'm a product manager at Deloitte.", 'user:work'],
    ['我是京东的产品经理。', 'user:work'],
    ['Explain remote work in simple terms.', null],
    ['Can you remind me how the office move works?', null],
    ['我和阿杰在谈恋爱。', 'user:partner'],
    ['我现在和谁在交往？', 'user:partner'],
    ["My roommate's birthday is on July 21.", 'roommate:age'],
    ['我姐夫住在西安。', 'in-law:residence'],
    ['I was born and raised in Adelaide.', null],
    ['I saw a stray cat in the park today.', null],
    ['今天在公园看到一只流浪猫。', null],
    // Version 3: a slot word that is only a topic talked, read or written about states nobody's attribute.
    ['We talked about remote work for a while at lunch.', null],
    ['Explain the school play in simple terms.', null],
    ['Our team meeting about the gym schedule ran long.', null],
    ['关于作息时间的邮件太多了。', null],
    ['早上看了一篇讲作息时间的文章。', null],
    ['午饭的时候我们聊了一会儿作息时间。', null],
    ['用简单的话解释一下学校演出。', null],
    ['I studied philosophy at university.', 'user:school'],
    // Version 3: someone else's partner or pet has that person as subject.
    ["My boss's wife is a data analyst.", 'colleague:partner'],
    ['我老板的老婆是药剂师。', 'colleague:partner'],
    ['邻居家养了一只狗。', 'neighbour:pet'],
    ["I'm dating Daniel now, things with Lucas ended.", 'user:partner'],
    // Version 4: a compound whose head is not the slot noun is no slot (an accessory, a gym as a place).
    ['咖啡洒在手机壳上了。', null],
    ['The phone case I ordered arrived broken.', null],
    ['我用的手机是OPPO。', 'user:phone'],
    ['My phone is a Pixel 6.', 'user:phone'],
    ['我爸说上海新开了一家健身房。', null],
    ['My teacher recommended a gym near the station.', null],
    ['I go to the gym on Mondays.', 'user:schedule'],
    ['我一般周一去健身房。', 'user:schedule'],
    ['我固定周一健身。', 'user:schedule'],
    // Version 4: the slot's own noun is not its subject; someone else's manager keeps its owner.
    ['我的领导是陈总。', 'user:manager'],
    ['我老板的领导是老刘。', 'colleague:manager'],
    // Version 4: the household's cat is the subject of its name.
    ['我家的猫叫小白。', 'cat:name'],
    ['我现在住哪里？', 'user:residence'],
    // Version 5: a school's events are no school slot (before: user:school), where someone studies still is.
    ['I am tired, work was busy with the school play.', null],
    ['I read an article on the school play this morning.', null],
    ['今天好累，一直在忙学校演出的事。', null],
    ['我女儿学校的运动会在周六。', null],
    ['My son goes to a school near home.', 'son:school'],
    ['I go to school by bus.', 'user:school'],
    ['我大学学的是海洋生物。', 'user:school'],
    // Version 5: a modifier between the possessive and the relation word (before: user:residence, user:school).
    ['我好朋友住在昆明。', 'friend:residence'],
    ['我好朋友的孩子在实验小学。', 'friend:school'],
    ['我老同事搬到了大连。', 'colleague:residence'],
    // Version 5: 爱人 is a partner word, 做 + an occupation is a job (before: null, user:partner).
    ['我爱人在医院做护士。', 'partner:work'],
    ['我爱人在银行做会计。', 'partner:work'],
    ['我老婆是做什么工作的？', 'partner:work'],
    ['我和爱人结婚五年了。', 'user:partner'],
    ['做作业的学生太多了。', null],
    // Version 5: what someone was busy with or argued over is a topic mention (before: user:schedule).
    ['今天好累，一直在忙作息时间的事。', null],
    ['我和表姐为了作息时间吵了一架。', null],
    ['I am tired, work was busy with the gym schedule.', null],
    ['为了减肥我每天去健身房。', 'user:schedule'],
    ['我最近在忙跳槽的事，下个月入职字节。', 'user:work'],
  ];
  for (const [text, expected] of cases) {
    it(`${text} → ${expected}`, () => {
      const key = memorySlot(text);
      expect(key ? `${key.subject}:${key.slot}` : null).toBe(expected);
    });
  }

  it('statementSlot: a stored text states a slot only in its sentences that are not questions', () => {
    const label = (key: ReturnType<typeof memorySlot>) => (key ? `${key.subject}:${key.slot}` : null);
    // Rounds made of questions state nothing (before version 3 they were user:schedule / user:school / user:work).
    expect(label(statementSlot('User: 作息时间是怎么回事？\nAssistant: 嗯，我想想。后来怎么样了？'))).toBeNull();
    expect(label(statementSlot('User: Can you remind me how the school play works?\nAssistant: Okay. That sounds like a plan.'))).toBeNull();
    expect(label(statementSlot('User: Where do I work now?\nAssistant: At KPMG.'))).toBeNull();
    // Statements keep their slot, whatever the reply asks.
    expect(label(statementSlot('User: 健身时间换了，现在是周三。\nAssistant: 我记住了。'))).toBe('user:schedule');
    expect(label(statementSlot("User: I've moved to Bristol.\nAssistant: How do you like it?"))).toBe('user:residence');
    // A query is classified whole.
    expect(label(memorySlot('Where do I work now?'))).toBe('user:work');
    // Version 4: role labels are stripped, so a subject that starts a turn is found (before: user:residence).
    expect(label(statementSlot('User: 朋友说他搬到了大连。\nAssistant: 好的。'))).toBe('friend:residence');
    expect(label(statementSlot('User: My sister moved to Porto.\nAssistant: Nice.'))).toBe('sister:residence');
  });

  it('sameSlot needs the same subject and slot, and never matches an unclassified text', () => {
    expect(sameSlot(memorySlot('Lives in Shenzhen'), memorySlot('搬到了杭州'))).toBe(true);
    expect(sameSlot(memorySlot('Lives in Shenzhen'), memorySlot('My sister Ana lives in Lisbon'))).toBe(false);
    expect(sameSlot(memorySlot('Lives in Shenzhen'), memorySlot('Works as a nurse'))).toBe(false);
    expect(sameSlot(memorySlot('Likes tea'), memorySlot('Likes coffee'))).toBe(false);
  });
});

describe('store.inSlot (real store: Dexie + indexes, hashed test embedder)', () => {
  it('lists current memories of the namespace about the same slot and subject, newest first, bounded, by kind, also after a rebuild', async () => {
    const { db, store, setNow } = await openTestStore({ now: 1_000, name: 'slots' });
    try {
      const add = async (text: string, at: number, extra: { namespace?: string; kind?: 'profile' | 'episodic' } = {}) => {
        setNow(at);
        return (await store.add({ namespace: extra.namespace ?? 'default', kind: extra.kind ?? 'profile', text, createdAt: at }, 'test')).memory;
      };
      const shenzhen = await add('Lives in Shenzhen', 1_000);
      const hangzhou = await add('我住在杭州', 2_000);
      const closed = await add('Lived in Porto', 3_000);
      await store.invalidate(closed.id, 3_500, 'test');
      await add('Lives in Berlin', 4_000, { namespace: 'work' });
      await add('My sister Ana lives in Lisbon', 5_000);
      await add('Works as a nurse', 6_000);
      await add('User: I live in Xiamen now\nAssistant: Nice!', 7_000, { kind: 'episodic' });
      setNow(8_000);
      const key = memorySlot('Moved to Hangzhou');
      const texts = async (k: number, kinds?: ('profile' | 'episodic')[]) =>
        (await store.inSlot(key, { namespace: 'default', k, ...(kinds ? { kinds } : {}) })).map((m) => m.text);
      expect(await texts(10, ['profile'])).toEqual([hangzhou.text, shenzhen.text]);
      expect(await texts(1, ['profile'])).toEqual([hangzhou.text]);
      expect(await texts(10)).toEqual(['User: I live in Xiamen now\nAssistant: Nice!', hangzhou.text, shenzhen.text]);
      expect(await store.inSlot(memorySlot('Likes tea'), { namespace: 'default', k: 10 })).toEqual([]);
      await store.rebuildIndexes();
      expect(await texts(10, ['profile'])).toEqual([hangzhou.text, shenzhen.text]);
    } finally {
      await db.delete();
    }
  });
});

describe('slot classifier version', () => {
  it('a layout whose slot column has another SLOT_CLASSIFIER_VERSION is rebuilt on open, with the current labels', async () => {
    const { db, store } = await openTestStore({ name: 'slots-version' });
    const { memory } = await store.add({ namespace: 'default', kind: 'fact', text: 'My gym days moved to Sundays.' }, 'test');
    await store.flushSnapshot();
    // What version 1 left: no `slotsVersion`, and its label for this text (residence, from "moved").
    const metas = (await db.memoryIndex.toArray()).filter((r) => 'type' in r && r.type === 'meta') as MetaBlockRecord[];
    await db.memoryIndex.bulkPut(metas.map(({ slotsVersion: _v, ...old }) => ({ ...old, slots: old.slots.map((l) => (l ? 'user:residence' : l)) })));
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    const reopened = await createMemoryStore({ db, embedder: () => null, loadVoyWasm: nodeVoyWasm });
    expect(info).toHaveBeenCalledWith('[ltm] the persisted memory index has an older layout; rebuilding it');
    info.mockRestore();
    expect(reopened.indexStats().open.via).toBe('rebuilt');
    expect((await reopened.inSlot({ subject: 'user', slot: 'schedule' }, { namespace: 'default', k: 5 })).map((m) => m.id)).toEqual([memory.id]);
    expect(await reopened.inSlot({ subject: 'user', slot: 'residence' }, { namespace: 'default', k: 5 })).toEqual([]);
    expect(SLOT_CLASSIFIER_VERSION).toBe(5);
  });
});
