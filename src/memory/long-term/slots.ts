/**
 * Memory slots: a small bilingual (English + Simplified Chinese) classifier that says which
 * attribute of which subject a memory text is about, so that consolidation can show the model the
 * memories a new fact may contradict even when the two share no word and their embeddings are far
 * apart ("Lives in Shenzhen" / "Moved to Hangzhou", "我住在深圳" / "搬到了杭州").
 *
 * Slots (declared once in `SLOT_PATTERNS`, checked in this order; the first that matches wins):
 * - `residence` — where someone lives (live, moved to, based in, address; 住在, 搬到, 定居, 住址)
 * - `work` — job, occupation or employer (works as/at/for, job, employer, hired; 工作, 上班, 职业, 入职, 跳槽)
 * - `school` — school, university, field of study (studies, university, major, graduated; 学校, 大学, 专业, 毕业)
 * - `age` — age or birthday (years old, birthday, born; 岁, 生日, 出生)
 * - `phone` — phone number (phone, mobile number; 电话, 手机号)
 * - `email` — e-mail address (email; 邮箱, 电子邮件)
 * - `name` — what someone is called (my name is, called, named; 我叫, 名字, 名叫)
 * - `partner` — partner or spouse (wife, husband, girlfriend, married; 老婆, 老公, 女朋友, 结婚)
 * - `pet` — the pets someone has (dog, cat, pet; 狗, 猫, 宠物)
 *
 * The subject is `user`, or the relative, partner or pet the text is about when it names one and
 * the slot is an attribute (`residence` … `name`): "My sister Ana lives in Lisbon" is
 * `sister:residence`, not the user's residence; "My dog is called Rex" is `dog:name`. For the
 * `partner` and `pet` slots themselves the subject is the user ("Married to Lena" is
 * `user:partner`). Relation words are normalized to one English label per relation
 * ("姐姐", "sister" → `sister`), so the same slot matches across languages.
 *
 * The classifier is a heuristic for candidate selection only: a wrong slot costs one more
 * candidate shown to the model (which still decides), never a change to a memory.
 */

/** The slots, see the module doc. */
export type MemorySlot = 'residence' | 'work' | 'school' | 'age' | 'phone' | 'email' | 'name' | 'partner' | 'pet';

/** A slot of a subject: `subject` is `'user'` or a relation label (`sister`, `dog`, …). */
export interface SlotKey {
  subject: string;
  slot: MemorySlot;
}

