/**
 * Speaker labels of memory texts. An episodic round is stored as `User: …\nAssistant: …` (the role
 * labels of `ROUND_LABELS`); when its conversation names its speakers (an imported or generated
 * dialog, `SpeakerNames`), the names replace the role labels wherever the memory is indexed,
 * embedded or shown to the model, so "who said it" is part of what is matched ("Anna: I adopted a
 * cat" vs "Ben: Thanks, Anna!"). The stored text itself never changes. Pure: no I/O.
 */
import type { MemoryKind } from '../model/memory';
import type { SpeakerNames } from '../model/records';

/** Role labels that start the two parts of an episodic round's stored text. */
export const ROUND_LABELS = { user: 'User', assistant: 'Assistant' } as const;

/** The memory fields `labelSpeakers` reads. */
export interface SpeakerLabelled {
  kind: MemoryKind;
  text: string;
  speakers?: SpeakerNames | undefined;
}

/**
 * The memory's text with its speakers named:
 * - an episodic round (`User: A\nAssistant: B`): the leading `User: ` and the first
 *   `\nAssistant: ` become `<user name>: ` / `\n<assistant name>: ` for each side that has a name
 *   (unnamed sides keep their role label, which already says who spoke);
 * - any other memory (a fact, preference, … about the user): `<user name>: text` when the user
 *   side has a name, else the text unchanged (the app's own user: memories are about them).
 * @returns a string; `text` itself when there is no name to put in.
 */
export function labelSpeakers(memory: SpeakerLabelled): string {
  const user = memory.speakers?.user?.trim();
  const assistant = memory.speakers?.assistant?.trim();
  if (memory.kind !== 'episodic') return user ? `${user}: ${memory.text}` : memory.text;
  let text = memory.text;
  const userLabel = `${ROUND_LABELS.user}: `;
  if (user && text.startsWith(userLabel)) text = `${user}: ${text.slice(userLabel.length)}`;
  const assistantLabel = `\n${ROUND_LABELS.assistant}: `;
  const at = text.indexOf(assistantLabel);
  if (assistant && at >= 0) text = `${text.slice(0, at)}\n${assistant}: ${text.slice(at + assistantLabel.length)}`;
  return text;
}
