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
import { registerCoreHandlers } from './handlers';
import { createCore, restoreEngines } from './index';

/** Boots the core once per offscreen document. */
export function startCoreInOffscreen(): void {
  const startedAt = Date.now();
  // Start-up marks (`recall:*`, read by the cold-start bench over the DevTools protocol).
  performance.mark('recall:offscreen.start');
  const db = new RecallDB();
  const packaged = Promise.all([readPackagedModels(), readPackagedWebllmLibs()]);
  const core = packaged.then(([manifest, webllmLibs]) => {
    performance.mark('recall:offscreen.packaged');
    const engines = createEngineManager({
      db,
      assets: {
        wllamaWasmUrl: wllamaWasmUrl(),
        packagedModelsUrl: packagedModelsUrl(),
        packagedEmbeddingModels: manifest ? [manifest.embeddingModelId] : [],
        packagedWebllmLibs: webllmLibs,
      },
      probe: probeGpu,
    });
    engines.onChange((status) => emitEvent('event.engine', status));
    return createCore({
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
      // "Erase all data": the user's OPFS files and any Cache Storage cache that is not a model cache.
      eraseUserFiles: () => Promise.all([eraseUserFiles(), eraseUserCaches()]),
    });
  });
  registerCoreHandlers(core, startedAt);
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
    port.onMessage.addListener((message: unknown) => {
      if (!isPanelPortMessage(message)) return;
      core
        .then(async (c) => {
          await c.temporaryChats.show(panelId, message.open);
          if (message.left) await c.temporaryChats.left(message.left);
        })
        .catch(failed);
    });
    port.onDisconnect.addListener(() => void core.then((c) => c.temporaryChats.close(panelId)).catch(failed));
    // This port is the core's: the panel's back-off starts over, and it watches the lock from now on.
    holdingLock.then(() => port.postMessage({ served: true } satisfies PanelPortAck)).catch(() => undefined); // a port closed meanwhile needs none
  });
  Promise.all([core, packaged])
    .then(([c, [manifest]]) => restoreEngines(c, manifest))
    .catch((error: unknown) => console.error('[core] failed to start', error));
}
