/**
 * Sentence templates of the generated retrieval benchmark (see `./generate.ts`), written by hand
 * in English and Chinese (each language written natively, not translated word for word).
 *
 * - `FACTS`: stable personal facts, each stated once, asked with two phrasings.
 * - `UPDATES`: a value stated early and replaced months later ("I moved to …"); the question asks
 *   for the current value; the first statement is the stale evidence.
 * - `TEMPORAL`: past events told in the month they happened; the question names the time
 *   ("in March", "last week", "3月", "上周"); sibling events of the same kind in other months are
 *   planted as distractors.
 * - `EVENTS`: appointments announced in advance that expire; an older one of the same kind is
 *   the stale evidence.
 * - `DISTRACTORS_*` and `REPLIES_*`: everyday chat with shared vocabulary (cities, foods, people).
 * Placeholders: `{v}` value, `{a}`/`{b}` old/new value, `{n}` a name, `{who}` another person,
 * `{expr}` a time expression, others filled from `SLOTS_*`.
 */

/** One language side of a fact template. */
export interface FactSide {
  say: string[];
  ask: string[];
  values: string[];
  names?: string[];
  /** A near-distractor: the same kind of fact about someone else. */
  other: string;
}

/** A personal fact in both languages. */
export interface FactTemplate {
  key: string;
  en: FactSide;
  zh: FactSide;
}

export const WHO_EN = ['colleague', 'neighbour', 'best friend', 'cousin', 'boss', 'roommate', 'brother-in-law', 'teammate'];
export const WHO_ZH = ['同事', '邻居', '好朋友', '表哥', '老板', '室友', '姐夫', '队友'];

