/**
 * Episodic rounds shown in the UI language (src/ui/lib/round-labels.ts): the stored
 * `User: …\nAssistant: …` labels are replaced for display only, an edit maps back to the stored
 * labels, and anything that is not a labelled round passes through unchanged. Expected strings
 * written by hand.
 */
import { describe, expect, it } from 'vitest';
import { roundPrefixes, roundTextForDisplay, roundTextForStorage } from '../../src/ui/lib/round-labels';
import en from '../../src/ui/i18n/locales/en.json';
import zh from '../../src/ui/i18n/locales/zh_CN.json';

const ZH = { user: zh.memory.roundUser, assistant: zh.memory.roundAssistant };
const EN = { user: en.memory.roundUser, assistant: en.memory.roundAssistant };
const zhName = (name: string) => zh.memory.roundSpeaker.replace('{{name}}', name);
const STORED = 'User: 我早上做什么？\nAssistant: 你每天早上跑步。';

describe('round labels at display time', () => {
  it('shows a stored round with the Chinese labels, and English ones as stored', () => {
    expect(roundTextForDisplay({ kind: 'episodic', text: STORED }, ZH)).toBe('用户：我早上做什么？\n助手：你每天早上跑步。');
    expect(roundTextForDisplay({ kind: 'episodic', text: STORED }, EN)).toBe(STORED);
  });

  it('maps an edited Chinese round back to the stored labels (what is indexed keeps its form)', () => {
    const shown = roundTextForDisplay({ kind: 'episodic', text: STORED }, ZH);
    expect(roundTextForStorage('episodic', shown, ZH)).toBe(STORED);
    expect(roundTextForStorage('episodic', '用户：我早上做什么？\n助手：你每天早上游泳。', ZH)).toBe('User: 我早上做什么？\nAssistant: 你每天早上游泳。');
  });

  it('uses the named speakers when the conversation named them, and maps them back too', () => {
    const memory = { kind: 'episodic' as const, text: 'User: I adopted a cat\nAssistant: Congrats!', speakers: { user: 'Anna' } };
    const prefixes = roundPrefixes(memory, ZH, zhName);
    expect(prefixes).toEqual({ user: 'Anna：', assistant: '助手：' });
    expect(roundTextForDisplay(memory, prefixes)).toBe('Anna：I adopted a cat\n助手：Congrats!');
    expect(roundTextForStorage('episodic', 'Anna：I adopted two cats\n助手：Congrats!', prefixes)).toBe('User: I adopted two cats\nAssistant: Congrats!');
  });

  it('leaves other kinds, unlabelled rounds and labels not at their place unchanged', () => {
    expect(roundTextForDisplay({ kind: 'fact', text: 'User: is a word here' }, ZH)).toBe('User: is a word here');
    expect(roundTextForDisplay({ kind: 'episodic', text: 'a round without labels' }, ZH)).toBe('a round without labels');
    // "User: " only at the start, "Assistant: " only after a line break.
    expect(roundTextForDisplay({ kind: 'episodic', text: 'Hi User: x Assistant: y' }, ZH)).toBe('Hi User: x Assistant: y');
    expect(roundTextForStorage('fact', '用户：我喜欢茶', ZH)).toBe('用户：我喜欢茶');
  });

  it('replaces only the first assistant label (a later one is part of the reply)', () => {
    const text = 'User: q\nAssistant: a\nAssistant: quoted';
    expect(roundTextForDisplay({ kind: 'episodic', text }, ZH)).toBe('用户：q\n助手：a\nAssistant: quoted');
    expect(roundTextForStorage('episodic', '用户：q\n助手：a\nAssistant: quoted', ZH)).toBe(text);
  });
});
