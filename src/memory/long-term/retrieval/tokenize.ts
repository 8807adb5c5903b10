/**
 * CJK-aware tokenization for the lexical (BM25) index and its queries.
 *
 * - Words come from `Intl.Segmenter` with word granularity (ICU's dictionary-based word breaker,
 *   the same in Chrome and Node), so Chinese is split into words without spaces.
 * - Dictionary segmentation is inconsistent between a statement and a question about it ("我的猫叫
 *   小白" → 我的|猫叫|小白, "我的猫叫什么" → 我的|猫|叫|什么), so every run of Han characters also
 *   yields its overlapping character bigrams, the classic CJK indexing unit (Lucene's
 *   CJKBigramFilter). A bigram with a function character in it (的地, 的猫, 些人) is noise and is
 *   dropped unless it is a dictionary word itself, and no bigram spans a stop word (时候|要 gives
 *   no 候要, 哪里|吃 no 里吃: the run ends at a dropped word); no single characters are added by the
 *   fallback, and a one-character dictionary word is kept only when it is not a function
 *   character (一, 些, 们, 的, 地 … are dropped; 猫, 车 are kept).
 * - Latin words are lower-cased, possessive `'s` removed, and lightly stemmed (`lightStem`):
 *   plurals with Harman's "S" stemmer (D. Harman, "How effective is suffixing?", JASIS 1991),
 *   then `-ed`/`-ing` with step 1b of Porter's stemmer ("living" → "live", "moved" → "move").
 *   This replaces prefix matching at query time, which matched "live" to "Liverpool".
 * - Stop words (function words, question words, light verbs such as go / get / take) in both languages are dropped.
 * - `firstPersonTerms` adds terms that tie a first-person word to what follows ("my cat" →
 *   `1p:cat`), indexed in their own field.
 * The text is never translated.
 */

/** English stop words: function words and question words that carry no topic. */
const EN_STOP = new Set(
  (
    'a an the and or but if then else of at by for with about against between into through during before after above below ' +
    'to from up down in out on off over under again further once here there when where why how what which who whom whose ' +
    'all any both each few more most other some such no nor only own same so than too very can will just should now ' +
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself ' +
    'they them their theirs themselves this that these those am is are was were be been being have has had having do does did doing ' +
    'would could shall may might must also ever still yet really please tell remind know think user assistant ' +
    // Light verbs (as in the SMART stop list): "When do I go climbing?" is about climbing, and
    // "I take the ferry" says nothing about how I take my coffee.
    'go goes going gone went get gets getting got gotten take takes taking took taken ' +
    "i'm i've i'd i'll you're you've it's that's what's don't doesn't didn't isn't aren't wasn't can't won't"
  ).split(' '),
);

/** Chinese stop words (multi-character function and question words). */
const ZH_STOP_WORDS = new Set(
  '我们 你们 他们 她们 它们 什么 怎么 怎样 什么时候 哪里 哪儿 哪个 哪些 为什么 多少 这个 那个 这些 那些 一个 一下 一些 现在 还是 就是 可以 因为 所以 如果 但是 而且 然后 时候 知道 告诉 记得 请问 是不是 有没有'.split(
    ' ',
  ),
);

/** Chinese stop characters (particles, pronouns, question characters) dropped as unigrams and words. */
const ZH_STOP_CHARS = new Set('我你您他她它的了是吗呢吧啊呀哦在和与也都就这那个有么什哪谁几怎着过很又还把被给让从对'.split(''));

/**
 * Chinese light verbs, as the English ones are stop words: 要 ("will", "want to") and 去 ("go"):
 * "我什么时候要去面试？" is about 面试, and "朋友过段时间要去深圳" shares nothing with it but 要去
 * (version 4 of the lexical snapshot). Dictionary words that hold them (重要, 过去) are still terms.
 */
const ZH_LIGHT_VERBS = ['要', '去'];

