/**
 * Memory slots: a small bilingual (English + Simplified Chinese) classifier that says which
 * attribute of which subject a memory text is about, so that consolidation can show the model the
 * memories a new fact may contradict even when the two share no word and their embeddings are far
 * apart ("Lives in Shenzhen" / "Moved to Hangzhou", "我住在深圳" / "搬到了杭州").
 *
 * Slots (declared once in `SLOT_PATTERNS`, checked in this order; the first that matches wins):
 * - `project` — what someone works on (project, working on; 项目, 负责)
 * - `schedule` — a recurring routine (gym, workout, exercise, routine; 健身, 锻炼, 作息)
 * - `diet` — what someone eats as a rule (diet, vegetarian, vegan, eating habits; 饮食, 素食, 纯素, 吃素)
 * - `manager` — whom someone reports to (my manager, report to, supervisor; 领导, 上司, 汇报)
 * - `residence` — where someone lives (live, moved to, based in, address; 住在, 搬到, 定居, 住址)
 * - `work` — job, occupation or employer (I work, works as/at/for, job, employer, hired; 工作, 上班, 职业, 入职, 跳槽, 经理, 做护士)
 * - `school` — school, university, field of study (studies, university, major, graduated; 学校, 大学, 专业, 毕业), not a
 *   school's events (the school play, 学校演出)
 * - `age` — age or birthday (years old, birthday, born; 岁, 生日, 出生)
 * - `phone` — phone number (phone, mobile number; 电话, 手机号)
 * - `email` — e-mail address (email; 邮箱, 电子邮件)
 * - `name` — what someone is called (my name is, called, named; 我叫, 名字, 名叫)
 * - `partner` — partner or spouse (wife, husband, girlfriend, married, dating; 老婆, 老公, 爱人, 女朋友, 结婚, 交往, 分手)
 * - `pet` — the pets someone has (dog, cat, pet; 狗, 猫, 宠物)
 * The routine slots come first: "My gym days moved to Sundays" and "I've been moved from Project
 * Atlas to Project Nova" are about a schedule and a project, not where the user lives.
 * `SLOT_CLASSIFIER_VERSION` names this list: the index stores each memory's slot, and a layout
 * written with another version is rebuilt when the store opens.
 *
 * The subject is `user`, or the relative, partner or pet the text is about when it names one and
 * the slot is an attribute (`project` … `name`): "My sister Ana lives in Lisbon" is
 * `sister:residence`, not the user's residence; "My dog is called Rex" is `dog:name`. For the
 * `partner` and `pet` slots themselves the subject is the user ("Married to Lena" is
 * `user:partner`). Relation words are normalized to one English label per relation
 * ("姐姐", "sister" → `sister`), so the same slot matches across languages.
 *
 * A slot word that is only a topic talked, read or written about ("We talked about remote work",
 * "关于作息时间的邮件") is no slot (version 3): such texts state nobody's job or schedule, and as
 * same-slot candidates of retrieval they pushed the user's own statements down. Someone else's
 * partner or pet ("My boss's wife is …", "同事家的猫…") has that person as subject.
 *
 * The classifier is a heuristic for candidate selection only: a wrong slot costs one more
 * candidate shown to the model (which still decides), never a change to a memory.
 *
 * Over 300 lines: the slot patterns, the relation words and the readers that share them
 * (`memorySlot`, `statementSlot`, `subjectOf`, `statedSubject`) are one classifier.
 */

/** The slots, see the module doc. */
export type MemorySlot = 'project' | 'schedule' | 'diet' | 'manager' | 'residence' | 'work' | 'school' | 'age' | 'phone' | 'email' | 'name' | 'partner' | 'pet';

/**
 * Version of the classifier (2: the routine slots, first-person `work`, 交往/分手, 经理; 3: topic
 * mentions are no slot, someone else's partner or pet has that person as subject, and a stored
 * text's questions state no slot: `statementSlot`; 4: compounds whose head is not the slot noun —
 * 手机壳, phone case, 健身房 as a place — are no slot, a slot's own noun is not its subject, an
 * episodic round's role labels are stripped and each statement starts a line, 我家的猫 is the
 * household's cat; 5: a school's events and things — "the school play", 学校演出 — are no `school`,
 * a modifier may stand between the possessive and the relation word — 我好朋友住在昆明 is the
 * friend's residence —, 爱人 / 配偶 are partner words, 做 + an occupation — 在医院做护士 — is `work`,
 * what someone was busy with or argued over is a topic mention — 一直在忙作息时间的事);
 * stored with the index's slot and subject columns (`slotsVersion` of a meta
 * block). The one version of both: bump it whenever `statementSlot` or `statedSubject` returns
 * something else for a stored text, and stores rebuild both columns from the rows on open.
 */
