/**
 * One chat turn, end to end:
 *  1. explicit memory commands ("remember that …", "忘记…") are run without the model;
 *  2. long-term memories are retrieved (hybrid search, across conversations) and the conversation's
 *     short-term strategy builds its context;
 *  3. the prompt is assembled under the token budget (`src/prompt/assemble.ts`);
 *  4. the reply streams from the chat engine (`event.chatDelta`), with the job queue paused so
 *     background summaries/extraction never compete with the user;
 *  5. the reply and the prompt trace are stored, and the exchange is handed to the short-term
 *     strategy and to long-term memory, which enqueue their background jobs.
 * The user's message is never lost, whatever fails: it is stored while the engine starts on the
 * prompt (the prompt does not wait for that write; no piece of the reply reaches the UI before it
 * is done, and a failed write stops the engine and fails the turn), or first, for a memory command
 * and a turn that fails before its prompt is ready.
 *
 * `send` runs those steps as named functions (`runTurn`: `readLongTerm` — retrieval, `citedTitles`
 * and the profile, started first and run alongside the next —, `loadShortTerm`, `assemblePrompt`,
 * `storeUserMessage` with `streamReply`, `storeReply`, `handOff`; `answerCommand` for a command). Regenerate, edit and retry run the same turn after
 * one more step inside the lock, `replaceTurns`: the replaced message and every later one are
 * removed with what memory learned from them (`turn-revision.ts`). `measure` counts a message
 * against the model's room before the panel sends it. Over 300 lines: the steps share one closure (the
 * running turns, the live replies, the turn lock), which a split would have to pass around.
 */
import { Mutex } from 'async-mutex';
import { asStorageError } from '../db/errors';
import type { RecallDB } from '../db/schema';
import type { MessageRecord } from '../model/records';
import { EngineError, type ChatEngine, type ChatResult } from '../engines/types';
import type { JobQueue } from '../jobs/queue';
import type { LongTermMemory, LongTermStore, MemoryCommandResult, RetrievalStepTimer } from '../memory/long-term/types';
import { MAX_MEMORY_TEXT_CHARS } from '../model/memory';
import { parseMemoryCommand, type ParsedMemoryCommand } from '../memory/long-term/commands';
import type { RetrievedMemory, ShortTermContext } from '../model/context';
import type { ContextStrategy } from '../memory/short-term/types';
import type { StrategyConfig } from '../model/strategies';
import type { Settings } from '../model/settings';
import type { TokenCounter } from '../model/tokens';
import type { ChatTurnResult, LiveTurn, MessageFit } from '../messaging/protocol';
import { maxAnswerTokensFor } from '../prompt/answer-budget';
import { createProfileLinesReader } from '../memory/long-term/profile-summary';
import { assemblePrompt, defaultSystemInstruction, promptFit, shortTermBudget, type AssembledPrompt } from '../prompt/assemble';
import { cutAtBoundary } from '../text/boundary';
import { replaceableUserMessage, reviseFrom } from './turn-revision';
import type { PromptTrace, TurnTimings } from '../model/trace';
import type { ConversationEvents, ConversationStore } from './conversations';
import type { EngineManager } from './engine-manager';
import type { SettingsStore } from './settings';
import { codedErrorOf, MemoryError, MessagingError } from '../model/errors';
import type { PageAttachment, PromptPage } from '../model/page';
import { rankPagePassages } from './page-context';

/** Dependencies of the chat service. */
export interface ChatServiceDeps {
  db: RecallDB;
  /** The conversations; with `holdEvents` (`withChangeEvents`), a turn holds their change events until its prompt is ready. */
  conversations: ConversationStore & Partial<ConversationEvents>;
  engines: Pick<EngineManager, 'chatEngine' | 'tokenCounter' | 'embedder'>;
  settings: SettingsStore;
  jobs: JobQueue;
  longTerm: LongTermMemory;
  /** The long-term store, for revising what replaced turns taught (`reviseFrom`). */
  store: LongTermStore;
  strategyFor: (config: StrategyConfig) => ContextStrategy;
  /** Streams a piece of the reply to the UI. */
  onDelta: (event: { requestId: string; conversationId: string; messageId: string; delta: string }) => void;
  now?: () => number;
  /** Monotonic clock (ms) of the turn timings (`TurnTimings`); default `performance.now`. */
  clock?: () => number;
}

