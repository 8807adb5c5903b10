/** Chat input keys (src/ui/lib/keys.ts): Enter sends, Shift+Enter is a newline, Esc stops, IME Enter/Esc never send or stop. */
import { describe, expect, it } from 'vitest';
import { composerKeyAction, sendBlocker } from '../../src/ui/lib/keys';

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
  it('stops on Esc, except while an input method is composing (Esc then cancels the candidate)', () => {
    expect(key({ key: 'Escape' })).toBe('stop');
    expect(key({ key: 'Escape', isComposing: true })).toBe('default');
    expect(key({ key: 'Escape', keyCode: 229 })).toBe('default');
  });
});

describe('sendBlocker', () => {
  it('blocks a chat message while no chat model is ready', () => {
    expect(sendBlocker('Hello', 'idle')).toBe('no_model');
    expect(sendBlocker('你好', 'error')).toBe('no_model');
    expect(sendBlocker('Hello', 'loading')).toBe('loading');
  });
  it('lets memory commands through without a model (they are answered without one)', () => {
    expect(sendBlocker('Remember that my cat is called Mochi', 'idle')).toBeNull();
    expect(sendBlocker('记住我住在杭州', 'idle')).toBeNull();
    expect(sendBlocker('忘记杭州', 'loading')).toBeNull();
    // A question about memory is not a command: it needs the model.
    expect(sendBlocker('Do you remember when we met?', 'idle')).toBe('no_model');
  });
  it('blocks nothing once the model is ready, or before the state is known', () => {
    expect(sendBlocker('Hello', 'ready')).toBeNull();
    expect(sendBlocker('Hello', null)).toBeNull();
    expect(sendBlocker('   ', 'idle')).toBeNull();
  });
});
