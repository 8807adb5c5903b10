/**
 * Time expressions stated in a retrieval query ("last week", "in May", "on May 3", "3 days ago",
 * "our first conversation", "上个月", "上周", "5月3号", "昨天", "第一次聊天"), turned into a
 * local-time window (time-aware query expansion, LongMemEval: Wu et al., 2024). Retrieval BOOSTS
 * the memories whose time (`validFrom`, when the event happened, or `createdAt`, when it was said)
 * falls in the window (`TIME_MATCH_WEIGHT`); it excludes none, so a memory dated outside the
 * window — or one whose own text says "last year" — still ranks on its relevance.
 *
 * Conventions (natural language is ambiguous, so they are stated):
 * - Relative expressions are read against the QUESTION's time (`RetrievalQuery.now`), in the local
 *   time of the runtime (the browser's time zone). Ranges: `start` inclusive, `end` exclusive.
 * - Weeks run Monday–Sunday (ISO 8601, and the Chinese 周一…周日 convention).
 * - A month or a date without a year ("in May", "on May 3", "5月", "5月3号") is the most recent
 *   one that has started: this year's if it is not in the future, else last year's.
 * - Only expressions that look back count ("yesterday", "last week", "3 days ago", "in May",
 *   "上周", "上个月", "去年", "5月"). Present and future ones ("today", "this week", "next week",
 *   "今天", "下周") do not: "what should I cook today?" asks about lasting preferences, and plans
 *   are stored before they happen (LongMemEval found time expansion hurts when the extractor is weak).
 * - Ordinal sessions ("our first conversation", "the second time we talked", "our last chat",
 *   "第一次聊天", "第二次对话", "上次聊天") name a conversation day: the store indexes no
 *   conversation boundaries, so a session is a local calendar day on which memories were stated
 *   (`parseSessionReference`, resolved by `sessionWindow`); "last" is the latest such day before
 *   the question's day.
 * - The first expression in the query wins.
 */

/** A time filter found in a query. */
export interface TimeFilter {
  /** Start of the range (ms epoch, inclusive). */
  start: number;
  /** End of the range (ms epoch, exclusive). */
  end: number;
  /** The expression as written in the query. */
  expression: string;
  /** The query with the expression removed (what the retrievers search for). */
  rest: string;
}

type Range = { start: number; end: number };

const day = (ref: Date, offset: number): Range => ({
  start: new Date(ref.getFullYear(), ref.getMonth(), ref.getDate() + offset).getTime(),
  end: new Date(ref.getFullYear(), ref.getMonth(), ref.getDate() + offset + 1).getTime(),
});
const week = (ref: Date, offset: number): Range => {
  const monday = ref.getDate() - ((ref.getDay() + 6) % 7) + offset * 7;
  return {
    start: new Date(ref.getFullYear(), ref.getMonth(), monday).getTime(),
    end: new Date(ref.getFullYear(), ref.getMonth(), monday + 7).getTime(),
  };
};
const weekend = (ref: Date, offset: number): Range => {
  const w = week(ref, offset);
  const monday = new Date(w.start);
  return {
    start: new Date(monday.getFullYear(), monday.getMonth(), monday.getDate() + 5).getTime(),
    end: w.end,
  };
};
const month = (year: number, monthIndex: number): Range => ({
  start: new Date(year, monthIndex, 1).getTime(),
  end: new Date(year, monthIndex + 1, 1).getTime(),
});
const relMonth = (ref: Date, offset: number): Range => month(ref.getFullYear(), ref.getMonth() + offset);
const year = (y: number): Range => ({ start: new Date(y, 0, 1).getTime(), end: new Date(y + 1, 0, 1).getTime() });
/** Most recent month `m` (0-based) that has started at `ref`. */
const lastMonthNamed = (ref: Date, m: number, explicitYear?: number): Range =>
  month(explicitYear ?? (m <= ref.getMonth() ? ref.getFullYear() : ref.getFullYear() - 1), m);

/**
 * The day `d` of month `m` (0-based): of `explicitYear`, else the most recent such day that has
 * started at `ref` (this year's unless it is still to come, then last year's). `null` for a day
 * the month does not have (February 30).
 */
const dateNamed = (ref: Date, m: number, d: number, explicitYear?: number): Range | null => {
  let y = explicitYear ?? ref.getFullYear();
  if (explicitYear === undefined && new Date(y, m, d).getTime() > ref.getTime()) y -= 1;
  const date = new Date(y, m, d);
  if (!(d >= 1) || date.getMonth() !== m) return null;
  return day(date, 0);
};