export const FACTS: FactTemplate[] = [
  {
    key: 'cat',
    en: { say: ['My cat is called {v}, she just turned three.', 'We named our cat {v} when we adopted her.'], ask: ["What's my cat's name?", 'What did I name my cat?'], values: ['Mochi', 'Biscuit', 'Luna', 'Pepper', 'Noodle'], other: "My {who}'s cat is called {v}." },
    zh: { say: ['我家的猫叫{v}，刚满三岁。', '我们收养的那只猫取名叫{v}。'], ask: ['我家的猫叫什么名字？', '我给猫取的名字是什么？'], values: ['小白', '咪咪', '豆豆', '团子', '橘子'], other: '{who}家的猫叫{v}。' },
  },
  {
    key: 'sister',
    en: { say: ['My sister {n} lives in {v} now.', 'My sister {n} moved to {v} for work years ago and stayed there.'], ask: ['Where does my sister live?', 'Which city is my sister in?'], values: ['Lisbon', 'Vancouver', 'Melbourne', 'Edinburgh', 'Osaka'], names: ['Ana', 'Clara', 'Maya', 'Sofia'], other: 'My {who} lives in {v}.' },
    zh: { say: ['我姐姐现在住在{v}。', '我姐姐几年前去{v}工作，就一直住在那里。'], ask: ['我姐姐住在哪个城市？', '我姐姐现在在哪里住？'], values: ['成都', '西安', '厦门', '青岛', '昆明'], other: '我{who}住在{v}。' },
  },
  {
    key: 'allergy',
    en: { say: ["I'm allergic to {v}, so please keep that in mind for recipes.", "Just so you know, I can't eat {v} because of an allergy."], ask: ['What am I allergic to?', 'Do I have any food allergies?'], values: ['peanuts', 'shellfish', 'sesame', 'kiwi'], other: 'My {who} is allergic to {v}.' },
    zh: { say: ['我对{v}过敏，做菜的时候请注意。', '提醒一下，我{v}过敏。'], ask: ['我对什么过敏？', '我有什么食物过敏吗？'], values: ['花生', '海鲜', '芒果', '芝麻'], other: '我{who}对{v}过敏。' },
  },
  {
    key: 'birthday',
    en: { say: ['My birthday is on {v}.', "I'll celebrate my birthday on {v} like every year."], ask: ['When is my birthday?', "What's the date of my birthday?"], values: ['March 14', 'October 2', 'July 21', 'December 9'], other: "My {who}'s birthday is on {v}." },
    zh: { say: ['我的生日是{v}。', '每年{v}我都会过生日。'], ask: ['我的生日是哪一天？', '我哪天过生日？'], values: ['3月14日', '10月2日', '7月21日', '12月9日'], other: '我{who}的生日是{v}。' },
  },
  {
    key: 'dish',
    en: { say: ['My favourite dish is {v}.', "If I could eat one thing forever it would be {v}, it's my favourite."], ask: ["What's my favourite dish?", 'Which food do I like most?'], values: ['mushroom risotto', 'pad thai', 'lasagna', 'beef pho'], other: "My {who}'s favourite dish is {v}." },
    zh: { say: ['我最喜欢吃的菜是{v}。', '要说最爱吃的，还是{v}。'], ask: ['我最喜欢吃什么菜？', '我最爱吃的是什么？'], values: ['麻婆豆腐', '红烧肉', '宫保鸡丁', '酸菜鱼'], other: '我{who}最喜欢吃{v}。' },
  },
  {
    key: 'car',
    en: { say: ['I drive a {v}.', "My car is a {v}, it's getting old."], ask: ['What car do I drive?', 'What kind of car do I have?'], values: ['blue Toyota Corolla', 'white Tesla Model 3', 'red Mazda 3', 'grey Volvo XC40'], other: 'My {who} drives a {v}.' },
    zh: { say: ['我开的是一辆{v}。', '我的车是{v}，开了好几年了。'], ask: ['我开的是什么车？', '我的车是什么牌子的？'], values: ['白色的比亚迪', '黑色的大众', '银色的本田', '蓝色的特斯拉'], other: '我{who}开一辆{v}。' },
  },
  {
    key: 'instrument',
    en: { say: ["I've been learning the {v} for two years.", 'I practise the {v} every evening after work.'], ask: ['Which instrument am I learning?', 'What instrument do I practise?'], values: ['cello', 'violin', 'piano', 'saxophone'], other: 'My {who} plays the {v}.' },
    zh: { say: ['我学{v}已经两年了。', '我每天下班后都练{v}。'], ask: ['我在学什么乐器？', '我每天练什么乐器？'], values: ['小提琴', '钢琴', '古筝', '吉他'], other: '我{who}会弹{v}。' },
  },
  {
    key: 'school',
    en: { say: ['My son {n} goes to {v} Primary School.', '{n} started at {v} Primary School this year, it is close to home.'], ask: ['Which school does my son go to?', "What's the name of my son's school?"], values: ['Riverside', 'Oakwood', 'Greenfield', 'Hillcrest'], names: ['Leo', 'Sam', 'Max', 'Theo'], other: "My {who}'s son goes to {v} Primary School." },
    zh: { say: ['我儿子在{v}小学上学。', '孩子今年开始在{v}小学读书，离家很近。'], ask: ['我儿子在哪个小学上学？', '我孩子读的是哪所学校？'], values: ['实验', '育才', '阳光', '东风'], other: '我{who}的孩子在{v}小学。' },
  },
  {
    key: 'coffee',
    en: { say: ['I usually order a {v} with oat milk.', 'My go-to coffee is a {v}, no sugar.'], ask: ['What coffee do I usually order?', 'How do I take my coffee?'], values: ['flat white', 'cappuccino', 'cortado', 'latte'], other: 'My {who} always orders a {v}.' },
    zh: { say: ['我一般点{v}，要燕麦奶。', '我喝咖啡只喝{v}，不加糖。'], ask: ['我平时点什么咖啡？', '我喝咖啡喝哪种？'], values: ['拿铁', '美式', '卡布奇诺', '馥芮白'], other: '我{who}每次都点{v}。' },
  },
  {
    key: 'author',
    en: { say: ['My favourite author is {v}.', "I've read everything by {v}, best writer ever."], ask: ['Who is my favourite author?', 'Which writer do I like best?'], values: ['Ursula K. Le Guin', 'Haruki Murakami', 'Kazuo Ishiguro', 'Toni Morrison'], other: 'My {who} loves books by {v}.' },
    zh: { say: ['我最喜欢的作家是{v}。', '{v}的书我全都读过，是我最爱的作家。'], ask: ['我最喜欢哪个作家？', '我最爱的作家是谁？'], values: ['余华', '刘慈欣', '张爱玲', '王小波'], other: '我{who}喜欢读{v}的书。' },
  },
  {
    key: 'team',
    en: { say: ['I support {v}, I never miss a match.', "I've been a {v} fan since I was a kid."], ask: ['Which football team do I support?', 'What team am I a fan of?'], values: ['Arsenal', 'Liverpool', 'Barcelona', 'Juventus'], other: 'My {who} supports {v}.' },
    zh: { say: ['我是{v}的球迷，每场比赛都看。', '我从小就支持{v}。'], ask: ['我支持哪个球队？', '我是哪个队的球迷？'], values: ['广州队', '上海申花', '北京国安', '山东泰山'], other: '我{who}支持{v}。' },
  },
  {
    key: 'language',
    en: { say: ["I'm learning {v} on weekends.", 'I take {v} lessons every Saturday morning.'], ask: ['Which language am I learning?', 'What language lessons do I take?'], values: ['Japanese', 'Spanish', 'German', 'Korean'], other: 'My {who} is learning {v}.' },
    zh: { say: ['我周末在学{v}。', '我每周六上午上{v}课。'], ask: ['我在学哪门外语？', '我周六上什么课？'], values: ['日语', '西班牙语', '德语', '法语'], other: '我{who}在学{v}。' },
  },
  {
    key: 'climbing',
    en: { say: ['I go rock climbing every {v}.', '{v} evenings are for climbing at the bouldering gym.'], ask: ['When do I go climbing?', 'Which day do I go rock climbing?'], values: ['Tuesday', 'Thursday', 'Monday', 'Friday'], other: 'My {who} goes climbing every {v}.' },
    zh: { say: ['我每个{v}都去攀岩。', '{v}晚上我固定去攀岩馆。'], ask: ['我哪天去攀岩？', '我一般什么时候去攀岩？'], values: ['周二', '周四', '周一', '周五'], other: '我{who}每个{v}去攀岩。' },
  },
  {
    key: 'hometown',
    en: { say: ['I grew up in {v}.', 'I was born and raised in {v}.'], ask: ['Where did I grow up?', 'Where is my hometown?'], values: ['Porto', 'Leeds', 'Adelaide', 'Nagoya'], other: 'My {who} grew up in {v}.' },
    zh: { say: ['我是在{v}长大的。', '我老家在{v}。'], ask: ['我是在哪里长大的？', '我老家是哪里的？'], values: ['洛阳', '桂林', '大连', '苏州'], other: '我{who}是{v}人。' },
  },
  {
    key: 'wife-job',
    en: { say: ['My wife {n} works as a {v}.', 'My wife {n} just got promoted, she is a senior {v}.'], ask: ['What does my wife do for work?', "What is my wife's job?"], values: ['nurse', 'architect', 'lawyer', 'data analyst'], names: ['Emma', 'Grace', 'Hana', 'Julia'], other: "My {who}'s wife is a {v}." },
    zh: { say: ['我老婆是{v}。', '我爱人在医院做{v}。'], ask: ['我老婆是做什么工作的？', '我爱人的职业是什么？'], values: ['护士', '药剂师', '医生', '会计'], other: '我{who}的老婆是{v}。' },
  },
  {
    key: 'movie',
    en: { say: ['My favourite movie is {v}.', "I've watched {v} at least ten times, it's my favourite film."], ask: ["What's my favourite movie?", 'Which film do I love most?'], values: ['Spirited Away', 'The Matrix', 'Amélie', 'Inception'], other: "My {who}'s favourite movie is {v}." },
    zh: { say: ['我最喜欢的电影是{v}。', '{v}我看了十几遍，是我最爱的电影。'], ask: ['我最喜欢的电影是哪部？', '我最爱看哪部电影？'], values: ['霸王别姬', '大话西游', '让子弹飞', '无间道'], other: '我{who}最喜欢的电影是{v}。' },
  },
  {
    key: 'dentist',
    en: { say: ["My dentist is Dr. {v}, she's very gentle.", 'I always see Dr. {v} for my teeth.'], ask: ['Who is my dentist?', "What's my dentist's name?"], values: ['Patel', 'Okafor', 'Novak', 'Lindqvist'], other: "My {who}'s doctor is Dr. {v}." },
    zh: { say: ['我的牙医是{v}医生，人很温柔。', '我看牙一直找{v}医生。'], ask: ['我的牙医是谁？', '我看牙找哪位医生？'], values: ['王', '李', '陈', '赵'], other: '我{who}的医生姓{v}。' },
  },
  {
    key: 'shoes',
    en: { say: ['I wear size {v} shoes.', 'My shoe size is {v}, in case you find a deal.'], ask: ["What's my shoe size?", 'What size shoes do I wear?'], values: ['42', '38', '44', '40'], other: 'My {who} wears size {v} shoes.' },
    zh: { say: ['我穿{v}码的鞋。', '我的鞋码是{v}。'], ask: ['我穿多大码的鞋？', '我的鞋码是多少？'], values: ['42', '38', '44', '40'], other: '我{who}穿{v}码的鞋。' },
  },
  {
    key: 'tea',
    en: { say: ['I drink {v} every afternoon.', 'My afternoon ritual is a cup of {v}.'], ask: ['What do I drink in the afternoon?', 'Which tea do I have every afternoon?'], values: ['jasmine tea', 'Earl Grey tea', 'sencha tea', 'rooibos tea'], other: 'My {who} drinks {v} every morning.' },
    zh: { say: ['我每天下午都喝{v}。', '下午我习惯泡一杯{v}。'], ask: ['我下午喝什么茶？', '我每天下午习惯喝什么？'], values: ['乌龙茶', '龙井', '普洱', '铁观音'], other: '我{who}每天早上喝{v}。' },
  },
  {
    key: 'commute',
    en: { say: ['I commute to work by {v}.', 'Every day I get to the office by {v}.'], ask: ['How do I get to work?', 'How do I commute to the office?'], values: ['bike', 'tram', 'ferry', 'scooter'], other: 'My {who} goes to work by {v}.' },
    zh: { say: ['我每天{v}上班。', '我上班通勤是{v}。'], ask: ['我怎么去上班？', '我每天通勤坐什么？'], values: ['骑自行车', '坐地铁', '坐公交', '开电动车'], other: '我{who}每天{v}上班。' },
  },
  {
    key: 'hobby',
    en: { say: ['My weekend hobby is {v}.', 'I spend most Sundays on {v}.'], ask: ["What's my weekend hobby?", 'What do I do on Sundays?'], values: ['film photography', 'pottery', 'birdwatching', 'woodworking'], other: 'My {who} is into {v}.' },
    zh: { say: ['我周末的爱好是{v}。', '我大多数周日都在{v}。'], ask: ['我周末有什么爱好？', '我周日一般做什么？'], values: ['拍照', '做陶艺', '观鸟', '做木工'], other: '我{who}喜欢{v}。' },
  },
  {
    key: 'fear',
    en: { say: ["I'm afraid of {v}.", 'Honestly, {v} terrify me.'], ask: ['What am I afraid of?', 'What scares me?'], values: ['heights', 'spiders', 'deep water', 'snakes'], other: 'My {who} is afraid of {v}.' },
    zh: { say: ['我怕{v}。', '说实话，我特别害怕{v}。'], ask: ['我害怕什么？', '我最怕的是什么？'], values: ['高', '蜘蛛', '深水', '蛇'], other: '我{who}怕{v}。' },
  },
  {
    key: 'degree',
    en: { say: ['I studied {v} at university.', 'My degree is in {v}.'], ask: ['What did I study at university?', 'What is my degree in?'], values: ['marine biology', 'economics', 'civil engineering', 'philosophy'], other: 'My {who} studied {v}.' },
    zh: { say: ['我大学学的是{v}。', '我的专业是{v}。'], ask: ['我大学学的什么专业？', '我是什么专业毕业的？'], values: ['海洋生物', '经济学', '土木工程', '哲学'], other: '我{who}学的是{v}。' },
  },
  {
    key: 'podcast',
    en: { say: ['I listen to the {v} podcast on my commute.', 'My favourite podcast is {v}.'], ask: ['Which podcast do I listen to?', "What's my favourite podcast?"], values: ['Hardcore History', 'Radiolab', 'The Daily', 'Planet Money'], other: 'My {who} recommends the {v} podcast.' },
    zh: { say: ['我通勤的时候听{v}这个播客。', '我最喜欢的播客是{v}。'], ask: ['我听什么播客？', '我最喜欢哪个播客？'], values: ['忽左忽右', '日谈公园', '随机波动', '故事FM'], other: '我{who}推荐了{v}这个播客。' },
  },
];

