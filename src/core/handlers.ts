/**
 * Binds the protocol's requests to the core's services: `CORE_HANDLERS` is the one list (a
 * request of `ProtocolMap` = one entry here). Every handler checks that the sender is one of this
 * extension's own pages before doing anything.
 */
import browser from 'webextension-polyfill';
import { normalizeStrategyConfig } from '../model/strategies';
import { assertSender, onMessage, type ProtocolMap } from '../messaging/protocol';
import type { Core } from './index';
import type { VaultStatus } from '../model/vault';
import { openGate, type VaultController, type VaultGate, type VaultRequestType } from './vault';
import { toView } from '../memory/long-term/store';
import {
  acceptSuggestion,
  countSuggestions,
  listSuggestions,
  recentlyLearned,
  rejectSuggestion,
  reviewEnabled,
  setReviewEnabled,
  undoLearned,
} from '../memory/long-term/review';
import { queueProfileRebuild, readProfile, saveProfileEdit } from '../memory/long-term/profile-summary';

/** The review switch and pending count of `namespace` (`review.status`). */
async function reviewStatus(c: Core, namespace: string): Promise<{ enabled: boolean; pending: number }> {
  return { enabled: await reviewEnabled(c.db, namespace), pending: await countSuggestions(c.db, namespace) };
}

/** Every request the core answers: the protocol's requests but the events and `core.ensure` (the service worker's). */
export type CoreRequestType = Exclude<keyof ProtocolMap, `event.${string}` | 'core.ensure' | `page.${string}` | `vault.${string}`>;

/** What a handler gets besides the request's data. */
export interface HandlerContext {
  /** When the offscreen document started (ms epoch), for `core.ping`. */
  startedAt: number;
}

/** The handler of request `K`: the started core and the request's data → its answer (or a promise of it). */
export type CoreHandler<K extends CoreRequestType> = (
  core: Core,
  data: Parameters<ProtocolMap[K]>[0],
  context: HandlerContext,
) => Promise<ReturnType<ProtocolMap[K]>> | ReturnType<ProtocolMap[K]>;

/**
 * The one list of request handlers, one entry per request of `ProtocolMap` (a request without
 * an entry, or an entry for no request, does not compile). Each entry only unpacks the data and
 * calls the service that does the work (`Core`'s members).
 */
