/**
 * Engine error mapping (src/ui/lib/engine-errors.ts): every EngineErrorCode of either engine has
 * a translated sentence in English and Chinese; the core's English message is kept only as the
 * detail; the code survives the messaging layer's error serialization (the real
 * @aklinker1/zero-serialize-error round trip that @webext-core/messaging uses).
 */
import { deserializeError, serializeError } from '@aklinker1/zero-serialize-error';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/types';
import type { EngineErrorCode } from '../../src/model/engine';
import { changeUiLanguage, i18n, translate } from '../../src/ui/i18n/instance';
import { ENGINE_ERROR_CODES, engineErrorView, errorCodeOf, isEngineErrorCode } from '../../src/ui/lib/engine-errors';

/** Compile-time check that ENGINE_ERROR_CODES lists exactly the EngineErrorCode union. */
const exhaustive: Record<EngineErrorCode, true> = {
  not_loaded: true,
  no_webgpu: true,
  download: true,
  load: true,
  generation: true,
  embedding: true,
  unsupported: true,
  disconnected: true,
};

describe('ENGINE_ERROR_CODES', () => {
  it('lists every EngineErrorCode once', () => {
    expect([...ENGINE_ERROR_CODES].sort()).toEqual(Object.keys(exhaustive).sort());
    expect(new Set(ENGINE_ERROR_CODES).size).toBe(ENGINE_ERROR_CODES.length);
  });
});

describe('engineErrorView', () => {
  it('picks the sentence by slot and code, and keeps the core message as the detail', () => {
    const view = engineErrorView('embedder', 'download', '  Downloading the embedding model "X" failed (are you offline?): Failed to fetch ');
    expect(view).toEqual({
      key: 'engineErrors.embedder.download',
      detail: 'Downloading the embedding model "X" failed (are you offline?): Failed to fetch',
      keywordFallback: true,
      offlineHint: true,
    });
    expect(engineErrorView('chat', 'download', 'x')).toEqual({ key: 'engineErrors.chat.download', detail: 'x', keywordFallback: false, offlineHint: false });
  });

  it('uses the generic sentence for a missing or unknown code (a newer core)', () => {
    expect(engineErrorView('chat', null, 'boom').key).toBe('engineErrors.chat.unknown');
    expect(engineErrorView('embedder', 'quota_exceeded', 'boom').key).toBe('engineErrors.embedder.unknown');
  });

  it('offers the offline install option only for embedder download/load failures (and uncoded ones)', () => {
    const hinted = ENGINE_ERROR_CODES.filter((code) => engineErrorView('embedder', code, null).offlineHint);
    expect(hinted.sort()).toEqual(['download', 'load']);
    expect(engineErrorView('embedder', null, null).offlineHint).toBe(true);
    expect(ENGINE_ERROR_CODES.some((code) => engineErrorView('chat', code, null).offlineHint)).toBe(false);
  });

  it('has no detail for a blank message', () => {
    expect(engineErrorView('chat', 'load', '   ').detail).toBeNull();
    expect(engineErrorView('chat', 'load', null).detail).toBeNull();
  });

  it('has a sentence in both languages for every slot and code, never the raw English in Chinese', async () => {
    const message = 'Downloading the embedding model failed: Failed to fetch';
    for (const lang of ['en', 'zh-CN'] as const) {
      await changeUiLanguage(lang);
      for (const slot of ['chat', 'embedder'] as const) {
        for (const code of [...ENGINE_ERROR_CODES, null]) {
          const view = engineErrorView(slot, code, message);
          expect(i18n.exists(view.key, { lng: lang, fallbackLng: false }), `${lang} ${view.key}`).toBe(true);
          const text = translate(view.key);
          expect(text).not.toContain(message);
          if (lang === 'zh-CN') expect(/\p{Script=Han}/u.test(text), text).toBe(true);
        }
      }
      expect(translate('engineErrors.embedderImpact', { strategy: 'S' })).toContain('S');
    }
    await changeUiLanguage('en');
    expect(translate('engineErrors.embedder.download')).toBe('The embedding model could not be downloaded (offline?).');
  });
});

describe('errorCodeOf', () => {
  it('reads the code of an EngineError after the messaging round trip', () => {
    const thrown = new EngineError('no_webgpu', 'WebGPU is not available');
    const received = deserializeError(JSON.parse(JSON.stringify(serializeError(thrown))));
    expect(received).toBeInstanceOf(Error);
    expect((received as Error).message).toBe('WebGPU is not available');
    expect(errorCodeOf(received)).toBe('no_webgpu');
  });

  it('is null for errors without a known code', () => {
    expect(errorCodeOf(new Error('Could not establish connection. Receiving end does not exist.'))).toBeNull();
    expect(errorCodeOf(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBeNull();
    expect(errorCodeOf({ code: 42 })).toBeNull();
    expect(errorCodeOf('download')).toBeNull();
    expect(errorCodeOf(null)).toBeNull();
  });

  it('isEngineErrorCode accepts exactly the listed codes', () => {
    expect(ENGINE_ERROR_CODES.every(isEngineErrorCode)).toBe(true);
    expect(isEngineErrorCode('Download')).toBe(false);
    expect(isEngineErrorCode(undefined)).toBe(false);
  });
});
