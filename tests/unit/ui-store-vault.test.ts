/**
 * The vault lock's panel side (issue 16): the vault store (src/ui/state/vault.svelte.ts) and its
 * wiring in the composition root (src/ui/state/app.svelte.ts), against the fake messaging api
 * (tests/helpers/fake-api.ts: the core cannot run behind the panel's messaging in Node). The
 * errors are shaped as the messaging delivers the core's coded errors (`domain`, `code`, `params`
 * as own properties of a plain Error). i18n, notices and every store are the real ones.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_STRATEGY } from '../../src/model/strategies';
import type { VaultStatus } from '../../src/model/vault';
import { AppState } from '../../src/ui/state/app.svelte';
import { createVaultStore } from '../../src/ui/state/vault.svelte';
import { createFakeApi, deferred, settingsFixture, type FakeApi } from '../helpers/fake-api';

const vaultError = (code: string) => Object.assign(new Error(`vault: ${code}`), { domain: 'vault', code, params: {} });
const status = (over: Partial<VaultStatus> = {}): VaultStatus => ({ enabled: true, locked: false, autoLockMinutes: null, migrating: null, ...over });
const conversation = (id: string) => ({ id, title: 'Open', namespace: 'default', strategy: DEFAULT_STRATEGY, createdAt: 1, updatedAt: 2 });

/** A fake core that answers the first load (one conversation `c1` with `messages`), with the vault `locked` or not. */
function fakeCore(options: { locked: boolean; messages?: () => unknown[] }): FakeApi & { vault: { locked: boolean } } {
  const api = createFakeApi();
  const vault = { locked: options.locked };
  const guard =
    <T>(answer: () => T) =>
    () => {
      if (vault.locked) throw vaultError('locked');
      return answer();
    };
  api.on('vault.status', () => status({ locked: vault.locked }));
  api.on(
    'profiles.list',
    guard(() => ({ profiles: [{ id: 'default', name: '', createdAt: 0 }], activeId: 'default' })),
  );
  api.on(
    'engine.status',
    guard(() => ({
      chat: { kind: null, modelId: null, state: 'idle' as const, progress: null, contextWindow: null, error: null, errorCode: null },
      embedder: { modelId: 'e5', dimension: 384, state: 'ready' as const, progress: null, error: null, errorCode: null },
      gpu: { available: false, shaderF16: false, adapter: null },
    })),
  );
  api.on(
    'engine.catalog',
    guard(() => ({ webllm: [], wllama: [], localFiles: [], defaultWebllmModel: '' })),
  );
  api.on(
    'settings.get',
    guard(() => settingsFixture()),
  );
  api.on(
    'conversations.list',
    guard(() => [{ id: 'c1', title: 'Open', updatedAt: 2, messageCount: 2 }]),
  );
  api.on(
    'jobs.stats',
    guard(() => ({ queued: 0, running: 0, failed: 0, done: 0 }) as never),
  );
  api.on(
    'conversations.get',
    guard(() => conversation('c1')),
  );
  api.on(
    'messages.list',
    guard(() => (options.messages?.() ?? []) as never),
  );
  api.on(
    'chat.live',
    guard(() => null),
  );
  return Object.assign(api, { vault });
}

describe('vault store', () => {
  it('a wrong passphrase stays in place as the translated sentence, and the status is unchanged', async () => {
    const api = createFakeApi();
    let unlocked = 0;
    const store = createVaultStore({ ...api, onUnlocked: async () => void (unlocked += 1) });
    api.on('vault.status', () => status({ locked: true }));
    await store.refresh();
    api.on('vault.unlock', () => {
      throw vaultError('wrong_passphrase');
    });
    expect(await store.unlock('not it')).toBe(false);
    expect(store.locked).toBe(true);
    expect(store.error).toMatchObject({ action: 'unlock', code: 'wrong_passphrase' });
    expect(store.error?.text).not.toBe('vault: wrong_passphrase'); // translated by its code, not the core's English message
    expect(unlocked).toBe(0);
    api.on('vault.unlock', () => status({ locked: false }));
    expect(await store.unlock('right one')).toBe(true);
    expect(store.error).toBeNull();
    expect(unlocked).toBe(1);
  });

  it('turning the lock on checks the two entries here first: a mismatch sends nothing', async () => {
    const api = createFakeApi();
    const store = createVaultStore({ ...api, onUnlocked: async () => undefined });
    api.on('vault.enable', () => status());
    expect(await store.enable('correct horse battery', 'correct horse batery')).toBe(false);
    expect(store.error).toMatchObject({ action: 'enable', code: 'mismatch', text: 'The two passphrases are not the same.' });
    expect(api.callsOf('vault.enable')).toEqual([]);
    expect(await store.enable('correct horse battery', 'correct horse battery')).toBe(true);
    expect(api.callsOf('vault.enable')).toEqual([{ passphrase: 'correct horse battery' }]);
    expect(store.enabled).toBe(true);
    expect(await store.changePassphrase('correct horse battery', 'new one here', 'new one there')).toBe(false);
    expect(store.error?.code).toBe('mismatch');
    expect(api.callsOf('vault.changePassphrase')).toEqual([]);
  });

  it('follows the lock through event.vault: unlocking elsewhere re-reads the panel once, a second unlocked event does not', async () => {
    const api = createFakeApi();
    let unlocked = 0;
    const store = createVaultStore({ ...api, onUnlocked: async () => void (unlocked += 1) });
    const stop = store.listen();
    api.emit('event.vault', status({ locked: true }));
    expect(store.locked).toBe(true);
    api.emit('event.vault', status({ migrating: { direction: 'encrypt', done: 3, total: 10 } }));
    api.emit('event.vault', status());
    expect(store.status?.migrating).toBeNull();
    expect(unlocked).toBe(1);
    stop();
    expect(api.listeners('event.vault')).toBe(0);
  });
});