const EN_MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const EN_MONTH = '(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)';
const EN_NUMBERS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 };
const ZH_DIGITS: Record<string, number> = { 零: 0, 〇: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };

/** Parses 1–99 written with ASCII digits or Chinese numerals (一 … 十二 … 九十九). `NaN` otherwise. */
export function parseSmallNumber(text: string): number {
  if (/^\d+$/u.test(text)) return Number(text);
  if (text in EN_NUMBERS) return EN_NUMBERS[text]!;
  const m = /^([一二两三四五六七八九])?(十)?([一二三四五六七八九])?$/u.exec(text);
  if (!m || text === '') return Number.NaN;
  if (!m[2]) return m[1] && !m[3] ? ZH_DIGITS[m[1]]! : Number.NaN;
  return (m[1] ? ZH_DIGITS[m[1]]! : 1) * 10 + (m[3] ? ZH_DIGITS[m[3]]! : 0);
}

const monthIndexOf = (name: string) => EN_MONTHS.indexOf(name.slice(0, 3));

interface Rule {
  pattern: RegExp;
  range(match: RegExpExecArray, ref: Date): Range | null;
}

const ZH_NUM = '(\\d{1,2}|[一二两三四五六七八九十]{1,3})';

/**
 * Something every rule below needs (a Chinese time character, an English time word, a month
 * name's first three letters, four digits), with the rules' case folding: a query without one
 * names no time, and the rules are not run (in the Chromium turn profile
 * they took ~0.4 ms a turn, several times what the same calls take warm in Node: probably
 * recompiled after V8 dropped their code between turns).
 */
const TIME_WORD = /[昨前上去年月]|yesterday|last|ago|\d{4}|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec/iu;

/** Rules, tried in order; each pattern is global so every position is considered. */
const RULES: Rule[] = [
  // ── Chinese ──
  { pattern: /昨天|昨日/gu, range: (_, ref) => day(ref, -1) },
  { pattern: /前天/gu, range: (_, ref) => day(ref, -2) },
  { pattern: /上个?周末/gu, range: (_, ref) => weekend(ref, -1) },
  { pattern: /上上(?:个)?(?:周|星期|礼拜)/gu, range: (_, ref) => week(ref, -2) },
  { pattern: /上(?:个)?(?:周|星期|礼拜)(?![一二三四五六日天])/gu, range: (_, ref) => week(ref, -1) },
  { pattern: /上上个月/gu, range: (_, ref) => relMonth(ref, -2) },
  { pattern: /上个?月/gu, range: (_, ref) => relMonth(ref, -1) },
  { pattern: /前年/gu, range: (_, ref) => year(ref.getFullYear() - 2) },
  { pattern: /去年/gu, range: (_, ref) => year(ref.getFullYear() - 1) },
  {
    pattern: new RegExp(`${ZH_NUM}(天|个?(?:星期|礼拜)|周|个月)(?:以)?前`, 'gu'),
    range: (m, ref) => {
      const n = parseSmallNumber(m[1]!);
      if (!Number.isFinite(n)) return null;
      if (m[2] === '天') return day(ref, -n);
      if (m[2] === '个月') return relMonth(ref, -n);
      return week(ref, -n);
    },
  },
  {
    pattern: new RegExp(`(?:(\\d{4})年)?${ZH_NUM}月(?:份)?(?:${ZH_NUM}[日号])?`, 'gu'),
    range: (m, ref) => {
      const mo = parseSmallNumber(m[2]!);
      if (!(mo >= 1 && mo <= 12)) return null;
      const y = m[1] ? Number(m[1]) : undefined;
      if (!m[3]) return lastMonthNamed(ref, mo - 1, y);
      const d = parseSmallNumber(m[3]);
      if (!(d >= 1 && d <= 31)) return null;
      return dateNamed(ref, mo - 1, d, y);
    },
  },
  { pattern: /(\d{4})年(?!\d{0,2}月)/gu, range: (m) => year(Number(m[1])) },
  // ── English ──
  { pattern: /\byesterday\b/giu, range: (_, ref) => day(ref, -1) },
  { pattern: /\blast weekend\b/giu, range: (_, ref) => weekend(ref, -1) },
  { pattern: /\blast week\b/giu, range: (_, ref) => week(ref, -1) },
  { pattern: /\blast month\b/giu, range: (_, ref) => relMonth(ref, -1) },
  { pattern: /\blast year\b/giu, range: (_, ref) => year(ref.getFullYear() - 1) },
  {
    pattern: /\b(\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten) (day|week|month)s? ago\b/giu,
    range: (m, ref) => {
      const n = parseSmallNumber(m[1]!.toLowerCase());
      const unit = m[2]!.toLowerCase();
      return unit === 'day' ? day(ref, -n) : unit === 'week' ? week(ref, -n) : relMonth(ref, -n);
    },
  },
  {
    // "on May 3", "May 3rd", "May 3, 2024" (not "May 2025": a day has one or two digits).
    pattern: new RegExp(`\\b(?:on\\s+)?${EN_MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4})\\b)?`, 'giu'),
    range: (m, ref) => dateNamed(ref, monthIndexOf(m[1]!.toLowerCase()), Number(m[2]), m[3] ? Number(m[3]) : undefined),
  },
  {
    // "on 3 May", "the 3rd of May", "3 May 2024".
    pattern: new RegExp(`\\b(?:on\\s+)?(?:the\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${EN_MONTH}\\b(?:,?\\s+(\\d{4})\\b)?`, 'giu'),
    range: (m, ref) => dateNamed(ref, monthIndexOf(m[2]!.toLowerCase()), Number(m[1]), m[3] ? Number(m[3]) : undefined),
  },
  {
    pattern: new RegExp(`\\b(?:in|during|back in)\\s+${EN_MONTH}\\b(?:,?\\s+(\\d{4}))?`, 'giu'),
    range: (m, ref) => lastMonthNamed(ref, monthIndexOf(m[1]!.toLowerCase()), m[2] ? Number(m[2]) : undefined),
  },
  {
    pattern: new RegExp(`\\b${EN_MONTH}\\s+(\\d{4})\\b`, 'giu'),
    range: (m) => month(Number(m[2]), monthIndexOf(m[1]!.toLowerCase())),
  },
  { pattern: /\bin (\d{4})\b/giu, range: (m) => year(Number(m[1])) },
];

