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
  return relabelRound(memory.text, STORED_ROUND_PREFIXES, {
    user: user ? `${user}: ` : STORED_ROUND_PREFIXES.user,
    assistant: assistant ? `\n${assistant}: ` : STORED_ROUND_PREFIXES.assistant,
  });
}

/** The two label prefixes of a round's sides, punctuation and line break included (stored: `'User: '`, `'\nAssistant: '`). */
export interface RoundPrefixes {
  user: string;
  assistant: string;
}

/** The prefixes a round is stored with (`ROUND_LABELS`): `User: …\nAssistant: …`. */
export const STORED_ROUND_PREFIXES: RoundPrefixes = { user: `${ROUND_LABELS.user}: `, assistant: `\n${ROUND_LABELS.assistant}: ` };

/**
 * A round's text with its labels replaced: a leading `from.user` by `to.user`, and the first
 * `from.assistant` after it by `to.assistant`; a label that is absent is left as it is (an older or
 * hand-edited round). The rest of the text is unchanged.
 */
export function relabelRound(text: string, from: RoundPrefixes, to: RoundPrefixes): string {
  let out = text;
  let searchFrom = 0;
  if (out.startsWith(from.user)) {
    out = to.user + out.slice(from.user.length);
    searchFrom = to.user.length;
  }
  const at = out.indexOf(from.assistant, searchFrom);
  if (at >= 0) out = out.slice(0, at) + to.assistant + out.slice(at + from.assistant.length);
  return out;
}