/** One language side of an update template. */
export interface UpdateSide {
  before: string[];
  after: string[];
  ask: string[];
  pairs: [string, string][];
}

/** A value that changes: stated early (`before`), replaced later (`after`). */
export interface UpdateTemplate {
  key: string;
  en: UpdateSide;
  zh: UpdateSide;
}

export const UPDATES: UpdateTemplate[] = [
  {
    key: 'residence',
    en: { before: ['I live in {a} with my parents.', "I've been living in {a} for five years."], after: ['I moved out of {a} last month, I live in {b} now.', "Big news: I've moved to {b}, so I'm not in {a} anymore."], ask: ['Where do I live now?', 'Which city do I live in?'], pairs: [['Shenzhen', 'Hangzhou'], ['Boston', 'Denver'], ['Manchester', 'Bristol'], ['Lyon', 'Marseille']] },
    zh: { before: ['我和父母住在{a}。', '我在{a}住了五年了。'], after: ['上个月我从{a}搬到了{b}，现在住在{b}。', '我已经搬到{b}了，不在{a}住了。'], ask: ['我现在住在哪个城市？', '我现在住哪里？'], pairs: [['深圳', '杭州'], ['南京', '武汉'], ['天津', '长沙'], ['广州', '重庆']] },
  },
  {
    key: 'employer',
    en: { before: ['I work at {a} as a product manager.', "I'm a product manager at {a}."], after: ['I left {a}; I started at {b} this week as a product manager.', "New job! I'm a product manager at {b} now."], ask: ['Where do I work now?', 'Which company am I working for?'], pairs: [['Tencent', 'Alibaba'], ['Spotify', 'Shopify'], ['Siemens', 'Bosch'], ['Deloitte', 'KPMG']] },
    zh: { before: ['我在{a}做产品经理。', '我是{a}的产品经理。'], after: ['我从{a}离职了，这周开始在{b}做产品经理。', '换工作了！现在在{b}当产品经理。'], ask: ['我现在在哪家公司工作？', '我现在在哪里上班？'], pairs: [['腾讯', '阿里巴巴'], ['华为', '小米'], ['百度', '字节跳动'], ['京东', '美团']] },
  },
  {
    key: 'phone',
    en: { before: ['My phone is a {a}.', 'I use a {a} as my phone.'], after: ['I switched to a {b} phone, my old {a} died.', 'Got a new phone, a {b}.'], ask: ['What phone do I use now?', 'Which phone do I have?'], pairs: [['Pixel 6', 'iPhone 15'], ['iPhone 12', 'Galaxy S24'], ['OnePlus 9', 'Pixel 8']] },
    zh: { before: ['我用的手机是{a}。', '我的手机是{a}。'], after: ['我换了{b}手机，之前的{a}坏了。', '新买了一部{b}手机。'], ask: ['我现在用什么手机？', '我的手机是什么牌子？'], pairs: [['华为P40', '小米14'], ['iPhone 11', '华为Mate60'], ['OPPO', 'vivo']] },
  },
  {
    key: 'diet',
    en: { before: ["I'm {a}, so no meat for me.", "I've been {a} for a few years."], after: ['I decided to go {b} this month.', "Update on my diet: I'm {b} now."], ask: ['What diet do I follow now?', 'What are my current eating habits?'], pairs: [['vegetarian', 'vegan'], ['pescatarian', 'vegetarian']] },
    zh: { before: ['我吃{a}，不吃肉。', '我坚持{a}好几年了。'], after: ['这个月开始我改吃{b}了。', '饮食更新一下：我现在吃{b}。'], ask: ['我现在是什么饮食习惯？', '我现在吃哪种饮食？'], pairs: [['素食', '纯素'], ['鱼素', '素食']] },
  },
  {
    key: 'gym',
    en: { before: ['I go to the gym on {a}.', 'Gym days for me are {a}.'], after: ['I changed my routine, I go to the gym on {b} now.', 'My gym days moved to {b}.'], ask: ['When do I go to the gym now?', "What's my gym schedule?"], pairs: [['Mondays', 'Wednesdays'], ['Saturdays', 'Sundays']] },
    zh: { before: ['我一般{a}去健身房。', '我固定{a}健身。'], after: ['我改了时间，现在{b}去健身房。', '健身时间换了，现在是{b}。'], ask: ['我现在什么时候去健身房？', '我现在哪天健身？'], pairs: [['周一', '周三'], ['早上', '晚上']] },
  },
  {
    key: 'partner',
    en: { before: ["My partner is {a}, we've been together two years.", "{a} and I have been dating for a while."], after: ["{a} and I split up; I'm seeing {b} now.", "I'm dating {b} now, things with {a} ended."], ask: ['Who is my partner now?', 'Who am I dating?'], pairs: [['Olivia', 'Chloe'], ['Lucas', 'Daniel']] },
    zh: { before: ['我的对象是{a}，在一起两年了。', '我和{a}在谈恋爱。'], after: ['我和{a}分手了，现在在和{b}交往。', '我现在的对象是{b}，和{a}已经分了。'], ask: ['我现在的对象是谁？', '我现在和谁在交往？'], pairs: [['小林', '小周'], ['阿杰', '阿明']] },
  },
  {
    key: 'manager',
    en: { before: ['My manager is {a}.', 'I report to {a}.'], after: ['{a} left the team, my new manager is {b}.', 'I report to {b} now that {a} moved on.'], ask: ['Who is my manager now?', 'Who do I report to?'], pairs: [['Priya', 'Tom'], ['Grace', 'Henry']] },
    zh: { before: ['我的领导是{a}。', '我向{a}汇报工作。'], after: ['{a}调走了，我现在的领导是{b}。', '现在我向{b}汇报，{a}已经走了。'], ask: ['我现在的领导是谁？', '我现在向谁汇报？'], pairs: [['王经理', '刘经理'], ['陈总', '黄总']] },
  },
  {
    key: 'race',
    en: { before: ["I'm training for a {a} race.", 'My goal this year is a {a} race.'], after: ['I signed up for a {b} race instead of the {a}.', 'Changed plans: I am training for a {b} race now.'], ask: ['What race am I training for now?', 'Which race did I sign up for?'], pairs: [['5k', 'half marathon'], ['10k', 'marathon']] },
    zh: { before: ['我在准备一场{a}比赛。', '我今年的目标是跑{a}。'], after: ['我改报了{b}，不跑{a}了。', '计划变了，我现在准备跑{b}。'], ask: ['我现在在准备什么比赛？', '我报名了哪个比赛？'], pairs: [['五公里', '半程马拉松'], ['十公里', '全程马拉松']] },
  },
  {
    key: 'rent',
    en: { before: ['My rent is {a} dollars a month.', 'I pay {a} dollars rent every month.'], after: ['The landlord raised my rent to {b} dollars a month.', 'My rent went up from {a} to {b} dollars.'], ask: ['How much is my rent now?', 'What do I pay in rent?'], pairs: [['1800', '2100'], ['950', '1100']] },
    zh: { before: ['我每个月房租{a}块。', '我的房租一个月{a}元。'], after: ['房东涨房租了，现在每月{b}块。', '房租从{a}涨到了{b}元。'], ask: ['我现在房租多少？', '我每月付多少房租？'], pairs: [['4500', '5200'], ['3000', '3500']] },
  },
  {
    key: 'restaurant',
    en: { before: ['My favourite restaurant is {a}.', 'I eat at {a} almost every Friday.'], after: ['{a} closed down, so now my favourite restaurant is {b}.', 'These days my favourite place to eat is {b}, not {a}.'], ask: ["What's my favourite restaurant now?", 'Where do I like to eat out?'], pairs: [["Luigi's", 'Sakura Sushi'], ['The Green Fork', 'Bombay Palace']] },
    zh: { before: ['我最喜欢的餐厅是{a}。', '我几乎每个周五都去{a}吃饭。'], after: ['{a}关门了，现在我最喜欢去{b}。', '最近最喜欢的餐厅换成了{b}，不去{a}了。'], ask: ['我现在最喜欢哪家餐厅？', '我现在喜欢去哪里吃饭？'], pairs: [['海底捞', '西贝'], ['外婆家', '绿茶']] },
  },
  {
    key: 'project',
    en: { before: ["I'm working on {a} at the moment.", 'Most of my time goes into {a} right now.'], after: ["I've been moved from {a} to {b}.", 'I work on {b} now, {a} is handed over.'], ask: ['Which project am I working on now?', 'What am I working on at the moment?'], pairs: [['Project Atlas', 'Project Nova'], ['the billing app', 'the search service']] },
    zh: { before: ['我最近在做{a}项目。', '我现在主要负责{a}。'], after: ['我从{a}调到{b}项目了。', '现在我负责{b}，{a}交接出去了。'], ask: ['我现在在做哪个项目？', '我最近负责什么项目？'], pairs: [['支付系统', '推荐系统'], ['小程序', '数据平台']] },
  },
  {
    key: 'singer',
    en: { before: ["I'm obsessed with {a}, best band ever.", 'My favourite band is {a}.'], after: ["I'm over {a}; {b} is my favourite band now.", 'My favourite band these days is {b}.'], ask: ["What's my favourite band now?", 'Which band do I like most?'], pairs: [['Coldplay', 'Radiohead'], ['Muse', 'Arctic Monkeys']] },
    zh: { before: ['我最喜欢的歌手是{a}。', '我天天听{a}的歌。'], after: ['最近更喜欢{b}了，现在最喜欢的歌手是{b}。', '现在我最爱的歌手换成{b}了，不是{a}了。'], ask: ['我现在最喜欢哪个歌手？', '我最喜欢听谁的歌？'], pairs: [['陈奕迅', '周杰伦'], ['王菲', '李健']] },
  },
];

