/**
 * Importing history from other assistants: the formats recognized, the one normalized shape every
 * parser produces (`ImportedConversation`, zod-checked before anything is written), and what an
 * import reports. Leaf module: imports nothing from `src/` but `model`.
 */
import { z } from 'zod';

/**
 * Formats recognized by `detectHistoryFormat` (`src/importers/detect.ts`):
 * - `chatgpt`: ChatGPT data export `conversations.json` (message tree in `mapping`, `current_node`);
 * - `claude`: Claude data export `conversations.json` (`chat_messages`, `sender` human/assistant);
 * - `chatbotui`: Chatbot UI export (`{ version, history: [{ name, messages }] }`);
 * - `batch`: a plain list of past dialogue snippets `[{ "id": …, "text": … }]`;
 * - `notes`: plain text or Markdown notes (one conversation per file, the text as one user message).
 */
export const HISTORY_FORMATS = ['chatgpt', 'claude', 'chatbotui', 'batch', 'notes'] as const;

/** One of `HISTORY_FORMATS`. */
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

/** Roles kept from another assistant's history (system, tool and hidden messages are left out). */
export const IMPORTED_ROLES = ['user', 'assistant'] as const;

/** Zod schema of one imported message: `at` is ms epoch, `text` is never empty. */
export const importedMessageSchema = z.object({
  role: z.enum(IMPORTED_ROLES),
  text: z.string().min(1),
  at: z.number().finite().nonnegative(),
});

/** Zod schema of one imported conversation (see `ImportedConversation`). */
export const importedConversationSchema = z.object({
  sourceId: z.string().min(1),
  title: z.string(),
  createdAt: z.number().finite().nonnegative(),
  updatedAt: z.number().finite().nonnegative(),
  messages: z.array(importedMessageSchema).min(1),
});

/** One message of an imported conversation: role, text (placeholders such as "[image]" for non-text parts), time (ms epoch). */
export type ImportedMessage = z.infer<typeof importedMessageSchema>;

/**
 * A conversation read from another assistant's export. `sourceId` is stable for the same
 * conversation of the same source (`chatgpt:<id>`, `claude:<uuid>`, …): re-importing the file
 * finds it and adds nothing. Times are ms epoch; `messages` are in the order they were said.
 */
export type ImportedConversation = z.infer<typeof importedConversationSchema>;

/** What a parser returns for one file. */
export interface ParsedHistory {
  format: HistoryFormat;
  conversations: ImportedConversation[];
}

/** Report of a history import (`history.import`). Counts, not texts. */
export interface HistoryImportReport {
  /** The format that was detected. */
  format: HistoryFormat;
  /** Conversations written, and those left out because an earlier import of the same source already wrote them. */
  conversations: { added: number; skipped: number };
  /** Messages written. */
  messages: number;
  /** Rounds (a user message and the reply after it) queued as episodic memories, each also queued for extraction. */
  rounds: number;
}

/** Report of pasting saved memories (`memory.importSaved`): new pinned memories, and lines left out as duplicates. */
export interface SavedMemoriesReport {
  added: number;
  skipped: number;
}
