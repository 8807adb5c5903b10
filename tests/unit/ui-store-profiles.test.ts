/**
 * Profiles store (src/ui/state/profiles.svelte.ts) and the active namespace flowing from it
 * through the panel (AppState): every conversation and memory request names the active profile,
 * and a switch re-lists both. Against the fake messaging api (tests/helpers/fake-api.ts): the
 * core cannot run behind the panel's messaging in Node (its own rules: core-profiles.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ProfilesState } from '../../src/model/profiles';
import type { ProfileRecord } from '../../src/model/records';
import { DEFAULT_STRATEGY } from '../../src/model/strategies';
import { AppState } from '../../src/ui/state/app.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createProfilesStore } from '../../src/ui/state/profiles.svelte';
import { MemoryError } from '../../src/model/errors';
import { createFakeApi } from '../helpers/fake-api';

const DEFAULT: ProfileRecord = { id: 'default', name: '', createdAt: 0 };
const WORK: ProfileRecord = { id: 'profile-w', name: 'Work', createdAt: 5 };

/** A fake core keeping profiles and the active id, as `src/core/profiles.ts` answers. */
function fakeProfiles(api: ReturnType<typeof createFakeApi>, initial: ProfilesState) {
  const state = structuredClone(initial);
  api.on('profiles.list', () => structuredClone(state));
  api.on('profiles.switch', ({ id }) => {
    state.activeId = id;
    return structuredClone(state);
  });
  api.on('profiles.create', ({ name }) => {
    if (state.profiles.some((p) => p.name.toLowerCase() === name.toLowerCase())) throw new MemoryError('profile_name_taken', 'Another profile has this name');
    const created = { id: `profile-${state.profiles.length}`, name, createdAt: 10 };
    state.profiles.push(created);
    return created;
  });
  api.on('profiles.rename', ({ id, name }) => {
    const p = state.profiles.find((x) => x.id === id)!;
    p.name = name;
    return { ...p };
  });
  api.on('profiles.delete', ({ id }) => {
    state.profiles = state.profiles.filter((p) => p.id !== id);
    if (state.activeId === id) state.activeId = 'default';
    return { removed: { profiles: 1 }, activeId: state.activeId };
  });
  return state;
}

describe('profiles store', () => {
  it('switches, creates (and switches to it), renames and deletes, telling the panel when the active profile changed', async () => {
    const api = createFakeApi();
    fakeProfiles(api, { profiles: [DEFAULT, WORK], activeId: 'default' });
    const notices = createNoticesStore();
    let switched = 0;
    const profiles = createProfilesStore({ ...api, notices, onSwitched: async () => void (switched += 1) });
    expect(profiles.namespace).toBe('default');
    await profiles.load();
    expect(profiles.profiles.map((p) => p.id)).toEqual(['default', 'profile-w']);

    await profiles.switchTo('profile-w');
    expect([profiles.namespace, profiles.active.name, switched]).toEqual(['profile-w', 'Work', 1]);
    await profiles.switchTo('profile-w'); // already active: nothing sent
    expect([api.callsOf('profiles.switch').length, switched]).toEqual([1, 1]);

    profiles.newName = '  家庭  ';
    expect(await profiles.create()).toBe(true);
    expect([profiles.active.name, profiles.newName, switched]).toEqual(['家庭', '', 2]);
    expect(api.callsOf('profiles.create')).toEqual([{ name: '家庭' }]);

    // A taken name: a notice, the typed name stays, nothing switches.
    profiles.newName = 'work';
    expect(await profiles.create()).toBe(false);
    expect([profiles.newName, profiles.active.name, switched]).toEqual(['work', '家庭', 2]);
    expect(notices.list.map((n) => [n.kind, n.text])).toEqual([['error', 'Could not change the profiles:']]);

    profiles.startRename('profile-w', 'Work');
    profiles.renameText = 'Office';
    expect(await profiles.saveRename()).toBe(true);
    expect([profiles.renamingId, profiles.profiles.find((p) => p.id === 'profile-w')!.name]).toEqual([null, 'Office']);

    // The default profile never asks to be deleted; deleting the active one makes the default active.
    profiles.askDelete('default');
    expect(profiles.confirmingDeleteId).toBeNull();
    const active = profiles.activeId;
    profiles.askDelete(active);
    expect(await profiles.confirmDelete()).toBe(true);
    expect(api.callsOf('profiles.delete')).toEqual([{ id: active }]);
    expect([profiles.activeId, profiles.profiles.map((p) => p.id), switched]).toEqual(['default', ['default', 'profile-w'], 3]);
    expect(notices.list.at(-1)).toMatchObject({ kind: 'info', text: 'The profile and everything in it were deleted.' });
    // Deleting another (not active) profile does not switch.
    profiles.askDelete('profile-w');
    await profiles.confirmDelete();
    expect(switched).toBe(3);
  });

  it('follows a change made in another panel (event.profiles): a new active profile is followed once, a rename only shown', () => {
    const api = createFakeApi();
    let switched = 0;
    const profiles = createProfilesStore({ ...api, notices: createNoticesStore(), onSwitched: async () => void (switched += 1) });
    const stop = profiles.listen();
    api.emit('event.profiles', { profiles: [DEFAULT, WORK], activeId: 'default' });
    expect([profiles.profiles.length, switched]).toEqual([2, 0]);
    api.emit('event.profiles', { profiles: [DEFAULT, WORK], activeId: 'profile-w' });
    api.emit('event.profiles', { profiles: [DEFAULT, { ...WORK, name: 'Office' }], activeId: 'profile-w' });
    expect([profiles.namespace, profiles.active.name, switched]).toEqual(['profile-w', 'Office', 1]);
    stop();
    expect(api.listeners('event.profiles')).toBe(0);
  });
});

