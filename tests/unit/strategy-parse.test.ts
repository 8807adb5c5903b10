/**
 * Reply parsing, entity-name matching, language checks and prompt content of the LLM-driven
 * strategies. Inputs include the garbage a non-instruction model produces.
 */
import { describe, expect, it } from 'vitest';
import type { ChatResult } from '../../src/engines/types';
import { conversationLanguage, cjkShare, dominantLanguage, languageMatches } from '../../src/memory/short-term/language';
import { entityKey, mentions, parseEntityReply, parseJsonObject, parseSummaryReply } from '../../src/memory/short-term/parse';
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
    expect(parseSummaryReply(ok(JSON.stringify({ summary: 'w '.repeat(11) })), opts)).toMatchObject({ ok: false, reason: 'summary too long (11 tokens, at most 10)' });
    expect(parseSummaryReply(ok('{"summary": ""}'), opts)).toMatchObject({ ok: false, reason: 'empty summary' });
    expect(parseSummaryReply(ok('{"text": "x"}'), opts)).toMatchObject({ ok: false, reason: /no "summary" string/ });
    expect(parseSummaryReply(ok('{"summary": "The user is Li Lei."}'), { ...opts, language: 'zh' })).toMatchObject({ ok: false, reason: /language/ });
    expect(parseSummaryReply(ok('{"summary": "用户叫李雷，住在杭州，养了一只猫。"}'), opts)).toMatchObject({ ok: false, reason: /language/ });
  });
});

describe('parseEntityReply', () => {
  const opts = { counter, exchangeText: 'User: Max and 小雨 went to Lisbon.\nAssistant: Nice!', maxSummaryTokens: 5, maxEntities: 2, language: 'mixed' as const };
  it('keeps valid entries only, deduplicated and capped', () => {
    const reply = ok(
      JSON.stringify({
        entities: [
          { name: 'Max', summary: 'A friend.' },
          { name: 'max', summary: 'Duplicate of Max.' },
          { name: 'Maximilian', summary: 'Not in the exchange.' },
          { name: 'Assistant', summary: 'The speaker.' },
          { name: '小雨', summary: 'a b c d e f' }, // 6 words > 5
          { name: 'Lisbon', summary: 'A city.' },
          { name: 42 },
          { name: '小雨', summary: '用户的妹妹。' }, // valid, but the cap of 2 is reached
        ],
      }),
    );
    const parsed = parseEntityReply(reply, opts);
    expect(parsed).toEqual({ ok: true, value: { notes: [{ name: 'Max', summary: 'A friend.' }, { name: 'Lisbon', summary: 'A city.' }], dropped: 6 } });
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
    expect(conversationLanguage([{ content: 'Hello there, how are you today? I went hiking with friends.' }, { content: '我很好，谢谢你的关心。今天天气不错。' }])).toBe('mixed');
  });
});

describe('prompts', () => {
  it('summary prompt: keeps names, preferences, gender, events and dates; gives the previous summary once; language rule', () => {
    const [system, user] = summaryPrompt('用户叫李雷。', [{ role: 'user', content: '我的猫叫麻薯。' }, { role: 'assistant', content: '好的。' }], 300, 'zh');
    for (const kept of ['name', 'preferences', 'gender', 'events with their dates']) expect(system!.content).toContain(kept);
    expect(system!.content).toContain('请用简体中文写');
    expect(system!.content).toContain('At most 210 words (in Chinese at most 420 characters)');
    expect(system!.content).toContain('{"summary": "<the new summary>"}');
    expect(user!.content).toBe('Previous summary:\n用户叫李雷。\n\nNew lines of conversation:\nUser: 我的猫叫麻薯。\nAssistant: 好的。\n\nReturn the JSON object with the new summary.');
    expect(user!.content.split('用户叫李雷。')).toHaveLength(2);
  });

  it('entity prompt: lists known notes and the exchange', () => {
    const [system, user] = entityPrompt([{ name: 'Mochi', summary: "The user's cat." }], [{ role: 'user', content: 'Mochi is 11.' }], 80, 'en');
    expect(system!.content).toContain('Do not list the user or the assistant themselves');
    expect(system!.content).toContain('write in English');
    expect(user!.content).toBe("Known notes:\n- Mochi: The user's cat.\n\nExchange:\nUser: Mochi is 11.\n\nReturn the JSON object.");
  });
});