export const CORE_HANDLERS: { [K in CoreRequestType]: CoreHandler<K> } = {
  'core.ping': (c, _data, { startedAt }) => {
    const { via, ms, at } = c.store.indexStats().open;
    return { ready: true, startedAt, memory: { via, openMs: ms, searchableAt: at } };
  },
  'engine.status': (c) => c.engines.status(),
  'engine.catalog': (c) => c.engines.catalog(),
  'engine.loadWebLLM': async (c, { modelId }) => {
    const status = await c.engines.loadWebLLM(modelId);
    await c.settings.set({ preferredEngine: 'webllm', webllmModelId: modelId });
    return status;
  },
  'engine.loadWllama': async (c, { source }) => {
    const status = await c.engines.loadWllama(source);
    await c.settings.set({ preferredEngine: 'wllama', wllamaSource: source });
    return status;
  },
  'engine.unload': (c) => c.engines.unloadChat(),
  'engine.reloadEmbedder': (c) => c.engines.reloadEmbedder(),
  'models.registerLocal': async (c, data) => {
    const record = { ...data, source: 'file' as const, addedAt: Date.now() };
    await c.db.localModels.put(record);
    return record;
  },
  'models.deleteLocal': (c, { fileName }) => c.deleteLocalModel(fileName),

  'conversations.list': async (c, data) => c.conversations.list(await c.profiles.resolve(data?.namespace)),
  'conversations.search': async (c, { query, namespace }) => c.conversations.search(query, await c.profiles.resolve(namespace)),
  // Strategy parameters from the UI are clamped to their ranges (see STRATEGIES).
  'conversations.create': async (c, data) =>
    c.conversations.create({
      ...(data?.title ? { title: data.title } : {}),
      ...(data?.temporary ? { temporary: true } : {}),
      strategy: normalizeStrategyConfig(data?.strategy ?? (await c.settings.get()).defaultStrategy),
      namespace: await c.profiles.resolve(data?.namespace),
    }),
  'conversations.get': async (c, { id }) => (await c.conversations.get(id)) ?? null,
  'conversations.update': (c, { id, title, strategy }) =>
    c.conversations.update(id, { ...(title !== undefined ? { title } : {}), ...(strategy ? { strategy: normalizeStrategyConfig(strategy) } : {}) }),
  'conversations.delete': (c, { id }) => c.conversations.delete(id),
  'messages.list': (c, { conversationId }) => c.conversations.messages(conversationId),
  'messages.snippets': (c, { ids }) => c.conversations.snippets(ids),

  'chat.send': (c, data) => c.chat.send(data),
  'chat.regenerate': (c, data) => c.chat.regenerate(data),
  'chat.edit': (c, data) => c.chat.edit(data),
  'chat.retry': (c, data) => c.chat.retry(data),
  'chat.measure': (c, data) => c.chat.measure(data),
  'chat.stop': (c, { requestId }) => c.chat.stop(requestId),
  'chat.live': (c, { conversationId }) => c.chat.live(conversationId),
  'trace.get': async (c, { messageId }) => (await c.db.promptTraces.get(messageId))?.trace ?? null,
  'trace.sources': (c, { messageIds }) => c.feedback.sources(messageIds),

  // The namespace of a memory request must be a profile (a panel that missed a delete is refused, nothing lands in a ghost profile).
  'memory.list': async (c, query) => c.memoryAdmin.list(query?.namespace ? { ...query, namespace: await c.profiles.resolve(query.namespace) } : query),
  'memory.history': (c, query) => c.memoryAdmin.history(query ?? {}),
  'memory.add': async (c, data) => c.memoryAdmin.add({ ...data, namespace: await c.profiles.resolve(data.namespace) }),
  'memory.update': (c, data) => c.memoryAdmin.update(data),
  'memory.delete': (c, { id }) => c.memoryAdmin.delete(id),
  'memory.export': async (c, data) =>
    c.exportToFile(data?.passphrase, {
      includeEmbeddings: data?.includeEmbeddings !== false,
      ...(data?.namespace !== undefined ? { namespace: await c.profiles.resolve(data.namespace) } : {}),
    }),
  'memory.import': (c, { fileName, passphrase }) => c.importFile(fileName, passphrase),
  'memory.importNotice': (c) => c.importNotice(),
  'history.import': async (c, data) => c.importHistoryFile({ ...data, namespace: await c.profiles.resolve(data.namespace) }),
  'memory.importSaved': async (c, data) => c.importSavedMemories({ ...data, namespace: await c.profiles.resolve(data.namespace) }),
  'memory.stagingKey': (c, { fileName }) => c.stagingKey(fileName),
  'memory.eraseAll': (c) => c.eraseAll(),
  'memory.eraseMemories': async (c, { namespace }) => c.eraseMemories(await c.profiles.resolve(namespace)),
  'models.downloaded': (c) => c.downloadedModels(),
  'models.deleteDownloaded': (c, { id }) => c.deleteDownloadedModel(id),
  'memory.get': async (c, { id }) => {
    const record = await c.store.get(id);
    return record ? toView(record) : null;
  },
  'memory.feedback': (c, data) => c.feedback.mark(data),
  'memory.feedbackUndo': (c, { id }) => c.feedback.undo(id),
  'memory.feedbackList': (c, { messageId }) => c.feedback.list(messageId),

  // Review before saving (issue 14 item 2).
  'review.status': (c, { namespace }) => reviewStatus(c, namespace),
  'review.set': async (c, { namespace, enabled }) => {
    await setReviewEnabled(c.db, namespace, enabled);
    return reviewStatus(c, namespace);
  },
  'review.suggestions': (c, { namespace }) => listSuggestions(c.db, namespace),
  // The store's write queues the profile rebuild (`composeLongTermMemory`).
  'review.accept': (c, data) => acceptSuggestion({ db: c.db, store: c.store }, data),
  'review.reject': (c, { id }) => rejectSuggestion(c.db, id),
  'review.recent': (c, { namespace, limit }) => recentlyLearned(c.db, namespace, limit),
  'review.undo': (c, { id }) => undoLearned(c.store, id),

  // "What Recall knows about me" (issue 14 item 6).
  'aboutMe.get': (c, { namespace }) => readProfile(c.db, namespace),
  'aboutMe.save': (c, { namespace, lines }) => saveProfileEdit(c.db, namespace, lines),
  'aboutMe.rebuild': (c, { namespace }) => queueProfileRebuild(c.jobs, namespace),

  'profiles.list': (c) => c.profiles.list(),
  'profiles.create': (c, { name }) => c.profiles.create(name),
  'profiles.rename': (c, { id, name }) => c.profiles.rename(id, name),
  'profiles.switch': (c, { id }) => c.profiles.switchTo(id),
  'profiles.delete': (c, { id }) => c.profiles.delete(id),

  'settings.get': (c) => c.settings.get(),
  'settings.set': (c, patch) => c.updateSettings(patch),
  'jobs.stats': (c) => c.jobs.stats(),
  'jobs.retryFailed': (c) => c.jobs.retryFailed(),

  // pdf.js (~1.6 MB with its worker) loads on the first PDF only, never at start-up.
  'pdf.read': async (_c, source) => (await import('./pdf')).readPdfSource(source),
};

