/**
 * Extraction: relative dates (EN/ZH), JSON repair, reply normalization, and `extractMemories`
 * against the scripted engine. The scripted engine stands in for the one boundary that cannot run
 * here — a real instruction-following LLM; its replies are written like a small local model's
 * (fenced, trailing commas, truncated, translated) or like the fixture model stories260K's
 * (children's stories, never JSON).
 */
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/engines/types';
import { findRelativeDates, parseAbsoluteDate, resolveRelativeDates } from '../../src/memory/long-term/extraction/dates';
import { ExtractionError, extractMemories } from '../../src/memory/long-term/extraction';
import { guessKind, prepareItem } from '../../src/memory/long-term/extraction/items';
import { parseJsonReply, sliceFirstJson } from '../../src/text/json-reply';
import { cjkShare, dominantLanguage, writesChinese } from '../../src/text/language';
import { contentTerms, termCoverage } from '../../src/text/terms';
import { buildExtractionMessages } from '../../src/memory/long-term/extraction/prompt';
import { EXTRACTION_JSON_SCHEMA, normalizeExtractionReply } from '../../src/memory/long-term/extraction/schema';
import { createScriptedEngine } from '../helpers/scripted-engine';

/** Friday 2024-05-10 14:30, local time. */
const FRI = new Date(2024, 4, 10, 14, 30).getTime();
const day = (y: number, m: number, d: number) => new Date(y, m - 1, d).getTime();

/** Text in the style of the stories260K fixture model (TinyStories): what it writes whatever the prompt. */
const STORY =
  'Once upon a time, there was a little girl named Lily. She loved to play with her ball in the park. One day, she saw a big dog. The dog was sad. Lily said, "Do not be sad, dog!" They played together and were happy.';

describe('relative dates', () => {
  it.each([
    // English, against Friday 2024-05-10
    ['yesterday', '2024-05-09'],
    ['the day before yesterday', '2024-05-08'],
    ['tomorrow', '2024-05-11'],
    ['tonight', '2024-05-10'],
    ['next Wednesday', '2024-05-15'],
    ['last Friday', '2024-05-03'],
    ['this Monday', '2024-05-06'],
    ['next week', '2024-05-13~2024-05-19'],
    ['last week', '2024-04-29~2024-05-05'],
    ['this weekend', '2024-05-11~2024-05-12'],
    ['last month', '2024-04'],
    ['next year', '2025'],
    ['3 days ago', '2024-05-07'],
    ['in two days', '2024-05-12'],
    ['a couple of months ago', '2024-03'],
    // Chinese
    ['昨天', '2024-05-09'],
    ['前天', '2024-05-08'],
    ['大前天', '2024-05-07'],
    ['明天', '2024-05-11'],
    ['后天', '2024-05-12'],
    ['大后天', '2024-05-13'],
    ['下周三', '2024-05-15'],
    ['下个星期五', '2024-05-17'],
    ['上周日', '2024-05-05'],
    ['这周末', '2024-05-11~2024-05-12'],
    ['下周', '2024-05-13~2024-05-19'],
    ['上个月', '2024-04'],
    ['下月', '2024-06'],
    ['去年', '2023'],
    ['三天前', '2024-05-07'],
    ['两个星期后', '2024-05-20~2024-05-26'],
    ['十天后', '2024-05-20'],
  ])('%s → %s', (expression, label) => {
    const found = findRelativeDates(expression, FRI);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ index: 0, length: expression.length, label });
  });

  it('handles month, year and week boundaries', () => {
    expect(findRelativeDates('next month', new Date(2024, 0, 31, 9).getTime())[0]!.label).toBe('2024-02');
    expect(findRelativeDates('上个月', new Date(2024, 0, 15).getTime())[0]!.label).toBe('2023-12');
    // Monday 2024-12-30: last week runs 2024-12-23 … 2024-12-29.
    expect(findRelativeDates('last week', new Date(2024, 11, 30).getTime())[0]!.label).toBe('2024-12-23~2024-12-29');
    // On a Sunday (2024-05-12) the week is still Monday 6 … Sunday 12: 这周三 = 2024-05-08, 下周三 = 2024-05-15.
    const sunday = new Date(2024, 4, 12, 20).getTime();
    expect(findRelativeDates('这周三', sunday)[0]!.label).toBe('2024-05-08');
    expect(findRelativeDates('下周三', sunday)[0]!.label).toBe('2024-05-15');
    // Leap day.
    expect(findRelativeDates('tomorrow', new Date(2024, 1, 28).getTime())[0]!.label).toBe('2024-02-29');
  });

  it('annotates in the text’s own script, keeps the language, and is idempotent', () => {
    const zh = resolveRelativeDates('我下周三要去北京出差，上个月刚从深圳回来', FRI);
    expect(zh.text).toBe('我下周三（2024-05-15）要去北京出差，上个月（2024-04）刚从深圳回来');
    expect(resolveRelativeDates(zh.text, FRI).text).toBe(zh.text);
    const en = resolveRelativeDates('Dentist next Wednesday; moved here last month.', FRI);
    expect(en.text).toBe('Dentist next Wednesday (2024-05-15); moved here last month (2024-04).');
    expect(en.matches.map((m) => m.range.start)).toEqual([day(2024, 5, 15), day(2024, 4, 1)]);
    expect(en.matches[0]!.range.end).toBe(day(2024, 5, 16));
  });

  it('leaves look-alikes alone', () => {
    for (const text of ['看一下周报', '这周围很安静', '登上月球', '之前天气很好', '今后天气会变冷', 'Mondays are hard', 'the yesterdays of old', '周年纪念']) {
      expect([text, findRelativeDates(text, FRI)]).toEqual([text, []]);
    }
  });

  it('parses absolute dates the model writes and rejects impossible ones', () => {
    expect(parseAbsoluteDate('2024-05-15')).toEqual({ start: day(2024, 5, 15), end: day(2024, 5, 16), granularity: 'day' });
    expect(parseAbsoluteDate('2024/5/1')).toEqual({ start: day(2024, 5, 1), end: day(2024, 5, 2), granularity: 'day' });
    expect(parseAbsoluteDate('2024-04')).toEqual({ start: day(2024, 4, 1), end: day(2024, 5, 1), granularity: 'month' });
    expect(parseAbsoluteDate('2024-05-13~2024-05-19')).toEqual({ start: day(2024, 5, 13), end: day(2024, 5, 20), granularity: 'week' });
    expect(parseAbsoluteDate('2024-02-30')).toBeNull();
    expect(parseAbsoluteDate('2024-13')).toBeNull();
    expect(parseAbsoluteDate('next week')).toBeNull();
  });
});

