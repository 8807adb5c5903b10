/**
 * Entity memory (LangChain `ConversationEntityMemory`): after each exchange a background job has
 * the LLM list the named entities of the exchange (people, places, pets, projects…) with an
 * updated short note each, stored per conversation in `db.entities`. The next prompt gets the
 * notes of the entities named in the new user message, plus the last `k` exchanges verbatim.
 *
 * Unlike LangChain, no LLM call happens while the user waits: entities in the new input are found
 * by matching the stored names (whole words for Latin script, substrings for CJK).
 */
import type { EntityRecord } from '../../model/records';
import { lastExchanges } from './buffer-window';
import { defineJob, enqueueJob } from '../../jobs/descriptor';
import { defineStrategy } from './define';
import type { StrategyDeps } from './deps';
import { conversationJobPayload } from './job-payload';
import { conversationLanguage } from './language';
import { groupExchanges, loadContextMessages } from './messages';
import { entityKey, mentions, parseEntityReply } from './parse';
import { ENTITY_FORMAT, entityPrompt, formatLines } from './prompts';
import { readEntityState, type EntityState } from './state';
import { PreemptedError, requireEngine } from './summarizer';
import type { ContextStrategy } from './types';
import type { EntityNote } from '../../model/context';
import { JobError } from '../../model/errors';

/** Most entity notes injected into one prompt. */
export const MAX_ENTITY_NOTES = 8;
/** Most entities kept from one exchange. */
export const MAX_ENTITIES_PER_EXCHANGE = 10;
/** Length a note should stay under (tokens); replies with longer notes drop those entries. */
export const ENTITY_NOTE_TOKENS = 80;
/** When catching up (e.g. after switching to this strategy), only the newest exchanges are processed. */
export const ENTITY_BACKLOG_EXCHANGES = 20;

/** An entity reply was rejected as a whole; stored notes are unchanged. */
export class EntityRejectedError extends JobError {
  constructor(reason: string) {
    super('entity_rejected', `Entity reply rejected: ${reason}`);
    this.name = 'EntityRejectedError';
  }
}

/** Stored notes of the entities named in `text`, most recently seen first, at most `limit`. */
export async function entitiesMentioned(deps: StrategyDeps, conversationId: string, text: string, limit: number): Promise<EntityRecord[]> {
  const all = await deps.db.entities.where('conversationId').equals(conversationId).toArray();
  return all
    .filter((e) => mentions(text, e.name))
    .sort((a, b) => b.lastSeenSeq - a.lastSeenSeq || a.key.localeCompare(b.key))
    .slice(0, limit);
}

/**
 * `short-term.entities`: extracts and updates the entity notes of new exchanges (`runEntityJob`).
 * Payload `{ conversationId }`; 4 attempts; coalesced per conversation while queued; a payload
 * without a conversation id fails (retried like any failure).
 */
export const entityJob = defineJob<{ conversationId: string }, StrategyDeps>({
  type: 'short-term.entities',
  payload: conversationJobPayload,
  invalidPayload: 'retry',
  maxAttempts: 4,
  dedupeKey: ({ conversationId }) => `short-term.entities:${conversationId}`,
  run: ({ conversationId }, { signal }, deps) => runEntityJob(deps, conversationId, signal),
});

/** Job type of `entityJob`. */
export const ENTITY_JOB = entityJob.type;

/** Enqueues the entity job of a conversation (coalesced while one is queued). */
export async function enqueueEntities(deps: StrategyDeps, conversationId: string): Promise<void> {
  await enqueueJob(deps.jobs, entityJob, { conversationId });
}

/** Creates the entity strategy keeping the last `k` exchanges verbatim. */
export function createEntity(deps: StrategyDeps, k: number): ContextStrategy {
  return {
    kind: 'entity',
    async load(conversationId, { userText }) {
      const [messages, found] = await Promise.all([
        loadContextMessages(deps.db, conversationId, userText),
        entitiesMentioned(deps, conversationId, userText, MAX_ENTITY_NOTES),
      ]);
      const entities: EntityNote[] = found.map((e) => ({ name: e.name, summary: e.summary }));
      return { summary: null, entities, retrieved: [], recent: lastExchanges(messages, k) };
    },
    async onExchange(conversationId) {
      await enqueueEntities(deps, conversationId);
    },
  };
}