/**
 * Finds the first past/present time expression of `query` (see module doc) and resolves it
 * against `now`.
 * @param query retrieval query, Chinese or English.
 * @param now reference time (ms epoch).
 * @returns the filter, or `null` when the query states no (supported) time.
 */
export function parseTimeFilter(query: string, now: number): TimeFilter | null {
  if (!TIME_WORD.test(query)) return null;
  const ref = new Date(now);
  let best: { index: number; length: number; range: Range } | null = null;
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(query); m; m = rule.pattern.exec(query)) {
      if (best && m.index >= best.index) break;
      const range = rule.range(m, ref);
      if (range) {
        best = { index: m.index, length: m[0].length, range };
        break;
      }
    }
  }
  if (!best) return null;
  const expression = query.slice(best.index, best.index + best.length);
  const rest = `${query.slice(0, best.index)} ${query.slice(best.index + best.length)}`.replace(/\s+/gu, ' ').trim();
  return { ...best.range, expression, rest };
}

/** Words that ask for the current state ("where do I live now?", "我现在住哪里？"). */
const CURRENT_STATE = /\b(?:now|currently|current|these days|nowadays|at the moment|anymore|still)\b|现在|目前|如今|最近|当前|还在|这阵子/iu;

/**
 * Whether the query asks for the current state of something. Retrieval then weights recency
 * more (`CURRENT_STATE_WEIGHTING` in `fusion.ts`), so an update outranks the value it replaced
 * even when the old statement matches the words of the question better.
 */
export function asksForCurrentState(query: string): boolean {
  return CURRENT_STATE.test(query);
}

/** An ordinal conversation named in a query ("our first conversation", 第一次聊天). */
export interface SessionReference {
  /** 1 = the first session day, 2 = the second, …; -1 = the latest one before the question's day. */
  ordinal: number;
  /** The expression as written in the query. */
  expression: string;
  /** The query with the expression removed. */
  rest: string;
}

const EN_ORDINALS: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, fifth: 5, last: -1, previous: -1, '1st': 1, '2nd': 2, '3rd': 3 };
const SESSION_RULES: { pattern: RegExp; ordinal(m: RegExpExecArray): number }[] = [
  {
    pattern: /\b(?:our|the|my|that)\s+(first|second|third|fourth|fifth|1st|2nd|3rd|last|previous)\s+(?:conversation|chat|session|talk)s?\b/iu,
    ordinal: (m) => EN_ORDINALS[m[1]!.toLowerCase()]!,
  },
  {
    pattern: /\b(?:the\s+)?(first|second|third|fourth|fifth|1st|2nd|3rd|last)\s+time\s+(?:we|i|you)\s+(?:talked|spoke|chatted|met)\b/iu,
    ordinal: (m) => EN_ORDINALS[m[1]!.toLowerCase()]!,
  },
  {
    pattern: /第([一二两三四五六七八九十\d]{1,3})次(?:和你|跟你|与你)?(?:聊天|对话|谈话|交流|聊)/u,
    ordinal: (m) => parseSmallNumber(m[1]!),
  },
  { pattern: /(?:上一?次|最近一次)(?:和你|跟你|与你)?(?:聊天|对话|谈话|聊)/u, ordinal: () => -1 },
];