describe('item preparation', () => {
  it('gives upcoming events an end, keeps past events and profile facts open', () => {
    const upcoming = prepareItem({ kind: 'event', text: 'Dentist next Wednesday' }, FRI);
    expect(upcoming).toMatchObject({ text: 'Dentist next Wednesday (2024-05-15)', validFrom: FRI, validUntil: day(2024, 5, 16), importance: 0.6 });
    const past = prepareItem({ kind: 'event', text: '昨天去了北京' }, FRI);
    expect(past).toMatchObject({ text: '昨天（2024-05-09）去了北京', validFrom: day(2024, 5, 9), validUntil: null });
    const profile = prepareItem({ kind: 'profile', text: '上个月搬到了杭州' }, FRI);
    expect(profile).toMatchObject({ validFrom: day(2024, 4, 1), validUntil: null, importance: 0.8 });
    // The model's own date field wins over the text.
    const dated = prepareItem({ kind: 'event', text: 'Flight to Tokyo', date: '2024-06-01' }, FRI);
    expect(dated).toMatchObject({ validFrom: FRI, validUntil: day(2024, 6, 2) });
  });

  it('caps runaway text at a sentence end', () => {
    const long = `${'This is a sentence. '.repeat(40)}`;
    const item = prepareItem({ kind: 'fact', text: long }, FRI);
    expect(item.text.length).toBeLessThanOrEqual(500);
    expect(item.text.endsWith('sentence.')).toBe(true);
  });

  it('guesses kinds without the model', () => {
    expect(guessKind('always answer in English', FRI)).toBe('instruction');
    expect(guessKind('I have an interview next Tuesday', FRI)).toBe('event');
    expect(guessKind('我最爱吃火锅', FRI)).toBe('preference');
    expect(guessKind('我在阿里巴巴工作', FRI)).toBe('profile');
    expect(guessKind('The garage code is 4711', FRI)).toBe('fact');
  });
});

