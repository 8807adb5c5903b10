/** The bilingual slot classifier used for consolidation candidates (pure function, no boundary faked). */
import { describe, expect, it } from 'vitest';
import { memorySlot, sameSlot } from '../../src/memory/long-term/slots';

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
