// One file (over ~300 lines): one relative-date parser; the rule table (`RULES`) calls the range and
// number helpers above it, and they are only meaningful read together.
/**
 * Relative-date resolution in English and Chinese: finds expressions such as "yesterday",
 * "next week", "last Friday", "3 days ago", "昨天", "下周三", "上个月", "两天后" and turns them into
 * absolute local-time ranges against a reference time (the time of the message they came from).
 *
 * Mem0's extraction prompt asks the model to make dates absolute against the conversation date;
 * small local models often do not, so extraction also runs this deterministic pass over what the
 * model wrote (and the memory commands over what the user typed). The text is never translated:
 * the absolute date is *added* after the expression, e.g. "下周三（2024-05-15）去北京" or
 * "dentist next Wednesday (2024-05-15)".
 *
 * Conventions (documented because natural language is ambiguous):
 * - Weeks run Monday–Sunday (ISO 8601, and the Chinese 周一…周日 convention).
 * - "next Wednesday" / "下周三" = the Wednesday of next week; "this Wednesday" / "这周三" = of
 *   the current week; "last Wednesday" / "上周三" = of the previous week.
 * - "weekend" / "周末" = Saturday–Sunday of the week named.
 * - Bare weekdays ("on Friday", "周五") are left to the model: without tense they are ambiguous.
 * - All ranges are in local time (the browser's time zone); `end` is exclusive.
 */

/** Granularity of a resolved range. */
export type DateGranularity = 'day' | 'week' | 'weekend' | 'month' | 'year';

/** An absolute local-time range: `start` inclusive, `end` exclusive (ms epoch). */
export interface DateRange {
  start: number;
  end: number;
  granularity: DateGranularity;
}

/** One relative-date expression found in a text. */
export interface RelativeDateMatch {
  /** Offset of the expression in the text (UTF-16 code units) and its length. */
  index: number;
  length: number;
  /** The expression as written. */
  text: string;
  range: DateRange;
  /** The absolute form inserted after it: `2024-05-15`, `2024-05-13~2024-05-19`, `2024-04` or `2023`. */
  label: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD` of a time in local time. */
export function formatLocalDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** `YYYY-MM-DD HH:mm` of a time in local time (used in prompts). */
export function formatLocalDateTime(ms: number): string {
  const d = new Date(ms);
  return `${formatLocalDate(ms)} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

const EN_WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** English weekday name of a time in local time ("Friday"). */
export function weekdayName(ms: number): string {
  return EN_WEEKDAYS[mondayIndex(new Date(ms))]!;
}

/** 0 = Monday … 6 = Sunday. */
function mondayIndex(d: Date): number {
  return (d.getDay() + 6) % 7;
}

function dayStart(ref: number, addDays = 0): Date {
  const d = new Date(ref);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + addDays);
}

function dayRange(ref: number, offsetDays: number): DateRange {
  const s = dayStart(ref, offsetDays);
  return { start: s.getTime(), end: new Date(s.getFullYear(), s.getMonth(), s.getDate() + 1).getTime(), granularity: 'day' };
}

function weekStart(ref: number, offsetWeeks: number): Date {
  const today = dayStart(ref);
  return new Date(today.getFullYear(), today.getMonth(), today.getDate() - mondayIndex(today) + 7 * offsetWeeks);
}

function weekRange(ref: number, offsetWeeks: number): DateRange {
  const s = weekStart(ref, offsetWeeks);
  return { start: s.getTime(), end: new Date(s.getFullYear(), s.getMonth(), s.getDate() + 7).getTime(), granularity: 'week' };
}

function weekdayRange(ref: number, offsetWeeks: number, weekday: number): DateRange {
  const s = weekStart(ref, offsetWeeks);
  const day = new Date(s.getFullYear(), s.getMonth(), s.getDate() + weekday);
  return { start: day.getTime(), end: new Date(day.getFullYear(), day.getMonth(), day.getDate() + 1).getTime(), granularity: 'day' };
}