/** Slot patterns, English then Chinese, in priority order (attributes before `partner`/`pet`). */
export const SLOT_PATTERNS: readonly { slot: MemorySlot; en: RegExp; zh: RegExp }[] = [
  {
    slot: 'residence',
    en: /\b(?:lives?|lived|living|moved|moving|relocat(?:ed|ing)|resides?|resided|based in|home (?:is|town)|address|flat in|apartment in|house in)\b/iu,
    zh: /住在|住到|住址|居住|定居|搬到|搬去|搬来|搬家|家在|住处|常住/u,
  },
  {
    slot: 'work',
    en: /\b(?:works?|worked|working|job|jobs|employer|employed|employee|occupation|profession|career|hired|joined|quit|resigned|(?:is|am|was) an? (?:\w+ )?(?:engineer|developer|teacher|nurse|doctor|designer|manager|lawyer|programmer|accountant))\b/iu,
    zh: /工作|上班|职业|就职|任职|入职|跳槽|辞职|离职|打工|当(?:了)?(?:一名|一个)?\S{0,4}(?:师|员|生|家)/u,
  },
  {
    slot: 'school',
    en: /\b(?:school|university|college|studies|studied|studying|student at|major(?:ed|ing)? in|graduated|degree|phd|master'?s)\b/iu,
    zh: /学校|大学|学院|中学|高中|小学|读书|上学|念书|专业|毕业|就读|读研|读博/u,
  },
  {
    slot: 'age',
    en: /\b(?:\d{1,3} years? old|age|aged|birthday|born)\b/iu,
    zh: /\d{1,3}\s*岁|岁了|年龄|生日|出生/u,
  },
  { slot: 'phone', en: /\b(?:phone|mobile|cell(?:phone)?)\b/iu, zh: /电话|手机号|手机/u },
  { slot: 'email', en: /\be-?mail\b/iu, zh: /邮箱|电子邮件|邮件地址/u },
  {
    slot: 'name',
    en: /\b(?:my name|name is|named|called|goes by|go by)\b/iu,
    zh: /我叫|叫做|名字|名叫|姓名|取名|起名|叫[\u4e00-\u9fff]{1,3}$/u,
  },
  {
    slot: 'partner',
    en: /\b(?:wife|husband|girlfriend|boyfriend|partner|spouse|fianc[eé]e?|married|engaged|divorced|dating)\b/iu,
    zh: /老婆|老公|妻子|丈夫|女朋友|男朋友|女友|男友|对象|伴侣|结婚|离婚|订婚|未婚妻|未婚夫/u,
  },
  {
    slot: 'pet',
    en: /\b(?:pets?|dogs?|puppy|cats?|kitten|parrot|hamster|rabbit|bunny|goldfish)\b/iu,
    zh: /宠物|狗|猫|鹦鹉|仓鼠|兔子|金鱼/u,
  },
];

/** Relation words (EN, ZH alternations) → one label. Checked in this order; the first found is the subject. */
const RELATION_WORDS: readonly { label: string; en: string; zh: string }[] = [
  { label: 'sister', en: 'sisters?', zh: '姐姐|妹妹|姐妹' },
  { label: 'brother', en: 'brothers?', zh: '哥哥|弟弟|兄弟' },
  { label: 'mother', en: 'mother|mom|mum|mama', zh: '妈妈|母亲|老妈' },
  { label: 'father', en: 'father|dad|papa', zh: '爸爸|父亲|老爸' },
  { label: 'son', en: 'sons?', zh: '儿子' },
  { label: 'daughter', en: 'daughters?', zh: '女儿' },
  { label: 'grandparent', en: 'grand(?:ma|pa|mother|father|parents?)', zh: '爷爷|奶奶|外公|外婆|姥姥|姥爷' },
  {
    label: 'partner',
    en: 'wife|husband|girlfriend|boyfriend|partner|spouse|fianc[eé]e?',
    zh: '老婆|老公|妻子|丈夫|女朋友|男朋友|女友|男友|对象|伴侣|未婚妻|未婚夫',
  },
  { label: 'friend', en: 'friends?', zh: '朋友' },
  { label: 'colleague', en: 'colleagues?|coworkers?|boss', zh: '同事|老板|领导' },
  { label: 'dog', en: 'dogs?|puppy', zh: '狗' },
  { label: 'cat', en: 'cats?|kitten', zh: '猫' },
  { label: 'pet', en: 'pets?|parrot|hamster|rabbit|bunny|goldfish', zh: '宠物|鹦鹉|仓鼠|兔子|金鱼' },
];

/**
 * A relation word is the subject only where it stands as one: at the start, after a possessive
 * ("my sister", "her little dog", "用户的猫", "我妹妹") or introduced ("has a cat", "养了一只猫").
 * "I work at a pet shop" stays the user's job.
 */
const RELATIONS = RELATION_WORDS.map(({ label, en, zh }) => ({
  label,
  en: new RegExp(`(?:^\\s*|\\b(?:my|his|her|our|their|user's|has an?|have an?|had an?|got an?|adopted an?)\\s+)(?:[\\p{L}-]+\\s+)?(?:${en})\\b`, 'iu'),
  zh: new RegExp(`(?:^\\s*|我的?|他的|她的|用户的|有一?[只条个位]?|养了?一?[只条]?)(?:${zh})`, 'u'),
}));

/** Slots that are attributes of a subject (the subject may be someone other than the user). */
const ATTRIBUTE_SLOTS: ReadonlySet<MemorySlot> = new Set(['residence', 'work', 'school', 'age', 'phone', 'email', 'name']);

const matches = (p: { en: RegExp; zh: RegExp }, text: string) => p.en.test(text) || p.zh.test(text);

/**
 * Classifies a memory text into a slot of a subject (see the module doc).
 * @param text a memory or extracted item, any language (English and Chinese patterns exist).
 * @returns the slot and its subject, or `null` when the text is about none of the slots.
 * @example memorySlot('Lives in Shenzhen') // { subject: 'user', slot: 'residence' }
 * @example memorySlot('我妹妹住在里斯本') // { subject: 'sister', slot: 'residence' }
 * @example memorySlot('Likes oolong tea') // null
 */
export function memorySlot(text: string): SlotKey | null {
  const normalized = text.normalize('NFKC');
  const slot = SLOT_PATTERNS.find((p) => matches(p, normalized))?.slot;
  if (!slot) return null;
  if (!ATTRIBUTE_SLOTS.has(slot)) return { subject: 'user', slot };
  const relation = RELATIONS.find((r) => matches(r, normalized));
  return { subject: relation?.label ?? 'user', slot };
}

/** `true` when two texts are about the same slot of the same subject (both classified, equal). */
export function sameSlot(a: SlotKey | null, b: SlotKey | null): boolean {
  return a !== null && b !== null && a.slot === b.slot && a.subject === b.subject;
}
