/**
 * Reply parsing, entity-name matching, language checks and prompt content of the LLM-driven
 * strategies. Inputs include the garbage a non-instruction model produces.
 */
import { describe, expect, it } from 'vitest';
import type { ChatResult } from '../../src/engines/types';
import { conversationLanguage } from '../../src/memory/short-term/language';
import { cjkShare, dominantLanguage, languageMatches } from '../../src/text/language';
import {
  entityKey,
  groundedShare,
  keyFacts,
  mentions,
  missingKeyFacts,
  parseEntityReply,
  parseJsonObject,
  parseSummaryReply,
  summaryGroundingProblem,
} from '../../src/memory/short-term/parse';
import { entityPrompt, summaryPrompt } from '../../src/memory/short-term/prompts';
import { wordCounter } from '../../bench/data/strategy-harness';

const ok = (content: string): ChatResult => ({ content, finishReason: 'stop', usage: null });
const counter = wordCounter();

describe('parseJsonObject', () => {
  it('cuts the first complete object out of fences and prose, repairing small slips', () => {
    expect(parseJsonObject('```json\n{"summary": "a"}\n```')).toEqual({ ok: true, value: { summary: 'a' } });
    expect(parseJsonObject('Sure! Here it is: {"summary": "a {b}"} Hope it helps.')).toEqual({ ok: true, value: { summary: 'a {b}' } });
    expect(parseJsonObject("{'summary': 'single quotes', }")).toEqual({ ok: true, value: { summary: 'single quotes' } });
    expect(parseJsonObject('{"summary": "escaped \\" quote } brace"}')).toEqual({ ok: true, value: { summary: 'escaped " quote } brace' } });
  });

  it('rejects empty, prose, truncated and non-object replies with a reason', () => {
    expect(parseJsonObject('   ')).toEqual({ ok: false, reason: 'empty reply' });
    expect(parseJsonObject('Once upon a time')).toEqual({ ok: false, reason: 'no JSON object in the reply' });
    expect(parseJsonObject('{"summary": "cut')).toEqual({ ok: false, reason: 'truncated JSON object' });
    expect(parseJsonObject('{"summary": "a"')).toEqual({ ok: false, reason: 'truncated JSON object' });
    expect(parseJsonObject('["a list"]')).toEqual({ ok: false, reason: 'no JSON object in the reply' });
  });
});

describe('parseSummaryReply', () => {
  const opts = { counter, maxTokens: 10, language: 'en' as const };
  it('accepts a complete, short summary in the right language (trimmed)', () => {
    expect(parseSummaryReply(ok('{"summary": "  The user is Ana.  "}'), opts)).toEqual({ ok: true, value: 'The user is Ana.' });
    expect(parseSummaryReply(ok('{"summary": "用户叫李雷，住在杭州。"}'), { ...opts, language: 'zh' })).toEqual({ ok: true, value: '用户叫李雷，住在杭州。' });
  });

  it('rejects unfinished, oversize, empty, wrong-shape and wrong-language replies', () => {
    expect(parseSummaryReply({ content: '{"summary": "x"}', finishReason: 'length', usage: null }, opts)).toMatchObject({ ok: false, reason: /token limit/ });
    expect(parseSummaryReply({ content: '{"summary": "x"}', finishReason: 'abort', usage: null }, opts)).toMatchObject({ ok: false, reason: /aborted/ });
    expect(parseSummaryReply(ok(JSON.stringify({ summary: 'w '.repeat(11) })), opts)).toMatchObject({
      ok: false,
      reason: 'summary too long (11 tokens, at most 10)',
    });
    expect(parseSummaryReply(ok('{"summary": ""}'), opts)).toMatchObject({ ok: false, reason: 'empty summary' });
    expect(parseSummaryReply(ok('{"text": "x"}'), opts)).toMatchObject({ ok: false, reason: /no "summary" string/ });
    expect(parseSummaryReply(ok('{"summary": "The user is Li Lei."}'), { ...opts, language: 'zh' })).toMatchObject({ ok: false, reason: /language/ });
    expect(parseSummaryReply(ok('{"summary": "用户叫李雷，住在杭州，养了一只猫。"}'), opts)).toMatchObject({ ok: false, reason: /language/ });
  });
});

