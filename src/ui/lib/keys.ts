/**
 * Keyboard behaviour of the chat input: Enter sends, Shift+Enter inserts a newline, Esc stops the
 * reply that streams, and Enter or Esc while an input-method editor (IME) is composing — how
 * Chinese is typed with pinyin — only confirms or cancels the candidate and never sends or stops.
 */
import { parseMemoryCommand } from '../../memory/long-term/commands';
import type { EngineState } from '../../model/engine';

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
 * sends), `'stop'` for Esc (the caller stops the streaming reply, when one streams), or
 * `'default'` (let the textarea handle it: newline for Shift/Alt+Enter, IME confirmation or
 * cancel, ordinary typing). Ctrl/Cmd+Enter also send.
 */
export function composerKeyAction(event: ComposerKey): 'send' | 'stop' | 'default' {
  if (event.isComposing || event.keyCode === 229) return 'default';
  if (event.key === 'Escape') return 'stop';
  if (event.key !== 'Enter') return 'default';
  if (event.shiftKey || event.altKey) return 'default';
  return 'send';
}

/**
 * Why the text in the chat input cannot be sent now, or `null` when it can: `'loading'` while
 * the chat model loads, `'no_model'` when none is loaded (or its load failed). A memory command
 * ("remember …", "记住…", "forget …", see `parseMemoryCommand`) is answered without the language
 * model, so it can always be sent. Blank text is not a blocker here (Send is disabled for it
 * anyway). `chatState` is `null` before the panel knows the engine's state: nothing is blocked then.
 */
export function sendBlocker(text: string, chatState: EngineState | null | undefined): 'no_model' | 'loading' | null {
  if (!chatState || chatState === 'ready' || !text.trim()) return null;
  if (parseMemoryCommand(text)) return null;
  return chatState === 'loading' ? 'loading' : 'no_model';
}

/** `true` when `text` is an explicit memory command ("remember …", "忘记…"; `parseMemoryCommand`), answered without the model. */
export function isMemoryCommand(text: string): boolean {
  return parseMemoryCommand(text) !== null;
}
