/**
 * Language of a conversation, for keeping its summaries and entity notes in it (the classifier
 * itself is `src/text/language.ts`).
 */
import { dominantLanguage, type DominantLanguage } from '../../text/language';

/**
 * Language of a conversation: `dominantLanguage` of its last 40 messages together, so that a
 * bilingual conversation counts as `mixed` even when one chunk is monolingual.
 */
export function conversationLanguage(messages: readonly { content: string }[]): DominantLanguage {
  return dominantLanguage(
    messages
      .slice(-40)
      .map((m) => m.content)
      .join('\n'),
  );
}