/**
 * Registers every handler of `CORE_HANDLERS` on the runtime's messages. `core` resolves once the
 * core has started; requests that arrive earlier wait for it. Each handler first checks that the
 * sender is the side panel or the service worker of this extension (`assertSender`, which throws
 * otherwise), then passes the vault lock's one check (`VaultGate.core`: `VaultError('locked')`
 * while locked; `core.ping` alone is answered then, with `locked: true`, so the service worker
 * knows the core runs; `memory.eraseAll` is answered by the gate, locked or not: `VaultGate.eraseAll`). A plain promise of the core is a gate that is always open.
 * Returns a function that removes all handlers.
 */
export function registerCoreHandlers(core: Promise<Core> | VaultGate, startedAt: number): () => void {
  const context: HandlerContext = { startedAt };
  const gate = core instanceof Promise ? openGate(core) : core;
  const removers = (Object.keys(CORE_HANDLERS) as CoreRequestType[]).map((type) => {
    const handler = CORE_HANDLERS[type] as CoreHandler<CoreRequestType>;
    return onMessage(type, (async (message: { data: never; sender: Parameters<typeof assertSender>[0] }) => {
      assertSender(message.sender, ['sidepanel', 'background'], browser.runtime.id);
      if (type === 'core.ping' && gate.isLocked()) return { ready: true, startedAt, memory: { via: 'empty', openMs: 0, searchableAt: 0 }, locked: true };
      // "Erase all data" is answered locked too (the forgotten passphrase's way out): the gate runs it.
      if (type === 'memory.eraseAll') return gate.eraseAll();
      return handler(await gate.core(), message.data, context);
    }) as never);
  });
  return () => removers.forEach((remove) => remove());
}

/** The handler of each `vault.*` request: the controller and the request's data → the new status. */
export const VAULT_HANDLERS: {
  [K in VaultRequestType]: (vault: VaultController, data: Parameters<ProtocolMap[K]>[0]) => Promise<VaultStatus>;
} = {
  'vault.status': (v) => v.status(),
  'vault.enable': (v, { passphrase }) => v.enable(passphrase),
  'vault.unlock': (v, { passphrase }) => v.unlock(passphrase),
  'vault.lock': (v) => v.lock(),
  'vault.changePassphrase': (v, { current, next }) => v.changePassphrase(current, next),
  'vault.disable': (v, { passphrase }) => v.disable(passphrase),
  'vault.setAutoLock': (v, { minutes }) => v.setAutoLock(minutes),
};

/**
 * Registers the `vault.*` handlers (sender: the side panel only). Returns a function that removes them.
 * @throws MessagingError('rejected_sender') to a sender that is not this extension's side panel.
 */
export function registerVaultHandlers(vault: VaultController): () => void {
  const removers = (Object.keys(VAULT_HANDLERS) as VaultRequestType[]).map((type) => {
    const handler = VAULT_HANDLERS[type] as (vault: VaultController, data: unknown) => Promise<VaultStatus>;
    return onMessage(type, (async (message: { data: unknown; sender: Parameters<typeof assertSender>[0] }) => {
      assertSender(message.sender, ['sidepanel'], browser.runtime.id);
      return handler(vault, message.data);
    }) as never);
  });
  return () => removers.forEach((remove) => remove());
}