describe('language helpers', () => {
  it('segments Chinese into words and matches conservatively', () => {
    expect(contentTerms('我住在深圳')).toEqual(['住在', '深圳']);
    expect(contentTerms('Forget my home address!')).toEqual(['forget', 'home', 'address']);
    expect(termCoverage(['住在', '深圳'], '我妹妹住在深圳南山区')).toBe(1);
    expect(termCoverage(['art'], 'a party at home')).toBe(0);
    expect(cjkShare('我喜欢Python和Rust')).toBeCloseTo(4 / 7, 10);
    expect(writesChinese('我喜欢Python和Rust')).toBe(true);
    expect(dominantLanguage('我喜欢Python和Rust')).toBe('mixed');
    expect(writesChinese('I like 火锅')).toBe(false);
    expect(dominantLanguage('I like 火锅')).toBe('en');
  });
});

describe('JSON repair', () => {
  it.each([
    ['plain', '{"facts": [], "preferences": []}', { facts: [], preferences: [] }, false],
    [
      'fenced with prose',
      'Sure! Here you go:\n```json\n{"facts": [{"kind": "fact", "text": "x"}], "preferences": []}\n```\nAnything else?',
      { facts: [{ kind: 'fact', text: 'x' }], preferences: [] },
      false,
    ],
    ['trailing commas', '{"facts": [{"text": "a",},], "preferences": [],}', { facts: [{ text: 'a' }], preferences: [] }, true],
    ['single quotes', "{'facts': [{'text': 'a'}], 'preferences': []}", { facts: [{ text: 'a' }], preferences: [] }, true],
    ['typographic quotes', '{“facts”: [{“text”: “a”}]}', { facts: [{ text: 'a' }] }, true],
    ['Chinese content', '{"facts": [{"text": "我住在杭州"}]}', { facts: [{ text: '我住在杭州' }] }, false],
  ])('%s', (_name, reply, value, repaired) => {
    expect(parseJsonReply(reply)).toEqual({ ok: true, value, repaired });
  });

  it.each([
    ['a story', STORY, 'no_json'],
    ['an empty reply', '   ', 'empty'],
    ['a bare string', '"facts"', 'no_json'],
    // Cut off at the token limit: repairing it would store the fragment "b" as a fact.
    ['a cut-off array', '{"topic": "x", "facts": [{"kind": "event", "text": "a"}, {"kind": "fact", "text": "b', 'truncated'],
    ['a cut-off object in a fence', '```json\n{"facts": [{"kind": "fact", "text": "a"}]\n```', 'truncated'],
  ])('fails cleanly on %s', (_name, reply, failure) => {
    expect(parseJsonReply(reply)).toMatchObject({ ok: false, failure });
  });

  it('cuts the first JSON value, respecting strings', () => {
    expect(sliceFirstJson('x {"a": "}"} {"b": 1}')).toEqual({ text: '{"a": "}"}', complete: true });
    expect(sliceFirstJson('[1, {"a": "\\"]"}] tail')).toEqual({ text: '[1, {"a": "\\"]"}]', complete: true });
    expect(sliceFirstJson('Here: {"a": "cut')).toEqual({ text: '{"a": "cut', complete: false });
    expect(sliceFirstJson('no json')).toBeNull();
  });

  it('takes a complete reply and refuses the same reply cut off, whatever the caller', () => {
    const complete = '{"event": "UPDATE", "id": "0", "text": "Lives in Hangzhou"}';
    const cut = complete.slice(0, complete.indexOf('Hang') + 4);
    expect(parseJsonReply(complete)).toEqual({ ok: true, value: { event: 'UPDATE', id: '0', text: 'Lives in Hangzhou' }, repaired: false });
    expect(parseJsonReply(cut)).toMatchObject({ ok: false, failure: 'truncated' });
    expect(parseJsonReply(cut, { objectOnly: true })).toMatchObject({ ok: false, failure: 'truncated' });
    // Object-only callers (summaries, entity notes) find the object inside a wrapping array, and refuse a bare array.
    expect(parseJsonReply('[{"summary": "a"}]', { objectOnly: true })).toEqual({ ok: true, value: { summary: 'a' }, repaired: false });
    expect(parseJsonReply('[1, 2]', { objectOnly: true })).toMatchObject({ ok: false, failure: 'no_json' });
  });
});

