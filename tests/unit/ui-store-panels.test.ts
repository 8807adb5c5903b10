/**
 * The per-component UI stores (src/ui/state/): the settings form, the conversation drawer's
 * rename and delete, the context view's trace, and the Models tab's engine picker, against a fake
 * messaging api (tests/helpers/fake-api.ts: the core cannot run behind the panel's messaging in
 * Node). The settings, conversations, engine and notices stores under them are the real ones.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConversationRecord } from '../../src/model/records';
import { DEFAULT_STRATEGY } from '../../src/model/strategies';
import type { EngineStatus, ModelOption } from '../../src/model/engine';
import type { ModelCatalog } from '../../src/model/catalog';
import type { Settings } from '../../src/model/settings';
import type { PromptTrace } from '../../src/model/trace';
import { createContextViewStore } from '../../src/ui/state/context-view.svelte';
import { SEARCH_DEBOUNCE_MS, createConversationDrawerStore } from '../../src/ui/state/conversation-drawer.svelte';
import { createConversationsStore } from '../../src/ui/state/conversations.svelte';
import { createEnginePickerStore } from '../../src/ui/state/engine-picker.svelte';
import { createEngineStore } from '../../src/ui/state/engine.svelte';
import { createMessageSourcesStore } from '../../src/ui/state/message-sources.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { SAVED_MARK_MS, createSettingsFormStore } from '../../src/ui/state/settings-form.svelte';
import { createSettingsStore } from '../../src/ui/state/settings.svelte';
import { createViewStore } from '../../src/ui/state/view.svelte';
import { createFakeApi, deferred, settingsFixture } from '../helpers/fake-api';
import { DEFAULT_NAMESPACE } from '../../src/model/memory';

const SETTINGS = settingsFixture({ preferredEngine: 'webllm', episodicRetentionDays: 30 });
const conv = (id: string, title = ''): ConversationRecord => ({ id, title, namespace: 'default', strategy: DEFAULT_STRATEGY, createdAt: 1, updatedAt: 1 });
const trace = (modelId: string) => ({ modelId }) as unknown as PromptTrace;

afterEach(() => vi.useRealTimers());

describe('settings form store', () => {
  async function setup(stored: Settings = SETTINGS) {
    const api = createFakeApi();
    const notices = createNoticesStore();
    const settings = createSettingsStore({ ...api, notices });
    api.on('settings.set', (patch) => ({ ...settings.value!, ...patch }));
    const form = createSettingsFormStore({ settings });
    form.fill();
    expect(form.form).toBeNull(); // nothing read yet
    await settings.show(stored);
    form.fill();
    return { api, notices, settings, form };
  }

  it('starts from the stored settings and keeps what is typed when filled again', async () => {
    const { form, settings } = await setup({ ...SETTINGS, episodicRetentionDays: null });
    expect(form.form).toEqual({ maxAnswerTokens: '512', memoryTopK: '5', keepForever: true, episodicRetentionDays: '30', locale: 'en' });
    form.form!.memoryTopK = '7';
    await settings.show({ ...SETTINGS, memoryTopK: 9 });
    form.fill();
    expect(form.form!.memoryTopK).toBe('7');
  });

  it('an invalid number shows its error and sends nothing; editing clears it; a valid one saves once with the "Saved" mark for 2.5 s', async () => {
    vi.useFakeTimers();
    const { api, form, settings } = await setup();
    form.form!.maxAnswerTokens = '15';
    await form.commit('maxAnswerTokens');
    expect(form.errors).toEqual({ maxAnswerTokens: 'out_of_range' });
    form.form!.memoryTopK = '2.5';
    await form.commit('memoryTopK');
    expect(form.errors.memoryTopK).toBe('not_integer');
    form.clearError('memoryTopK');
    expect(form.errors.memoryTopK).toBeUndefined();
    expect(api.callsOf('settings.set')).toEqual([]);

    form.form!.maxAnswerTokens = '２０４８'; // full-width digits from a Chinese input method
    await form.commit('maxAnswerTokens');
    expect(form.errors.maxAnswerTokens).toBeUndefined();
    expect(api.callsOf('settings.set')).toEqual([{ maxAnswerTokens: 2048 }]);
    expect(settings.value?.maxAnswerTokens).toBe(2048);
    expect(form.savedControl).toBe('maxAnswerTokens');
    vi.advanceTimersByTime(SAVED_MARK_MS - 1);
    expect(form.savedControl).toBe('maxAnswerTokens');
    vi.advanceTimersByTime(1);
    expect(form.savedControl).toBeNull();
  });

  it('an unchanged value is not saved again, and Enter with the change event after it saves once', async () => {
    const { api, form } = await setup();
    await form.commit('memoryTopK'); // still 5
    expect(api.callsOf('settings.set')).toEqual([]);
    const reply = deferred<Settings>();
    api.on('settings.set', () => reply.promise);
    form.form!.memoryTopK = '8';
    const enter = form.commit('memoryTopK');
    const change = form.commit('memoryTopK'); // while the first save is in flight
    reply.resolve({ ...SETTINGS, memoryTopK: 8 });
    await Promise.all([enter, change]);
    expect(api.callsOf('settings.set')).toEqual([{ memoryTopK: 8 }]);
  });

  it('retention: "keep forever" saves null whatever the days say; off saves the days; language and default strategy save at once', async () => {
    const { api, form } = await setup();
    form.form!.episodicRetentionDays = 'abc';
    await form.setKeepForever(true);
    await form.setKeepForever(false);
    expect(form.errors.episodicRetentionDays).toBe('not_integer');
    form.form!.episodicRetentionDays = '90';
    await form.commit('retention');
    await form.setLocale('zh_CN');
    await form.setDefaultStrategy({ kind: 'buffer-window', k: 4 });
    expect(api.callsOf('settings.set')).toEqual([
      { episodicRetentionDays: null },
      { episodicRetentionDays: 90 },
      { locale: 'zh_CN' },
      { defaultStrategy: { kind: 'buffer-window', k: 4 } },
    ]);
    expect(form.savedControl).toBe('defaultStrategy');
    await form.setLocale('en');
  });

  it('a save the core refuses shows no "Saved" mark and becomes a notice', async () => {
    const { api, form, notices } = await setup();
    api.on('settings.set', () => {
      throw new Error('disk full');
    });
    form.form!.memoryTopK = '9';
    await form.commit('memoryTopK');
    expect(form.savedControl).toBeNull();
    expect(notices.list.map((n) => n.detail)).toEqual(['disk full']);
  });
});

describe('conversation drawer store', () => {
  function setup() {
    const api = createFakeApi();
    const notices = createNoticesStore();
    const conversations = createConversationsStore({ ...api, notices, view: createViewStore(), namespace: () => DEFAULT_NAMESPACE });
    api.on('conversations.list', () => []);
    api.on('conversations.update', ({ id, title }) => conv(id, title));
    api.on('conversations.delete', () => undefined);
    return { api, notices, conversations, drawer: createConversationDrawerStore({ conversations }) };
  }

  it('renames with the trimmed title and closes the field; an empty title saves nothing and keeps it open', async () => {
    const { api, conversations, drawer } = setup();
    conversations.current = conv('c1', 'Old');
    drawer.startRename('c1', 'Old');
    expect([drawer.editingId, drawer.editTitle, drawer.canSaveRename]).toEqual(['c1', 'Old', true]);
    drawer.editTitle = '   ';
    expect(drawer.canSaveRename).toBe(false);
    await drawer.saveRename();
    expect(drawer.editingId).toBe('c1');
    drawer.editTitle = '  Trip to Hangzhou ';
    await drawer.saveRename();
    expect(drawer.editingId).toBeNull();
    expect(api.callsOf('conversations.update')).toEqual([{ id: 'c1', title: 'Trip to Hangzhou' }]);
    expect(conversations.current?.title).toBe('Trip to Hangzhou');
  });

  it('one entry at a time: asking to delete closes the rename, renaming closes the question; cancel returns the id; yes deletes', async () => {
    const { api, drawer } = setup();
    drawer.startRename('c1', 'A');
    drawer.askDelete('c2');
    expect([drawer.editingId, drawer.confirmingId]).toEqual([null, 'c2']);
    drawer.startRename('c1', 'A');
    expect([drawer.editingId, drawer.confirmingId]).toEqual(['c1', null]);
    drawer.cancelRename();
    drawer.askDelete('c2');
    expect(drawer.cancelDelete()).toBe('c2');
    expect(drawer.confirmingId).toBeNull();
    drawer.askDelete('c3');
    await drawer.confirmDelete('c3');
    expect(drawer.confirmingId).toBeNull();
    expect(api.callsOf('conversations.delete')).toEqual([{ id: 'c3' }]);
    drawer.startRename('c1', 'A');
    drawer.reset();
    expect([drawer.editingId, drawer.confirmingId]).toEqual([null, null]);
  });

  it('searches SEARCH_DEBOUNCE_MS after the last keystroke, once; a blank field lists everything again; an older reply is dropped', async () => {
    vi.useFakeTimers();
    const { api, drawer } = setup();
    const hit = (id: string, title: string) => ({ id, title, updatedAt: 1, messageCount: 2, messageId: `${id}-m`, snippet: `about ${title}` });
    api.on('conversations.search', ({ query }) => (query === 'hang' ? [hit('c1', 'Hangzhou')] : []));
    drawer.setQuery('h');
    drawer.setQuery('ha');
    drawer.setQuery('hang');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS - 1);
    expect(api.callsOf('conversations.search')).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(api.callsOf('conversations.search')).toEqual([{ query: 'hang', namespace: 'default' }]);
    expect(drawer.results).toEqual([hit('c1', 'Hangzhou')]);
    drawer.setQuery('  ');
    expect(drawer.results).toBeNull();
    // A reply for a query the user has typed past is not shown.
    const slow = deferred<ReturnType<typeof hit>[]>();
    api.on('conversations.search', () => slow.promise);
    drawer.setQuery('tok');
    const pending = drawer.searchNow();
    drawer.setQuery('');
    slow.resolve([hit('c2', 'Tokyo')]);
    await pending;
    expect(drawer.results).toBeNull();
    expect(api.callsOf('conversations.search')).toHaveLength(2);
  });

  it('renaming or deleting a found conversation updates the results; closing the drawer clears the search', async () => {
    const { api, drawer } = setup();
    api.on('conversations.search', () => [
      { id: 'c1', title: 'A', updatedAt: 1, messageCount: 1, messageId: null, snippet: null },
      { id: 'c2', title: 'B', updatedAt: 1, messageCount: 1, messageId: 'm', snippet: 'b' },
    ]);
    drawer.setQuery('x');
    await drawer.searchNow();
    drawer.startRename('c1', 'A');
    drawer.editTitle = 'Renamed';
    await drawer.saveRename();
    await drawer.confirmDelete('c2');
    expect(drawer.results?.map((h) => [h.id, h.title])).toEqual([['c1', 'Renamed']]);
    drawer.reset();
    expect([drawer.query, drawer.results]).toEqual(['', null]);
  });

  it('a failed search becomes a notice and finds nothing', async () => {
    const { api, drawer, notices } = setup();
    api.on('conversations.search', () => {
      throw new Error('disk gone');
    });
    drawer.setQuery('x');
    await drawer.searchNow();
    expect(drawer.results).toEqual([]);
    expect(notices.list.map((n) => n.detail)).toEqual(['disk gone']);
  });

  it('a failed rename becomes a notice', async () => {
    const { api, drawer, notices } = setup();
    api.on('conversations.update', () => {
      throw new Error('gone');
    });
    drawer.startRename('c1', 'x');
    await drawer.saveRename();
    expect(notices.list.map((n) => n.detail)).toEqual(['gone']);
  });
});

describe('message sources store (a memory\'s "From …" line)', () => {
  const snippet = (id: string, conversationId: string, role: 'user' | 'assistant') => ({ id, conversationId, role, snippet: `text of ${id}`, createdAt: 5 });

  it('one request for every memory that asks in the same tick; the user message is the source; a gone message says so', async () => {
    const api = createFakeApi();
    const sources = createMessageSourcesStore(api);
    api.on('messages.snippets', ({ ids }) =>
      ids.filter((id) => id !== 'gone').map((id) => snippet(id, id.startsWith('a') ? 'c1' : 'c2', id.endsWith('u') ? 'user' : 'assistant')),
    );
    expect(sources.sourceOf(['a-u', 'a-r'])).toBeUndefined();
    await Promise.all([sources.load(['a-r', 'a-u']), sources.load(['b-r']), sources.load(['gone'])]);
    expect(api.callsOf('messages.snippets')).toEqual([{ ids: ['a-r', 'a-u', 'b-r', 'gone'] }]);
    expect(sources.sourceOf(['a-r', 'a-u'])?.id).toBe('a-u');
    expect(sources.sourceOf(['b-r'])?.id).toBe('b-r');
    expect(sources.sourceOf(['gone'])).toBeNull();
    expect(sources.sourceOf([])).toBeNull();
    // Already read: no request.
    await sources.load(['a-u', 'b-r']);
    expect(api.callsOf('messages.snippets')).toHaveLength(1);
  });

  it("a change to a conversation drops what was read for it (and every 'gone'); a failed read leaves them unread", async () => {
    const api = createFakeApi();
    const sources = createMessageSourcesStore(api);
    const stop = sources.listen();
    api.on('messages.snippets', ({ ids }) => ids.filter((id) => id !== 'gone').map((id) => snippet(id, id.startsWith('a') ? 'c1' : 'c2', 'user')));
    await sources.load(['a1', 'b1', 'gone']);
    api.emit('event.conversations', { conversationId: 'c1' });
    expect(Object.keys(sources.byId)).toEqual(['b1']);
    api.emit('event.conversations', { conversationId: null });
    expect(sources.byId).toEqual({});
    api.on('messages.snippets', () => {
      throw new Error('core restarting');
    });
    await sources.load(['a1']);
    expect(sources.sourceOf(['a1'])).toBeUndefined();
    stop();
  });
});

describe('context view store', () => {
  function setup() {
    const api = createFakeApi();
    const conversations = createConversationsStore({ ...api, notices: createNoticesStore(), view: createViewStore(), namespace: () => DEFAULT_NAMESPACE });
    return { api, conversations, view: createContextViewStore({ conversations }) };
  }

  it("the open conversation's last trace is shown without a request; another is read from the core", async () => {
    const { api, conversations, view } = setup();
    conversations.lastTrace = { messageId: 'a2', trace: trace('cached') };
    api.on('trace.get', () => trace('read'));
    await view.open('a2');
    expect([view.loading, view.trace?.modelId]).toEqual([false, 'cached']);
    expect(api.callsOf('trace.get')).toEqual([]);
    await view.open('a1');
    expect([view.loading, view.trace?.modelId, view.loadError]).toEqual([false, 'read', null]);
    expect(api.callsOf('trace.get')).toEqual([{ messageId: 'a1' }]);
  });

  it('a failed read says why; a reply for a message no longer open is dropped', async () => {
    const { api, view } = setup();
    api.on('trace.get', () => {
      throw new Error('core restarted');
    });
    await view.open('a1');
    expect([view.loading, view.loadError]).toEqual([false, 'core restarted']);

    const slow = deferred<PromptTrace | null>();
    api.on('trace.get', ({ messageId }) => (messageId === 'a1' ? slow.promise : trace('second')));
    const first = view.open('a1');
    await view.open('a2');
    slow.resolve(trace('first'));
    await first;
    expect([view.loading, view.trace?.modelId, view.loadError]).toEqual([false, 'second', null]);
  });
});

describe('engine picker store', () => {
  const option = (id: string, recommended = false): ModelOption => ({ id, label: id, sizeBytes: 1, contextWindow: 4096, languages: ['en'], recommended });
  const status = (gpu: boolean, chat: Partial<EngineStatus['chat']> = {}): EngineStatus => ({
    chat: { kind: null, modelId: null, state: 'idle', progress: null, contextWindow: null, error: null, errorCode: null, ...chat },
    embedder: { modelId: 'e5', dimension: 384, state: 'ready', progress: null, error: null, errorCode: null },
    gpu: { available: gpu, shaderF16: gpu, adapter: null },
  });
  const CATALOG: ModelCatalog = {
    webllm: [option('qwen-0.5b'), option('qwen-1.5b')],
    wllama: [option('tiny'), option('small', true)],
    localFiles: [],
    defaultWebllmModel: 'qwen-1.5b',
  };

  async function setup(options: { status: EngineStatus; settings?: Partial<Settings>; catalog?: ModelCatalog }) {
    const api = createFakeApi();
    const notices = createNoticesStore();
    const engine = createEngineStore({ ...api, notices });
    const settings = createSettingsStore({ ...api, notices });
    await settings.show({ ...SETTINGS, ...options.settings });
    engine.status = options.status;
    const picker = createEnginePickerStore({ engine, settings });
    engine.catalog = options.catalog ?? CATALOG;
    picker.sync();
    return { api, engine, picker };
  }

  it('opens on the loaded engine, else the saved preference; without WebGPU it moves to the CPU until the user picks a side', async () => {
    expect((await setup({ status: status(true, { kind: 'wllama' }) })).picker.mode).toBe('cpu');
    expect((await setup({ status: status(true), settings: { preferredEngine: 'wllama' } })).picker.mode).toBe('cpu');
    expect((await setup({ status: status(true) })).picker.mode).toBe('webgpu');
    expect((await setup({ status: status(true), catalog: { ...CATALOG, webllm: [] } })).picker.mode).toBe('cpu'); // no GPU model ships
    expect((await setup({ status: status(false, { kind: 'webllm' }) })).picker.mode).toBe('webgpu'); // a WebLLM model is loaded

    const { picker } = await setup({ status: status(false) });
    expect(picker.mode).toBe('cpu');
    picker.pick('webgpu');
    picker.sync();
    expect(picker.mode).toBe('webgpu'); // to read why it cannot run
    picker.useCpu();
    expect(picker.mode).toBe('cpu');
  });

  it('pickers start on the saved model when still offered, else the default / the recommended GGUF; loads send the choice', async () => {
    const fresh = await setup({ status: status(true), settings: { webllmModelId: 'gone-model' } });
    expect([fresh.picker.webllmChoice, fresh.picker.wllamaChoice]).toEqual(['qwen-1.5b', 'small']);
    const saved = await setup({ status: status(true), settings: { webllmModelId: 'qwen-0.5b', wllamaSource: { type: 'catalog', id: 'tiny' } } });
    expect([saved.picker.webllmChoice, saved.picker.wllamaChoice]).toEqual(['qwen-0.5b', 'tiny']);

    const { api, picker } = saved;
    api.on('engine.loadWebLLM', ({ modelId }) => status(true, { kind: 'webllm', modelId, state: 'ready' }));
    api.on('engine.loadWllama', ({ source }) =>
      status(true, { kind: 'wllama', modelId: source.type === 'opfs' ? source.fileName : source.id, state: 'ready' }),
    );
    expect(await picker.loadWebllm()).toBe(true);
    expect(picker.isLoaded('webllm', 'qwen-0.5b')).toBe(true);
    expect(picker.isLoaded('wllama', 'qwen-0.5b')).toBe(false);
    await picker.loadWllama();
    await picker.loadWllama('mine.gguf');
    expect(api.callsOf('engine.loadWllama')).toEqual([{ source: { type: 'catalog', id: 'tiny' } }, { source: { type: 'opfs', fileName: 'mine.gguf' } }]);
    expect(picker.isLoaded('wllama', 'mine.gguf')).toBe(true);
  });

  it('busy while a load runs or a .gguf is copied; copy progress in whole percent; delete after asking', async () => {
    const { api, engine, picker } = await setup({ status: status(true) });
    expect(picker.busy).toBe(false);
    const load = deferred<EngineStatus>();
    api.on('engine.loadWebLLM', () => load.promise);
    const loading = picker.loadWebllm();
    expect(picker.busy).toBe(true);
    load.resolve(status(true, { kind: 'webllm', modelId: 'qwen-1.5b', state: 'ready' }));
    await loading;
    expect(picker.busy).toBe(false);
    engine.fileImport = { name: 'm.gguf', stage: 'copying', writtenBytes: 1, totalBytes: 3 };
    expect([picker.busy, picker.importPercent]).toEqual([true, 33]);
    engine.fileImport = null;

    api.on('models.deleteLocal', () => undefined);
    api.on('engine.catalog', () => CATALOG);
    picker.confirmDelete = 'old.gguf';
    await picker.deleteLocal('old.gguf');
    expect(picker.confirmDelete).toBeNull();
    expect(api.callsOf('models.deleteLocal')).toEqual([{ fileName: 'old.gguf' }]);
  });
});