/**
 * Function characters of the bigram fallback: the stop characters plus measure words, plural and
 * adverbial suffixes and numerals-as-articles (一 些 们 地 得 之 等 …) and the light verbs. A fallback bigram that
 * contains one, or a one-character word that is one, carries no topic.
 */
const ZH_FUNCTION_CHARS = new Set([...ZH_STOP_CHARS, ...'一些们地得之其而并或及等种位次把样'.split(''), ...ZH_LIGHT_VERBS]);

const HAN = /\p{Script=Han}/u;
const HAN_ONLY = /^\p{Script=Han}+$/u;

const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });

/**
 * Harman's "S" stemmer: `ies`→`y` (not `eies`/`aies`), `es`→`e` (not `aes`/`ees`/`oes`),
 * `s`→`` (not `us`/`ss`). Words of 3 characters or fewer are kept.
 */
export function sStem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && !word.endsWith('eies') && !word.endsWith('aies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('es') && !word.endsWith('aes') && !word.endsWith('ees') && !word.endsWith('oes')) return word.slice(0, -1);
  if (word.endsWith('s') && !word.endsWith('us') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** Whether `word[i]` is a consonant in Porter's sense (`y` after a consonant is a vowel). */
function isConsonant(word: string, i: number): boolean {
  const c = word[i]!;
  if ('aeiou'.includes(c)) return false;
  if (c === 'y') return i === 0 || !isConsonant(word, i - 1);
  return true;
}

/** Porter's measure m of `stem`: the number of vowel-sequence + consonant-sequence pairs. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && isConsonant(stem, i)) i += 1;
  while (i < n) {
    while (i < n && !isConsonant(stem, i)) i += 1;
    if (i >= n) break;
    while (i < n && isConsonant(stem, i)) i += 1;
    m += 1;
  }
  return m;
}

/** Porter's `*o`: the stem ends consonant-vowel-consonant, the last consonant not w, x or y. */
function endsCvc(s: string): boolean {
  const n = s.length;
  return n >= 3 && isConsonant(s, n - 3) && !isConsonant(s, n - 2) && isConsonant(s, n - 1) && !'wxy'.includes(s[n - 1]!);
}

/**
 * Step 1b of the Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", Program
 * 14(3), 1980): `-eed` → `-ee` when m > 0; `-ed`/`-ing` removed when the rest has a vowel, then
 * repaired: `at`/`bl`/`iz` + `e` (`conflated` → `conflate`), a double consonant other than l, s, z
 * undoubled (`hopping` → `hop`), `e` added after a short m = 1 stem (`filing` → `file`).
 */
export function porterStep1b(word: string): string {
  if (word.endsWith('eed')) return measure(word.slice(0, -3)) > 0 ? word.slice(0, -1) : word;
  for (const suffix of ['ed', 'ing']) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.slice(0, -suffix.length);
    if (!Array.from(stem).some((_, i) => !isConsonant(stem, i))) return word;
    if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
    const n = stem.length;
    if (n >= 2 && stem[n - 1] === stem[n - 2] && isConsonant(stem, n - 1) && !'lsz'.includes(stem[n - 1]!)) return stem.slice(0, -1);
    if (measure(stem) === 1 && endsCvc(stem)) return `${stem}e`;
    return stem;
  }
  return word;
}

/**
 * Light English stemming of one lower-cased word: Harman's S stemmer (plurals), then Porter's
 * step 1b (`-ed`, `-ing`): `lives`/`living`/`lived` → `live`, `moved` → `move`, `learning` →
 * `learn`, `called` → `call`, `schedules` → `schedule`. No derivational suffixes (`-ation`,
 * `-ness`, …): they conflate words whose meanings differ. Words of 3 characters or fewer and
 * words with characters outside `a–z` are kept as they are.
 */
export function lightStem(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/u.test(word)) return word;
  const singular = sStem(word);
  return singular.length <= 3 ? singular : porterStep1b(singular);
}