describe('summary grounding', () => {
  const conv = 'My name is Ana and I live in Porto. Nice to meet you, Ana! I adopted a dog named Bolt on 3 May. Congratulations on Bolt!';
  const story = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. One day, she saw a big red ball in the park.';

  it('measures the share of key words that occur in the source', () => {
    // Key words (≥ 3 letters, no stopwords such as "the", "user", "who", "she", "may"): ana, lives,
    // porto, adopted, dog, bolt, 3 → all but "lives" occur in the source ("live" does) → 6/7.
    expect(groundedShare('The user is Ana, who lives in Porto. She adopted a dog, Bolt, on 3 May.', conv)).toBeCloseTo(6 / 7, 10);
    expect(groundedShare(story, conv)!).toBeLessThan(0.1);
    expect(groundedShare('Yes,', conv)).toBeNull();
    // Chinese: character bigrams. 用户叫李雷… (17 bigrams) shares 叫李, 李雷, 住在, 在杭, 杭州, 十一, 一岁, 的猫, 麻薯 with the source.
    expect(groundedShare('用户叫李雷，住在杭州，养了一只十一岁的猫麻薯。', '我叫李雷，住在杭州。我的猫叫麻薯，今年十一岁。')).toBeCloseTo(9 / 17, 10);
    expect(groundedShare('从前有一个小女孩叫莉莉，她喜欢在公园里玩红色的球。', '我叫李雷，住在杭州。我的猫叫麻薯，今年十一岁。')).toBe(0);
  });

  it('rejects stories, empty gists and summaries that wipe the previous one; accepts real ones', () => {
    const previous = 'Ana lives in Porto with her dog Bolt, adopted on 3 May. She works as a nurse and loves hiking in the Gerês mountains.';
    expect(summaryGroundingProblem(story, '', conv)).toMatch(/does not reflect/);
    expect(summaryGroundingProblem('Yes,', '', conv)).toBe('summary has no content words');
    expect(summaryGroundingProblem('Hello.', '', 'Hi! Hello!')).toBeNull(); // nothing to summarize: a short gist is fine
    expect(summaryGroundingProblem('Ana plans a trip to Kyoto in April.', previous, 'I am planning a trip to Kyoto in April.')).toMatch(
      /drops the previous summary/,
    );
    // Every key fact of the previous summary must survive: the Gerês mountains may not be dropped.
    expect(
      summaryGroundingProblem(
        'Ana, a nurse, lives in Porto with her dog Bolt (adopted 3 May), loves hiking, and plans a trip to Kyoto in April.',
        previous,
        'I am planning a trip to Kyoto in April.',
      ),
    ).toBe('summary drops key facts of the previous summary: Gerês');
    expect(
      summaryGroundingProblem(
        'Ana, a nurse, lives in Porto with her dog Bolt (adopted 3 May), loves hiking in the Gerês mountains, and plans a trip to Kyoto in April.',
        previous,
        'I am planning a trip to Kyoto in April.',
      ),
    ).toBeNull();
  });

  it('key facts of a previous summary (names, places, dates, numbers, Chinese proper nouns) must survive, however short it is', () => {
    expect(keyFacts('The user said: My sister Ana lives in Lisbon.')).toEqual(['Ana', 'Lisbon']);
    expect(keyFacts('She met Bo on 2024-05-10 at 14:30 and paid 120 euros.')).toEqual(['Bo', '2024-05-10', '14:30', '120']);
    // 里斯本 (three characters), 安娜 after 妹妹, 咪咪 after 叫, 北京 after 去了; 2024 and 5 before 年/月.
    expect(keyFacts('用户的妹妹安娜住在里斯本，她的猫叫咪咪，2024年5月去了北京。')).toEqual(['安娜', '里斯本', '咪咪', '北京', '2024', '5']);
    expect(missingKeyFacts('My sister Ana lives in Lisbon.', 'The user adopted a cat called Miso.')).toEqual(['Ana', 'Lisbon']);
    expect(missingKeyFacts('My sister Ana lives in Lisbon.', "The user's sister ana lives in LISBON.")).toEqual([]);
    expect(missingKeyFacts("Ana's dog Bolt lives in Lisbon.", "Bolt, Ana’s dog, is in Lisbon's old town.")).toEqual([]);
    expect(missingKeyFacts('用户的妹妹安娜住在里斯本。', '用户养了一只猫。安娜在里斯本。')).toEqual([]);
    // The case: fewer than 8 key words before, so the retained-share rule never applied.
    const previous = 'The user said: My sister Ana lives in Lisbon.';
    expect(summaryGroundingProblem('The user adopted a cat called Miso.', previous, 'I adopted a cat called Miso.', 'I adopted a cat called Miso.')).toBe(
      'summary drops key facts of the previous summary: Ana, Lisbon',
    );
    expect(
      summaryGroundingProblem(
        'The user adopted a cat called Miso; their sister Ana lives in Lisbon.',
        previous,
        'I adopted a cat called Miso.',
        'I adopted a cat called Miso.',
      ),
    ).toBeNull();
    expect(summaryGroundingProblem('用户养了一只猫，叫味噌。', '用户的妹妹安娜住在里斯本。', '我养了一只猫，叫味噌。', '我养了一只猫，叫味噌。')).toMatch(
      /^summary drops the previous summary/,
    );
    expect(
      parseSummaryReply(ok('{"summary": "The user adopted a cat called Miso."}'), {
        counter,
        maxTokens: 100,
        language: 'en',
        grounding: { previous, lines: 'I adopted a cat called Miso.' },
      }),
    ).toEqual({ ok: false, reason: 'summary drops key facts of the previous summary: Ana, Lisbon', missingFacts: ['Ana', 'Lisbon'] });
  });

  it('a full previous summary may be compressed: up to half of its key facts may go, never more', () => {
    // Key facts: Ana, Porto, Bolt, May, Gerês, 3 (6). The compressed summary keeps Ana, Porto, Bolt and drops May, Gerês, 3 (3 of 6).
    const previous = 'Ana lives in Porto with her dog Bolt, adopted on 3 May. She works as a nurse and loves hiking in the Gerês mountains.';
    expect(keyFacts(previous)).toEqual(['Ana', 'Porto', 'Bolt', 'May', 'Gerês', '3']); // words first, then numbers
    const lines = 'I am planning a trip to Kyoto in April.';
    const compressed = '{"summary": "Ana, a nurse in Porto with her dog Bolt, loves hiking and plans a trip to Kyoto in April."}';
    const tooMuch = '{"summary": "Ana, a nurse who loves hiking, plans a trip to Kyoto in April."}'; // drops Porto, Bolt, 3, May, Gerês (5 of 6)
    const fullAt = Math.ceil(counter.count(previous) / 0.4); // the previous summary is 40 % of the accepted maximum: full
    const parse = (reply: string, maxTokens: number) => parseSummaryReply(ok(reply), { counter, maxTokens, language: 'en', grounding: { previous, lines } });
    expect(parse(compressed, fullAt)).toEqual({ ok: true, value: 'Ana, a nurse in Porto with her dog Bolt, loves hiking and plans a trip to Kyoto in April.' });
    expect(parse(tooMuch, fullAt)).toMatchObject({ ok: false, missingFacts: ['Porto', 'Bolt', 'May', 'Gerês', '3'] });
    // With room left (maximum four times larger), nothing may go.
    expect(parse(compressed, fullAt * 4)).toEqual({
      ok: false,
      reason: 'summary drops key facts of the previous summary: May, Gerês, 3',
      missingFacts: ['May', 'Gerês', '3'],
    });
  });

  it("rejects a summary that keeps none of the user's own words, even when it echoes the replies", () => {
    const user = 'My dog Bruno loves the beach in Xiamen.'; // content tokens: dog, bruno, loves, beach, xiamen → 1 required
    const reply = 'Once upon a time there was a shark. The shark swam well in the sea.';
    // Grounded in the reply (shark, swam, well, sea all occur), but nothing of the user's.
    expect(summaryGroundingProblem('Well, the shark swam in the sea.', '', `${user}\n${reply}`)).toBeNull();
    expect(summaryGroundingProblem('Well, the shark swam in the sea.', '', `${user}\n${reply}`, user)).toBe(
      "summary keeps too few of the user's own words (0 of 5, needs 1)",
    );
    expect(summaryGroundingProblem('The user has a dog, Bruno, who loves the beach in Xiamen.', '', `${user}\n${reply}`, user)).toBeNull();
    // Chinese bigrams: 我妹 妹妹 妹小 小雨 雨下 下个 个月 月去 去杭 杭州 州读 读书 → 12, ceil(1.8) = 2 required.
    const zh = '我妹妹小雨下个月去杭州读书。';
    expect(summaryGroundingProblem('小雨要去杭州。', '', zh, zh)).toBeNull(); // 小雨, 杭州
    expect(summaryGroundingProblem('从前有一只小熊到杭州。', '', `${zh}\n从前有一只小熊。`, zh)).toBe(
      "summary keeps too few of the user's own words (1 of 12, needs 2)",
    );
  });

  it('parseSummaryReply applies the grounding check when given the source', () => {
    const grounding = { previous: '', lines: conv };
    expect(parseSummaryReply(ok(JSON.stringify({ summary: story })), { counter, maxTokens: 100, language: 'en', grounding })).toMatchObject({
      ok: false,
      reason: /does not reflect/,
    });
    expect(
      parseSummaryReply(ok('{"summary": "Ana lives in Porto and adopted Bolt on 3 May."}'), { counter, maxTokens: 100, language: 'en', grounding }),
    ).toEqual({ ok: true, value: 'Ana lives in Porto and adopted Bolt on 3 May.' });
  });
});

