/**
 * The set-up the vault lock's unit tests share (vitest-bound; the controller and the raw scan are
 * `vault-harness.ts`): the fixture embedder loaded once per file, every vault a test started
 * stopped and its database deleted after the test, a restart over the same database, the secrets
 * planted, `rejection`, and the side panel's real messaging path to the core's handlers.
 */
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { registerCoreHandlers, registerVaultHandlers } from '../../src/core/handlers';
import type { VaultController } from '../../src/core/vault';
import type { ChatEngine, Embedder } from '../../src/engines/types';
import { removeAllListeners } from '../../src/messaging/protocol';
import { loadFixtureEmbedder } from './core-harness';
import { startTestVault, type TestVault } from './vault-harness';

/** What a raw scan must not find while the lock is on: the digits and the Chinese word of the planted secrets. */
export const VAULT_SECRETS = ['4711', '储物柜'];

/** Options of `startTestVault` a test passes (the engines come from the suite). */
export type VaultStartOptions = Omit<Parameters<typeof startTestVault>[0], 'chat' | 'embedder'>;

/** The vaults of one test file (see `useTestVaults`). */
export interface TestVaults {
  /** Starts a vault whose cores use `chat` and the fixture embedder; stopped and deleted after the test. */
  start(chat: ChatEngine | null, options?: VaultStartOptions): TestVault;
  /**
   * A restart (the browser closed and started again): stops `t`'s core if one runs, closes its
   * database and starts a new vault over the same database (deleted after the test, by the new one).
   */
  restart(t: TestVault, chat: ChatEngine | null, options?: Omit<VaultStartOptions, 'dbName'>): Promise<TestVault>;
  /** No longer stops or deletes `t` after the test (its database was closed under it; a new vault takes it over). */
  release(t: TestVault): void;
}

/** Registers the file's hooks (fixture embedder before all, clean-up after each test) and returns its vault starter. */
export function useTestVaults(): TestVaults {
  let embedder: Embedder;
  let dispose: () => Promise<void>;
  beforeAll(async () => ({ embedder, dispose } = await loadFixtureEmbedder()));
  afterAll(async () => dispose());
  const open: TestVault[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) {
      await t.stop();
      await t.db.delete();
    }
  });
  const vaults: TestVaults = {
    start(chat, options = {}) {
      const t = startTestVault({ chat: () => chat, embedder: () => embedder, ...options });
      open.push(t);
      return t;
    },
    async restart(t, chat, options = {}) {
      const dbName = t.db.name;
      await t.stop();
      t.db.close();
      vaults.release(t);
      return vaults.start(chat, { ...options, dbName });
    },
    release(t) {
      const at = open.indexOf(t);
      if (at >= 0) open.splice(at, 1);
    },
  };
  return vaults;
}

/**
 * Runs `fn` with the side panel's real request path wired to `vault`: the panel's `request` →
 * @webext-core/messaging → WXT's in-memory fake runtime (given the side panel's sender; the fake's
 * own `sendMessage` sends none) → `registerCoreHandlers` / `registerVaultHandlers`. Unwires after.
 */
export async function withPanelMessaging(vault: VaultController, fn: () => Promise<void>): Promise<void> {
  const sender = { id: fakeBrowser.runtime.id, url: `chrome-extension://${fakeBrowser.runtime.id}/sidepanel.html` };
  vi.spyOn(fakeBrowser.runtime, 'sendMessage').mockImplementation((async (message: unknown) => {
    const replies = await fakeBrowser.runtime.onMessage.trigger(message, sender);
    return replies.find((reply: unknown) => reply !== undefined);
  }) as never);
  const unregister = [registerCoreHandlers(vault, Date.now()), registerVaultHandlers(vault)];
  try {
    await fn();
  } finally {
    unregister.forEach((remove) => remove());
    removeAllListeners();
    vi.restoreAllMocks();
  }
}

/** A held reply (see `heldStreamingEngine`) and the handles a test steers it with. */
export interface HeldReply {
  engine: ChatEngine;
  /** Resolves once the first piece streamed. */
  streamed: Promise<void>;
  /** Resolves once the turn's abort signal fired (a lock stopping it). */
  aborted: Promise<void>;
  /** Lets the reply end normally, with `full`. */
  release(): void;
  /** With `holdStop`: lets an aborted reply end. */
  letStop(): void;
}

/**
 * A chat engine for the vault's streaming cases (the faked boundary: an instruction-following LLM
 * cannot run here): a turn's reply streams `partial`, then holds its stream open until the turn is
 * aborted (it ends with `partial`, `finishReason: 'abort'`) or `release()` (it ends with `full`).
 * With `holdStop`, an aborted reply ends only after `letStop()` (a turn that takes its time to stop).
 * Extraction requests (`responseFormat`) get an empty note at once.
 */
export function heldStreamingEngine(partial: string, full: string, options: { holdStop?: boolean } = {}): HeldReply {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let letStop: () => void = () => undefined;
  const stopGate = options.holdStop ? new Promise<void>((resolve) => (letStop = resolve)) : Promise.resolve();
  let streamed!: () => void;
  const started = new Promise<void>((resolve) => (streamed = resolve));
  let abortSeen!: () => void;
  const aborted = new Promise<void>((resolve) => (abortSeen = resolve));
  const engine: ChatEngine = {
    kind: 'scripted',
    modelId: 'held',
    contextWindow: () => 4096,
    tokenCounter: () => null,
    isLoaded: () => true,
    async complete(request, onDelta) {
      if (request.responseFormat) return { content: '{"topic": "chat", "facts": [], "preferences": []}', finishReason: 'stop', usage: null };
      onDelta?.(partial);
      streamed();
      await Promise.race([held, new Promise((resolve) => request.signal?.addEventListener('abort', resolve))]);
      if (!request.signal?.aborted) return { content: full, finishReason: 'stop', usage: null };
      abortSeen();
      await stopGate;
      return { content: partial, finishReason: 'abort', usage: null };
    },
    async unload() {},
  };
  return { engine, streamed: started, aborted, release, letStop: () => letStop() };
}
