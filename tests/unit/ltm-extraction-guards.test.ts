/**
 * Junk guards of extraction (`src/memory/long-term/extraction/guards.ts`): each rule on hand-made
 * items, then the junk rate on a corpus of scripted bad model replies — the mistakes small local
 * models make (the assistant's suggestions as the user's facts, the prompt's own example copied,
 * invented people, memories the prompt injected echoed back, the assistant about itself, general
 * knowledge) next to faithful items in English and Chinese. The scripted engine stands in for a
 * real instruction-following LLM (none can run here); every reply goes through the real
 * `extractMemories` (parsing, language check, guards, preparation). Each item is labelled by hand.
 */
import { describe, expect, it } from 'vitest';
import { extractMemories } from '../../src/memory/long-term/extraction';
import { checkedTokens, groundedShare, guardItems, isAssistantSelfStatement } from '../../src/memory/long-term/extraction/guards';
import { normalizeExtractionReply } from '../../src/memory/long-term/extraction/schema';
import { createScriptedEngine } from '../helpers/scripted-engine';

const FRI = new Date(2024, 4, 10, 14, 30).getTime();

describe('guard rules', () => {
  it('checks content words without dates and paraphrase words, matching word forms', () => {
    expect(checkedTokens('User loves hiking in the Alps on 2024-05-15')).toEqual(['hiking', 'alps']);
    // "loves" / "love", "moved" / "move" share a stem; "art" is not "party".
    expect(groundedShare('Loves hiking', 'I love hiking')).toBe(1);
    expect(groundedShare('Moved to Lyon', 'I move to Lyon next week')).toBe(1);
    expect(groundedShare('Studies art', 'I went to a party')).toBe(0);
    // Chinese: bigrams; 喜欢 is a paraphrase word, 火锅 is the user's.
    expect(checkedTokens('用户喜欢火锅')).toEqual(['火锅']);
    expect(groundedShare('喜欢吃火锅', '我很喜欢吃火锅')).toBe(1);
    expect(groundedShare('2024-05-15去北京出差', '我下周三要去北京出差')).toBe(1);
  });

  it('refuses what the user did not say, invented names and numbers, and keeps paraphrases', () => {
    const user = 'I have a sister and my locker code is 4711.';
    const { kept, dropped } = guardItems(
      [
        { text: 'Has a sister' },
        { text: 'Has a sister named Lily' },
        { text: 'Locker code is 4711' },
        { text: 'Locker code is 4712' },
        { text: 'Enjoys jazz music' },
      ],
      { userText: user, injected: [] },
    );
    expect(kept.map((i) => i.text)).toEqual(['Has a sister', 'Locker code is 4711']);
    expect(dropped).toEqual([
      { text: 'Has a sister named Lily', reason: 'ungrounded' },
      { text: 'Locker code is 4712', reason: 'ungrounded' },
      { text: 'Enjoys jazz music', reason: 'ungrounded' },
    ]);
    // One key word of three is the user's: a paraphrase, kept ("diary password" for "journal code").
    expect(guardItems([{ text: 'Diary password is swordfish' }], { userText: 'The code of my journal is swordfish', injected: [] }).kept).toHaveLength(1);
  });

  it('refuses repeats of memories injected into the prompt, not new facts beside them', () => {
    const { kept, dropped } = guardItems([{ text: 'Lives in Paris' }, { text: 'Moved to Lyon' }], {
      userText: 'I live in Paris? No, I moved to Lyon.',
      injected: ['User lives in Paris'],
    });
    expect(kept.map((i) => i.text)).toEqual(['Moved to Lyon']);
    expect(dropped).toEqual([{ text: 'Lives in Paris', reason: 'injected' }]);
  });

  it("refuses the assistant's statements about itself unless the user names that subject", () => {
    expect(isAssistantSelfStatement('I am an AI language model', 'Who are you?')).toBe(true);
    expect(isAssistantSelfStatement("I don't have personal preferences", 'What do you like?')).toBe(true);
    expect(isAssistantSelfStatement('The assistant recommends tea', 'What should I drink?')).toBe(true);
    expect(isAssistantSelfStatement('我是一个人工智能助手', '你是谁？')).toBe(true);
    expect(isAssistantSelfStatement('作为AI，我没有偏好', '你喜欢什么？')).toBe(true);
    expect(isAssistantSelfStatement('I am an AI researcher', 'I am an AI researcher at a lab')).toBe(false);
    expect(isAssistantSelfStatement('I am a nurse', 'I am a nurse')).toBe(false);
  });
});

/** One scripted exchange: the user's words, what the prompt injected, the model's reply, and which items are junk (by hand). */
interface Case {
  user: string;
  injected?: string[];
  reply: string;
  junk: string[];
}

const facts = (items: { kind?: string; text: string }[], preferences: string[] = []) =>
  JSON.stringify({ topic: 't', facts: items.map((i) => ({ kind: i.kind ?? 'fact', text: i.text })), preferences: preferences.map((text) => ({ text })) });