/**
 * Finds an ordinal conversation in `query` (see the module doc).
 * @returns the reference, or `null` when the query names none.
 */
export function parseSessionReference(query: string): SessionReference | null {
  let best: { index: number; length: number; ordinal: number } | null = null;
  for (const rule of SESSION_RULES) {
    const m = rule.pattern.exec(query);
    if (!m || (best && m.index >= best.index)) continue;
    const ordinal = rule.ordinal(m);
    if (Number.isFinite(ordinal) && ordinal !== 0) best = { index: m.index, length: m[0].length, ordinal };
  }
  if (!best) return null;
  const expression = query.slice(best.index, best.index + best.length);
  const rest = `${query.slice(0, best.index)} ${query.slice(best.index + best.length)}`.replace(/\s+/gu, ' ').trim();
  return { ordinal: best.ordinal, expression, rest };
}

/**
 * The local day of a session reference: the distinct local calendar days of `times`, oldest
 * first; `ordinal` n ≥ 1 picks the n-th, −1 the latest day before the day of `now`.
 * @param times when the namespace's memories were stated (ms epoch), in any order.
 * @param now the question's time (ms epoch).
 * @returns the day as a range (ms epoch, end exclusive), or `null` when there are not that many days.
 */
export function sessionWindow(ordinal: number, times: Iterable<number>, now: number): { start: number; end: number } | null {
  const today = day(new Date(now), 0).start;
  const days = new Set<number>();
  for (const t of times) if (Number.isFinite(t)) days.add(day(new Date(t), 0).start);
  const sorted = [...days].sort((a, b) => a - b);
  const start = ordinal > 0 ? sorted[ordinal - 1] : sorted.filter((d) => d < today).pop();
  return start === undefined ? null : day(new Date(start), 0);
}

/**
 * Relevance (on the [0, 1] scale of `convexFusion`) added to a candidate whose time falls in the
 * window a query names: 1, as large as relevance itself, so the window's matching memories rank
 * above the same event told in other months, while the memories outside it stay candidates below
 * them (a soft boost, not a filter). Calibrated on the benchmark's tuning seed 1 (1k rounds,
 * temporal questions, lexical R@1 / R@5): 0.5 gave 50 / 70, 1 gives 70 / 80 — what the filter
 * gave, without excluding anything.
 */
export const TIME_MATCH_WEIGHT = 1;

/** Longest window that counts as one date for the same-day fill (ms: one day, DST days included). */
export const ONE_DAY_WINDOW_MS = 25 * 3_600_000;

/**
 * The time boost of hybrid retrieval: adds `weight` to the fused relevance of every candidate in
 * the window (`inWindow`), and — when the window is one day (a date or a session) and at most
 * `k` candidates fall in it — the same-day fill: every other memory of that day
 * (`dayMemories()`) joins the candidates with relevance `weight` alone, so "what did we talk
 * about on May 3?" brings the whole day even when few of its memories share a word.
 * @param fused id → relevance, changed in place.
 * @param window the resolved window (ms epoch; `end` exclusive).
 * @param k the number of results asked for.
 * @param heldOut candidates the caller keeps outside `fused` (the store's slot-only members, ranked on
 *   the index's columns) and boosts itself alike: `inside` of them are in the window (they count
 *   towards `k` as if they were in `fused`), and `has(id)` says whether a memory is one of them (the
 *   fill does not add it again). Default: none.
 * @returns the number of candidates in the window after the fill (the held-out ones included).
 */
export function applyTimeBoost(
  fused: Map<string, number>,
  window: { start: number; end: number },
  inWindow: (id: string) => boolean,
  dayMemories: () => readonly string[],
  k: number,
  weight: number = TIME_MATCH_WEIGHT,
  heldOut: { inside: number; has: (id: string) => boolean } = { inside: 0, has: () => false },
): number {
  let inside = heldOut.inside;
  for (const [id, relevance] of fused)
    if (inWindow(id)) {
      fused.set(id, relevance + weight);
      inside += 1;
    }
  if (inside <= k && window.end - window.start <= ONE_DAY_WINDOW_MS) {
    for (const id of dayMemories())
      if (!fused.has(id) && !heldOut.has(id)) {
        fused.set(id, weight);
        inside += 1;
      }
  }
  return inside;
}
