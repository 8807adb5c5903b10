/** The bilingual slot classifier used for consolidation candidates, and the store's same-slot listing (nothing faked but the test embedder). */
import { describe, expect, it } from 'vitest';
import { memorySlot, sameSlot } from '../../src/memory/long-term/slots';
import { openTestStore } from '../helpers/ltm-test-store';

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
  ];
  for (const [text, expected] of cases) {
    it(`${text} → ${expected}`, () => {
      const key = memorySlot(text);
      expect(key ? `${key.subject}:${key.slot}` : null).toBe(expected);
    });
  }

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
