/**
 * The parsers of other assistants' exports (`src/importers/`) on the shared fixtures
 * (`../shared/fixtures/chat-exports/`, skipped with a printed reason when absent) and on small
 * inputs written here. Expected counts, texts and times were read off the fixture files by hand.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { zipSync, strToU8 } from 'fflate';
import { describe, expect, it } from 'vitest';
import { parseHistoryFile, parseSavedMemories } from '../../src/importers';
import { HistoryImportError } from '../../src/model/errors';

const DIR = resolve(__dirname, '../../../shared/fixtures/chat-exports');
const HAS_SHARED = existsSync(DIR);
if (!HAS_SHARED) console.warn('[importers] ../shared/fixtures/chat-exports is absent: skipping the fixture tests.');
const NOW = Date.UTC(2026, 11, 1, 12);
const fixture = (path: string) => new Uint8Array(readFileSync(resolve(DIR, path)));
const parse = (bytes: Uint8Array, fileName = 'conversations.json') => parseHistoryFile(bytes, { fileName, now: NOW });
const refusal = (fn: () => unknown): HistoryImportError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof HistoryImportError) return error;
    throw error;
  }
  throw new Error('not refused');
};

describe.skipIf(!HAS_SHARED)('ChatGPT conversations.json', () => {
  it('keeps titles and times, the user and assistant text only (no system, tool or browsing nodes)', () => {
    const { format, conversations } = parse(fixture('chatgpt/chatgpt-export.json'));
    expect(format).toBe('chatgpt');
    expect(conversations.map((c) => c.title)).toEqual(['Conversation 1. Web Search', 'Conversation 2']);
    const [web, code] = conversations;
    expect(web!.sourceId).toBe('chatgpt:d6523d1e-7ec3-474f-a363-0e9dffdb3d93');
    expect(web!.createdAt).toBe(1704629915775); // create_time 1704629915.775304 s
    expect(web!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(web!.messages[0]!.text).toMatch(/^What is the fuel consumption of vw {2}transporter with 8 peo/);
    expect(web!.messages[0]!.at).toBe(1704629915776);
    expect(web!.messages[2]!.text).toBe('What about 10 year old model');
    expect(web!.messages[4]!.text).toBe('Is it for fully loaded    car?');
    // The search(...) / mclick(...) calls to the browser and the quoted pages are left out.
    expect(web!.messages.some((m) => /search\(|mclick\(|URL: https/.test(m.text))).toBe(false);
    expect(code!.messages).toHaveLength(4);
    expect(code!.messages[2]!.text).toBe('give me code in C#');
  });

  it('keeps the branch the user saw (current_node up its parents), not the edited-away branches', () => {
    const [tree] = parse(fixture('chatgpt/chatgpt-tree.json')).conversations;
    expect(tree!.title).toBe('Assist user with summary');
    expect(tree!.messages.map((m) => m.text.split('\n')[0])).toEqual([
      'hi there',
      'Hello! How can I assist you today?',
      'hi again',
      "Hey! Welcome back. What's on your mind?",
      'tell me a joke',
      "Sure, here's one for you:",
    ]);
    expect(tree!.messages.some((m) => /so cool bro|tell me a story/.test(m.text))).toBe(false);
  });

  it('a current_node missing from mapping: the newest leaf branch is taken', () => {
    const [c] = parse(fixture('chatgpt/chatgpt-citations.json')).conversations;
    expect(c!.title).toBe('Citation Convo');
    expect(c!.messages).toHaveLength(1);
    expect(c!.messages[0]!.text).toMatch(/^Signal Sciences is a web application security company/);
  });

  it('skips thoughts, tool calls and recaps; image parts become "[image]"', () => {
    const [c] = parse(fixture('polylogue/chatgpt_native-conversation-v1.json')).conversations;
    expect(c!.messages).toEqual([
      { role: 'user', text: 'Analyze the attached fixture and create an artifact.\n[image]', at: 1784164540000 },
      { role: 'assistant', text: 'Final answer. [Download artifact](sandbox:/mnt/data/fixture-result.zip)\n[image]', at: 1784169733000 },
    ]);
  });

  it('reads conversations.json out of an export .zip and ignores the other entries', () => {
    const zip = zipSync({
      'export/conversations.json': fixture('chatgpt/chatgpt-tree.json'),
      'export/file-abc.png': new Uint8Array(64),
      'chat.html': strToU8('<html>'),
    });
    const parsed = parse(zip, 'chatgpt-export.zip');
    expect(parsed.format).toBe('chatgpt');
    expect(parsed.conversations[0]!.messages).toHaveLength(6);
  });
});

describe.skipIf(!HAS_SHARED)('Claude, Chatbot UI', () => {
  it('reads a Claude conversation with ISO times', () => {
    const parsed = parse(fixture('polylogue/origin-capability_claude-ai-export.json'));
    expect(parsed.format).toBe('claude');
    expect(parsed.conversations).toEqual([
      {
        sourceId: 'claude:origin-matrix-claude-ai',
        title: 'Origin capability matrix',
        createdAt: Date.UTC(2026, 7, 1, 10, 0, 0),
        updatedAt: Date.UTC(2026, 7, 1, 10, 0, 2),
        messages: [{ role: 'user', text: 'Prove the parser claim.', at: Date.UTC(2026, 7, 1, 10, 0, 1) }],
      },
    ]);
  });

  it('reads a Chatbot UI export (no times: dated at the import)', () => {
    const parsed = parse(fixture('chatgpt/chatbotui-export.json'));
    expect(parsed.format).toBe('chatbotui');
    expect(parsed.conversations.map((c) => [c.title, c.messages.length])).toEqual([
      ['Hello what are you able to do?', 4],
      ['Give me the code that inverts ...', 2],
    ]);
    expect(parsed.conversations[0]!.messages[0]).toEqual({ role: 'user', text: 'Hello what are you able to do?', at: NOW });
    expect(parsed.conversations[0]!.sourceId).toBe('chatbotui:493cb218-9ebb-4d35-af8b-5aded3f351be');
  });
});

describe('batch list, notes, refusals', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('a batch list: one conversation per snippet, its text as a user message', () => {
    const parsed = parse(
      bytes(
        JSON.stringify([
          { id: 1, text: 'I moved to Hangzhou.', created_at: '2024-05-01T08:00:00Z' },
          { id: 'b', text: 'My cat is Mochi.' },
        ]),
      ),
      'seed.json',
    );
    expect(parsed.format).toBe('batch');
    expect(parsed.conversations.map((c) => [c.sourceId, c.messages[0]!.text, c.createdAt])).toEqual([
      ['batch:1', 'I moved to Hangzhou.', Date.UTC(2024, 4, 1, 8)],
      ['batch:b', 'My cat is Mochi.', NOW],
    ]);
  });

  it('a Markdown note: one conversation titled by its first heading, the same id for the same text', () => {
    const note = '# Trip plans\r\n\r\nVisit Kyoto in April.\r\n';
    const a = parse(bytes(note), 'trip.md');
    expect(a.format).toBe('notes');
    expect(a.conversations[0]!.title).toBe('Trip plans');
    expect(a.conversations[0]!.messages).toEqual([{ role: 'user', text: '# Trip plans\n\nVisit Kyoto in April.', at: NOW }]);
    expect(parse(bytes(note), 'copy.md').conversations[0]!.sourceId).toBe(a.conversations[0]!.sourceId);
    expect(parse(bytes('Just a line'), 'todo.txt').conversations[0]!.title).toBe('todo');
  });

  it('refuses with a code naming the file and the conversation', () => {
    const cut = refusal(() => parse(bytes('[{"mapping": {'), 'conversations.json'));
    expect(cut.code).toBe('invalid_json');
    expect(cut.params.file).toBe('conversations.json');
    expect(refusal(() => parse(bytes('{"hello": 1}'), 'x.json')).code).toBe('unknown_format');
    expect(refusal(() => parse(bytes('plain'), 'photo.png')).code).toBe('unknown_format');
    const bad = refusal(() => parse(bytes(JSON.stringify([{ title: 'Budget', mapping: {} }])), 'conversations.json'));
    expect(bad.code).toBe('bad_conversation');
    expect(bad.params.place).toBe('"Budget"');
    expect(bad.message).toContain('conversations.json ("Budget")');
    expect(refusal(() => parse(zipSync({ 'a.txt': strToU8('x') }), 'export.zip')).code).toBe('zip_without_conversations');
    expect(
      refusal(() => parse(bytes(JSON.stringify([{ id: 'c', title: 'Empty', mapping: { r: { parent: null, children: [] } }, current_node: 'r' }])))).code,
    ).toBe('no_conversations');
  });
});

describe('saved memories pasted as text', () => {
  it('one memory per line or bullet; bullets, numbers and check boxes removed; headings left out', () => {
    const pasted =
      '## Saved memories\n- Lives in Hangzhou\n* Prefers tea over coffee\n\n1. Has a cat named Mochi\n• Lives in Hangzhou\n2) [x] 喜欢爬山\r\n   Works as a nurse  ';
    expect(parseSavedMemories(pasted)).toEqual([
      'Lives in Hangzhou',
      'Prefers tea over coffee',
      'Has a cat named Mochi',
      'Lives in Hangzhou',
      '喜欢爬山',
      'Works as a nurse',
    ]);
  });
});
