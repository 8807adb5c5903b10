/**
 * UI strings (src/ui/i18n): English and Simplified Chinese have the same keys (with the plural
 * forms each language needs) and the same {{placeholders}}; every key the UI uses exists; the
 * i18next instance switches language at run time and picks plural forms. (The reactive
 * wrapper `index.svelte.ts` needs the Svelte compiler and is exercised in the built panel.)
 */
import { HISTORY_FORMATS } from '../../src/model/history-import';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import en from '../../src/ui/i18n/locales/en.json';
import zhCN from '../../src/ui/i18n/locales/zh_CN.json';
import { changeUiLanguage, i18n, translate as t } from '../../src/ui/i18n/instance';
import type { MemoryEvent, MemoryKind } from '../../src/model/memory';
import type { LoadStage, EngineState } from '../../src/model/engine';
import type { BudgetSegmentKind } from '../../src/ui/lib/budget';
import { ENGINE_ERROR_CODES } from '../../src/ui/lib/engine-errors';
import { JOB_LABELS } from '../../src/ui/lib/jobs';

type Tree = { [key: string]: string | Tree };

/** Flattens to dot paths → string. */
function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    if (typeof value === 'string') out.set(prefix + key, value);
    else for (const [k, v] of flatten(value, `${prefix}${key}.`)) out.set(k, v);
  }
  return out;
}

const PLURAL = /_(zero|one|two|few|many|other)$/;
/** Keys with plural suffixes folded: base key → set of categories present. */
function pluralGroups(flat: Map<string, string>): Map<string, Set<string>> {
  const groups = new Map<string, Set<string>>();
  for (const key of flat.keys()) {
    const match = PLURAL.exec(key);
    const base = match ? key.slice(0, match.index) : key;
    const set = groups.get(base) ?? new Set<string>();
    set.add(match ? match[1]! : '');
    groups.set(base, set);
  }
  return groups;
}

const placeholders = (text: string) => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]!).sort();

/** Number of nested objects (non-leaf keys) in `tree`. */
function countObjects(tree: Tree): number {
  let n = 0;
  for (const value of Object.values(tree)) if (typeof value !== 'string') n += 1 + countObjects(value);
  return n;
}

const flatEn = flatten(en as Tree);
const flatZh = flatten(zhCN as Tree);
const groupsEn = pluralGroups(flatEn);
const groupsZh = pluralGroups(flatZh);

describe('locale files', () => {
  it('have the same keys', () => {
    expect([...groupsZh.keys()].sort()).toEqual([...groupsEn.keys()].sort());
  });

  it('have exactly the plural forms each language needs (English one/other, Chinese other)', () => {
    const needEn = new Intl.PluralRules('en').resolvedOptions().pluralCategories;
    const needZh = new Intl.PluralRules('zh-CN').resolvedOptions().pluralCategories;
    expect(needEn).toEqual(['one', 'other']);
    expect(needZh).toEqual(['other']);
    for (const [base, forms] of groupsEn) {
      if (forms.has('')) continue;
      expect([...forms].sort(), base).toEqual([...needEn].sort());
      expect([...groupsZh.get(base)!].sort(), base).toEqual([...needZh].sort());
    }
  });

  it('hold no key twice in one object (JSON keeps the last: the first string would never show)', () => {
    // The files are Prettier-formatted (2-space indent): a key's parent path follows from its indent.
    for (const name of ['en', 'zh_CN']) {
      const lines = readFileSync(resolve(__dirname, `../../src/ui/i18n/locales/${name}.json`), 'utf8').split('\n');
      const path: string[] = [];
      const seen = new Set<string>();
      const twice: string[] = [];
      for (const line of lines) {
        const match = /^( *)"((?:[^"\\]|\\.)*)":/.exec(line);
        if (!match) continue;
        const depth = match[1]!.length / 2 - 1;
        path.length = depth;
        const key = [...path, match[2]!].join('.');
        if (seen.has(key)) twice.push(key);
        seen.add(key);
        if (line.trimEnd().endsWith('{')) path.push(match[2]!);
      }
      expect({ name, twice }).toEqual({ name, twice: [] });
      expect(seen.size).toBe(flatten((name === 'en' ? en : zhCN) as Tree).size + countObjects((name === 'en' ? en : zhCN) as Tree));
    }
  });

  it('use the same placeholders in both languages', () => {
    for (const [key, text] of flatEn) {
      const base = key.replace(PLURAL, '');
      const zhKey = flatZh.has(key) ? key : `${base}_other`;
      expect(placeholders(flatZh.get(zhKey) ?? ''), key).toEqual(placeholders(text));
    }
  });

  it('never send the user to the README (issue 12 item 12)', () => {
    for (const [key, text] of [...flatEn, ...flatZh]) expect(text, key).not.toMatch(/README|Offline install option/u);
  });

  it('have no empty strings and no untranslated English in the Chinese file', () => {
    for (const [key, text] of flatZh) {
      expect(text.trim(), key).not.toBe('');
      // every Chinese string has Chinese characters, except names, units and the speaker-name label ({{name}}：) kept as is
      const kept = ['engine.webgpu', 'engine.cpu', 'context.tokensUnit', 'languages.other', 'memory.roundSpeaker'];
      if (!kept.some((k) => key.startsWith(k))) expect(/\p{Script=Han}/u.test(text), `${key}: ${text}`).toBe(true);
    }
  });
});

