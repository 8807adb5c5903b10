/** Job types of the short-term strategies (see `registerShortTermJobs`). */

/** `summary`: fold new exchanges into the running summary. Payload `{ conversationId }`. */
export const SUMMARY_JOB = 'short-term.summary';
/** `summary-buffer`: fold the oldest overflowing messages into the summary. Payload `{ conversationId, maxTokens }`. */
export const FOLD_JOB = 'short-term.fold';
/** `entity`: extract and update entity notes of new exchanges. Payload `{ conversationId }`. */
export const ENTITY_JOB = 'short-term.entities';