describe('the active namespace through the panel', () => {
  it('names the active profile in every conversation and memory request, and a switch re-lists both', async () => {
    const api = createFakeApi();
    fakeProfiles(api, { profiles: [DEFAULT, WORK], activeId: 'profile-w' });
    const lists: Record<string, { id: string; title: string; updatedAt: number; messageCount: number }[]> = {
      default: [{ id: 'c-home', title: 'Home', updatedAt: 2, messageCount: 0 }],
      'profile-w': [{ id: 'c-work', title: 'Work', updatedAt: 3, messageCount: 0 }],
    };
    api.on('engine.status', () => ({ chat: { state: 'idle' }, embedder: { state: 'ready' } }) as never);
    api.on('engine.catalog', () => ({ webllm: [], wllama: [], localFiles: [], defaultWebllmModel: '' }));
    api.on('settings.get', () => ({ locale: 'en', defaultStrategy: DEFAULT_STRATEGY }) as never);
    api.on('jobs.stats', () => ({ pending: 0, running: 0, failed: 0, done: 0 }) as never);
    api.on('conversations.list', (data) => lists[data!.namespace!] ?? []);
    api.on('conversations.search', () => []);
    api.on('conversations.create', (data) => ({ id: 'c-new', title: '', namespace: data.namespace!, strategy: DEFAULT_STRATEGY, createdAt: 9, updatedAt: 9 }));
    api.on('conversations.get', ({ id }) => ({
      id,
      title: id,
      namespace: id === 'c-home' ? 'default' : 'profile-w',
      strategy: DEFAULT_STRATEGY,
      createdAt: 1,
      updatedAt: 1,
    }));
    api.on('messages.list', () => []);
    api.on('chat.live', () => null);
    api.on('trace.get', () => null);
    api.on('memory.list', () => []);
    api.on('memory.add', (data) => ({ id: 'm1', ...data }) as never);
    const app = new AppState(api);
    await app.loadAll();
    // The first load reads the persisted active profile, then lists its conversations.
    expect(api.calls.findIndex((c) => c.type === 'profiles.list')).toBeLessThan(api.calls.findIndex((c) => c.type === 'conversations.list'));
    expect(api.callsOf('conversations.list')).toEqual([{ namespace: 'profile-w' }]);
    expect(app.conversations.current?.id).toBe('c-work');

    await app.conversations.search('plans');
    app.conversations.closeOpen();
    await app.conversations.createPending();
    const memory = app.createMemoryStore();
    await memory.load();
    memory.newText = 'Badge 4711';
    await memory.addNew();
    expect(api.callsOf('conversations.search')).toEqual([{ query: 'plans', namespace: 'profile-w' }]);
    expect(api.callsOf('conversations.create')).toEqual([{ namespace: 'profile-w' }]);
    expect(api.callsOf('memory.list').map((q) => q.namespace)).toEqual(['profile-w', 'profile-w']);
    expect(api.callsOf('memory.add').map((q) => q.namespace)).toEqual(['profile-w']);

    app.view.drawerOpen = true; // the picker is in the drawer: it stays open on the new profile's list
    await app.profiles.switchTo('default');
    expect(app.view.drawerOpen).toBe(true);
    expect(api.callsOf('conversations.list').at(-1)).toEqual({ namespace: 'default' });
    expect(app.conversations.list.map((c) => c.id)).toEqual(['c-home']);
    expect(app.conversations.current?.id).toBe('c-home');
    await memory.load();
    expect(api.callsOf('memory.list').at(-1)!.namespace).toBe('default');
  });
});
