/**
 * Keyboard behaviour of the chat input: Enter sends, Shift+Enter inserts a newline, and
 * Enter while an input-method editor (IME) is composing — how Chinese is typed with pinyin —
 * only confirms the candidate and never sends.
 */

/** The parts of a `KeyboardEvent` the decision needs. */
export interface ComposerKey {
  key: string;
  shiftKey: boolean;
  /** `true` while an IME composition is in progress (UI Events spec). */
  isComposing: boolean;
  /** Legacy key code; 229 marks keys that an IME processed (some browsers leave `isComposing` false). */
  keyCode?: number;
  altKey?: boolean;
  ctrlKey?: boolean;
  metaKey?: boolean;
}

/**
 * What a key press in the chat input does: `'send'` (the caller prevents the default and
 * sends), or `'default'` (let the textarea handle it: newline for Shift/Alt+Enter, IME
 * confirmation, ordinary typing). Ctrl/Cmd+Enter also send.
 */
export function composerKeyAction(event: ComposerKey): 'send' | 'default' {
  if (event.key !== 'Enter') return 'default';
  if (event.isComposing || event.keyCode === 229) return 'default';
  if (event.shiftKey || event.altKey) return 'default';
  return 'send';
}
