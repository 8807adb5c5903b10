/**
 * CJK-aware tokenization for the lexical (BM25) index and its queries.
 *
 * - Words come from `Intl.Segmenter` with word granularity (ICU's dictionary-based word breaker,
 *   the same in Chrome and Node), so Chinese is split into words without spaces.
 * - Dictionary segmentation is inconsistent between a statement and a question about it ("我的猫叫
 *   小白" → 我的|猫叫|小白, "我的猫叫什么" → 我的|猫|叫|什么), so every run of Han characters also
 *   yields its overlapping character bigrams, the classic CJK indexing unit (Lucene's
 *   CJKBigramFilter), and every non-stop Han character as a unigram.
 * - Latin words are lower-cased, possessive `'s` removed, and plural-stemmed with Harman's
 *   "S" stemmer (D. Harman, "How effective is suffixing?", JASIS 1991).
 * - Stop words (function words, question words) in both languages are dropped.
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
    "i'm i've i'd i'll you're you've it's that's what's don't doesn't didn't isn't aren't wasn't can't won't"
  ).split(' '),
);

/** Chinese stop words (multi-character function and question words). */
const ZH_STOP_WORDS = new Set(
  '我们 你们 他们 她们 它们 什么 怎么 怎样 哪里 哪儿 哪个 哪些 为什么 多少 这个 那个 这些 那些 一个 一下 一些 现在 还是 就是 可以 因为 所以 如果 但是 而且 然后 时候 知道 告诉 记得 请问 是不是 有没有'.split(
    ' ',
  ),
);

/** Chinese stop characters (particles, pronouns, question characters) dropped as unigrams and words. */
const ZH_STOP_CHARS = new Set('我你您他她它的了是吗呢吧啊呀哦在和与也都就这那个有么什哪谁几怎着过很又还把被给让从对'.split(''));

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

/** Lower-cased, NFKC-normalized form used by both the index and the queries. */
function prepare(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/**
 * Splits `text` (any mix of Chinese and English) into index terms, in order of appearance;
 * repeated terms are repeated (BM25 uses term frequency). Returns `[]` for blank text.
 * Example: `tokenize('我的猫叫小白')` → `['猫叫', '小白', '的猫', '猫叫', '叫小', '小白', '猫', '小', '白']`
 * (words first, then the bigrams and unigrams of the Han run; exact order is not part of the contract).
 */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  const hanRuns: string[] = [];
  let run = '';
  const flush = () => {
    if (run) hanRuns.push(run);
    run = '';
  };
  for (const { segment, isWordLike } of segmenter.segment(prepare(text))) {
    if (!isWordLike) {
      flush();
      continue;
    }
    if (HAN.test(segment)) {
      if (HAN_ONLY.test(segment)) run += segment;
      else flush();
      if (!ZH_STOP_WORDS.has(segment) && !(segment.length === 1 && ZH_STOP_CHARS.has(segment))) terms.push(segment);
      continue;
    }
    flush();
    let word = segment.replace(/['’]s$/u, '');
    if (EN_STOP.has(word) || EN_STOP.has(segment)) continue;
    word = sStem(word);
    if (word) terms.push(word);
  }
  flush();
  for (const han of hanRuns) {
    const chars = Array.from(han);
    for (let i = 0; i + 1 < chars.length; i += 1) {
      const bigram = `${chars[i]}${chars[i + 1]}`;
      if (!ZH_STOP_WORDS.has(bigram) && !(ZH_STOP_CHARS.has(chars[i]!) && ZH_STOP_CHARS.has(chars[i + 1]!))) terms.push(bigram);
    }
    if (chars.length > 1) for (const c of chars) if (!ZH_STOP_CHARS.has(c)) terms.push(c);
  }
  return terms;
}
