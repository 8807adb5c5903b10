/**
 * A long, deterministic, bilingual (English/Chinese) conversation for the strategy benchmark.
 * Generated from templates with a seeded PRNG (mulberry32), so every run sees the same text.
 *
 * The user talks with the assistant about their life over 200 exchanges: pets, family, work,
 * travel, health, cooking, a house move… Sessions of 10 exchanges alternate between English and
 * Chinese, and some messages mix both. Lengths imitate chat usage: user messages of one to three
 * sentences, assistant replies of three to eight sentences (roughly 20–70 and 70–250 Qwen2.5
 * tokens). Each exchange records the named entities it mentions (for the scripted entity
 * extractor) and one fact sentence (for the scripted summarizer).
 */
import { mulberry32 } from './prng';
export { mulberry32 };

/** One exchange of the generated conversation. */
export interface GeneratedExchange {
  index: number;
  language: 'en' | 'zh';
  user: string;
  assistant: string;
  /** Named entities mentioned, with a one-sentence fact about each in the exchange's language. */
  entities: { name: string; fact: string }[];
  /** The exchange's main fact, as a summarizer would keep it (third person, exchange's language). */
  fact: string;
}

interface Topic {
  entity: { en: string; zh: string };
  en: { user: string[]; fact: string; entityFact: string };
  zh: { user: string[]; fact: string; entityFact: string };
}

