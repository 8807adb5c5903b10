/** Settings form validation (src/ui/lib/settings-form.ts) and the import-file check (src/ui/lib/import-file.ts). */
import { describe, expect, it } from 'vitest';
import type { Settings } from '../../src/model/settings';
import { controlPatch, parseIntInRange, patchChangesSettings, settingsToForm } from '../../src/ui/lib/settings-form';
import { checkImportFile, checkImportStart, MAX_IMPORT_BYTES } from '../../src/ui/lib/import-file';
import { resolveUiLanguage } from '../../src/ui/lib/locale';

const settings: Settings = {
  preferredEngine: 'wllama',
  webllmModelId: null,
  wllamaSource: null,
  embeddingModelId: 'x',
  defaultStrategy: { kind: 'summary-buffer', maxTokens: 2000 },
  maxAnswerTokens: 512,
  memoryTopK: 8,
  episodicRetentionDays: null,
  locale: 'auto',
  blockedSites: [],
};

describe('parseIntInRange', () => {
  it('accepts the bounds and rejects one past them', () => {
    expect(parseIntInRange('16', 16, 8192)).toEqual({ ok: true, value: 16 });
    expect(parseIntInRange('8192', 16, 8192)).toEqual({ ok: true, value: 8192 });
    expect(parseIntInRange('15', 16, 8192)).toEqual({ ok: false, error: 'out_of_range' });
    expect(parseIntInRange('-1', 0, 50)).toEqual({ ok: false, error: 'out_of_range' });
    expect(parseIntInRange('1e3', 0, 5000)).toEqual({ ok: false, error: 'not_integer' });
    expect(parseIntInRange('99999999999999999999', 0, 5)).toEqual({ ok: false, error: 'not_integer' });
  });
});

describe('settings form (each control saves on its own)', () => {
  it('round-trips stored settings, one control at a time', () => {
    const form = settingsToForm(settings);
    expect(form).toEqual({ maxAnswerTokens: '512', memoryTopK: '8', keepForever: true, episodicRetentionDays: '30', locale: 'auto' });
    expect(controlPatch(form, 'maxAnswerTokens')).toEqual({ ok: true, patch: { maxAnswerTokens: 512 } });
    expect(controlPatch(form, 'memoryTopK')).toEqual({ ok: true, patch: { memoryTopK: 8 } });
    expect(controlPatch(form, 'retention')).toEqual({ ok: true, patch: { episodicRetentionDays: null } });
    expect(controlPatch(form, 'locale')).toEqual({ ok: true, patch: { locale: 'auto' } });
  });
  it('sends the retention days (full-width digits too) when not kept forever', () => {
    const form = { ...settingsToForm(settings), keepForever: false, episodicRetentionDays: '９０' };
    expect(controlPatch(form, 'retention')).toEqual({ ok: true, patch: { episodicRetentionDays: 90 } });
  });
  it("reports the control's invalid field and sends nothing for it, whatever the other fields hold", () => {
    const form = { ...settingsToForm(settings), maxAnswerTokens: '10', memoryTopK: 'many', keepForever: false, episodicRetentionDays: '0' };
    expect(controlPatch(form, 'maxAnswerTokens')).toEqual({ ok: false, field: 'maxAnswerTokens', error: 'out_of_range' });
    expect(controlPatch(form, 'memoryTopK')).toEqual({ ok: false, field: 'memoryTopK', error: 'not_integer' });
    expect(controlPatch(form, 'retention')).toEqual({ ok: false, field: 'episodicRetentionDays', error: 'out_of_range' });
    // the language is independent of the broken number fields
    expect(controlPatch({ ...form, locale: 'zh_CN' }, 'locale')).toEqual({ ok: true, patch: { locale: 'zh_CN' } });
  });
  it('ignores a bad days value while "forever" is on', () => {
    const form = { ...settingsToForm(settings), keepForever: true, episodicRetentionDays: 'junk' };
    expect(controlPatch(form, 'retention')).toEqual({ ok: true, patch: { episodicRetentionDays: null } });
  });
  it('saves only what changes a stored value', () => {
    expect(patchChangesSettings({ maxAnswerTokens: 512 }, settings)).toBe(false);
    expect(patchChangesSettings({ maxAnswerTokens: 513 }, settings)).toBe(true);
    expect(patchChangesSettings({ episodicRetentionDays: null }, settings)).toBe(false);
    expect(patchChangesSettings({ episodicRetentionDays: 30 }, settings)).toBe(true);
    expect(patchChangesSettings({ locale: 'auto' }, settings)).toBe(false);
    expect(patchChangesSettings({ locale: 'en' }, settings)).toBe(true);
  });
});

describe('checkImportStart / checkImportFile', () => {
  it('accepts a file that starts a JSON object (BOM and spaces removed); the core checks the rest while streaming', async () => {
    expect(checkImportStart('\uFEFF  {"version":1}\n', 20)).toEqual({ ok: true });
    expect(await checkImportFile(new Blob(['{"format": "recall-export"' + ' '.repeat(10_000)]))).toEqual({ ok: true });
  });
  it('explains what is wrong with other files', async () => {
    expect(checkImportStart('   ', 3)).toEqual({ ok: false, reason: 'empty' });
    expect(await checkImportFile(new Blob([]))).toEqual({ ok: false, reason: 'empty' });
    expect(checkImportStart('{}', MAX_IMPORT_BYTES + 1)).toEqual({ ok: false, reason: 'too_large' });
    expect(checkImportStart('[]', 2)).toEqual({ ok: false, reason: 'not_json', detail: 'it does not start with a JSON object' });
    expect(checkImportStart('"just a string"', 15)).toMatchObject({ ok: false, reason: 'not_json' });
  });
  it('accepts files far above the old 200 MB limit (a backup of 26,100 memories with vectors is about 70 MB)', () => {
    expect(checkImportStart('{', 1_000_000_000)).toEqual({ ok: true });
  });
});

describe('resolveUiLanguage', () => {
  it('follows the setting, else the browser (any Chinese → Simplified Chinese)', () => {
    expect(resolveUiLanguage('en', 'zh-CN')).toBe('en');
    expect(resolveUiLanguage('zh_CN', 'en-US')).toBe('zh-CN');
    expect(resolveUiLanguage('auto', 'zh-CN')).toBe('zh-CN');
    expect(resolveUiLanguage('auto', 'zh-TW')).toBe('zh-CN');
    expect(resolveUiLanguage('auto', 'zh')).toBe('zh-CN');
    expect(resolveUiLanguage('auto', 'en-GB')).toBe('en');
    expect(resolveUiLanguage('auto', 'fr')).toBe('en');
    expect(resolveUiLanguage('auto', undefined)).toBe('en');
  });
});