export const SLOT_CLASSIFIER_VERSION = 5;

/** A slot of a subject: `subject` is `'user'` or a relation label (`sister`, `dog`, …). */
export interface SlotKey {
  subject: string;
  slot: MemorySlot;
}

/** Slot patterns, English then Chinese, in priority order (attributes before `partner`/`pet`). */
export const SLOT_PATTERNS: readonly { slot: MemorySlot; en: RegExp; zh: RegExp }[] = [
  { slot: 'project', en: /\b(?:projects?|working on|works? on)\b/iu, zh: /项目|负责/u },
  {
    slot: 'schedule',
    // Going to the gym, gym days, working out — not a gym as a place ("a gym near the station",
    // "新开了一家健身房": the compound's head 房 is the building, version 4).
    en: /\b(?:(?:go|goes|going|went|get|gets|hit|hits|hitting)\s+(?:to\s+)?the\s+gym|gym\s+(?:days?|sessions?|schedule|routine|time|on|every|twice)|work ?outs?|working out|exercis(?:e|es|ing)|routine|schedule)\b/iu,
    zh: /(?:去|上|到)健身房|健身(?!房)|锻炼|作息/u,
  },
  {
    slot: 'diet',
    en: /\b(?:diet|vegetarian|vegan|pescatarian|keto|plant-based|eating habits|no meat)\b/iu,
    zh: /饮食|素食|纯素|吃素|鱼素|不吃肉|忌口/u,
  },
  {
    slot: 'manager',
    en: /\b(?:(?:my|new|our)\s+(?:\w+\s+)?(?:manager|supervisor|team lead)(?!['’]s)|reports?\s+to|reporting\s+to)\b/iu,
    zh: /领导|上司|主管|汇报/u,
  },
  {
    slot: 'residence',
    en: /\b(?:lives?|lived|living|moved|moving|relocat(?:ed|ing)|resides?|resided|based in|home (?:is|town)|address|flat in|apartment in|house in)\b/iu,
    zh: /住在|住到|住哪|住址|居住|定居|搬到|搬去|搬来|搬家|家在|住处|常住/u,
  },
  {
    slot: 'work',
    // "I work", "am I working", "works as/at/for", job words, "I'm a … engineer": a statement or a
    // question about someone's job, not every "work" ("remote work", "how the office move works").
    en: /\b(?:(?:i|we|you|he|she|they)\s+(?:\w+\s+){0,2}(?:work|works|worked|working)|(?:works?|worked|working)\s+(?:as|at|for)|job|jobs|employer|employed|employee|occupation|profession|career|hired|joined|quit|resigned|(?:is|am|was|['’]m) an? (?:\w+ )?(?:engineer|developer|teacher|nurse|doctor|designer|manager|lawyer|programmer|accountant))\b/iu,
    // "在医院做护士", "做会计": 做 + an occupation is a job as 当 + one is (version 5).
    zh: /工作|上班|职业|就职|任职|入职|跳槽|辞职|离职|打工|经理|工程师|程序员|当(?:了)?(?:一名|一个)?\S{0,4}(?:师|员|生|家)|做(?:了|过)?(?:一名|一个)?(?:[\u4e00-\u9fff]{0,3}(?:师|员|士)|会计|医生|记者|司机|销售|编辑|翻译)/u,
  },
  {
    slot: 'school',
    // Where someone studies — not an event or thing a school has ("the school play", "school trip",
    // "学校演出", "学校运动会": a compound whose head is another noun, as "phone case"; version 5).
    en: /\b(?:school(?!\s+(?:plays?|concerts?|trips?|bus(?:es)?|runs?|fairs?|holidays?|events?|shows?|musicals?|reunions?|uniforms?|fees?|supplies|dances?|parties|party|sports day|fundraisers?|assembl(?:y|ies)|performances?)\b)|university|college|studies|studied|studying|student at|major(?:ed|ing)? in|graduated|degree|phd|master'?s)\b/iu,
    zh: /学校(?!的?(?:演出|表演|晚会|运动会|活动|旅行|春游|秋游|校车|聚会|音乐会|比赛|开放日|家长会))|大学|学院|中学|高中|小学|读书|上学|念书|专业|毕业|就读|读研|读博/u,
  },
  {
    slot: 'age',
    en: /\b(?:\d{1,3} years? old|age|aged|birthday|born(?!\s+(?:and raised\s+)?in\b))\b/iu,
    zh: /\d{1,3}\s*岁|岁了|年龄|生日|出生/u,
  },
  {
    slot: 'phone',
    // The phone itself or its number — not a compound whose head is another thing ("phone case",
    // "手机壳", "手机膜": accessories; version 4).
    en: /\b(?:phone|mobile|cell(?:phone)?)\b(?!\s+(?:cases?|covers?|chargers?|cables?|stands?|holders?|screen protectors?|mounts?|straps?|shops?|stores?)\b)/iu,
    zh: /电话|手机号|手机(?!壳|套|膜|支架|充电器|充电线|数据线|挂绳|链|店)/u,
  },
  { slot: 'email', en: /\be-?mail\b/iu, zh: /邮箱|电子邮件|邮件地址/u },
  {
    slot: 'name',
    en: /\b(?:my name|name is|named|called|goes by|go by)\b/iu,
    zh: /我叫|叫做|名字|名叫|姓名|取名|起名|叫[\u4e00-\u9fff]{1,3}(?:$|[。！!，,；;])/u,
  },
  {
    slot: 'partner',
    en: /\b(?:wife|husband|girlfriend|boyfriend|partner|spouse|fianc[eé]e?|married|engaged|divorced|dating|split up|broke up)\b/iu,
    zh: /老婆|老公|爱人|妻子|丈夫|配偶|女朋友|男朋友|女友|男友|对象|伴侣|结婚|离婚|订婚|未婚妻|未婚夫|交往|谈恋爱|恋爱|分手/u,
  },
  {
    slot: 'pet',
    // Someone's own pet ("my cat", "we adopted a puppy", "我家的猫", "养了一只狗"), not every animal
    // mentioned ("I saw a stray cat in the park", "公园里的流浪猫").
    en: /\b(?:my|our|have|has|had|adopted|got)\s+(?:an?\s+|two\s+|three\s+)?(?:\w+\s+)?(?:pets?|dogs?|puppy|cats?|kitten|parrot|hamster|rabbit|bunny|goldfish)\b/iu,
    zh: /(?:我|我们|咱们|用户)(?:家|的|家的)?\S{0,3}(?:宠物|狗|猫|鹦鹉|仓鼠|兔子|金鱼)|(?:养|收养|领养)(?:了)?\S{0,4}(?:宠物|狗|猫|鹦鹉|仓鼠|兔子|金鱼)/u,
  },
];

/** Relation words (EN, ZH alternations) → one label. Checked in this order; the first found is the subject. */
const RELATION_WORDS: readonly { label: string; en: string; zh: string }[] = [
  { label: 'in-law', en: '(?:brother|sister|mother|father|son|daughter)s?-in-law', zh: '姐夫|妹夫|嫂子|弟妹|岳父|岳母|公公|婆婆' },
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
    zh: '老婆|老公|爱人|妻子|丈夫|配偶|女朋友|男朋友|女友|男友|对象|伴侣|未婚妻|未婚夫',
  },
  { label: 'friend', en: 'friends?', zh: '朋友' },
  { label: 'colleague', en: 'colleagues?|coworkers?|boss|teammates?', zh: '同事|老板|领导|队友' },
  { label: 'neighbour', en: 'neighbou?rs?', zh: '邻居' },
  { label: 'roommate', en: 'roommates?|flatmates?|housemates?', zh: '室友|舍友' },
  { label: 'relative', en: 'cousins?|aunts?|uncles?|nieces?|nephews?', zh: '表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹|叔叔|阿姨|舅舅|姑姑' },
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
  // `m`: each line of a classified text is one statement (`statementSlot` joins them with line breaks).
  en: new RegExp(`(?:^\\s*|\\b(?:my|his|her|our|their|user's|has an?|have an?|had an?|got an?|adopted an?)\\s+)(?:[\\p{L}-]+\\s+)?(?:${en})\\b`, 'imu'),
  // 我家的猫 / 我们家的狗: the household's pet (version 4; before, "我家的猫叫小白" was the user's name).
  // 我好朋友 / 我老同事 / 我大表哥: a modifier between the possessive and the relation word (version 5; before,
  // "我好朋友住在昆明" was the user's residence). `LEADING_RELATIONS` allows the same modifiers.
  zh: new RegExp(`(?:^\\s*|我们?家的?|咱家的?|我的?|他的|她的|用户的|有一?[只条个位]?|养了?一?[只条]?)[好老小大亲]?(?:${zh})`, 'mu'),
}));

/**
 * Attribute slots whose value is a person named by a relation word: that word is the slot's own
 * noun, not its subject ("My boss is Tom", "我的领导是陈总": `user:manager`, version 4; before,
 * `colleague:manager`). Someone else's manager keeps its owner ("My sister's boss …").
 */
const SLOT_OWN_NOUNS: Partial<Record<MemorySlot, RegExp>> = {
  manager: /\b(?:boss|manager|supervisor|team lead)\b(?!['’]s)|(?:领导|上司|主管|老板)(?!的|家)/giu,
};

/** Slots that are attributes of a subject (the subject may be someone other than the user). */
const ATTRIBUTE_SLOTS: ReadonlySet<MemorySlot> = new Set([
  'project',
  'schedule',
  'diet',
  'manager',
  'residence',
  'work',
  'school',
  'age',
  'phone',
  'email',
  'name',
]);

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
  const normalized = withoutTopicMentions(text.normalize('NFKC'));
  const slot = SLOT_PATTERNS.find((p) => matches(p, normalized))?.slot;
  if (!slot) return null;
  if (!ATTRIBUTE_SLOTS.has(slot)) {
    // "My boss's wife is an architect", "同事家的猫叫橘子": the partner or pet of someone else.
    const owner = POSSESSORS.find((r) => r.label !== slot && !OWN_RELATION_LABELS[slot]?.has(r.label) && matches(r, normalized));
    return { subject: owner?.label ?? 'user', slot };
  }
  // The slot's own noun names the value, not a subject: "My boss is Tom" / "我的领导是陈总" are the user's manager.
  const own = SLOT_OWN_NOUNS[slot];
  const rest = own ? normalized.replace(own, ' ') : normalized;
  const relation = RELATIONS.find((r) => matches(r, rest));
  return { subject: relation?.label ?? 'user', slot };
}

/**
 * Topic mentions: a slot word that is only what was talked, read or written about, busy with or
 * argued over ("We talked about remote work", "Explain the school play", "work was busy with the
 * office move", "关于作息时间的邮件", "讲作息时间的文章", "聊了一会儿作息时间", "一直在忙作息时间的事",
 * "为了作息时间吵了一架") states nobody's job, school or schedule. `withoutTopicMentions` blanks these phrases
 * before the slot patterns are matched.
 */
const TOPIC_MENTIONS: readonly RegExp[] = [
  /\b(?:about|regarding|explain(?:ed|ing|s)?|busy with)\s+(?:[\p{L}\p{N}'’-]+\s*){1,4}/giu,
  /(?:关于|有关|讲|解释一下|聊了一会儿|聊了聊|谈了谈)[^，。！？；,.!?;]{1,12}/gu,
  // What someone was busy with or argued over (version 5): "一直在忙作息时间的事", "为了作息时间吵了一架".
  /忙[^，。！？；,.!?;]{1,12}?的事|为了[^，。！？；,.!?;]{1,12}?(?:吵|争)/gu,
];

/** `text` with its topic mentions (`TOPIC_MENTIONS`) replaced by a space. */
function withoutTopicMentions(text: string): string {
  return TOPIC_MENTIONS.reduce((t, pattern) => t.replace(pattern, ' '), text);
}

/**
 * A relation word in possessive form ("my boss's", "her sister's", "老板的", "同事家的"): the
 * owner of the partner or pet a text is about, when that is not the user.
 */
const POSSESSORS = RELATION_WORDS.map(({ label, en, zh }) => ({
  label,
  en: new RegExp(`\\b(?:${en})['’]s\\b`, 'iu'),
  zh: new RegExp(`(?:${zh})(?:家)?的|(?:${zh})家`, 'u'),
}));

/** Relation labels that name the partner or pet itself (not an owner) for the `partner` and `pet` slots. */
const OWN_RELATION_LABELS: Partial<Record<MemorySlot, ReadonlySet<string>>> = {
  partner: new Set(['partner']),
  pet: new Set(['dog', 'cat', 'pet']),
};

/** A sentence and its end mark (`.`, `!`, `?`, `。`, `！`, `？`, `；`, a line break), for `statementSlot`. */
const SENTENCE = /[^.!?。！？；\n]+[.!?。！？；\n]*/gu;

/**
 * The slot a stored text *states*: `memorySlot` of its sentences that are not questions. "What's
 * the school play about?", "作息时间是怎么回事？" or a user's own "Where do I work now?" state no
 * attribute, so a stored round made of questions is about no slot; the question a user asks at
 * retrieval time is classified whole with `memorySlot`. Version 3 of the classifier.
 * @param text a memory text (an episodic round holds both turns; each sentence is judged alone).
 * @returns `memorySlot` of the statement sentences joined, or `null` when there is none.
 */
export function statementSlot(text: string): SlotKey | null {
  const statements = (withoutRoleLabels(text.normalize('NFKC')).match(SENTENCE) ?? []).filter((sentence) => !/[?？]\s*$/u.test(sentence));
  return statements.length === 0 ? null : memorySlot(statements.map((sentence) => sentence.trim()).join('\n'));
}

/**
 * An episodic round's role labels ("User: ", "Assistant: " at the start of a line) removed: each
 * turn then starts its line, so a subject at the start of a turn ("User: 朋友说…") is found
 * (version 4; before, the label hid it and the statement was the user's).
 */
function withoutRoleLabels(text: string): string {
  return text.replace(/^[ \t]*(?:User|Assistant)[ \t]*[:：][ \t]*/gmu, '');
}

/**
 * Who a text is about when it names no slot: the relation it names as a subject (the relation
 * detector of `memorySlot`: "My sister is training for a marathon" → `sister`), else `user`.
 * @param text a statement, any language.
 */
export function subjectOf(text: string): string {
  const normalized = withoutTopicMentions(withoutRoleLabels(text.normalize('NFKC')));
  return RELATIONS.find((r) => matches(r, normalized))?.label ?? 'user';
}

/**
 * A relation word where a statement starts, as its grammatical subject: "My neighbour wears size
 * 40 shoes", "My best friend …", "The user's sister …", "我邻居对海鲜过敏", "我好朋友每个周五…",
 * "同事过段时间要去上海", "我同事的老婆是医生" (the colleague: the possessor comes first).
 */
const LEADING_RELATIONS = RELATION_WORDS.map(({ label, en, zh }) => ({
  label,
  en: new RegExp(`^(?:(?:my|our|(?:the )?user['’]s)\\s+(?:[\\p{L}-]+\\s+)?)?(?:${en})\\b`, 'iu'),
  zh: new RegExp(`^(?:(?:我们?|咱们?|用户)(?:家)?的?)?[好老小大亲]?(?:${zh})`, 'u'),
}));

/** A statement that starts with a first-person word ("I …", "I'm …", "My …", "We …", "我…", "咱们…"): the user's own. */
const LEADING_FIRST_PERSON = /^(?:(?:i|i['’]m|i['’]ve|i['’]d|i['’]ll|my|we|we['’]re|our|me)\b|我|咱)/iu;

/**
 * Whom a stored text's statements are about, read from where its statements start (a stricter
 * reading than `subjectOf`, which also takes a relation word after a preposition: "I had dinner with
 * my sister" is the user's dinner): the relation label of the first statement that starts with a
 * relation word (`LEADING_RELATIONS`), `user` when a statement starts with a first-person word
 * before that, else `user`. Questions state nothing (`statementSlot`'s rule) and are skipped; a text
 * made only of questions gives `null`.
 * @param text a memory text or an episodic round's user turn, any language, any case.
 * @example statedSubject('My neighbour wears size 40 shoes.') // 'neighbour'
 * @example statedSubject('提醒一下，我芝麻过敏。') // 'user'
 * @example statedSubject('Can you remind me how remote work works?') // null
 */
export function statedSubject(text: string): string | null {
  const statements = (withoutRoleLabels(text.normalize('NFKC')).match(SENTENCE) ?? []).filter((sentence) => !/[?？]\s*$/u.test(sentence));
  if (statements.length === 0) return null;
  for (const sentence of statements) {
    // Each clause of a statement: "提醒一下，我芝麻过敏" starts its second clause with 我.
    for (const clause of sentence.split(/[,，:：]/u)) {
      const trimmed = clause.trim();
      const relation = LEADING_RELATIONS.find((r) => r.en.test(trimmed) || r.zh.test(trimmed));
      if (relation) return relation.label;
      if (LEADING_FIRST_PERSON.test(trimmed)) return 'user';
    }
  }
  return 'user';
}

/** `true` when two texts are about the same slot of the same subject (both classified, equal). */
export function sameSlot(a: SlotKey | null, b: SlotKey | null): boolean {
  return a !== null && b !== null && a.slot === b.slot && a.subject === b.subject;
}
