/**
 * Speaker labels of episodic rounds as the user reads them. A round is stored as
 * `User: …\nAssistant: …` (`ROUND_LABELS`, `src/text/speakers.ts`), and that stored text is what
 * is indexed, embedded and put in prompts: it never changes. The panel shows the labels in the UI
 * language instead (`用户：… / 助手：…`), or the speakers' names when the round's conversation named
 * them (an imported dialog), and maps an edited text back to the stored labels before it is saved.
 * Pure: the translated labels come in as arguments (no i18n import, so unit tests need no Svelte).
 */
import type { MemoryKind } from '../../model/memory';
import type { SpeakerNames } from '../../model/records';
import { relabelRound, STORED_ROUND_PREFIXES } from '../../text/speakers';

/** The two label prefixes a round is shown with, punctuation and space included (`'User: '`, `'用户：'`). */
export interface RoundLabelPrefixes {
  user: string;
  assistant: string;
}

/** The memory fields the display functions read. */
export interface RoundText {
  kind: MemoryKind;
  text: string;
  speakers?: SpeakerNames | undefined;
}

/**
 * The label prefixes to show for `memory`: each side's name when its conversation named it
 * (`name(n)` formats it, e.g. `n => \`${n}：\``), else the translated role label.
 * @param roleLabels the translated role prefixes (`t('memory.roundUser')`, …).
 * @param name formats a speaker's name as a prefix in the UI language.
 */
export function roundPrefixes(memory: RoundText, roleLabels: RoundLabelPrefixes, name: (speaker: string) => string): RoundLabelPrefixes {
  const user = memory.speakers?.user?.trim();
  const assistant = memory.speakers?.assistant?.trim();
  return { user: user ? name(user) : roleLabels.user, assistant: assistant ? name(assistant) : roleLabels.assistant };
}

/**
 * The text to show for a memory: for an episodic round, the leading `User: ` and the first
 * `\nAssistant: ` replaced by `prefixes` (see `roundPrefixes`); any other memory, or a round
 * without the stored labels (an older or hand-edited one), unchanged.
 * @returns a string with the same content after the labels (no trimming, no other change).
 */
export function roundTextForDisplay(memory: RoundText, prefixes: RoundLabelPrefixes): string {
  if (memory.kind !== 'episodic') return memory.text;
  return relabelRound(memory.text, STORED_ROUND_PREFIXES, { user: prefixes.user, assistant: `\n${prefixes.assistant}` });
}

/**
 * The inverse of `roundTextForDisplay` for an edited round: a leading `prefixes.user` and the
 * first `\n` + `prefixes.assistant` become the stored `User: ` / `\nAssistant: ` again, so what
 * is indexed keeps its stored form. Text the user retyped without the shown labels is kept as typed.
 * @returns `text` unchanged when `kind` is not episodic.
 */
export function roundTextForStorage(kind: MemoryKind, text: string, prefixes: RoundLabelPrefixes): string {
  if (kind !== 'episodic') return text;
  return relabelRound(text, { user: prefixes.user, assistant: `\n${prefixes.assistant}` }, STORED_ROUND_PREFIXES);
}
