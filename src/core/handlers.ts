/**
 * Binds the protocol's requests to the core's services. Every handler checks that the sender is
 * one of this extension's own pages before doing anything.
 */
import browser from 'webextension-polyfill';
import { normalizeStrategyConfig } from '../model/strategies';
import { assertSender, onMessage, type ProtocolMap } from '../messaging/protocol';
import type { Core } from './index';

type RequestType = Exclude<keyof ProtocolMap, `event.${string}` | 'core.ensure'>;

/**
 * Registers a handler for every core request. `core` resolves once the core has started;
 * requests that arrive earlier wait for it. Returns a function that removes all handlers.
 */
export function registerCoreHandlers(core: Promise<Core>, startedAt: number): () => void {
  const removers: (() => void)[] = [];
  const handle = <K extends RequestType>(type: K, fn: (core: Core, data: Parameters<ProtocolMap[K]>[0]) => Promise<ReturnType<ProtocolMap[K]>> | ReturnType<ProtocolMap[K]>) => {
    removers.push(
      onMessage(type, (async (message: { data: Parameters<ProtocolMap[K]>[0]; sender: Parameters<typeof assertSender>[0] }) => {
        assertSender(message.sender, ['sidepanel', 'background'], browser.runtime.id);
        return fn(await core, message.data);
      }) as never),
    );
  };

  handle('core.ping', (c) => {
    const { via, ms, at } = c.store.indexStats().open;
    return { ready: true, startedAt, memory: { via, openMs: ms, searchableAt: at } };
  });
  handle('engine.status', (c) => c.engines.status());
  handle('engine.catalog', (c) => c.engines.catalog());
  handle('engine.loadWebLLM', async (c, { modelId }) => {
    const status = await c.engines.loadWebLLM(modelId);
    await c.settings.set({ preferredEngine: 'webllm', webllmModelId: modelId });
    return status;
  });
  handle('engine.loadWllama', async (c, { source }) => {
    const status = await c.engines.loadWllama(source);
    await c.settings.set({ preferredEngine: 'wllama', wllamaSource: source });
    return status;
  });
  handle('engine.unload', (c) => c.engines.unloadChat());
  handle('engine.reloadEmbedder', (c) => c.engines.reloadEmbedder());
  handle('models.registerLocal', async (c, data) => {
    const record = { ...data, source: 'file' as const, addedAt: Date.now() };
    await c.db.localModels.put(record);
    return record;
  });
  handle('models.deleteLocal', (c, { fileName }) => c.deleteLocalModel(fileName));

  handle('conversations.list', (c) => c.conversations.list());
  // Strategy parameters from the UI are clamped to their ranges (see STRATEGIES).
  handle('conversations.create', async (c, data) =>
    c.conversations.create({
      ...(data?.title ? { title: data.title } : {}),
      strategy: normalizeStrategyConfig(data?.strategy ?? (await c.settings.get()).defaultStrategy),
    }),
  );
  handle('conversations.get', async (c, { id }) => (await c.conversations.get(id)) ?? null);
  handle('conversations.update', (c, { id, title, strategy }) =>
    c.conversations.update(id, { ...(title !== undefined ? { title } : {}), ...(strategy ? { strategy: normalizeStrategyConfig(strategy) } : {}) }),
  );
  handle('conversations.delete', (c, { id }) => c.conversations.delete(id));
  handle('messages.list', (c, { conversationId }) => c.conversations.messages(conversationId));

  handle('chat.send', (c, data) => c.chat.send(data));
  handle('chat.stop', (c, { requestId }) => c.chat.stop(requestId));
  handle('chat.live', (c, { conversationId }) => c.chat.live(conversationId));
  handle('trace.get', async (c, { messageId }) => (await c.db.promptTraces.get(messageId))?.trace ?? null);

  handle('memory.list', (c, query) => c.memoryAdmin.list(query));
  handle('memory.history', (c, query) => c.memoryAdmin.history(query ?? {}));
  handle('memory.add', (c, data) => c.memoryAdmin.add(data));
  handle('memory.update', (c, data) => c.memoryAdmin.update(data));
  handle('memory.delete', (c, { id }) => c.memoryAdmin.delete(id));
  handle('memory.export', (c) => c.exportToFile());
  handle('memory.import', (c, { fileName }) => c.importFile(fileName));
  handle('memory.importNotice', (c) => c.importNotice());
  handle('memory.eraseAll', (c) => c.eraseAll());

  handle('settings.get', (c) => c.settings.get());
  handle('settings.set', (c, patch) => c.updateSettings(patch));
  handle('jobs.stats', (c) => c.jobs.stats());
  handle('jobs.retryFailed', (c) => c.jobs.retryFailed());

  return () => removers.forEach((remove) => remove());
}
