/**
 * Dialog-shaped plants of the generated retrieval benchmark (see `./generate.ts`): what real
 * two-person multi-session dialogs have and the first-person templates of `./templates.ts` lack.
 * Written by hand in English and Chinese (Chinese sides mix in English words, as bilingual
 * speakers do). The two speakers are named (`SPEAKERS`); questions ask about the user by name.
 *
 * - `NEXT_TURN`: the assistant asks ("Which cuisine do you like?"), the answer is the user's
 *   NEXT turn, which shares no content word with the question; evidence = the answer round.
 * - `PARAPHRASE`: a fact stated in other words than the question uses (hypernyms, synonyms).
 * - `RELATIVE`: an event told with a relative time ("two months ago", 上个月) months before a
 *   similar later event; the question names the earlier event by what was said.
 * Placeholders: `{v}` value, `{name}` the user's name.
 */

/** Speaker names: the user (role user) and the other person (role assistant). */
export const SPEAKERS = { user: 'Mia', other: 'Jonas', userZh: '米娅' } as const;

/** A reply of the other speaker that addresses the user by name (the "Thanks, Anna!" distractor). */
export const ADDRESSING_EN = ['Thanks, {name}!', 'Good to hear from you, {name}.', 'Sounds great, {name}.', 'Take care, {name}!'];
export const ADDRESSING_ZH = ['谢谢你，{name}！', '{name}，很高兴听到你的消息。', '听起来不错，{name}。', '{name}，保重！'];

/** One language side of a next-turn plant: round 1 = setup + the other's question, round 2 = the answer. */
export interface NextTurnSide {
  setup: string;
  askBack: string;
  answer: string;
  reply: string;
  question: string;
  values: string[];
}

export const NEXT_TURN: { key: string; en: NextTurnSide; zh: NextTurnSide }[] = [
  {
    key: 'cuisine',
    en: {
      setup: "I'm trying to plan dinners for next week.",
      askBack: 'Which cuisine do you like best?',
      answer: '{v}, definitely, the spicier the better.',
      reply: 'Noted, I will suggest some recipes.',
      question: 'Which cuisine does {name} like best?',
      values: ['Sichuan', 'Thai', 'Korean', 'Mexican'],
    },
    zh: {
      setup: '我在计划下周的晚饭。',
      askBack: '你最喜欢哪种菜系？',
      answer: '当然是{v}，越辣越好。',
      reply: '好的，我给你推荐几个菜谱。',
      question: '{name}最喜欢哪种菜系？',
      values: ['川菜', '湘菜', '泰国菜', '韩国菜'],
    },
  },
  {
    key: 'sport',
    en: {
      setup: 'I want to get fitter this year.',
      askBack: 'What kind of exercise do you enjoy?',
      answer: 'Honestly {v}, I could do it every day.',
      reply: 'Then let us build a plan around it.',
      question: 'What exercise does {name} enjoy?',
      values: ['swimming', 'bouldering', 'rowing', 'cycling'],
    },
    zh: {
      setup: '今年想把身体练好一点。',
      askBack: '你喜欢什么运动？',
      answer: '其实是{v}，每天都可以去。',
      reply: '那我们就围绕它做个计划。',
      question: '{name}喜欢什么运动？',
      values: ['游泳', '攀岩', '羽毛球', '骑车'],
    },
  },
  {
    key: 'pet-wish',
    en: {
      setup: 'We are thinking about getting a pet.',
      askBack: 'Which animal would you pick?',
      answer: 'A {v}, I have always wanted one.',
      reply: 'That is a lovely choice.',
      question: 'Which animal would {name} pick as a pet?',
      values: ['rabbit', 'parrot', 'tortoise', 'hamster'],
    },
    zh: {
      setup: '我们在考虑养个宠物。',
      askBack: '你会选什么动物？',
      answer: '一只{v}吧，我一直都想要。',
      reply: '这个选择很可爱。',
      question: '{name}想养什么动物当宠物？',
      values: ['兔子', '鹦鹉', '乌龟', '仓鼠'],
    },
  },
  {
    key: 'shop',
    en: {
      setup: 'I need to restock the fridge this weekend.',
      askBack: 'Where do you usually do the big shop?',
      answer: 'At {v}, it is on my way home.',
      reply: 'Good, I will add it to the list.',
      question: 'Where does {name} usually buy groceries?',
      values: ['Costco', 'Aldi', 'Lidl', 'Tesco'],
    },
    zh: {
      setup: '这个周末要把冰箱补满。',
      askBack: '你一般去哪里大采购？',
      answer: '去{v}，就在我回家的路上。',
      reply: '好，我记到清单里。',
      question: '{name}一般在哪儿买菜？',
      values: ['Costco', '盒马', '山姆', '永辉'],
    },
  },
];