describe('parseEntityReply', () => {
  const opts = {
    counter,
    exchangeText: 'User: Max and 小雨 went to Lisbon.\nAssistant: Nice!',
    maxSummaryTokens: 5,
    maxEntities: 2,
    language: 'mixed' as const,
  };
  it('keeps valid entries only, deduplicated and capped', () => {
    const reply = ok(
      JSON.stringify({
        entities: [
          { name: 'Max', summary: 'Went to Lisbon with 小雨.' },
          { name: '小雨', summary: 'Loves the sunshine and the big red ball.' }, // not grounded in the exchange
          { name: 'max', summary: 'Duplicate of Max.' },
          { name: 'Maximilian', summary: 'Not in the exchange.' },
          { name: 'Assistant', summary: 'The speaker.' },
          { name: '小雨', summary: 'a b c d e f' }, // 6 words > 5
          { name: 'Lisbon', summary: 'City Max went to.' },
          { name: 42 },
          { name: '小雨', summary: '用户的妹妹。' }, // valid, but the cap of 2 is reached
        ],
      }),
    );
    const parsed = parseEntityReply(reply, opts);
    expect(parsed).toEqual({
      ok: true,
      value: {
        notes: [
          { name: 'Max', summary: 'Went to Lisbon with 小雨.' },
          { name: 'Lisbon', summary: 'City Max went to.' },
        ],
        dropped: 7,
      },
    });
  });

  it('accepts an empty list and rejects non-objects', () => {
    expect(parseEntityReply(ok('{"entities": []}'), opts)).toEqual({ ok: true, value: { notes: [], dropped: 0 } });
    expect(parseEntityReply(ok('Max went home.'), opts)).toMatchObject({ ok: false });
    expect(parseEntityReply(ok('{"entities": "Max"}'), opts)).toMatchObject({ ok: false, reason: /no "entities" list/ });
  });
});

