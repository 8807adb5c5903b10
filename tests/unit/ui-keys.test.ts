/** Chat input keys (src/ui/lib/keys.ts): Enter sends, Shift+Enter is a newline, IME Enter never sends. */
import { describe, expect, it } from 'vitest';
import { composerKeyAction } from '../../src/ui/lib/keys';

const key = (over: Partial<Parameters<typeof composerKeyAction>[0]>) => composerKeyAction({ key: 'Enter', shiftKey: false, isComposing: false, ...over });

describe('composerKeyAction', () => {
  it('sends on a plain Enter (and Ctrl/Cmd+Enter)', () => {
    expect(key({})).toBe('send');
    expect(key({ ctrlKey: true })).toBe('send');
    expect(key({ metaKey: true })).toBe('send');
  });
  it('leaves Shift+Enter and Alt+Enter to the textarea (newline)', () => {
    expect(key({ shiftKey: true })).toBe('default');
    expect(key({ altKey: true })).toBe('default');
  });
  it('never sends while a Chinese input method is composing', () => {
    expect(key({ isComposing: true })).toBe('default');
    // Chromium reports keyCode 229 for keys the IME consumed, sometimes with isComposing false.
    expect(key({ keyCode: 229 })).toBe('default');
  });
  it('ignores other keys', () => {
    expect(key({ key: 'a' })).toBe('default');
  });
});