function weekendRange(ref: number, offsetWeeks: number): DateRange {
  const s = weekStart(ref, offsetWeeks);
  return {
    start: new Date(s.getFullYear(), s.getMonth(), s.getDate() + 5).getTime(),
    end: new Date(s.getFullYear(), s.getMonth(), s.getDate() + 7).getTime(),
    granularity: 'weekend',
  };
}

function monthRange(ref: number, offsetMonths: number): DateRange {
  const d = new Date(ref);
  const s = new Date(d.getFullYear(), d.getMonth() + offsetMonths, 1);
  return { start: s.getTime(), end: new Date(s.getFullYear(), s.getMonth() + 1, 1).getTime(), granularity: 'month' };
}

function yearRange(ref: number, offsetYears: number): DateRange {
  const y = new Date(ref).getFullYear() + offsetYears;
  return { start: new Date(y, 0, 1).getTime(), end: new Date(y + 1, 0, 1).getTime(), granularity: 'year' };
}

/** The absolute label of a range (see `RelativeDateMatch.label`). */
export function formatRange(range: DateRange): string {
  const s = new Date(range.start);
  switch (range.granularity) {
    case 'day':
      return formatLocalDate(range.start);
    case 'month':
      return `${s.getFullYear()}-${pad(s.getMonth() + 1)}`;
    case 'year':
      return String(s.getFullYear());
    default:
      return `${formatLocalDate(range.start)}~${formatLocalDate(range.end - 1)}`;
  }
}

/**
 * Parses an absolute date the model wrote: `YYYY-MM-DD`, `YYYY-MM`, `YYYY`, or a range
 * `YYYY-MM-DD~YYYY-MM-DD` (also with `..`, ` to `, `/`-separated parts). Returns `null` for
 * anything else or an impossible date (2024-02-30).
 */
export function parseAbsoluteDate(value: string): DateRange | null {
  const text = value.trim();
  const range = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})\s*(?:~|\.\.|–|—|\bto\b)\s*(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(text);
  if (range) {
    const a = makeDay(+range[1]!, +range[2]!, +range[3]!);
    const b = makeDay(+range[4]!, +range[5]!, +range[6]!);
    if (!a || !b || b.start < a.start) return null;
    return { start: a.start, end: b.end, granularity: 'week' };
  }
  const day = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ].*)?$/.exec(text);
  if (day) return makeDay(+day[1]!, +day[2]!, +day[3]!);
  const month = /^(\d{4})[-/](\d{1,2})$/.exec(text);
  if (month) {
    const m = +month[2]!;
    if (m < 1 || m > 12) return null;
    return { start: new Date(+month[1]!, m - 1, 1).getTime(), end: new Date(+month[1]!, m, 1).getTime(), granularity: 'month' };
  }
  const year = /^(\d{4})$/.exec(text);
  if (year) return yearRange(new Date(+year[1]!, 6, 1).getTime(), 0);
  return null;
}

function makeDay(y: number, m: number, d: number): DateRange | null {
  const s = new Date(y, m - 1, d);
  if (s.getFullYear() !== y || s.getMonth() !== m - 1 || s.getDate() !== d) return null;
  return { start: s.getTime(), end: new Date(y, m - 1, d + 1).getTime(), granularity: 'day' };
}

// ── numbers ────────────────────────────────────────────────────────────────────

const EN_NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  'a couple of': 2,
  couple: 2,
};
const ZH_DIGITS: Record<string, number> = { 零: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };

/** Parses 1–99 written as digits or Chinese numerals (三, 十, 十二, 二十五, 两). */
function parseZhNumber(text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text);
  if (text === '十') return 10;
  const tens = /^([一二两三四五六七八九])?十([一二三四五六七八九])?$/.exec(text);
  if (tens) return (tens[1] ? ZH_DIGITS[tens[1]]! : 1) * 10 + (tens[2] ? ZH_DIGITS[tens[2]]! : 0);
  if (text.length === 1 && text in ZH_DIGITS) return ZH_DIGITS[text]!;
  return null;
}