/** Bad replies in the style of a 0.5–1.5B model, with the faithful items they also contain. */
const CASES: Case[] = [
  {
    user: 'What should I do in Kyoto this weekend?',
    reply: facts([{ text: 'Plans to visit Fushimi Inari shrine' }, { text: 'Likes temples and gardens' }]),
    junk: ['Plans to visit Fushimi Inari shrine', 'Likes temples and gardens'],
  },
  {
    user: '帮我写一封请假邮件。',
    reply: facts([{ kind: 'event', text: '2024-05-15去北京出差' }], ['不太喜欢坐飞机']),
    junk: ['2024-05-15去北京出差', '不太喜欢坐飞机'],
  },
  {
    user: 'I have two kids and we live in Porto.',
    reply: facts([
      { kind: 'profile', text: 'Has two kids' },
      { kind: 'profile', text: 'Lives in Porto' },
      { kind: 'profile', text: 'Kids are named Tom and Anna' },
    ]),
    junk: ['Kids are named Tom and Anna'],
  },
  {
    user: 'Remind me what you know about my job.',
    injected: ['Works as a nurse at Santa Maria hospital'],
    reply: facts([{ kind: 'profile', text: 'Works as a nurse at Santa Maria hospital' }]),
    junk: ['Works as a nurse at Santa Maria hospital'],
  },
  {
    user: 'Who are you?',
    reply: facts([{ text: 'I am an AI assistant' }, { text: 'The assistant cannot browse the web' }]),
    junk: ['I am an AI assistant', 'The assistant cannot browse the web'],
  },
  {
    user: 'What is the capital of France?',
    reply: facts([{ text: 'Paris is the capital of France' }, { text: 'Interested in French geography' }]),
    junk: ['Paris is the capital of France', 'Interested in French geography'],
  },
  {
    user: '我叫王芳，在杭州做老师。',
    reply: facts([
      { kind: 'profile', text: '名字叫王芳' },
      { kind: 'profile', text: '在杭州做老师' },
      { kind: 'profile', text: '有一个儿子叫小明' },
    ]),
    junk: ['有一个儿子叫小明'],
  },
  {
    user: 'Please always answer in short bullet points.',
    reply: facts([{ kind: 'instruction', text: 'Answer in short bullet points' }, { text: 'Works in marketing' }]),
    junk: ['Works in marketing'],
  },
  {
    user: "I'm allergic to peanuts.",
    reply: facts([{ text: 'Allergic to peanuts' }, { text: 'Should carry an EpiPen' }]),
    junk: ['Should carry an EpiPen'],
  },
  {
    user: '你是谁？',
    reply: facts([{ text: '我是一个人工智能助手' }, { text: '用户想了解助手' }]),
    junk: ['我是一个人工智能助手', '用户想了解助手'],
  },
  {
    user: 'My flight to Oslo is next Wednesday.',
    reply: facts([{ kind: 'event', text: 'Flight to Oslo on 2024-05-15' }, { text: 'Travelling with wife Maria' }]),
    junk: ['Travelling with wife Maria'],
  },
  {
    // stories260K's kind of output when a grammar forces the JSON shape: story sentences as items.
    user: 'I live in Lisbon and work as a nurse.',
    reply: facts([
      { text: 'Once upon a time there was a little girl named Lily' },
      { text: 'She loved to play with her ball in the park' },
      { text: 'The dog was sad' },
    ]),
    junk: ['Once upon a time there was a little girl named Lily', 'She loved to play with her ball in the park', 'The dog was sad'],
  },
  {
    user: '我不吃香菜。',
    injected: ['喜欢吃火锅'],
    reply: facts([{ text: '不吃香菜' }], ['喜欢吃火锅']),
    junk: ['喜欢吃火锅'],
  },
];

/** Items of a reply as they would be stored without guards (the parser's output) and with them (`extractMemories`). */
async function measure(cases: Case[]) {
  let before = { items: 0, junk: 0 };
  let after = { items: 0, junk: 0 };
  let good = { total: 0, kept: 0 };
  for (const c of cases) {
    const parsed = normalizeExtractionReply(JSON.parse(c.reply) as unknown);
    if (!parsed.ok) throw new Error(parsed.message);
    const all = parsed.reply.items.map((i) => i.text);
    const engine = createScriptedEngine();
    engine.push(c.reply);
    const result = await extractMemories(
      engine,
      { userText: c.user, assistantText: 'Sure!', messageTime: FRI, injected: c.injected ?? [] },
      { maxAttempts: 1 },
    );
    const kept = all.filter((t) => !result.dropped.some((d) => d.text === t));
    expect(result.items).toHaveLength(kept.length);
    before = { items: before.items + all.length, junk: before.junk + all.filter((t) => c.junk.includes(t)).length };
    after = { items: after.items + kept.length, junk: after.junk + kept.filter((t) => c.junk.includes(t)).length };
    good = { total: good.total + all.filter((t) => !c.junk.includes(t)).length, kept: good.kept + kept.filter((t) => !c.junk.includes(t)).length };
  }
  return { before, after, good };
}

describe('junk rate on scripted bad replies', () => {
  it('cuts the junk rate from 71 % to 11 % and keeps every faithful item', async () => {
    const { before, after, good } = await measure(CASES);
    // By hand: 28 items, 20 of them junk (71 %) → 9 items kept, 1 junk (11 %), 8 of 8 faithful kept.
    // The junk left: "Paris is the capital of France" for "What is the capital of France?" — the
    // user's words, general knowledge; grounding cannot tell it from a fact about the user.
    expect(before).toEqual({ items: 28, junk: 20 });
    expect(after).toEqual({ items: 9, junk: 1 });
    expect(good).toEqual({ total: 8, kept: 8 });
  });
});