/** Writes `next` if `processedSeq` is still `expected`, with the entity upserts, in one transaction. */
async function commitEntities(
  deps: StrategyDeps,
  conversationId: string,
  expected: number,
  next: EntityState,
  notes: EntityNote[],
  seenSeq: number,
): Promise<boolean> {
  const { db } = deps;
  return db.transaction('rw', db.strategyState, db.entities, async () => {
    if ((await readEntityState(db, conversationId)).processedSeq !== expected) return false;
    for (const note of notes) {
      const key = entityKey(note.name);
      const existing = await db.entities.where('[conversationId+key]').equals([conversationId, key]).first();
      await db.entities.put({
        id: existing?.id ?? crypto.randomUUID(),
        conversationId,
        key,
        name: note.name,
        summary: note.summary,
        updatedAt: next.updatedAt,
        lastSeenSeq: seenSeq,
      });
    }
    await db.strategyState.put({ conversationId, strategy: 'entity', state: next, updatedAt: next.updatedAt });
    return true;
  });
}

/**
 * Job handler: processes every complete exchange after the watermark, oldest first (only the
 * newest `ENTITY_BACKLOG_EXCHANGES` when catching up), one LLM call each, committing after each.
 * A malformed reply records `lastError`, leaves notes and watermark unchanged, and fails the job
 * (retried with backoff). Entries naming something absent from the exchange are dropped.
 */
export async function runEntityJob(deps: StrategyDeps, conversationId: string, signal: AbortSignal): Promise<void> {
  const now = deps.now ?? Date.now;
  let state = await readEntityState(deps.db, conversationId);
  const messages = await loadContextMessages(deps.db, conversationId);
  const language = conversationLanguage(messages);
  const exchanges = groupExchanges(messages).filter(
    (x) => x.some((m) => m.role === 'user') && x.some((m) => m.role === 'assistant') && x[x.length - 1]!.seq > state.processedSeq,
  );
  for (const exchange of exchanges.slice(-ENTITY_BACKLOG_EXCHANGES)) {
    const engine = requireEngine(deps);
    const counter = deps.tokens();
    const text = formatLines(exchange);
    const known = (await entitiesMentioned(deps, conversationId, text, MAX_ENTITIES_PER_EXCHANGE)).map((e) => ({ name: e.name, summary: e.summary }));
    const result = await engine.complete({
      messages: entityPrompt(known, exchange, ENTITY_NOTE_TOKENS, language),
      maxTokens: MAX_ENTITIES_PER_EXCHANGE * (ENTITY_NOTE_TOKENS + 24) + 32,
      temperature: 0.2,
      responseFormat: ENTITY_FORMAT,
      signal,
    });
    if (signal.aborted || result.finishReason === 'abort') throw new PreemptedError();
    const parsed = parseEntityReply(result, {
      counter,
      exchangeText: text,
      knownNotes: known.map((n) => `${n.name}: ${n.summary}`).join('\n'),
      maxSummaryTokens: 2 * ENTITY_NOTE_TOKENS,
      maxEntities: MAX_ENTITIES_PER_EXCHANGE,
      language,
    });
    const lastSeq = exchange[exchange.length - 1]!.seq;
    if (!parsed.ok) {
      await commitEntities(deps, conversationId, state.processedSeq, { ...state, lastError: parsed.reason, updatedAt: now() }, [], 0);
      throw new EntityRejectedError(parsed.reason);
    }
    const next: EntityState = { processedSeq: lastSeq, lastError: null, updatedAt: now() };
    if (!(await commitEntities(deps, conversationId, state.processedSeq, next, parsed.value.notes, lastSeq))) return;
    state = next;
  }
}

/** `entity`: notes on the entities named in the message plus the last `k` exchanges; notes kept by `entityJob`. */
export const entityStrategy = defineStrategy({ kind: 'entity', create: (deps, config) => createEntity(deps, config.k!), jobs: [entityJob] });