describe('entity names and language', () => {
  it('normalizes keys and matches names as words (Latin) or substrings (CJK)', () => {
    expect(entityKey('  Ｍｏｃｈｉ  Chan ')).toBe('mochi chan');
    expect(mentions('Is MOCHI ok?', 'Mochi')).toBe(true);
    expect(mentions('a mochiato', 'Mochi')).toBe(false);
    expect(mentions('mochi-chan and mochi.', 'Mochi')).toBe(true);
    expect(mentions('我妹妹小雨明天来', '小雨')).toBe(true);
    expect(mentions("小雨's visit", '小雨')).toBe(true);
    expect(mentions('R2D2 and R2', 'R2')).toBe(true);
    expect(mentions('R2D2 only', 'R2')).toBe(false);
  });

  it('measures the CJK share and the dominant language', () => {
    expect(cjkShare('abc')).toBe(0);
    expect(cjkShare('123 !!')).toBeNull();
    // 4 CJK characters, 2 Latin words: 4 / (4 + 3) = 0.571…
    expect(cjkShare('我叫李雷 hello world')).toBeCloseTo(4 / 7, 10);
    expect(dominantLanguage('我叫李雷，住在杭州。')).toBe('zh');
    expect(dominantLanguage('I live in Hangzhou.')).toBe('en');
    expect(dominantLanguage('我叫李雷 hello world')).toBe('mixed');
    expect(languageMatches('用户叫 Li Lei，住在杭州。', 'zh')).toBe(true);
    expect(languageMatches('The user is Li Lei.', 'zh')).toBe(false);
    expect(languageMatches('anything', 'mixed')).toBe(true);
    expect(
      conversationLanguage([{ content: 'Hello there, how are you today? I went hiking with friends.' }, { content: '我很好，谢谢你的关心。今天天气不错。' }]),
    ).toBe('mixed');
  });

  it('counts words of every alphabet, not only Latin ones', () => {
    // 2 CJK characters, 5 Cyrillic words: 2 / (2 + 7.5) ≈ 0.21. Counting Latin words only made
    // this Russian text "Chinese" (share 1), so its summary had to be written in Chinese.
    expect(cjkShare('Привет, как дела? Я люблю 火锅')).toBeCloseTo(2 / 9.5, 10);
    expect(dominantLanguage('Привет, как дела? Я люблю 火锅')).toBe('en');
    expect(languageMatches('Пользователь очень любит есть 火锅.', 'zh')).toBe(false); // 2 / (2 + 6) = 0.25
  });
});