/** Runs chat turns; see module doc. */
export interface ChatService {
  /** Runs one turn. Resolves when the reply is stored (also when it failed: the assistant message then has `status: 'error'`). */
  send(input: { conversationId: string; text: string; requestId: string; page?: PageAttachment }): Promise<ChatTurnResult>;
  /**
   * Runs the last turn of the conversation again: its user message and everything after it are
   * replaced (`reviseFrom`: removed, with what memory learned from them) and the same text is sent
   * as a new turn. Also the Retry of a failed last turn.
   * @throws MemoryError `message_not_found` when the conversation has no user message; the errors of `send`.
   */
  regenerate(input: { conversationId: string; requestId: string }): Promise<ChatTurnResult>;
  /**
   * Replaces the user message `messageId` with `text` and sends it: that message and every later
   * one are replaced (`reviseFrom`), then a new turn runs.
   * @throws MemoryError `message_not_found` when `messageId` is not a user message of the conversation; the errors of `send`.
   */
  edit(input: { conversationId: string; messageId: string; text: string; requestId: string }): Promise<ChatTurnResult>;
  /**
   * Retries a failed turn: `messageId` is its `error` reply; the user message before it is sent
   * again with the same text, replacing the failed turn and any later one (`reviseFrom`).
   * @throws MemoryError `message_not_found` when `messageId` is not a failed reply of the conversation; the errors of `send`.
   */
  retry(input: { conversationId: string; messageId: string; requestId: string }): Promise<ChatTurnResult>;
  /**
   * Whether `text` fits the loaded model's prompt (the instruction, the message and the answer
   * reserve; see `promptFit`), counted with its tokenizer, and the longest start of it that fits,
   * cut at a sentence or word end. `null` while no chat model is loaded (nothing to measure against).
   */
  measure(input: { text: string }): Promise<MessageFit | null>;
  /** Stops a running turn; the partial reply is kept with `status: 'aborted'`. No-op when unknown. */
  stop(requestId: string): void;
  /**
   * Stops every running turn (each partial reply is kept, `status: 'aborted'`, as `stop` does) and
   * resolves once no turn runs, i.e. once each one's final write is done (the vault's lock).
   */
  stopAll(): Promise<void>;
  /**
   * The reply streaming now in a conversation, with its text so far, or `null` (none, or it has
   * not produced a token yet). A panel opened mid-reply shows it from here, then follows
   * `event.chatDelta`.
   */
  live(conversationId: string): LiveTurn | null;
  /**
   * Closes the turns a killed context left open (run once when the core starts, before it serves
   * requests): each turn whose user message is stored but no reply gets one `error` reply
   * (`errorCode: 'disconnected'`, `INTERRUPTED_REPLY_MESSAGE`), so the panel says what happened;
   * a turn whose reply was stored gets nothing more. The partial text of the killed reply was only
   * in memory and is gone. @returns the number of replies stored.
   */
  recoverInterruptedTurns(): Promise<number>;
}

/** Key prefix of the open-turn markers in `settings` (`state.openTurn.<user message id>` → `OpenTurn`). */
export const OPEN_TURN_PREFIX = 'state.openTurn.';

/** A chat turn whose user message is stored and whose reply is not yet: ids and start time (ms). */
export interface OpenTurn {
  conversationId: string;
  userMessageId: string;
  startedAt: number;
}

/** Error text of the reply stored for a turn the memory core was killed in (`errorCode: 'disconnected'`). */
export const INTERRUPTED_REPLY_MESSAGE =
  'The reply was interrupted: the memory core was closed while the model was writing. Your message is kept; send it again to get a reply.';

/** Longest user message accepted, in characters. */
export const MAX_MESSAGE_CHARS = 32_000;

/** What one turn needs once it holds the turn lock: the engine, the budget and the short-term context. */
interface TurnPlan {
  conversationId: string;
  namespace: string;
  strategyConfig: StrategyConfig;
  content: string;
  requestId: string;
  engine: ChatEngine | null;
  counter: TokenCounter;
  contextWindow: number;
  /** Tokens reserved for the answer (`maxTokens` of the request). */
  reserve: number;
  systemInstruction: string;
  memoryTopK: number;
  /** The page the user attached to this message (never stored; used for this prompt only). */
  page?: PageAttachment;
  /** A temporary chat (`ConversationRecord.temporary`): nothing is learned from it. */
  temporary: boolean;
  /** When `send` was called (`ChatServiceDeps.clock`, ms): the start of `TurnTimings.promptReadyMs`. */
  sentAt: number;
  /** The explicit memory command `content` is (`parseMemoryCommand`, parsed once per turn), or `null`. */
  command: ParsedMemoryCommand | null;
}