/** `{d}` = a day of month, `{m}` = a month, `{n}` = a small number; filled per exchange. */
const TOPICS: Topic[] = [
  {
    entity: { en: 'Mochi', zh: '麻薯' },
    en: {
      user: [
        'My cat Mochi has been sneezing since we moved on {m} {d}.',
        'Should I take Mochi to the vet, or wait a few more days?',
        'She is eleven and still eats well.',
      ],
      fact: 'The user worries about their 11-year-old cat Mochi, who has sneezed since the move on {m} {d}.',
      entityFact: "The user's 11-year-old cat; sneezing since the move on {m} {d}.",
    },
    zh: {
      user: ['我家猫麻薯从{m}{d}号搬家以后一直打喷嚏。', '要不要带麻薯去看兽医，还是再观察几天？', '她今年十一岁了，胃口还不错。'],
      fact: '用户担心十一岁的猫麻薯，{m}{d}号搬家后一直打喷嚏。',
      entityFact: '用户十一岁的猫，{m}{d}号搬家后开始打喷嚏。',
    },
  },
  {
    entity: { en: 'Emma', zh: '艾玛' },
    en: {
      user: [
        'My sister Emma is getting married in Lisbon on {m} {d}.',
        'I still need to book flights and I prefer morning flights.',
        'Can you help me plan the trip?',
      ],
      fact: "The user's sister Emma marries in Lisbon on {m} {d}; the user prefers morning flights.",
      entityFact: "The user's sister; wedding in Lisbon on {m} {d}.",
    },
    zh: {
      user: ['我妹妹艾玛{m}{d}号在里斯本结婚。', '我还没订机票，我比较喜欢早上的航班。', '你能帮我规划一下行程吗？'],
      fact: '用户的妹妹艾玛{m}{d}号在里斯本结婚，用户喜欢早班飞机。',
      entityFact: '用户的妹妹，{m}{d}号在里斯本举行婚礼。',
    },
  },
  {
    entity: { en: 'Priya', zh: '普丽娅' },
    en: {
      user: [
        'My manager Priya wants the quarterly report by {m} {d}.',
        'The numbers look worse than last quarter, churn went up {n} percent.',
        'How should I present this without sounding defensive?',
      ],
      fact: 'The user must give manager Priya the quarterly report by {m} {d}; churn rose {n}%.',
      entityFact: "The user's manager; expects the quarterly report by {m} {d}.",
    },
    zh: {
      user: ['我的经理普丽娅要我在{m}{d}号之前交季度报告。', '数据比上个季度差，客户流失率涨了百分之{n}。', '怎么汇报才不会显得在找借口？'],
      fact: '用户要在{m}{d}号前把季度报告交给经理普丽娅，流失率上升了{n}%。',
      entityFact: '用户的经理，要求{m}{d}号前提交季度报告。',
    },
  },
  {
    entity: { en: 'Hangzhou', zh: '杭州' },
    en: {
      user: [
        'We are moving to a new apartment in Hangzhou on {m} {d}.',
        'It is closer to the West Lake but the rent is {n} hundred yuan higher.',
        'What should I check before signing the lease?',
      ],
      fact: 'The user moves to a new apartment in Hangzhou on {m} {d}, near West Lake.',
      entityFact: 'City where the user is moving on {m} {d}.',
    },
    zh: {
      user: ['我们{m}{d}号要搬到杭州的新公寓。', '离西湖更近，但是房租贵了{n}百块。', '签租约之前我应该检查哪些东西？'],
      fact: '用户{m}{d}号搬到杭州西湖附近的新公寓。',
      entityFact: '用户{m}{d}号要搬去的城市。',
    },
  },
  {
    entity: { en: 'Tom', zh: '汤姆' },
    en: {
      user: [
        'My son Tom has football practice every Wednesday at five.',
        'He wants to join the summer camp starting {m} {d}.',
        'Is {n} weeks of camp too much for a nine-year-old?',
      ],
      fact: "The user's nine-year-old son Tom plays football on Wednesdays and wants summer camp from {m} {d}.",
      entityFact: "The user's nine-year-old son; football on Wednesdays, camp from {m} {d}.",
    },
    zh: {
      user: ['我儿子汤姆每周三五点有足球训练。', '他想参加{m}{d}号开始的夏令营。', '九岁的孩子参加{n}周的夏令营会不会太多？'],
      fact: '用户九岁的儿子汤姆每周三踢足球，想参加{m}{d}号开始的夏令营。',
      entityFact: '用户九岁的儿子，周三踢足球，{m}{d}号起参加夏令营。',
    },
  },
  {
    entity: { en: 'book club', zh: '读书会' },
    en: {
      user: [
        'Our book club meets on {m} {d} to discuss "The Remains of the Day".',
        'I have {n} chapters left and I am not enjoying it much.',
        'Can you give me a few questions to bring?',
      ],
      fact: 'The user\'s book club discusses "The Remains of the Day" on {m} {d}.',
      entityFact: 'Meets on {m} {d} about "The Remains of the Day".',
    },
    zh: {
      user: ['我们读书会{m}{d}号要讨论《长日将尽》。', '我还剩{n}章没读，读得不太有兴趣。', '你能给我几个可以带去讨论的问题吗？'],
      fact: '用户的读书会{m}{d}号讨论《长日将尽》。',
      entityFact: '{m}{d}号聚会，讨论《长日将尽》。',
    },
  },
  {
    entity: { en: 'peanuts', zh: '花生' },
    en: {
      user: [
        'Reminder for yourself: I am allergic to peanuts and I do not eat meat.',
        'I am hosting {n} friends for dinner on {m} {d}.',
        'What could I cook that everyone will like?',
      ],
      fact: 'The user is vegetarian, allergic to peanuts, and hosts {n} friends for dinner on {m} {d}.',
      entityFact: 'The user is allergic to them.',
    },
    zh: {
      user: ['提醒一下：我对花生过敏，而且不吃肉。', '{m}{d}号我要请{n}个朋友来家里吃饭。', '做什么菜大家都会喜欢？'],
      fact: '用户吃素、对花生过敏，{m}{d}号请{n}个朋友吃饭。',
      entityFact: '用户对花生过敏。',
    },
  },
  {
    entity: { en: 'Kyoto', zh: '京都' },
    en: {
      user: ['I am planning a trip to Kyoto from {m} {d} for {n} days.', 'I like quiet temples and I hate crowds.', 'Which areas should I stay in?'],
      fact: 'The user plans {n} days in Kyoto from {m} {d}; likes quiet temples, hates crowds.',
      entityFact: 'Trip destination from {m} {d}, {n} days.',
    },
    zh: {
      user: ['我打算{m}{d}号去京都玩{n}天。', '我喜欢安静的寺庙，很讨厌人多。', '住在哪个区域比较好？'],
      fact: '用户计划{m}{d}号去京都{n}天，喜欢安静的寺庙，讨厌人多。',
      entityFact: '用户{m}{d}号起的旅行目的地，共{n}天。',
    },
  },
];