/** Every `t('literal')` in the UI sources. */
function usedLiteralKeys(): string[] {
  const root = resolve(__dirname, '../../src/ui');
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(svelte|ts)$/.test(name)) files.push(path);
    }
  };
  walk(root);
  const keys = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\b(?:t|fail)\(\s*'([a-zA-Z0-9_.-]+)'/g)) keys.add(m[1]!);
  }
  return [...keys];
}

describe('keys used by the UI', () => {
  it('exist in English (literal keys)', () => {
    const used = usedLiteralKeys();
    expect(used.length).toBeGreaterThan(100);
    for (const key of used) expect(groupsEn.has(key), key).toBe(true);
  });

  it('exist for every value of the dynamic key families', () => {
    const segments: BudgetSegmentKind[] = ['system', 'memories', 'summary', 'entities', 'retrieved', 'recent', 'user', 'overhead', 'reserved', 'free'];
    const kinds: MemoryKind[] = ['profile', 'preference', 'event', 'fact', 'instruction', 'episodic', 'summary'];
    const events: MemoryEvent[] = ['ADD', 'UPDATE', 'DELETE', 'INVALIDATE', 'MERGE', 'EXPIRE', 'FORGET', 'PIN', 'UNPIN', 'IMPORT'];
    const stages: LoadStage[] = ['download', 'cache', 'compile', 'init', 'ready'];
    const states: EngineState[] = ['idle', 'loading', 'ready', 'error'];
    const keys = [
      ...segments.map((s) => `budget.kind.${s}`),
      ...kinds.map((k) => `memoryKind.${k}`),
      ...events.map((e) => `memoryEvent.${e}`),
      ...stages.map((s) => `engine.stage.${s}`),
      ...states.map((s) => `engine.state.${s}`),
      ...['too_short', 'bad_magic', 'bad_version'].map((r) => `engine.gguf.${r}`),
      ...['checking', 'copying', 'registering', 'loading', 'cancelled'].map((s) => `engine.import.${s}`),
      ...['empty', 'too_large', 'not_json'].map((r) => `memory.importCheck.${r}`),
      ...['not_integer', 'out_of_range'].map((e) => `validation.${e}`),
      ...['chat', 'models', 'memory', 'settings'].map((tab) => `tabs.${tab}`),
      ...['chat', 'embedder'].flatMap((slot) => [...ENGINE_ERROR_CODES, 'unknown'].map((code) => `engineErrors.${slot}.${code}`)),
      ...Object.values(JOB_LABELS),
      'jobs.types.other',
      ...['summary_pending', 'keyword_memory_only', 'rejectedBecause'].map((k) => `context.notice.${k}`),
      ...['title', 'titleNothingNew', 'titleWithErrors', 'added', 'updated', 'upToDate', 'rejected', 'empty', 'vectorsDropped'].map(
        (k) => `memory.importReport.${k}`,
      ),
      ...['export', 'upload', 'check', 'write'].map((p) => `memory.transfer.${p}`),
      'memory.importInterrupted',
      ...HISTORY_FORMATS.map((f) => `memory.fromAssistants.format.${f}`),
    ];
    for (const key of keys) {
      expect(groupsEn.has(key), key).toBe(true);
      expect(groupsZh.has(key), key).toBe(true);
    }
  });
});

describe('runtime translation', () => {
  it('switches language at run time and picks plural forms', async () => {
    await changeUiLanguage('en');
    expect(i18n.language).toBe('en');
    expect(t('chat.send')).toBe('Send');
    expect(t('conversations.messages', { count: 1 })).toBe('1 message');
    expect(t('conversations.messages', { count: 3 })).toBe('3 messages');
    await changeUiLanguage('zh-CN');
    expect(i18n.language).toBe('zh-CN');
    expect(t('chat.send')).toBe('发送');
    expect(t('conversations.messages', { count: 1 })).toBe('1 条消息');
    expect(t('validation.out_of_range', { min: 1, max: 50 })).toBe('请输入 1 到 50 之间的数字。');
    await changeUiLanguage('en');
  });

  it('does not HTML-escape interpolated user text (Svelte escapes it when rendering)', async () => {
    await changeUiLanguage('en');
    expect(t('conversations.delete', { title: 'Tom & <Jerry>' })).toBe('Delete “Tom & <Jerry>”');
  });

  it('falls back to English for a key missing in Chinese', async () => {
    i18n.addResource('en', 'translation', 'test.onlyEnglish', 'only English');
    await changeUiLanguage('zh-CN');
    expect(i18n.t('test.onlyEnglish' as never)).toBe('only English');
    await changeUiLanguage('en');
  });
});