describe('prompts', () => {
  it('summary prompt: keeps names, preferences, gender, events and dates; gives the previous summary once; language rule', () => {
    const [system, user] = summaryPrompt(
      '用户叫李雷。',
      [
        { role: 'user', content: '我的猫叫麻薯。' },
        { role: 'assistant', content: '好的。' },
      ],
      300,
      'zh',
    );
    for (const kept of ['name', 'preferences', 'gender', 'events with their dates']) expect(system!.content).toContain(kept);
    expect(system!.content).toContain('请用简体中文写');
    expect(system!.content).toContain('At most 210 words (in Chinese at most 420 characters)');
    expect(system!.content).toContain('{"summary": "<the new summary>"}');
    expect(user!.content).toBe(
      'Previous summary:\n用户叫李雷。\n\nNew lines of conversation:\nUser: 我的猫叫麻薯。\nAssistant: 好的。\n\nReturn the JSON object with the new summary.',
    );
    expect(user!.content.split('用户叫李雷。')).toHaveLength(2);
  });

  it('entity prompt: lists known notes and the exchange', () => {
    const [system, user] = entityPrompt([{ name: 'Mochi', summary: "The user's cat." }], [{ role: 'user', content: 'Mochi is 11.' }], 80, 'en');
    expect(system!.content).toContain('Do not list the user or the assistant themselves');
    expect(system!.content).toContain('write in English');
    expect(user!.content).toBe("Known notes:\n- Mochi: The user's cat.\n\nExchange:\nUser: Mochi is 11.\n\nReturn the JSON object.");
  });
});