describe('reply normalization', () => {
  it('accepts the strict shape and near misses', () => {
    const ok = normalizeExtractionReply({
      topic: '出差',
      facts: [
        { kind: 'event', text: '去北京', date: '2024-05-15' },
        '我是工程师',
        { type: 'plans', fact: '学日语' },
        { kind: 'weird', text: '有只猫' },
        { text: '  ' },
      ],
      preferences: ['不喜欢坐飞机', { text: '喜欢火锅' }],
    });
    expect(ok).toEqual({
      ok: true,
      reply: {
        topic: '出差',
        items: [
          { kind: 'event', text: '去北京', topic: '出差', date: '2024-05-15' },
          { kind: 'fact', text: '我是工程师', topic: '出差' },
          { kind: 'event', text: '学日语', topic: '出差' },
          { kind: 'fact', text: '有只猫', topic: '出差' },
          { kind: 'preference', text: '不喜欢坐飞机', topic: '出差' },
          { kind: 'preference', text: '喜欢火锅', topic: '出差' },
        ],
        droppedCount: 1,
      },
    });
    expect(normalizeExtractionReply(['a', 'b'])).toMatchObject({
      ok: true,
      reply: {
        items: [
          { kind: 'fact', text: 'a' },
          { kind: 'fact', text: 'b' },
        ],
      },
    });
  });

  it('rejects other shapes and caps runaway lists', () => {
    expect(normalizeExtractionReply({ story: STORY })).toMatchObject({ ok: false });
    expect(normalizeExtractionReply({ facts: [1, 2] })).toMatchObject({ ok: false });
    const many = normalizeExtractionReply({ facts: Array.from({ length: 30 }, (_, i) => `fact ${i}`) });
    expect(many.ok && many.reply.items.length).toBe(20);
    expect(many.ok && many.reply.droppedCount).toBe(10);
  });

  it('publishes a JSON Schema for grammar-constrained engines', () => {
    expect(EXTRACTION_JSON_SCHEMA).toMatchObject({ type: 'object', required: ['topic', 'facts', 'preferences'] });
    expect(EXTRACTION_JSON_SCHEMA).not.toHaveProperty('$schema');
  });
});