function parseEnNumber(text: string): number | null {
  const t = text.toLowerCase().replace(/\s+/g, ' ');
  if (/^\d+$/.test(t)) return Number(t);
  return EN_NUMBERS[t] ?? null;
}

function shift(ref: number, unit: string, n: number): DateRange {
  if (/^(day|天|日)/.test(unit)) return dayRange(ref, n);
  if (/^(week|周|星期|个星期|礼拜|个礼拜)/.test(unit)) return weekRange(ref, n);
  if (/^(month|个月|月)/.test(unit)) return monthRange(ref, n);
  return yearRange(ref, n);
}

// ── rules ──────────────────────────────────────────────────────────────────────

interface Rule {
  re: RegExp;
  resolve(m: RegExpExecArray, ref: number): DateRange | null;
}

const B = '(?<![\\p{L}\\p{N}])'; // word boundary before (Unicode-aware)
const E = '(?![\\p{L}\\p{N}])'; // word boundary after
const en = (source: string) => new RegExp(`${B}(?:${source})${E}`, 'giu');
const EN_WD = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday';
const EN_NUM = '\\d{1,3}|a couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve';
const ZH_NUM = '\\d{1,3}|[一二两三四五六七八九十]{1,3}';
const ZH_WD: Record<string, number> = { 一: 0, 二: 1, 三: 2, 四: 3, 五: 4, 六: 5, 日: 6, 天: 6 };
const WEEK_OFFSET: Record<string, number> = { last: -1, this: 0, next: 1 };

const RULES: Rule[] = [
  // English
  { re: en('the day before yesterday'), resolve: (_m, r) => dayRange(r, -2) },
  { re: en('the day after tomorrow'), resolve: (_m, r) => dayRange(r, 2) },
  { re: en('yesterday|last night'), resolve: (_m, r) => dayRange(r, -1) },
  { re: en('today|tonight|this (?:morning|afternoon|evening)'), resolve: (_m, r) => dayRange(r, 0) },
  { re: en('tomorrow'), resolve: (_m, r) => dayRange(r, 1) },
  {
    re: en(`(last|this|next) (${EN_WD})`),
    resolve: (m, r) => weekdayRange(r, WEEK_OFFSET[m[1]!.toLowerCase()]!, EN_WD.split('|').indexOf(m[2]!.toLowerCase())),
  },
  { re: en('(last|this|next) weekend'), resolve: (m, r) => weekendRange(r, WEEK_OFFSET[m[1]!.toLowerCase()]!) },
  { re: en('(last|this|next) week'), resolve: (m, r) => weekRange(r, WEEK_OFFSET[m[1]!.toLowerCase()]!) },
  { re: en('(last|this|next) month'), resolve: (m, r) => monthRange(r, WEEK_OFFSET[m[1]!.toLowerCase()]!) },
  { re: en('(last|this|next) year'), resolve: (m, r) => yearRange(r, WEEK_OFFSET[m[1]!.toLowerCase()]!) },
  {
    re: en(`(${EN_NUM}) (days?|weeks?|months?|years?) ago`),
    resolve: (m, r) => {
      const n = parseEnNumber(m[1]!);
      return n === null ? null : shift(r, m[2]!.toLowerCase(), -n);
    },
  },
  {
    re: en(`in (${EN_NUM}) (days?|weeks?|months?|years?)(?: time)?`),
    resolve: (m, r) => {
      const n = parseEnNumber(m[1]!);
      return n === null ? null : shift(r, m[2]!.toLowerCase(), n);
    },
  },
  // Chinese (no word boundaries in CJK text; longer forms come first in each alternation)
  { re: /大前天/gu, resolve: (_m, r) => dayRange(r, -3) },
  { re: /大后天/gu, resolve: (_m, r) => dayRange(r, 3) },
  // "之前天气" / "今后天气" are not dates: skip 前天/后天 right after a word that ends in 前/后.
  { re: /(?<![之以从提目当眼面先])前天/gu, resolve: (_m, r) => dayRange(r, -2) },
  { re: /(?<![之今以然随最而过往先])后天/gu, resolve: (_m, r) => dayRange(r, 2) },
  { re: /昨天|昨日|昨晚|昨夜/gu, resolve: (_m, r) => dayRange(r, -1) },
  { re: /今天|今日|今晚|今早|今夜/gu, resolve: (_m, r) => dayRange(r, 0) },
  { re: /明天|明日|明早|明晚/gu, resolve: (_m, r) => dayRange(r, 1) },
  {
    // Not "看一下周报" (一下 + 周报), "这周围" (around here), "周年" (anniversary) …
    re: /(?<!一)(上上|上|这|本|下下|下)个?(?:周|星期|礼拜)(?:([一二三四五六日天末])|(?![报刊年岁边围到全期]))/gu,
    resolve: (m, r) => {
      const offset = { 上上: -2, 上: -1, 这: 0, 本: 0, 下: 1, 下下: 2 }[m[1]!]!;
      const day = m[2];
      if (!day) return weekRange(r, offset);
      if (day === '末') return weekendRange(r, offset);
      return weekdayRange(r, offset, ZH_WD[day]!);
    },
  },
  {
    // Not "登上月球" / "这月亮".
    re: /(?<!一)(上上|上|这|本|下下|下)个?月(?![球亮光台])/gu,
    resolve: (m, r) => monthRange(r, { 上上: -2, 上: -1, 这: 0, 本: 0, 下: 1, 下下: 2 }[m[1]!]!),
  },
  {
    re: /大前年|大后年|前年|去年|今年|明年|后年/gu,
    resolve: (m, r) => yearRange(r, { 大前年: -3, 大后年: 3, 前年: -2, 去年: -1, 今年: 0, 明年: 1, 后年: 2 }[m[0]]!),
  },
  {
    re: new RegExp(`(${ZH_NUM})(天|日|周|个星期|星期|个礼拜|礼拜|个月|年)(以前|之前|前|以后|之后|后)`, 'gu'),
    resolve: (m, r) => {
      const n = parseZhNumber(m[1]!);
      if (n === null) return null;
      return shift(r, m[2]!, m[3]!.endsWith('前') ? -n : n);
    },
  },
];