/** Lower-cased, NFKC-normalized form used by both the index and the queries. */
function prepare(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** One word-break segment (what `tokenize` and `firstPersonTerms` read). */
interface Segment {
  segment: string;
  isWordLike: boolean;
}

/** The last few segmentations (`Intl.Segmenter` is the costly part; each text is read by two tokenizers in a row). */
const recentSegmentations: [string, Segment[]][] = [];
const RECENT_SEGMENTATIONS = 4;

/** Word-break segments of the prepared form of `text` (memoized for the last few texts). */
function segments(text: string): Segment[] {
  const hit = recentSegmentations.find(([t]) => t === text);
  if (hit) return hit[1];
  const out = Array.from(segmenter.segment(prepare(text)), ({ segment, isWordLike }) => ({ segment, isWordLike: isWordLike ?? false }));
  recentSegmentations.push([text, out]);
  if (recentSegmentations.length > RECENT_SEGMENTATIONS) recentSegmentations.shift();
  return out;
}

/**
 * Splits `text` (any mix of Chinese and English) into index terms, in order of appearance;
 * repeated terms are repeated (BM25 uses term frequency). Returns `[]` for blank text.
 * Example: `tokenize('我的猫叫小白')` → `['猫叫', '小白', '叫小']` (我的 is a stop word) (dictionary words first, then
 * the run's bigrams that are neither words already nor hold a function character; exact order is
 * not part of the contract).
 */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  const hanRuns: string[] = [];
  let run = '';
  const flush = () => {
    if (run) hanRuns.push(run);
    run = '';
  };
  const words = new Set<string>();
  for (const { segment, isWordLike } of segments(text)) {
    if (!isWordLike) {
      flush();
      continue;
    }
    if (HAN.test(segment)) {
      words.add(segment);
      const single = Array.from(segment).length === 1;
      const dropped = isZhStop(segment) || (single && ZH_FUNCTION_CHARS.has(segment));
      // A dropped word ends the run: no bigram spans it (什么时候要去 gives no 候要), as Lucene's
      // CJKBigramFilter pairs only adjacent tokens, never across a gap a stop filter left.
      if (HAN_ONLY.test(segment) && !dropped) run += segment;
      else flush();
      if (!dropped) terms.push(segment);
      continue;
    }
    flush();
    let word = segment.replace(/['’]s$/u, '');
    if (EN_STOP.has(word) || EN_STOP.has(segment)) continue;
    word = lightStem(word);
    if (word) terms.push(word);
  }
  flush();
  for (const han of hanRuns) {
    const chars = Array.from(han);
    for (let i = 0; i + 1 < chars.length; i += 1) {
      const bigram = `${chars[i]}${chars[i + 1]}`;
      if (ZH_STOP_WORDS.has(bigram) || words.has(bigram)) continue; // stop word, or already a term as a word
      if (ZH_FUNCTION_CHARS.has(chars[i]!) || ZH_FUNCTION_CHARS.has(chars[i + 1]!)) continue;
      terms.push(bigram);
    }
  }
  return terms;
}

/**
 * Content-character unigrams of `text`: every Han character that is not a function character
 * (`ZH_FUNCTION_CHARS`: 的 了 是 们 一 些 地 得 …), in order, repeated as often as it occurs;
 * `[]` for text without Han. Indexed in their own low-weight field of the lexical index
 * (`lexical.ts`), so a question that shares only single characters with a memory (猫 / 小猫咪,
 * 体检 / 检查) still finds it, without the character noise entering the main field.
 * @example hanUnigrams('我的猫叫小白') // ['猫', '叫', '小', '白']
 */
export function hanUnigrams(text: string): string[] {
  const out: string[] = [];
  for (const c of prepare(text)) if (HAN.test(c) && !ZH_FUNCTION_CHARS.has(c)) out.push(c);
  return out;
}

/** Whether a Han segment is a stop word: listed, or made only of stop characters (我的, 你的, 了吗). */
function isZhStop(segment: string): boolean {
  return ZH_STOP_WORDS.has(segment) || Array.from(segment).every((c) => ZH_STOP_CHARS.has(c));
}

/** English first-person words (subject, object, possessive; singular and plural; contractions). */
const EN_FIRST_PERSON = new Set("i me my mine myself we us our ours ourselves i'm i've i'd i'll we're we've we'd we'll".split(' '));
/** Second- and third-person pronouns: between a first-person word and the next content word, they end its `1p:` term. */
const EN_OTHER_PERSON = new Set("you your yours he him his she her hers they them their theirs you're you've he's she's they're".split(' '));
/** Chinese second- and third-person pronouns (ICU segments), as `EN_OTHER_PERSON`. */
const ZH_OTHER_PERSON = /^(?:你们的|你们|你的|你|您的|您|他们的|他们|他的|他|她们的|她们|她的|她)$/u;
/** Chinese first-person words (ICU segments): 我, 我的, 我们, 咱们 …. */
const ZH_FIRST_PERSON = /^(?:我们的|我们|咱们的|咱们|我的|我)$/u;

/** Prefix of first-person terms (cannot collide with a word: the tokenizer never emits `:`). */
export const FIRST_PERSON_PREFIX = '1p:';

/**
 * First-person terms: for each first-person word ("I", "my", "our", "我", "我的", …), a term
 * `1p:<w>` joining it to the next content word `w` (stop words and commas or colons in between
 * are skipped; another person's pronoun — "you", "she", 你, 他 — or a sentence end — `.`, `!`, `?`, `;`, `。`, `！`, `？`, `；` — ends the search). In Chinese, `w` is the first character of the next
 * non-stop segment, and an ICU word that starts with 我 ("我家", "我姐") counts as 我 + rest.
 * Personal memory is mostly about the user: "What's my cat's name?" gives `1p:cat`, which
 * "My cat is called Mochi" has and "My colleague's cat is called Luna" (`1p:colleague`) does not;
 * "我家的猫" gives `1p:家`, "同事家的猫" nothing. This is an ordered-window bigram of the
 * sequential dependence model (D. Metzler, W. B. Croft, "A Markov random field model for term
 * dependencies", SIGIR 2005) restricted to the possessor, indexed as its own BM25 field.
 * Both sides of the index use it (statements and questions). Returns each term once.
 */
export function firstPersonTerms(text: string): string[] {
  const terms = new Set<string>();
  let pending = false;
  for (const { segment, isWordLike } of segments(text)) {
    if (!isWordLike) {
      if (/[.!?;。！？；…]/u.test(segment)) pending = false;
      continue;
    }
    if (HAN.test(segment)) {
      if (ZH_FIRST_PERSON.test(segment)) {
        pending = true;
        continue;
      }
      if (segment.length > 1 && segment.startsWith('我') && HAN_ONLY.test(segment)) {
        const rest = Array.from(segment.slice(1)).find((c) => !ZH_STOP_CHARS.has(c));
        if (rest) terms.add(`${FIRST_PERSON_PREFIX}${rest}`);
        pending = false;
        continue;
      }
      if (ZH_OTHER_PERSON.test(segment)) {
        pending = false;
        continue;
      }
      if (!pending || isZhStop(segment)) continue;
      const first = Array.from(segment).find((c) => !ZH_STOP_CHARS.has(c));
      if (first) terms.add(`${FIRST_PERSON_PREFIX}${first}`);
      pending = false;
      continue;
    }
    if (EN_FIRST_PERSON.has(segment)) {
      pending = true;
      continue;
    }
    // "Tell me more if you like": another person's pronoun takes over before the next content word.
    if (EN_OTHER_PERSON.has(segment)) {
      pending = false;
      continue;
    }
    const word = segment.replace(/['’]s$/u, '');
    if (EN_STOP.has(word) || EN_STOP.has(segment)) continue;
    if (pending) terms.add(`${FIRST_PERSON_PREFIX}${lightStem(word)}`);
    pending = false;
  }
  return [...terms];
}
