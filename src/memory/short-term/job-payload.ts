/** The payload shape shared by the short-term jobs (see `summaryJob`, `foldJob`, `entityJob`). */
import { z } from 'zod';

const NO_CONVERSATION = 'Short-term job payload has no conversationId';

/** `{ conversationId }`, a non-empty string; anything else fails with `NO_CONVERSATION`'s message. */
export const conversationJobPayload = z.object(
  { conversationId: z.string({ error: NO_CONVERSATION }).min(1, { error: NO_CONVERSATION }) },
  { error: NO_CONVERSATION },
);