function overlaps(a: RelativeDateMatch, b: RelativeDateMatch): boolean {
  return a.index < b.index + b.length && b.index < a.index + a.length;
}

/**
 * Finds relative-date expressions in `text`, resolved against `reference` (ms epoch, local time).
 * Overlapping matches keep the longest (then the earliest). Sorted by position.
 */
export function findRelativeDates(text: string, reference: number): RelativeDateMatch[] {
  const found: RelativeDateMatch[] = [];
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      const range = rule.resolve(m, reference);
      if (range) found.push({ index: m.index, length: m[0].length, text: m[0], range, label: formatRange(range) });
    }
  }
  found.sort((a, b) => b.length - a.length || a.index - b.index);
  const kept: RelativeDateMatch[] = [];
  for (const f of found) if (!kept.some((k) => overlaps(k, f))) kept.push(f);
  return kept.sort((a, b) => a.index - b.index);
}

/**
 * Adds the absolute date after each relative expression in `text`, in the text's own script:
 * `（2024-05-15）` after a CJK expression, ` (2024-05-15)` after a Latin one. Expressions already
 * followed by a date in brackets are left alone, so the function is idempotent.
 * @returns the annotated text and the matches (with indexes into the *original* text).
 */
export function resolveRelativeDates(text: string, reference: number): { text: string; matches: RelativeDateMatch[] } {
  const matches = findRelativeDates(text, reference).filter((m) => !/^\s*[(（]\s*\d{4}/.test(text.slice(m.index + m.length)));
  let out = '';
  let at = 0;
  for (const m of matches) {
    const end = m.index + m.length;
    const cjk = /[\u3400-\u9fff]/.test(m.text);
    out += text.slice(at, end) + (cjk ? `（${m.label}）` : ` (${m.label})`);
    at = end;
  }
  out += text.slice(at);
  return { text: out, matches };
}