describe('vault lock in the composition root', () => {
  it('a locked store shows only the unlock screen: no data request is sent before the unlock, then everything is read', async () => {
    const api = fakeCore({ locked: true });
    const app = new AppState(api);
    await app.openFirstScreen();
    expect(app.vault.locked).toBe(true);
    expect(api.calls.map((c) => c.type)).toEqual(['vault.status']);
    api.vault.locked = false;
    api.on('vault.unlock', () => status());
    expect(await app.vault.unlock('passphrase ok')).toBe(true); // returns once the panel has re-read its state
    expect(app.connection.state).toBe('ready');
    expect(app.conversations.current?.id).toBe('c1');
    expect(app.notices.list).toEqual([]);
  });

  it("a `locked` refusal of ANY store's request switches to the unlock screen, with no error notice", async () => {
    const opened = async () => {
      const api = fakeCore({ locked: false });
      const app = new AppState(api);
      await app.openFirstScreen();
      expect(app.vault.locked).toBe(false);
      expect(app.conversations.current?.id).toBe('c1');
      return { api, app };
    };
    // A store that swallows its failure (the job counts).
    const first = await opened();
    first.api.vault.locked = true; // auto-lock in the core
    await first.app.jobs.refresh();
    expect(first.app.vault.locked).toBe(true);
    // A store that reports its failure as a notice (opening a conversation).
    const second = await opened();
    second.api.vault.locked = true;
    await second.app.conversations.select('c1');
    expect(second.app.vault.locked).toBe(true);
    expect(second.app.notices.list).toEqual([]);
    // Any other failure is still said, and does not lock the panel.
    const third = await opened();
    third.api.on('messages.list', () => {
      throw new Error('disk gone');
    });
    await third.app.conversations.select('c1');
    expect(third.app.vault.locked).toBe(false);
    expect(third.app.notices.list.map((n) => n.detail)).toEqual(['disk gone']);
  });

  it('after an unlock the open conversation is read again: a reply stored while locked shows', async () => {
    let messages: unknown[] = [{ id: 'u1', conversationId: 'c1', seq: 0, role: 'user', content: 'my locker code is 4711', status: 'complete', createdAt: 1 }];
    const api = fakeCore({ locked: false, messages: () => messages });
    const app = new AppState(api);
    await app.openFirstScreen();
    expect(app.conversations.messages.map((m) => m.id)).toEqual(['u1']);
    api.vault.locked = true;
    app.vault.requestFailed(vaultError('locked'));
    expect(app.vault.locked).toBe(true);
    // The core stored the reply that was streaming when it locked.
    messages = [...messages, { id: 'a1', conversationId: 'c1', seq: 1, role: 'assistant', content: 'Noted.', status: 'complete', createdAt: 2 }];
    const unlock = deferred<VaultStatus>();
    api.on('vault.unlock', () => unlock.promise);
    const unlocking = app.vault.unlock('passphrase ok');
    api.vault.locked = false;
    unlock.resolve(status());
    expect(await unlocking).toBe(true);
    expect(app.conversations.messages.map((m) => [m.id, m.content])).toEqual([
      ['u1', 'my locker code is 4711'],
      ['a1', 'Noted.'],
    ]);
  });
});
