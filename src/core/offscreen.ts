/**
 * Starts the core in the offscreen document: opens the database, creates the engine manager,
 * registers the protocol handlers, then restores the engines the user had loaded.
 */
import browser from 'webextension-polyfill';
import { RecallDB } from '../db/schema';
import { assertSender } from '../messaging/protocol';
import { CORE_LOCK_NAME, isPanelPortMessage, PANEL_PORT_NAME, type PanelPortAck } from '../messaging/panel-port';
import { emitEvent } from '../messaging/protocol';
import { loadVoyWasm, packagedModelsUrl, readPackagedModels, readPackagedWebllmLibs, wllamaWasmUrl } from '../platform/assets';
import { probeGpu } from '../platform/gpu';
import { deleteModelFile } from '../platform/model-files';
import { eraseUserFiles } from '../platform/user-files';
import { eraseUserCaches } from '../platform/model-caches';
import { createEngineManager } from './engine-manager';
import { registerCoreHandlers, registerVaultHandlers } from './handlers';
import { createCore, restoreEngines } from './index';
import { createVaultController } from './vault';
import { VaultError } from '../model/errors';

/** Boots the core once per offscreen document. */
export function startCoreInOffscreen(): void {
  const startedAt = Date.now();
  // Start-up marks (`recall:*`, read by the cold-start bench over the DevTools protocol).
  performance.mark('recall:offscreen.start');
  const db = new RecallDB();
  // The packaged manifests are read while the core starts, not before: only an engine load, the
  // catalog and the engines' restore need them (22 ms at a cold start, issue 9).
  const packaged = Promise.all([readPackagedModels(), readPackagedWebllmLibs()]).then((read) => {
    performance.mark('recall:offscreen.packaged');
    return read;
  });
  const engines = createEngineManager({
    db,
    assets: packaged.then(([manifest, webllmLibs]) => ({
      wllamaWasmUrl: wllamaWasmUrl(),
      packagedModelsUrl: packagedModelsUrl(),
      packagedEmbeddingModels: manifest ? [manifest.embeddingModelId] : [],
      packagedWebllmLibs: webllmLibs,
    })),
    probe: probeGpu,
  });
  engines.onChange((status) => emitEvent('event.engine', status));
  // "Erase all data": the user's OPFS files and any Cache Storage cache that is not a model cache.
  const eraseUserStorage = () => Promise.all([eraseUserFiles(), eraseUserCaches()]);
  let restored = false;
  // A core per unlock (the vault lock drops it with its in-memory indexes on lock); with the lock off, one.
  const startCore = () =>
    Promise.resolve().then(async () => {
      const core = await createCore({
        db,
        engines,
        loadVoyWasm,
        events: {
          chatDelta: (event) => emitEvent('event.chatDelta', event),
          jobs: (stats) => emitEvent('event.jobs', stats),
          conversations: (event) => emitEvent('event.conversations', event),
          settings: (settings) => emitEvent('event.settings', settings),
          transfer: (progress) => emitEvent('event.transfer', progress),
          profiles: (state) => emitEvent('event.profiles', state),
        },
        deleteModelFile,
        eraseUserFiles: eraseUserStorage,
      });
      if (!restored) {
        restored = true;
        packaged.then(([manifest]) => restoreEngines(core, manifest)).catch((error: unknown) => console.error('[core] engines not restored', error));
      }
      return core;
    });
  const vault = createVaultController({
    db,
    startCore,
    eraseUserFiles: eraseUserStorage,
    onStatus: (status) => emitEvent('event.vault', status),
  });
  registerCoreHandlers(vault, startedAt);
  registerVaultHandlers(vault);
  // Held for the life of this document: a panel learns that this core is gone when it is granted the lock.
  const holdingLock = new Promise<void>((held) => {
    navigator.locks
      .request(CORE_LOCK_NAME, () => {
        held();
        return new Promise<never>(() => undefined);
      })
      .catch((error: unknown) => console.warn('[core] core lock not held:', error));
  });
  // Each panel's port: which conversation it shows, and when it closes (temporary chats).
  browser.runtime.onConnect.addListener((port) => {
    if (port.name !== PANEL_PORT_NAME) return;
    try {
      assertSender(port.sender ?? {}, ['sidepanel'], browser.runtime.id);
    } catch (error) {
      console.warn('[core] panel port refused:', error);
      port.disconnect();
      return;
    }
    const panelId = crypto.randomUUID();
    const failed = (error: unknown) => console.warn('[core] temporary chats not followed:', error);
    // While locked a message finds no core and is dropped, losing nothing: the lock deleted the temporary
    // chats (`VaultController.lock`), and after a core killed while unlocked the unlock's new core sweeps them at its start.
    port.onMessage.addListener((message: unknown) => {
      if (!isPanelPortMessage(message)) return;
      vault
        .core()
        .then(async (c) => {
          await c.temporaryChats.show(panelId, message.open);
          if (message.left) await c.temporaryChats.left(message.left);
        })
        .catch(ignoreLocked(failed));
    });
    // While locked no temporary chat can be open; the next core deletes any left at its start.
    port.onDisconnect.addListener(() => void vault.core().then((c) => c.temporaryChats.close(panelId), ignoreLocked(failed)));
    // This port is the core's: the panel's back-off starts over, and it watches the lock from now on.
    holdingLock.then(() => port.postMessage({ served: true } satisfies PanelPortAck)).catch(() => undefined); // a port closed meanwhile needs none
  });
  vault.core().catch(ignoreLocked((error: unknown) => console.error('[core] failed to start', error)));
}

/** `handle` for every error but the vault's `locked` (expected while the lock is on). */
const ignoreLocked =
  (handle: (error: unknown) => void) =>
  (error: unknown): void => {
    if (!(error instanceof VaultError && error.code === 'locked')) handle(error);
  };
