/**
 * Turns one extracted (or user-dictated) memory item into the fields the store needs: the text
 * with relative dates made absolute, a kind, an importance, and a validity window.
 *
 * Validity follows Zep/Graphiti's bi-temporal idea (see `MemoryRecord`): `validFrom` is when the
 * item became true in the world (the start of the date it names when that is in the past, else the
 * message time: "I have a dentist appointment next Wednesday" is true from the moment it is said)
 * and `validUntil` closes it. Upcoming or ongoing events expire at the end of the date they name ("dentist next Wednesday"
 * stops being current after that Wednesday); past events ("went to Beijing yesterday") are history
 * and stay valid; profile facts, preferences, facts and instructions never expire by themselves
 * (a contradiction closes them, see consolidation).
 */
import type { FactKind } from '../../../model/memory';
import { findRelativeDates, parseAbsoluteDate, resolveRelativeDates, type DateRange } from './dates';

/** Longest memory text kept from one item (characters); longer model output is cut at a sentence end if possible. */
export const MAX_ITEM_CHARS = 500;

/**
 * Default importance (0..1) by kind, our heuristic: who the user is and how they want to be
 * answered matter most; one-off facts least. (Generative Agents rate "poignancy" with the LLM;
 * small local models rate poorly, so the kind decides.)
 */
export const DEFAULT_IMPORTANCE: Record<FactKind, number> = {
  profile: 0.8,
  instruction: 0.8,
  preference: 0.7,
  event: 0.6,
  fact: 0.5,
};

/** An item as extracted or dictated, before preparation. */
export interface RawItem {
  kind: FactKind;
  text: string;
  topic?: string;
  /** Absolute date the model gave for an event (`YYYY-MM-DD`, `YYYY-MM`, a `~` range), if any. */
  date?: string | null;
}

/** An item ready for the store. Times in ms epoch. */
export interface PreparedItem {
  kind: FactKind;
  text: string;
  topic?: string;
  importance: number;
  validFrom: number | null;
  validUntil: number | null;
}

const ISO_IN_TEXT = /(?<!\d)(\d{4}-\d{1,2}-\d{1,2})(?:\s*~\s*(\d{4}-\d{1,2}-\d{1,2}))?(?!\d)/u;

/** The date range an item names: its `date` field, else an absolute date in its text, else a relative one. */
export function itemDateRange(text: string, date: string | null | undefined, messageTime: number): DateRange | null {
  const fromField = date ? parseAbsoluteDate(date) : null;
  if (fromField) return fromField;
  const iso = ISO_IN_TEXT.exec(text);
  if (iso) {
    const r = parseAbsoluteDate(iso[2] ? `${iso[1]}~${iso[2]}` : iso[1]!);
    if (r) return r;
  }
  return findRelativeDates(text, messageTime)[0]?.range ?? null;
}

/** Cuts `text` to `MAX_ITEM_CHARS`, at the last sentence end inside the limit when there is one. */
export function capItemText(text: string): string {
  const chars = Array.from(text.trim());
  if (chars.length <= MAX_ITEM_CHARS) return text.trim();
  const head = chars.slice(0, MAX_ITEM_CHARS).join('');
  const cut = Math.max(...['。', '！', '？', '. ', '! ', '? '].map((p) => head.lastIndexOf(p)));
  return cut > MAX_ITEM_CHARS / 2 ? head.slice(0, cut + 1).trim() : `${head.trimEnd()}…`;
}

/**
 * Prepares an item: resolves relative dates against `messageTime` (ms epoch, the time of the
 * user message), caps the text, fills importance and validity (see module doc).
 */
export function prepareItem(item: RawItem, messageTime: number): PreparedItem {
  const text = capItemText(resolveRelativeDates(item.text.trim(), messageTime).text);
  const range = itemDateRange(text, item.date, messageTime);
  const upcomingEvent = item.kind === 'event' && range !== null && range.end > messageTime;
  return {
    kind: item.kind,
    text,
    ...(item.topic ? { topic: item.topic } : {}),
    importance: DEFAULT_IMPORTANCE[item.kind],
    validFrom: range ? Math.min(range.start, messageTime) : messageTime,
    validUntil: upcomingEvent ? range.end : null,
  };
}

const INSTRUCTION_START_EN = /^(?:please\s+)?(?:always|never|don'?t|do not|call me|reply|answer|respond|use|speak|write|address me|keep)\b/iu;
const INSTRUCTION_START_ZH = /^(?:请你?|你)?(?:以后|今后|总是|永远|一直|不要|别|回答|回复|叫我|称呼我|用中文|用英文|说话)/u;
const EVENT_WORDS =
  /\b(?:appointment|meeting|flight|trip|party|deadline|exam|interview|wedding|concert|conference|visit)s?\b|会议|开会|面试|考试|航班|出差|旅行|旅游|聚会|约会|预约|截止|婚礼|演唱会|看病|复诊/iu;
const PREFERENCE_WORDS =
  /\b(?:like|likes|love|loves|prefer|prefers|enjoy|enjoys|hate|hates|dislike|dislikes|favou?rite|can'?t stand)\b|喜欢|爱吃|爱喝|爱看|偏好|偏爱|讨厌|最爱|受不了|不爱/iu;
const PROFILE_WORDS =
  /\b(?:my name|i am|i'm|i live|i work|i was born|my (?:wife|husband|partner|son|daughter|kids?|children|mother|mom|father|dad|job|birthday|address|phone|email|age))\b|我叫|名字|我是|我住|住在|我在.{0,12}工作|我的(?:妻子|丈夫|老婆|老公|儿子|女儿|孩子|妈妈|爸爸|母亲|父亲|工作|生日|地址|电话|邮箱|年龄)|我出生|我今年\d+岁/iu;

/**
 * Guesses the kind of a user-dictated memory ("remember that …"), without the LLM:
 * an imperative about the assistant's behaviour → `instruction`; a date or an event word →
 * `event`; likes/dislikes → `preference`; name, home, work, family → `profile`; else `fact`.
 * Keyword lists cover English and Chinese; it is a heuristic, the user can change the kind later.
 */
export function guessKind(text: string, messageTime: number): FactKind {
  const t = text.trim();
  if (INSTRUCTION_START_EN.test(t) || INSTRUCTION_START_ZH.test(t)) return 'instruction';
  if (ISO_IN_TEXT.test(t) || findRelativeDates(t, messageTime).length > 0 || EVENT_WORDS.test(t)) return 'event';
  if (PREFERENCE_WORDS.test(t)) return 'preference';
  if (PROFILE_WORDS.test(t)) return 'profile';
  return 'fact';
}