describe('extractMemories (scripted engine in place of a real LLM)', () => {
  const exchange = { userText: '我下周三要去北京出差，不太喜欢坐飞机。', assistantText: '好的，祝你出差顺利！', messageTime: FRI };

  it('asks for JSON with the schema, the message date and the user language; resolves dates the model left relative', async () => {
    const engine = createScriptedEngine();
    engine.push('{"topic": "出差", "facts": [{"kind": "event", "text": "下周三去北京出差"}], "preferences": [{"text": "不太喜欢坐飞机"}]}');
    const result = await extractMemories(engine, exchange);
    expect(result).toMatchObject({ topic: '出差', attempts: 1, repaired: false, dropped: [] });
    expect(result.items).toEqual([
      { kind: 'event', text: '下周三（2024-05-15）去北京出差', topic: '出差', importance: 0.6, validFrom: FRI, validUntil: day(2024, 5, 16) },
      { kind: 'preference', text: '不太喜欢坐飞机', topic: '出差', importance: 0.7, validFrom: FRI, validUntil: null },
    ]);
    const request = engine.requests[0]!;
    expect(request.responseFormat).toEqual({ type: 'json_object', schema: EXTRACTION_JSON_SCHEMA });
    expect(request.temperature).toBe(0);
    expect(request.messages[0]!.content).toContain('sent on 2024-05-10 (Friday)');
    expect(request.messages[0]!.content).toContain('write every item in Chinese');
    expect(request.messages[1]!.content).toContain('User: 我下周三要去北京出差');
  });

  it('repairs a fenced reply with trailing commas in one call', async () => {
    const engine = createScriptedEngine();
    engine.push('```json\n{"topic": "pets", "facts": [{"kind": "profile", "text": "Has a cat named Miso",},], "preferences": [],}\n```');
    const result = await extractMemories(engine, { userText: 'My cat Miso is 3.', assistantText: 'Cute!', messageTime: FRI });
    expect(result).toMatchObject({ attempts: 1, repaired: true, items: [{ kind: 'profile', text: 'Has a cat named Miso' }] });
  });

  it('retries after a story with the problem stated, then succeeds', async () => {
    const engine = createScriptedEngine();
    engine.push(STORY, '{"topic": "", "facts": [], "preferences": []}');
    const result = await extractMemories(engine, exchange);
    expect(result).toMatchObject({ attempts: 2, items: [] });
    const retry = engine.requests[1]!;
    expect(retry.messages).toHaveLength(4);
    expect(retry.messages[2]).toEqual({ role: 'assistant', content: expect.stringContaining('Once upon a time') });
    expect(retry.messages[3]!.content).toContain('The reply contained no JSON object.');
    expect(retry.temperature).toBeGreaterThan(0);
  });

  it('refuses a reply cut off at the token limit and asks again, so no fragment becomes a memory', async () => {
    const engine = createScriptedEngine();
    engine.push(
      '{"topic": "pets", "facts": [{"kind": "profile", "text": "Has a cat named Miso"}, {"kind": "fact", "text": "Miso likes tu',
      '{"topic": "pets", "facts": [{"kind": "profile", "text": "Has a cat named Miso"}], "preferences": []}',
    );
    const result = await extractMemories(engine, { userText: 'My cat Miso is 3.', assistantText: 'Cute!', messageTime: FRI });
    expect(result.attempts).toBe(2);
    expect(result.items.map((i) => i.text)).toEqual(['Has a cat named Miso']);
    expect(engine.requests[1]!.messages[3]!.content).toContain('cut off');
  });

  it('gives up after the bounded attempts on stories, empty and huge replies', async () => {
    const engine = createScriptedEngine();
    engine.push(STORY, '', STORY.repeat(2000));
    const error = await extractMemories(engine, exchange).catch((e) => e);
    expect(error).toBeInstanceOf(ExtractionError);
    expect((error as ExtractionError).failures.map((f) => f.reason)).toEqual(['no_json', 'empty', 'no_json']);
    expect((error as ExtractionError).failures[2]!.replySample.length).toBeLessThanOrEqual(200);
    expect(engine.requests).toHaveLength(3);
  });

  it('refuses translated items for a Chinese user, asks again, and drops what stays translated', async () => {
    const engine = createScriptedEngine();
    engine.push(
      '{"topic": "trip", "facts": [{"kind": "event", "text": "Business trip to Beijing next Wednesday"}], "preferences": []}',
      '{"topic": "出差", "facts": [{"kind": "event", "text": "2024-05-15去北京出差", "date": "2024-05-15"}], "preferences": [{"text": "Dislikes flying"}]}',
    );
    const result = await extractMemories(engine, exchange, { maxAttempts: 2 });
    expect(result.attempts).toBe(2);
    expect(result.items.map((i) => i.text)).toEqual(['2024-05-15去北京出差']);
    expect(result.dropped).toEqual([{ text: 'Dislikes flying', reason: 'not in the user language (Chinese)' }]);
    expect(engine.requests[1]!.messages[3]!.content).toContain('write them in Chinese');
  });

  it('stops without another call when aborted', async () => {
    const controller = new AbortController();
    const engine = createScriptedEngine();
    engine.push((request: ChatRequest) => {
      controller.abort();
      return request.signal?.aborted ? '' : '{}';
    });
    await expect(extractMemories(engine, exchange, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(engine.requests).toHaveLength(1);
  });

  it('fits a huge message into a small context window, keeping its head and tail', () => {
    const userText = `我叫小林。${'这是很长的一段话。'.repeat(3000)}我住在杭州。`;
    const messages = buildExtractionMessages({ userText, assistantText: 'ok', messageTime: FRI }, { contextWindow: 2048, maxAnswerTokens: 512, tokens: null });
    const chars = messages.reduce((n, m) => n + Array.from(m.content).length, 0);
    // Without a tokenizer one character counts as one token: the prompt must leave the answer budget free.
    expect(chars + 16).toBeLessThanOrEqual(2048 - 512);
    expect(messages[1]!.content).toContain('我叫小林');
    expect(messages[1]!.content).toContain('我住在杭州');
  });
});
