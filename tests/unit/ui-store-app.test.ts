/**
 * The small UI stores (notices, settings, jobs) and the composition root (src/ui/state/app.svelte.ts)
 * against a fake messaging api (tests/helpers/fake-api.ts; the core cannot run behind the panel's
 * messaging in Node). i18n, notices and every store are the real ones.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_STRATEGY } from '../../src/model/strategies';
import type { EngineStatus } from '../../src/model/engine';
import type { JobStats } from '../../src/model/jobs';
import type { Settings } from '../../src/model/settings';
import { language } from '../../src/ui/i18n/index.svelte';
import { AppState } from '../../src/ui/state/app.svelte';
import { createJobsStore } from '../../src/ui/state/jobs.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createSettingsStore } from '../../src/ui/state/settings.svelte';
import { STORAGE_FULL_CODE } from '../../src/db/errors';
import { createFakeApi, settingsFixture } from '../helpers/fake-api';

const settings = (locale: Settings['locale']): Settings => settingsFixture({ locale });
const jobs = { pending: 0, running: 0, failed: 2, done: 5 } as never;

afterEach(() => vi.useRealTimers());

describe('notices store', () => {
  it('infos go away after 6 s, errors stay until dismissed; a full disk is said in words', () => {
    vi.useFakeTimers();
    const notices = createNoticesStore();
    notices.notify('info', 'Saved');
    notices.fail('errors.settingsFailed', Object.assign(new Error('QuotaExceededError'), { domain: 'storage', code: STORAGE_FULL_CODE }));
    vi.advanceTimersByTime(5_999);
    expect(notices.list).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(notices.list.map((n) => [n.kind, n.text, n.detail])).toEqual([
      [
        'error',
        'Could not save the settings:',
        'Storage is full: nothing of this change was saved. Free some disk space (or delete old conversations or model files) and try again.',
      ],
    ]);
    notices.dismiss(notices.list[0]!.id);
    expect(notices.list).toEqual([]);
  });

  it('an error shown in place is not toasted too: engine errors hide while their box is on screen (issue 12 item 12)', () => {
    const notices = createNoticesStore();
    notices.notify('error', 'The model could not be loaded', 'bad file', 'engine');
    notices.notify('error', 'Could not save the settings:');
    notices.notify('info', 'Loading…', undefined, 'engine');
    expect(notices.visible(new Set()).map((n) => n.text)).toEqual(['The model could not be loaded', 'Could not save the settings:', 'Loading…']);
    expect(notices.visible(new Set(['engine'] as const)).map((n) => n.text)).toEqual(['Could not save the settings:', 'Loading…']);
    expect(notices.list).toHaveLength(3);
  });
});

describe('settings store', () => {
  it('saving applies the new language; a failure keeps the old values with a notice', async () => {
    const api = createFakeApi();
    const notices = createNoticesStore();
    const store = createSettingsStore({ ...api, notices });
    await store.show(settings('en'));
    api.on('settings.set', (patch) => ({ ...settings('en'), ...patch }));
    expect(await store.save({ locale: 'zh_CN' })).toBe(true);
    expect(language()).toBe('zh-CN');
    api.on('settings.set', () => {
      throw new Error('invalid memoryTopK');
    });
    expect(await store.save({ memoryTopK: -1 })).toBe(false);
    expect(store.value?.memoryTopK).toBe(5);
    expect(notices.list.map((n) => n.detail)).toEqual(['invalid memoryTopK']);
    await store.show(settings('en'));
  });

  it('follows settings saved in another window, until unsubscribed', () => {
    const api = createFakeApi();
    const store = createSettingsStore({ ...api, notices: createNoticesStore() });
    const stop = store.listen();
    api.emit('event.settings', { ...settings('en'), memoryTopK: 9 });
    expect(store.value?.memoryTopK).toBe(9);
    stop();
    expect(api.listeners('event.settings')).toBe(0);
  });
});

describe('jobs store', () => {
  it('retry says how many were queued again and re-reads the counts', async () => {
    const api = createFakeApi();
    const notices = createNoticesStore();
    const store = createJobsStore({ ...api, notices });
    api.on('jobs.retryFailed', () => 2);
    api.on('jobs.stats', () => jobs);
    await store.retryFailed();
    expect(notices.list.map((n) => [n.kind, n.text])).toEqual([['info', '2 jobs queued again.']]);
    expect(store.stats).toBe(jobs);
  });

  it('failures and unusable-reply rejections are told apart, and dismissing hides them until a newer one (issue 12 item 10)', () => {
    const memory = new Map<string, string>();
    const prefs = {
      getItem: (k: string) => memory.get(k) ?? null,
      setItem: (k: string, v: string) => void memory.set(k, v),
      removeItem: (k: string) => void memory.delete(k),
    };
    const store = createJobsStore({ ...createFakeApi(), notices: createNoticesStore(), prefs });
    const outcome = (type: string, at: number, code?: 'extraction_failed' | 'summary_rejected') => ({
      type,
      lastError: code ?? 'disk unplugged',
      ...(code ? { lastErrorInfo: { domain: 'jobs' as const, code, params: {} } } : {}),
      at,
    });
    store.stats = {
      ...(jobs as object),
      failed: 1,
      recentFailures: [outcome('ltm.reembed', 300)],
      rejected: 7,
      recentRejections: [outcome('ltm.extract', 500, 'extraction_failed'), outcome('short-term.fold', 400, 'summary_rejected')],
    } as never;
    expect(store.notes.failed.count).toBe(1);
    expect(store.notes.rejected.count).toBe(7); // the core's total, not the 2 listed
    expect(store.notes.rejected.items.map((r) => r.label)).toEqual(['jobs.types.ltm_extract', 'jobs.types.short-term_fold']);
    store.dismissNotes();
    expect([store.dismissedAt, memory.get('recall.ui.v1.jobNotesDismissedAt')]).toEqual([500, '"500"']);
    expect([store.notes.failed.count, store.notes.rejected.count, store.notes.newestAt]).toEqual([0, 0, null]);
    // A newer rejection shows again (alone); a panel opened later remembers the dismissal.
    const before = store.stats as unknown as JobStats;
    store.stats = { ...before, rejected: 8, recentRejections: [outcome('ltm.extract', 900, 'extraction_failed'), ...before.recentRejections] };
    expect([store.notes.failed.count, store.notes.rejected.count]).toEqual([0, 1]);
    expect(createJobsStore({ ...createFakeApi(), notices: createNoticesStore(), prefs }).dismissedAt).toBe(500);
  });
});

describe('composition root', () => {
  const engine: EngineStatus = {
    chat: { kind: null, modelId: null, state: 'idle', progress: null, contextWindow: null, error: null, errorCode: null },
    embedder: { modelId: 'e5', dimension: 384, state: 'ready', progress: null, error: null, errorCode: null },
    gpu: { available: false, shaderF16: false, adapter: null },
  };

  it('loadAll fills every store and opens the latest conversation', async () => {
    const api = createFakeApi();
    api.on('engine.status', () => engine);
    api.on('engine.catalog', () => ({ webllm: [], wllama: [], localFiles: [], defaultWebllmModel: '' }));
    api.on('settings.get', () => settings('en'));
    api.on('profiles.list', () => ({ profiles: [{ id: 'default', name: '', createdAt: 0 }], activeId: 'default' }));
    api.on('conversations.list', () => [{ id: 'c2', title: 'Latest', updatedAt: 2, messageCount: 0 }]);
    api.on('jobs.stats', () => jobs);
    api.on('conversations.get', ({ id }) => ({ id, title: 'Latest', namespace: 'default', strategy: DEFAULT_STRATEGY, createdAt: 1, updatedAt: 2 }));
    api.on('messages.list', () => []);
    api.on('chat.live', () => null);
    const app = new AppState(api);
    await app.loadAll();
    expect(app.connection.state).toBe('ready');
    expect(app.engine.status).toBe(engine);
    expect(app.settings.value?.locale).toBe('en');
    expect(app.jobs.stats).toBe(jobs);
    expect(app.conversations.current?.id).toBe('c2');
    expect(app.notices.list).toEqual([]);
  });

  it('a first load that fails shows the retry screen and a notice', async () => {
    const api = createFakeApi();
    api.on('profiles.list', () => ({ profiles: [{ id: 'default', name: '', createdAt: 0 }], activeId: 'default' }));
    api.on('engine.status', () => {
      throw new Error('core not answering');
    });
    const app = new AppState(api);
    await app.loadAll();
    expect(app.connection).toMatchObject({ state: 'failed', lastError: 'core not answering' });
    expect(app.notices.list.map((n) => n.text)).toEqual(['Could not load data:']);
  });

  it('erasing everything from the memory manager closes the open conversation', async () => {
    const api = createFakeApi();
    api.on('memory.eraseAll', () => undefined);
    api.on('profiles.list', () => ({ profiles: [{ id: 'default', name: '', createdAt: 0 }], activeId: 'default' }));
    api.on('conversations.list', () => []);
    api.on('jobs.stats', () => jobs);
    api.on('memory.list', () => []);
    const app = new AppState(api);
    app.conversations.current = { id: 'c1', title: '', namespace: 'default', strategy: DEFAULT_STRATEGY, createdAt: 1, updatedAt: 1 };
    expect(await app.createMemoryStore().eraseAll()).toBe(true);
    expect(app.conversations.current).toBeNull();
    expect(app.jobs.stats).toBe(jobs);
  });

  it('erasing everything shows no "conversation no longer exists" error, though the core announces the erase before it answers', async () => {
    const api = createFakeApi();
    api.on('profiles.list', () => ({ profiles: [{ id: 'default', name: '', createdAt: 0 }], activeId: 'default' }));
    api.on('conversations.list', () => []);
    api.on('jobs.stats', () => jobs);
    api.on('memory.list', () => []);
    api.on('conversations.get', () => null);
    api.on('messages.list', () => []);
    api.on('chat.live', () => null);
    const app = new AppState(api);
    app.conversations.list = [{ id: 'c1', title: 'Open', updatedAt: 2, messageCount: 2 }];
    app.conversations.current = { id: 'c1', title: 'Open', namespace: 'default', strategy: DEFAULT_STRATEGY, createdAt: 1, updatedAt: 2 };
    let reread: Promise<void> = Promise.resolve();
    api.on('memory.eraseAll', async () => {
      // The real core erases, broadcasts `event.conversations { conversationId: null }`, then
      // answers: the panel re-reads the open conversation before the reply (what its listener
      // does on that event, started here directly so the test awaits it).
      reread = app.conversations.reloadCurrent();
      await reread;
    });
    expect(await app.createMemoryStore().eraseAll()).toBe(true);
    await reread;
    expect(app.conversations.current).toBeNull();
    expect(app.notices.list.map((n) => [n.kind, n.text])).toEqual([['info', 'Everything was erased.']]);
  });

  it('a failed erase leaves a later disappearance reported again', async () => {
    const api = createFakeApi();
    api.on('memory.eraseAll', () => {
      throw new Error('locked');
    });
    api.on('conversations.get', () => null);
    api.on('messages.list', () => []);
    api.on('profiles.list', () => ({ profiles: [{ id: 'default', name: '', createdAt: 0 }], activeId: 'default' }));
    api.on('conversations.list', () => []);
    const app = new AppState(api);
    app.conversations.current = { id: 'c1', title: '', namespace: 'default', strategy: DEFAULT_STRATEGY, createdAt: 1, updatedAt: 1 };
    expect(await app.createMemoryStore().eraseAll()).toBe(false);
    await app.conversations.select('c1');
    expect(app.notices.list.map((n) => n.kind)).toEqual(['error', 'error']);
  });
});