/** One language side of a temporal template. */
export interface TemporalSide {
  say: string[];
  /** `{expr}` is the time expression ("in March", "last week", "3月", "上周"). */
  ask: string;
  values: string[];
}

/** A past event, told in the month it happened; asked with a time expression. */
export interface TemporalTemplate {
  key: string;
  en: TemporalSide;
  zh: TemporalSide;
}

export const TEMPORAL: TemporalTemplate[] = [
  {
    key: 'trip',
    en: { say: ['I just got back from a trip to {v}, the food was amazing.'], ask: 'Where did I travel {expr}?', values: ['Kyoto', 'Istanbul', 'Hanoi', 'Oaxaca', 'Reykjavik'] },
    zh: { say: ['我刚从{v}旅游回来，那里的美食太棒了。'], ask: '我{expr}去哪里旅游了？', values: ['大理', '三亚', '敦煌', '哈尔滨', '西双版纳'] },
  },
  {
    key: 'concert',
    en: { say: ['Last night I went to a {v} concert, it was incredible.'], ask: 'Which concert did I go to {expr}?', values: ['Taylor Swift', 'Norah Jones', 'Hans Zimmer', 'Billie Eilish'] },
    zh: { say: ['昨晚去看了{v}的演唱会，太精彩了。'], ask: '我{expr}看了谁的演唱会？', values: ['林俊杰', '张学友', '邓紫棋', '孙燕姿'] },
  },
  {
    key: 'book',
    en: { say: ['I finished reading {v} this week, what an ending.'], ask: 'Which book did I finish reading {expr}?', values: ['Project Hail Mary', 'Dune', 'Circe', 'The Overstory'] },
    zh: { say: ['这周读完了《{v}》，结局太震撼了。'], ask: '我{expr}读完了哪本书？', values: ['三体', '活着', '围城', '平凡的世界'] },
  },
  {
    key: 'purchase',
    en: { say: ['I finally bought a {v} today.'], ask: 'What did I buy {expr}?', values: ['standing desk', 'road bike', 'espresso machine', 'kayak'] },
    zh: { say: ['我今天终于买了一台{v}。'], ask: '我{expr}买了什么？', values: ['投影仪', '洗碗机', '扫地机器人', '烤箱'] },
  },
  {
    key: 'illness',
    en: { say: ['I was down with {v} for a few days, feeling better now.'], ask: 'What was I sick with {expr}?', values: ['the flu', 'a bad cold', 'food poisoning', 'bronchitis'] },
    zh: { say: ['我得了{v}，难受了好几天，现在好多了。'], ask: '我{expr}生了什么病？', values: ['流感', '重感冒', '肠胃炎', '支气管炎'] },
  },
  {
    key: 'workshop',
    en: { say: ['I took a {v} workshop on Saturday, learned a lot.'], ask: 'What workshop did I take {expr}?', values: ['sourdough baking', 'watercolor painting', 'knife skills', 'beginner coding'] },
    zh: { say: ['周六参加了一个{v}工作坊，学到很多。'], ask: '我{expr}参加了什么工作坊？', values: ['烘焙', '水彩画', '咖啡拉花', '插花'] },
  },
  {
    key: 'visitor',
    en: { say: ['My {v} came to visit us this weekend.'], ask: 'Who came to visit me {expr}?', values: ['grandmother', 'uncle Ben', 'old roommate', 'cousin Mia'] },
    zh: { say: ['这个周末{v}来我家做客了。'], ask: '我{expr}谁来我家做客了？', values: ['奶奶', '舅舅', '大学室友', '表妹'] },
  },
  {
    key: 'celebration',
    en: { say: ['We had dinner at {v} to celebrate, great place.'], ask: 'Where did we have the celebration dinner {expr}?', values: ['Nopa', 'The Ivy', 'Din Tai Fung', 'Chez Panisse'] },
    zh: { say: ['我们去{v}吃饭庆祝了一下，环境很好。'], ask: '我们{expr}去哪里吃饭庆祝了？', values: ['全聚德', '鼎泰丰', '大董', '新荣记'] },
  },
  {
    key: 'hike',
    en: { say: ['Hiked up {v} today, my legs are dead.'], ask: 'Which mountain did I hike {expr}?', values: ['Mount Tam', 'Ben Nevis', 'Snowdon', 'Mount Takao'] },
    zh: { say: ['今天爬了{v}，腿都快断了。'], ask: '我{expr}爬了哪座山？', values: ['泰山', '黄山', '华山', '峨眉山'] },
  },
  {
    key: 'cinema',
    en: { say: ['Saw {v} at the cinema tonight.'], ask: 'What film did I see at the cinema {expr}?', values: ['Dune Part Two', 'Oppenheimer', 'Past Lives', 'Inside Out 2'] },
    zh: { say: ['今晚在电影院看了《{v}》。'], ask: '我{expr}在电影院看了什么电影？', values: ['流浪地球2', '热辣滚烫', '封神', '满江红'] },
  },
];