/** A fact stated in other words than its question. */
export interface ParaphraseSide {
  say: string;
  question: string;
  values: string[];
}

export const PARAPHRASE: { key: string; en: ParaphraseSide; zh: ParaphraseSide }[] = [
  {
    key: 'job',
    en: {
      say: 'I spend my days looking after patients as a {v}.',
      question: 'What is the occupation of {name}?',
      values: ['nurse', 'physiotherapist', 'paramedic', 'midwife'],
    },
    zh: { say: '我每天在医院照顾病人，是一名{v}。', question: '{name}是做什么职业的？', values: ['护士', '医生', '药剂师', '理疗师'] },
  },
  {
    key: 'commute',
    en: { say: 'Every morning I take the {v} to the office.', question: 'How does {name} get to work?', values: ['tram', 'ferry', 'metro', 'bus'] },
    zh: { say: '我每天早上坐{v}去公司。', question: '{name}怎么上班？', values: ['地铁', '公交', '轮渡', 'BRT'] },
  },
  {
    key: 'hobby',
    en: {
      say: 'On weekends I am usually out with my camera doing {v}.',
      question: 'What does {name} do in their free time?',
      values: ['street photography', 'birdwatching photography', 'night photography', 'portrait photography'],
    },
    zh: { say: '周末我一般背着相机出去拍{v}。', question: '{name}空闲的时候喜欢做什么？', values: ['街景', '鸟类', '夜景', '人像'] },
  },
  {
    key: 'drink',
    en: {
      say: 'I cannot start the morning without a cup of {v}.',
      question: 'Which beverage does {name} need to wake up?',
      values: ['espresso', 'green tea', 'oolong', 'flat white'],
    },
    zh: { say: '早上不喝一杯{v}我就醒不过来。', question: '{name}早上要喝什么饮料？', values: ['美式', '绿茶', '乌龙茶', '拿铁'] },
  },
];

/** An event told relatively ("two months ago …"); a later similar event is the distractor. */
export interface RelativeSide {
  earlier: string;
  later: string;
  question: string;
  values: string[];
}

export const RELATIVE: { key: string; en: RelativeSide; zh: RelativeSide }[] = [
  {
    key: 'concert',
    en: {
      earlier: 'Two months ago I went to my very first {v} concert.',
      later: 'Went to another concert last night, a {v} band this time.',
      question: 'What kind of concert was the first one {name} went to?',
      values: ['jazz', 'opera', 'metal', 'folk'],
    },
    zh: {
      earlier: '两个月前我第一次去听了{v}音乐会。',
      later: '昨晚又去听了一场音乐会，这次是{v}。',
      question: '{name}第一次去的是什么音乐会？',
      values: ['爵士', '歌剧', '摇滚', '民谣'],
    },
  },
  {
    key: 'trip',
    en: {
      earlier: 'Last month we finally took that trip to {v}.',
      later: 'We are back from {v}, our second trip this year.',
      question: 'Where did {name} go on the long-awaited trip?',
      values: ['Iceland', 'Morocco', 'Peru', 'Norway'],
    },
    zh: {
      earlier: '上个月我们终于去了一直想去的{v}。',
      later: '我们刚从{v}回来，这是今年第二次旅行。',
      question: '{name}一直想去、终于去成的地方是哪里？',
      values: ['冰岛', '云南', '新疆', '西藏'],
    },
  },
  {
    key: 'course',
    en: {
      earlier: 'A few weeks ago I signed up for a {v} course at the community centre.',
      later: 'Started a new {v} course today, online this time.',
      question: 'Which course did {name} take at the community centre?',
      values: ['pottery', 'woodworking', 'watercolour', 'sewing'],
    },
    zh: {
      earlier: '几周前我在社区中心报了一个{v}课。',
      later: '今天又开了一门{v}课，这次是网课。',
      question: '{name}在社区中心报的是什么课？',
      values: ['陶艺', '木工', '水彩', '缝纫'],
    },
  },
];
