/**
 * The shape of a consolidation decision: the JSON Schema the model is asked for (grammar-constrained
 * engines enforce it) and the validated decision over candidate indexes (`./parse.ts` builds it).
 */

/** JSON Schema of a decision, for grammar-constrained engines. */
export const DECISION_JSON_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    event: { type: 'string', enum: ['ADD', 'UPDATE', 'DELETE', 'NONE'] },
    id: { type: 'string' },
    text: { type: 'string' },
  },
  required: ['event'],
  additionalProperties: false,
};

/** A validated decision over candidate indexes. */
export type Decision =
  { event: 'ADD' } | { event: 'NONE'; index: number | null } | { event: 'UPDATE'; index: number; text: string } | { event: 'DELETE'; index: number };