/** Creates the chat service. */
export function createChatService(deps: ChatServiceDeps): ChatService {
  const now = deps.now ?? Date.now;
  const clock = deps.clock ?? (() => performance.now());
  const running = new Map<string, AbortController>();
  const live = new Map<string, LiveTurn>();
  // The profile lines of the prompt's `<about_user>`, kept until a profile row is written.
  const profileLines = createProfileLinesReader(deps.db);
  // One turn at a time: a local model generates one reply at a time (two open panels queue up).
  const turns = new Mutex();

  /** The trimmed message. @throws MessagingError `message_empty`, or `message_too_long` (params `chars`, `maxChars`) beyond `MAX_MESSAGE_CHARS`. */
  function checkedText(text: string): string {
    const content = text.trim();
    if (!content) throw new MessagingError('message_empty', 'Empty message');
    if (content.length > MAX_MESSAGE_CHARS) {
      throw new MessagingError('message_too_long', `Message too long (${content.length} characters; at most ${MAX_MESSAGE_CHARS})`, {
        params: { chars: content.length, maxChars: MAX_MESSAGE_CHARS },
      });
    }
    return content;
  }

  /** The engine, counter and token budget of this turn (read when the turn starts, inside the lock). */
  function planTurn(
    base: Pick<TurnPlan, 'conversationId' | 'namespace' | 'strategyConfig' | 'content' | 'requestId' | 'temporary' | 'page' | 'sentAt'>,
    settings: Settings,
  ): TurnPlan {
    const engine: ChatEngine | null = deps.engines.chatEngine();
    const contextWindow = engine?.contextWindow() ?? 4096;
    return {
      ...base,
      engine,
      counter: deps.engines.tokenCounter(),
      contextWindow,
      reserve: Math.min(settings.maxAnswerTokens, maxAnswerTokensFor(contextWindow)),
      systemInstruction: defaultSystemInstruction(now()),
      memoryTopK: settings.memoryTopK,
      command: parseMemoryCommand(base.content),
    };
  }

  /**
   * The strategy's short-term context, built (awaited) before the new message is stored, so it
   * never contains it; a failure is kept and reported after the message is safely stored.
   */
  function loadShortTerm(plan: TurnPlan, strategy: ContextStrategy): Promise<{ context: ShortTermContext; error: null } | { context: null; error: unknown }> {
    const budgetTokens = shortTermBudget({
      systemInstruction: plan.systemInstruction,
      userText: plan.content,
      counter: plan.counter,
      contextWindow: plan.contextWindow,
      reserveForAnswer: plan.reserve,
    });
    return strategy.load(plan.conversationId, { userText: plan.content, budgetTokens }).then(
      (context) => ({ context, error: null }),
      (error: unknown) => ({ context: null, error }),
    );
  }

  /**
   * Stores the user message and an open-turn marker together; the marker is removed when the turn
   * ends (`send`'s `finally`). A marker left behind means the context running the turn was killed
   * mid-reply: `recoverInterruptedTurns` closes such turns on start.
   */
  function storeUserMessage(conversationId: string, content: string): Promise<MessageRecord> {
    return deps.db.transaction('rw', [deps.db.messages, deps.db.conversations, deps.db.settings], async () => {
      const stored = await deps.conversations.append({ id: crypto.randomUUID(), conversationId, role: 'user', content, createdAt: now(), status: 'complete' });
      const marker: OpenTurn = { conversationId, userMessageId: stored.id, startedAt: now() };
      await deps.db.settings.put({ key: OPEN_TURN_PREFIX + stored.id, value: marker });
      return stored;
    });
  }

  /**
   * Runs an explicit memory command ("remember …", "忘记…") and answers it without the model, or
   * returns `null` when the message is none. Both messages of a command turn are marked: they are
   * left out of later prompts (a forgotten fact must not come back through them).
   */
  async function answerCommand(plan: TurnPlan, userMessage: MessageRecord): Promise<ChatTurnResult | null> {
    const { conversationId, content } = plan;
    if (!plan.command) return null;
    const page = plan.page ? { url: plan.page.url, title: plan.page.title } : undefined;
    // A temporary chat saves nothing: "remember …" is answered with a refusal, nothing is stored ("forget …" still acts).
    const command =
      plan.temporary && plan.command.command === 'remember'
        ? { command: 'remember' as const, affected: [], refused: 'temporary' as const }
        : await deps.longTerm.runCommand(content, { namespace: plan.namespace, conversationId, messageId: userMessage.id, ...(page ? { page } : {}) });
    if (!command) return null;
    await deps.db.messages.update(userMessage.id, { command: { kind: command.command } });
    const assistantMessage = await deps.conversations.append({
      id: crypto.randomUUID(),
      conversationId,
      role: 'assistant',
      content: describeCommand(command, content),
      createdAt: now(),
      status: 'complete',
      command: { kind: command.command, affected: command.affected },
    });
    return {
      userMessage: { ...userMessage, command: { kind: command.command } },
      assistantMessage,
      command: { kind: command.command, affected: command.affected },
    };
  }

  /** Stores an `error` reply under `assistantId` for `error` (its code when it is an `EngineError`; domain, code and params of any coded error as `errorInfo`). */
  async function storeFailure(conversationId: string, userMessage: MessageRecord, assistantId: string, error: unknown): Promise<ChatTurnResult> {
    const message = error instanceof Error ? error.message : String(error);
    const assistantMessage = await deps.conversations.append({
      id: assistantId,
      conversationId,
      role: 'assistant',
      content: '',
      createdAt: now(),
      status: 'error',
      error: message,
      ...(error instanceof EngineError ? { errorCode: error.code } : {}),
      ...(codedErrorOf(error) ? { errorInfo: codedErrorOf(error)! } : {}),
    });
    return { userMessage, assistantMessage };
  }

  /**
   * The long-term part of a turn's prompt, read while the turn's other steps run (`runTurn`):
   * the memories for the message (hybrid search across conversations, top-k from the settings;
   * none when `memoryTopK` is 0) with the titles of the conversations they cite (read once the
   * top-k is ranked, alongside the neighbour expansion), and, alongside,
   * the profile lines ("What Recall knows about me", its own prompt section `<about_user>`).
   * Never rejects: a failure is returned (`ok: false`), and the turn reports it once the user
   * message is stored. `retrievalMs` is the retrieval's own time from `startedAt` (ms on `clock`),
   * `queryEmbeddingMs` the part of it the store's query embedding took (`RetrievalQuery.timeStep`).
   */
  async function readLongTerm(
    plan: TurnPlan,
    startedAt: number,
  ): Promise<
    | { ok: true; memories: RetrievedMemory[]; titles: Map<string, string>; profile: string[]; retrievalMs: number; queryEmbeddingMs: number }
    | { ok: false; error: unknown }
  > {
    let queryEmbeddingMs = 0;
    const timeStep: RetrievalStepTimer = async (_step, run) => {
      const started = clock();
      try {
        return await run();
      } finally {
        queryEmbeddingMs += clock() - started;
      }
    };
    const retrieval = async () => {
      // The titles are read from the ranked top-k, alongside the neighbour expansion (`RetrievalQuery.onRanked`).
      let titlesRead: Promise<Map<string, string>> | undefined;
      const onRanked = (ranked: readonly RetrievedMemory[]) => {
        titlesRead = citedTitles(ranked);
        titlesRead.catch(() => undefined); // awaited below; a failed retrieval must not leave it unhandled
      };
      const memories =
        plan.memoryTopK > 0
          ? await deps.longTerm.retrieve({ text: plan.content, namespace: plan.namespace, k: plan.memoryTopK, now: now(), timeStep, onRanked })
          : [];
      const retrievalMs = plan.memoryTopK > 0 ? clock() - startedAt : 0;
      return { memories, retrievalMs, titles: await (titlesRead ?? citedTitles(memories)) };
    };
    try {
      const [found, profile] = await Promise.all([retrieval(), profileLines(plan.namespace)]);
      return { ok: true, ...found, profile, queryEmbeddingMs };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** Titles of the conversations the memories cite (read by key: not every conversation each turn). */
  async function citedTitles(memories: readonly RetrievedMemory[]): Promise<Map<string, string>> {
    const cited = [...new Set(memories.flatMap((r) => (r.memory.sourceConversationId ? [r.memory.sourceConversationId] : [])))];
    return new Map((await deps.db.conversations.bulkGet(cited)).flatMap((c) => (c ? [[c.id, c.title] as const] : [])));
  }

  /**
   * Streams the reply (each delta to the UI and to `live`) once `userStored` has resolved: pieces
   * the engine writes before that are held, then forwarded in order. A rejected `userStored` stops
   * the engine (the caller throws its error). Stopped by the user: an aborted reply (maybe empty),
   * not an engine failure; held pieces written before a stop are forwarded and kept, and stopped
   * while held pieces are being forwarded, the reply is the part forwarded. @returns the result, or `{ failed }` for an engine failure.
   */
  async function streamReply(
    plan: TurnPlan,
    engine: ChatEngine,
    prompt: AssembledPrompt,
    assistantId: string,
    signal: AbortSignal,
    userStored: Promise<unknown>,
  ): Promise<ChatResult | { failed: unknown }> {
    const { requestId, conversationId } = plan;
    // The engine stops when the user stops or the user message's write fails.
    const writeFailed = new AbortController();
    const engineSignal = AbortSignal.any([signal, writeFailed.signal]);
    let reply = '';
    let held: string[] | null = [];
    const forward = (delta: string) => {
      reply += delta;
      live.set(requestId, { requestId, conversationId, messageId: assistantId, content: reply });
      deps.onDelta({ requestId, conversationId, messageId: assistantId, delta });
    };
    // Pieces the engine wrote before a stop are kept and forwarded; stopped while held pieces are
    // being forwarded (the user stopped what they saw), the rest is dropped: the reply is what was shown.
    let dropped = false;
    userStored.then(
      () => {
        const pieces = held ?? [];
        held = null;
        const stoppedBefore = signal.aborted;
        for (const delta of pieces) {
          if (signal.aborted && !stoppedBefore) dropped = true;
          else forward(delta);
        }
      },
      () => writeFailed.abort(),
    );
    try {
      const result = await engine.complete({ messages: prompt.messages, maxTokens: plan.reserve, temperature: 0.7, signal: engineSignal }, (delta) => {
        if (held) held.push(delta);
        else forward(delta);
      });
      await userStored.catch(() => undefined); // every held piece is forwarded before the reply is stored
      return dropped ? { content: reply, finishReason: 'abort' as const, usage: null } : result;
    } catch (error) {
      await userStored.catch(() => undefined);
      if (!reply && !signal.aborted) return { failed: error };
      return { content: reply, finishReason: 'abort' as const, usage: null };
    } finally {
      live.delete(requestId);
    }
  }

  /** The prompt trace stored with the reply (what the context view shows). */
  function traceOf(
    plan: TurnPlan,
    engine: ChatEngine,
    prompt: AssembledPrompt,
    shortTerm: ShortTermContext,
    result: ChatResult,
    timings: TurnTimings,
  ): PromptTrace {
    return {
      messages: prompt.messages,
      sections: prompt.sections,
      memories: prompt.memories,
      budget: prompt.budget,
      strategy: plan.strategyConfig,
      modelId: engine.modelId,
      engineUsage: result.usage,
      notices: [
        ...(shortTerm.pending ? [{ code: 'summary_pending' as const, ...shortTerm.pending }] : []),
        ...(deps.engines.embedder() ? [] : [{ code: 'keyword_memory_only' as const }]),
      ],
      timings,
    };
  }

  /**
   * Stores the reply and its trace together or not at all (a full disk or a failed write leaves
   * neither half; the user's message is already stored).
   */
  function storeReply(plan: TurnPlan, engine: ChatEngine, assistantId: string, result: ChatResult, trace: PromptTrace): Promise<MessageRecord> {
    const { conversationId } = plan;
    const status: MessageRecord['status'] = result.finishReason === 'abort' ? 'aborted' : 'complete';
    return deps.db.transaction('rw', [deps.db.messages, deps.db.conversations, deps.db.promptTraces], async () => {
      const stored = await deps.conversations.append({
        id: assistantId,
        conversationId,
        role: 'assistant',
        content: result.content,
        createdAt: now(),
        status,
        ...(engine.modelId ? { modelId: engine.modelId } : {}),
        ...(result.usage ? { usage: result.usage } : {}),
        ...(result.finishReason === 'length' ? { truncated: true } : {}),
      });
      await deps.db.promptTraces.put({ messageId: assistantId, conversationId, createdAt: now(), trace });
      return stored;
    });
  }

  /**
   * Hands the exchange to the short-term strategy (a reply with text) and to long-term memory,
   * which enqueue their background jobs. What the user said is remembered even when they stopped
   * the reply (before its first token too); long-term memory leaves the stopped reply itself out
   * (`rememberedReply`).
   */
  async function handOff(plan: TurnPlan, strategy: ContextStrategy, userMessage: MessageRecord, assistant: MessageRecord): Promise<void> {
    const exchange = { userMessageId: userMessage.id, assistantMessageId: assistant.id };
    // A temporary chat's short-term state (summary, entity notes) is deleted with it; long-term memory learns nothing from it.
    if (assistant.content.trim()) await strategy.onExchange(plan.conversationId, exchange);
    if (plan.temporary) return;
    if (assistant.content.trim() || assistant.status === 'aborted') {
      await deps.longTerm.onExchange({ conversationId: plan.conversationId, namespace: plan.namespace, ...exchange });
    }
  }

  /**
   * The turn itself, inside the turn lock and `runForeground` (see module doc). Calls
   * `onUserStored` with the user message once it is stored. The conversations' change events of
   * the turn (its user message) are held until the prompt is handed to the engine, or the turn ends.
   */
  async function runTurn(
    plan: TurnPlan,
    strategy: ContextStrategy,
    signal: AbortSignal,
    onUserStored: (message: MessageRecord) => void,
  ): Promise<ChatTurnResult> {
    const releaseEvents = deps.conversations.holdEvents?.() ?? (() => undefined);
    try {
      return await runHeldTurn(plan, strategy, signal, onUserStored, releaseEvents);
    } finally {
      releaseEvents();
    }
  }

  /**
   * `runTurn`'s steps; `releaseEvents` is called once the prompt is ready. A turn with a prompt
   * stores its user message while the engine starts on it (`streamReply` forwards no piece of the
   * reply before that write is done, and stops the engine when it fails); a memory command, or a
   * turn that fails before its prompt is ready, stores it first.
   */
  async function runHeldTurn(
    plan: TurnPlan,
    strategy: ContextStrategy,
    signal: AbortSignal,
    onUserStored: (message: MessageRecord) => void,
    releaseEvents: () => void,
  ): Promise<ChatTurnResult> {
    // Marks of the turn timings (`TurnTimings`: contiguous spans from `plan.sentAt`).
    const startedAt = clock();
    const { engine } = plan;
    // The long-term reads start with the turn (`readLongTerm`): they touch none of the messages
    // the short-term context reads, so their IndexedDB requests overlap that step. Not for a
    // memory command (answered without them; it may change what they read) nor without a model
    // (the turn fails at once).
    const reads = engine && plan.command === null ? readLongTerm(plan, startedAt) : null;
    const loaded = await loadShortTerm(plan, strategy);
    const shortTermAt = clock();
    const storeUser = async (): Promise<MessageRecord> => {
      const stored = await storeUserMessage(plan.conversationId, plan.content);
      onUserStored(stored);
      return stored;
    };
    const assistantId = crypto.randomUUID();
    const fail = async (error: unknown, userMessage?: MessageRecord) =>
      storeFailure(plan.conversationId, userMessage ?? (await storeUser()), assistantId, error);

    if (!engine || !reads || !loaded.context) {
      const userMessage = await storeUser();
      const commandResult = await answerCommand(plan, userMessage);
      if (commandResult) return commandResult;
      if (!engine || !reads) return fail(new EngineError('not_loaded', 'No language model is loaded. Choose one in the Model tab.'), userMessage);
      return fail(loaded.error, userMessage);
    }
    const shortTerm = loaded.context;

    const longTerm = await reads;
    if (!longTerm.ok) return fail(longTerm.error);
    const { memories, titles, profile } = longTerm;
    const memoryReadyAt = clock();
    let page: PromptPage | undefined;
    try {
      page = plan.page ? await rankPagePassages(plan.page, plan.content, deps.engines.embedder(), signal) : undefined;
    } catch (error) {
      return fail(error);
    }
    // Memories whose source turns are sent verbatim anyway are left out by `assemblePrompt`.
    let prompt: AssembledPrompt;
    try {
      prompt = assemblePrompt({
        systemInstruction: plan.systemInstruction,
        memories,
        shortTerm,
        userText: plan.content,
        counter: plan.counter,
        contextWindow: plan.contextWindow,
        reserveForAnswer: plan.reserve,
        conversationTitles: titles,
        profile,
        ...(page ? { page } : {}),
      });
    } catch (error) {
      return fail(error);
    }

    // The prompt is ready: `streamReply` hands it to the engine at once, while the user message is stored.
    const readyAt = clock();
    const timings: TurnTimings = {
      promptReadyMs: readyAt - plan.sentAt,
      startMs: startedAt - plan.sentAt,
      shortTermMs: shortTermAt - startedAt,
      userMessageMs: 0,
      memoryWaitMs: memoryReadyAt - shortTermAt,
      retrievalMs: longTerm.retrievalMs,
      queryEmbeddingMs: longTerm.queryEmbeddingMs,
      assemblyMs: readyAt - memoryReadyAt,
    };
    releaseEvents();
    const userStored = storeUser();
    const result = await streamReply(plan, engine, prompt, assistantId, signal, userStored);
    // A failed write fails the turn (as when it was stored first); the engine was stopped then.
    const userMessage = await userStored;
    if ('failed' in result) return fail(result.failed, userMessage);
    const trace = traceOf(plan, engine, prompt, shortTerm, result, timings);
    if (page) {
      const included = prompt.sections.find((s) => s.kind === 'page');
      trace.page = {
        url: page.url,
        title: page.title,
        passages: page.passages.length,
        included: Math.max(0, (included?.items ?? 0) - (page.selection && included?.text.includes('Selected text:') ? 1 : 0)),
        selection: page.selection !== undefined,
      };
    }
    const assistantMessage = await storeReply(plan, engine, assistantId, result, trace);
    await handOff(plan, strategy, userMessage, assistantMessage);
    return { userMessage, assistantMessage };
  }

  /**
   * The replacement step of regenerate / edit / retry, inside the turn lock: `from` and every
   * later message are removed and the memories learned from them revised (`reviseFrom`).
   */
  async function replaceTurns(from: MessageRecord, namespace: string): Promise<void> {
    const still = await replaceableUserMessage(deps.db, from.conversationId, from.id); // not replaced meanwhile by another panel
    await reviseFrom({ db: deps.db, store: deps.store, conversations: deps.conversations }, still, namespace);
  }

  /** The last user message of a conversation. @throws MemoryError `message_not_found` when there is none. */
  async function lastUserMessage(conversationId: string): Promise<MessageRecord> {
    const all = await deps.conversations.messages(conversationId);
    for (let i = all.length - 1; i >= 0; i -= 1) if (all[i]!.role === 'user') return all[i]!;
    throw new MemoryError('message_not_found', `Conversation ${conversationId} has no user message`);
  }

  const service: ChatService = {
    async send({ conversationId, text, requestId, page }, replaceFrom?: MessageRecord) {
      const sentAt = clock();
      const content = checkedText(text);
      // Two independent reads, asked together.
      const [conversation, settings] = await Promise.all([deps.conversations.require(conversationId), deps.settings.get()]);
      const strategy = deps.strategyFor(conversation.strategy);
      const controller = new AbortController();
      running.set(requestId, controller);
      let openTurnKey: string | null = null;
      const base = {
        conversationId,
        namespace: conversation.namespace,
        strategyConfig: conversation.strategy,
        content,
        requestId,
        temporary: conversation.temporary === true,
        sentAt,
        ...(page ? { page } : {}),
      };
      const turn = turns.runExclusive(() =>
        deps.jobs.runForeground(async () => {
          if (replaceFrom) await replaceTurns(replaceFrom, conversation.namespace);
          return runTurn(planTurn(base, settings), strategy, controller.signal, (userMessage) => {
            openTurnKey = OPEN_TURN_PREFIX + userMessage.id;
          });
        }),
      );
      try {
        return await turn;
      } catch (error) {
        // A full disk becomes `StorageFullError` (code `storage_full`), which the panel translates.
        throw asStorageError(error);
      } finally {
        running.delete(requestId);
        if (openTurnKey)
          await deps.db.settings.delete(openTurnKey).catch((error: unknown) => console.warn('[chat] could not clear the open-turn marker:', error));
      }
    },

    async regenerate({ conversationId, requestId }) {
      const from = await lastUserMessage(conversationId);
      return send({ conversationId, text: from.content, requestId }, from);
    },

    async edit({ conversationId, messageId, text, requestId }) {
      checkedText(text);
      const from = await replaceableUserMessage(deps.db, conversationId, messageId);
      return send({ conversationId, text, requestId }, from);
    },

    async retry({ conversationId, messageId, requestId }) {
      const failed = await deps.db.messages.get(messageId);
      if (!failed || failed.conversationId !== conversationId || failed.role !== 'assistant' || failed.status !== 'error') {
        throw new MemoryError('message_not_found', `No failed reply ${messageId} in conversation ${conversationId}`);
      }
      const before = await deps.db.messages.where('[conversationId+seq]').between([conversationId, -Infinity], [conversationId, failed.seq]).toArray();
      const from = before.reverse().find((m) => m.role === 'user');
      if (!from) throw new MemoryError('message_not_found', `No user message before the failed reply ${messageId}`);
      return send({ conversationId, text: from.content, requestId }, from);
    },

    async measure({ text }) {
      const engine = deps.engines.chatEngine();
      if (!engine) return null;
      const settings = await deps.settings.get();
      const counter = deps.engines.tokenCounter();
      const contextWindow = engine.contextWindow() ?? 4096; // as `planTurn`
      const base = {
        systemInstruction: defaultSystemInstruction(now()),
        counter,
        contextWindow,
        reserveForAnswer: Math.min(settings.maxAnswerTokens, maxAnswerTokensFor(contextWindow)),
      };
      const content = text.trim();
      const fit = promptFit({ ...base, userText: content });
      const withinChars = content.length <= MAX_MESSAGE_CHARS;
      if (fit.fits && withinChars) return { ...fit, chars: content.length, maxChars: MAX_MESSAGE_CHARS, fitChars: content.length };
      // The longest start that fits (binary search over the length, then cut back to a sentence or word end).
      const fitsAt = (chars: number) => promptFit({ ...base, userText: content.slice(0, chars) }).fits;
      let lo = 0;
      let hi = Math.min(content.length, MAX_MESSAGE_CHARS);
      if (!fitsAt(hi)) {
        hi -= 1;
        while (lo < hi) {
          const mid = Math.ceil((lo + hi) / 2);
          if (fitsAt(mid)) lo = mid;
          else hi = mid - 1;
        }
      } else lo = hi;
      const shortened = cutAtBoundary(content, lo).text;
      return { ...fit, fits: false, chars: content.length, maxChars: MAX_MESSAGE_CHARS, fitChars: shortened.length };
    },

    stop(requestId) {
      running.get(requestId)?.abort();
    },

    async stopAll() {
      // A turn queued behind the lock starts when the running one ends: stop it too.
      while (turns.isLocked()) {
        for (const controller of running.values()) controller.abort();
        await turns.waitForUnlock();
        await Promise.resolve();
      }
    },

    async recoverInterruptedTurns() {
      const markers = await deps.db.settings.where('key').startsWith(OPEN_TURN_PREFIX).toArray();
      let closed = 0;
      for (const { key, value } of markers) {
        const turn = value as OpenTurn;
        await deps.db.transaction('rw', [deps.db.messages, deps.db.conversations, deps.db.settings], async () => {
          const conversation = await deps.db.conversations.get(turn.conversationId);
          const user = await deps.db.messages.get(turn.userMessageId);
          if (conversation && user) {
            const later = await deps.db.messages
              .where('[conversationId+seq]')
              .between([turn.conversationId, user.seq + 1], [turn.conversationId, Infinity])
              .toArray();
            // Only when the turn stored no reply at all (a stored reply is never written twice).
            if (!later.some((m) => m.role === 'assistant')) {
              await deps.conversations.append({
                id: crypto.randomUUID(),
                conversationId: turn.conversationId,
                role: 'assistant',
                content: '',
                createdAt: now(),
                status: 'error',
                error: INTERRUPTED_REPLY_MESSAGE,
                errorCode: 'disconnected',
              });
              closed += 1;
            }
          }
          await deps.db.settings.delete(key);
        });
      }
      return closed;
    },

    live(conversationId) {
      for (const turn of live.values()) if (turn.conversationId === conversationId) return { ...turn };
      return null;
    },
  };
  const send = service.send as (input: Parameters<ChatService['send']>[0], replaceFrom?: MessageRecord) => Promise<ChatTurnResult>;
  return service;
}

/** Longest quote of a memory in a command reply, in characters (an episodic round can be long). */
export const COMMAND_QUOTE_CHARS = 120;

/** The reply to an explicit memory command, in the language of the command (a refusal says why and that nothing changed). */
export function describeCommand(
  result: { command: 'remember' | 'forget'; affected: { text: string }[]; refused?: MemoryCommandResult['refused'] },
  commandText: string,
): string {
  const zh = /[\u3400-\u9fff]/.test(commandText);
  if (result.refused === 'temporary') {
    return zh
      ? '这是临时聊天：这里说的内容都不会保存，所以我没有记住这一条。要保存它，请在普通聊天里说“记住…”，或在“记忆”页添加。'
      : 'This is a temporary chat: nothing said here is saved, so I did not remember that. To keep it, say “remember …” in a normal chat or add it in the Memory tab.';
  }
  if (result.refused === 'too_long') {
    return zh
      ? `这段内容太长，无法作为一条记忆保存（最多 ${MAX_MEMORY_TEXT_CHARS} 个字符）。请缩短后再说“记住…”。这次没有保存任何内容。`
      : `That is too long to keep as one memory (at most ${MAX_MEMORY_TEXT_CHARS} characters). Shorten it and say “remember …” again. Nothing was saved.`;
  }
  if (result.refused === 'forget_all') {
    return zh
      ? '我不会凭一句聊天就清空全部记忆。要删除所有记忆，请打开“记忆”页，点“清除全部…”（会先确认）。这次没有删除任何内容。'
      : 'I don’t erase all memory from a chat message. To delete everything, open the Memory tab and choose “Erase everything…” (it asks first). Nothing was removed.';
  }
  const quote = (text: string) => {
    const flat = Array.from(text.replace(/\s+/g, ' ').trim());
    return flat.length > COMMAND_QUOTE_CHARS ? `${flat.slice(0, COMMAND_QUOTE_CHARS - 1).join('')}…` : flat.join('');
  };
  const list = result.affected.map((a) => `- ${quote(a.text)}`).join('\n');
  if (result.command === 'remember') {
    return zh ? `好的，我记住了：\n${list}` : `Got it. I will remember:\n${list}`;
  }
  if (result.affected.length === 0) return zh ? '没有找到与此相关的记忆，没有删除任何内容。' : 'I found no matching memory; nothing was removed.';
  return zh
    ? `已忘记以下 ${result.affected.length} 条记忆：\n${list}`
    : `I forgot ${result.affected.length} ${result.affected.length === 1 ? 'memory' : 'memories'}:\n${list}`;
}