/** Assistant sentences (generic advice and follow-ups), by language. */
const ADVICE: Record<'en' | 'zh', string[]> = {
  en: [
    'That sounds like a lot to handle at once, so it helps to take it one step at a time.',
    'A short checklist usually makes this easier: write down the three things that matter most and start with the first.',
    'If anything changes, let me know and we can adjust the plan together.',
    'It is worth asking someone who has done this before; they often spot problems early.',
    'Try to leave some buffer time, because these things rarely go exactly as planned.',
    'You could also set a reminder two days before, so nothing gets forgotten.',
    'Keep notes of what you decide, with dates, so you can look back later.',
    'If the cost is a concern, compare at least two options before committing.',
    'Remember to take care of yourself as well; a tired mind makes worse decisions.',
    'I can draft a message or a plan for you if that would help.',
    'Most people in your situation find that the first week is the hardest, and it gets easier after that.',
    'Would you like me to break this down into a timeline with concrete dates?',
  ],
  zh: [
    '一下子要处理这么多事情确实不容易，可以一步一步来。',
    '列一个简单的清单通常会有帮助：先写下最重要的三件事，从第一件开始做。',
    '如果情况有变化，随时告诉我，我们可以一起调整计划。',
    '可以问问有经验的人，他们往往能提前发现问题。',
    '尽量留出一些缓冲时间，因为这类事情很少完全按计划进行。',
    '也可以提前两天设个提醒，免得忘记。',
    '把做出的决定和日期记下来，以后回头看会很方便。',
    '如果担心费用，签约之前至少比较两个方案。',
    '也要照顾好自己，太累的时候容易做出不好的决定。',
    '如果需要的话，我可以帮你起草一条消息或者一个计划。',
    '大多数人在这种情况下都觉得第一周最难，之后会慢慢轻松起来。',
    '需要我帮你按具体日期排一个时间表吗？',
  ],
};

const OPENERS: Record<'en' | 'zh', string[]> = {
  en: ['Thanks for telling me.', 'Good question.', 'I understand.', 'That makes sense.', 'Let me help with that.'],
  zh: ['谢谢你告诉我。', '好问题。', '我明白。', '这很合理。', '我来帮你想想。'],
};

const MONTHS_EN = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function fill(template: string, values: { m: number; d: number; n: number }, lang: 'en' | 'zh'): string {
  return template
    .replaceAll('{m}', lang === 'en' ? MONTHS_EN[values.m - 1]! : `${values.m}月`)
    .replaceAll('{d}', String(values.d))
    .replaceAll('{n}', String(values.n));
}

/**
 * Generates `count` exchanges (default 200) from `seed` (default 20240611). Exchange `i` is in
 * Chinese when `floor(i / 10)` is odd; one exchange in seven adds a sentence in the other language.
 */
export function generateConversation(count = 200, seed = 20240611): GeneratedExchange[] {
  const rand = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const out: GeneratedExchange[] = [];
  for (let i = 0; i < count; i++) {
    const language: 'en' | 'zh' = Math.floor(i / 10) % 2 === 1 ? 'zh' : 'en';
    const topic = TOPICS[Math.floor(rand() * TOPICS.length)]!;
    const values = { m: 1 + Math.floor(rand() * 12), d: 1 + Math.floor(rand() * 28), n: 2 + Math.floor(rand() * 9) };
    const t = topic[language];
    const userSentences = t.user.slice(0, 1 + Math.floor(rand() * t.user.length)).map((s) => fill(s, values, language));
    if (rand() < 1 / 7) userSentences.push(language === 'en' ? '顺便说一下，我最近很忙。' : 'By the way, work has been busy lately.');
    const sep = language === 'en' ? ' ' : '';
    const assistantSentences = [pick(OPENERS[language])];
    const adviceCount = 2 + Math.floor(rand() * 6);
    const pool = [...ADVICE[language]];
    for (let k = 0; k < adviceCount; k++) assistantSentences.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
    const name = topic.entity[language];
    assistantSentences.splice(
      1,
      0,
      language === 'en' ? `Noted about ${name}: ${fill(t.fact, values, language)}` : `关于${name}，我记下了：${fill(t.fact, values, language)}`,
    );
    out.push({
      index: i,
      language,
      user: userSentences.join(sep),
      assistant: assistantSentences.join(sep),
      entities: [{ name, fact: fill(t.entityFact, values, language) }],
      fact: fill(t.fact, values, language),
    });
  }
  return out;
}