/** Appointments announced in advance (they expire once past). */
export const EVENTS = {
  en: {
    say: ['I have a {v} appointment next {day} at {time}.', 'Reminder for myself: {v} appointment on {day} at {time}.'],
    ask: ['When is my {v} appointment?', 'What time is my {v} appointment?'],
    values: ['dentist', 'eye doctor', 'physiotherapy', 'haircut', 'vet', 'tax advisor'],
    days: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'],
    times: ['9am', '10:30', '2pm', '4:15pm', '11am'],
  },
  zh: {
    say: ['我下周{day}{time}要去{v}。', '提醒一下，我周{day}{time}约了{v}。'],
    ask: ['我什么时候要去{v}？', '我约的{v}是几点？'],
    values: ['看牙医', '体检', '理发', '复诊', '办签证', '面试'],
    days: ['一', '二', '三', '四', '五'],
    times: ['上午九点', '上午十点半', '下午两点', '下午四点', '中午十一点'],
  },
};

/** Slot values of the everyday-chat distractors (shared vocabulary with the planted facts on purpose). */
export const SLOTS_EN: Record<string, string[]> = {
  topic: ['the quarterly report', 'interest rates', 'climate change', 'machine learning', 'the school play', 'home insurance', 'the new tax rules', 'remote work', 'sleep schedules', 'the election', 'solar panels', 'the office move', 'ancient Rome', 'black holes', 'the housing market', 'vaccines'],
  activity: ['camping', 'a road trip', 'painting the kitchen', 'learning to swim', 'a picnic', 'baking bread', 'a museum visit', 'cleaning the garage', 'a bike ride', 'gardening', 'a board game night', 'volunteering'],
  thing: ['laptop', 'vacuum cleaner', 'rice cooker', 'backpack', 'phone case', 'desk lamp', 'air purifier', 'mattress', 'coffee grinder', 'headphones', 'tent', 'monitor', 'printer', 'umbrella'],
  adj: ['broken', 'a day early', 'in the wrong colour', 'without the charger', 'perfectly packed', 'a week late'],
  who: ['mom', 'dad', 'colleague', 'neighbour', 'boss', 'friend', 'cousin', 'aunt', 'landlord', 'teacher'],
  place: ['bakery', 'gym', 'bookshop', 'noodle bar', 'climbing gym', 'cinema', 'cafe', 'market'],
  city: ['Berlin', 'Lisbon', 'Osaka', 'Boston', 'Denver', 'Shenzhen', 'Hangzhou', 'Kyoto', 'Melbourne', 'Porto', 'Bristol', 'Seoul', 'Madrid', 'Chicago'],
  food: ['rice', 'lentils', 'salmon', 'tofu', 'eggs', 'chicken thighs', 'broccoli', 'pasta', 'potatoes', 'mushrooms', 'peanuts', 'shrimp'],
  weather: ['rainy', 'sunny', 'freezing', 'humid', 'windy', 'foggy'],
  country: ['Portugal', 'Kenya', 'Chile', 'Vietnam', 'Canada', 'Norway', 'Peru', 'Egypt'],
  language: ['French', 'Japanese', 'Spanish', 'German', 'Korean', 'Italian'],
  animal: ['fox', 'heron', 'squirrel', 'hedgehog', 'woodpecker', 'stray cat', 'dog'],
};

export const DISTRACTORS_EN = [
  'We talked about {topic} for a while at lunch.', "I'm thinking about {activity} this weekend.", 'Can you recommend a good {thing}?', 'The {thing} I ordered arrived {adj}.',
  'My {who} told me about a new {place} in {city}.', 'I watched a documentary about {topic}.', 'How long should I boil {food}?', "What's a good recipe with {food}?",
  'I need a gift idea for my {who}.', 'The weather in {city} is {weather} today.', 'I have so many emails to answer about {topic}.', 'Can you remind me how {topic} works?',
  'I read an article on {topic} this morning.', 'My {who} and I argued about {topic}.', 'Any tips for {activity}?', 'I am tired, work was busy with {topic}.',
  "What's the capital of {country}?", "How do you say 'good morning' in {language}?", 'Write a short poem about a {thing}.', "How do I fix a {thing} that won't turn on?",
  "I'm planning a budget for {activity}.", 'Explain {topic} in simple terms.', 'I saw a {animal} in the park today.', 'Our team meeting about {topic} ran long.',
  'Should I buy a {thing} now or wait for a sale?', 'I cooked {food} with garlic for dinner.', 'The traffic to {city} was terrible.', 'My {who} is visiting {city} soon.',
  'I spilled coffee on my {thing}.', "What's the difference between {topic} and {topic2}?", 'My {who} recommended a {place} near the station.', 'Is {food} healthy to eat every day?',
];

export const SLOTS_ZH: Record<string, string[]> = {
  topic: ['季度报告', '利率', '气候变化', '机器学习', '学校演出', '房屋保险', '新的税收政策', '远程办公', '作息时间', '选举', '太阳能板', '办公室搬迁', '古罗马', '黑洞', '房价', '疫苗'],
  activity: ['露营', '自驾游', '粉刷厨房', '学游泳', '野餐', '烤面包', '逛博物馆', '收拾车库', '骑车', '种花', '桌游', '做志愿者'],
  thing: ['笔记本电脑', '吸尘器', '电饭煲', '背包', '手机壳', '台灯', '空气净化器', '床垫', '磨豆机', '耳机', '帐篷', '显示器', '打印机', '雨伞'],
  adj: ['坏了', '提前一天到了', '颜色发错了', '没带充电器', '包装得很好', '晚了一个星期'],
  who: ['我妈', '我爸', '同事', '邻居', '老板', '朋友', '表姐', '阿姨', '房东', '老师'],
  place: ['面包店', '健身房', '书店', '面馆', '攀岩馆', '电影院', '咖啡馆', '菜市场'],
  city: ['北京', '上海', '成都', '深圳', '杭州', '西安', '厦门', '青岛', '南京', '武汉', '重庆', '苏州', '大连', '昆明'],
  food: ['米饭', '扁豆', '三文鱼', '豆腐', '鸡蛋', '鸡腿', '西兰花', '面条', '土豆', '蘑菇', '花生', '虾'],
  weather: ['下雨', '晴天', '特别冷', '很闷热', '刮大风', '有雾'],
  country: ['葡萄牙', '肯尼亚', '智利', '越南', '加拿大', '挪威', '秘鲁', '埃及'],
  language: ['法语', '日语', '西班牙语', '德语', '韩语', '意大利语'],
  animal: ['狐狸', '白鹭', '松鼠', '刺猬', '啄木鸟', '流浪猫', '小狗'],
};

export const DISTRACTORS_ZH = [
  '午饭的时候我们聊了一会儿{topic}。', '这个周末想去{activity}。', '能推荐一个好用的{thing}吗？', '我买的{thing}到了，{adj}。', '{who}说{city}新开了一家{place}。',
  '看了一部关于{topic}的纪录片。', '{food}要煮多久？', '有什么用{food}做的菜谱？', '想给{who}买个礼物，有什么建议？', '{city}今天{weather}。', '关于{topic}的邮件太多了。',
  '{topic}是怎么回事？', '早上看了一篇讲{topic}的文章。', '我和{who}为了{topic}吵了一架。', '{activity}有什么技巧吗？', '今天好累，一直在忙{topic}的事。', '{country}的首都是哪里？',
  '“早上好”用{language}怎么说？', '写一首关于{thing}的短诗。', '{thing}开不了机怎么办？', '我在做{activity}的预算。', '用简单的话解释一下{topic}。', '今天在公园看到一只{animal}。',
  '关于{topic}的会开了很久。', '现在买{thing}还是等打折？', '晚饭用{food}炒了个菜。', '去{city}的路上堵死了。', '{who}过段时间要去{city}。', '咖啡洒在{thing}上了。',
  '{topic}和{topic2}有什么区别？', '{who}推荐了车站附近的一家{place}。', '每天吃{food}健康吗？',
];

export const REPLIES_EN = [
  'Got it, thanks for sharing!', 'That sounds great.', "Here's what I'd suggest: start small and keep it simple.", 'Good question, it depends on your situation.',
  "I'll keep that in mind.", 'Sounds like a busy day!', 'Nice! Tell me more if you like.', 'Sure, happy to help with that.', 'That must have been fun.', 'Oh no, sorry to hear that.',
];

export const REPLIES_ZH = ['好的，谢谢分享！', '听起来不错。', '我的建议是先从简单的开始。', '好问题，这要看具体情况。', '我记住了。', '今天真忙啊！', '不错！想聊的话可以多说说。', '没问题，很乐意帮忙。', '那一定很有意思。', '哎呀，真遗憾。'];

/** Replies to everyday chat: an opening and a follow-up (10 × 10 per language, so exact repeats of a whole round stay rare at 10k rounds). */
export const REPLY_PARTS_EN = {
  openings: ['Got it.', 'Sure.', 'Interesting!', 'Thanks for telling me.', 'Oh nice.', 'Hmm, let me think.', 'Good point.', 'I see.', 'Okay.', 'Ah, that makes sense.'],
  followUps: ['Want me to look into it?', 'How did that go?', 'Let me know if you need help.', 'Tell me more.', 'That happens a lot.', 'I can make a short list if you like.', 'Do you want some tips?', 'What would you like to do next?', 'Keep me posted.', 'That sounds like a plan.'],
};
export const REPLY_PARTS_ZH = {
  openings: ['明白了。', '好的。', '挺有意思！', '谢谢告诉我。', '不错哦。', '嗯，我想想。', '说得对。', '原来如此。', '好。', '啊，这样说得通。'],
  followUps: ['要我帮你查一下吗？', '后来怎么样了？', '需要帮忙随时说。', '多说说吧。', '这种事挺常见的。', '需要的话我可以列个清单。', '要不要给你几个建议？', '接下来想做什么？', '有进展告诉我。', '听起来是个好计划。'],
};
