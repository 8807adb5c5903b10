/**
 * The panel's port to the core (src/ui/lib/panel-port.ts): when the core that accepted the port is
 * gone (its Web Lock is granted to the panel) or the port drops, the panel lets go of the port,
 * makes sure a core runs, reconnects with capped exponential back-off that starts over once a core
 * accepts the port, and tells the new core what it shows and what it left meanwhile. Ports, the
 * lock and timers are fakes (no extension runtime here); the real port, lock and service worker in
 * Chromium are covered by tests/e2e/panel-reconnect.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { openPanelPort, RECONNECT_MAX_MS, RECONNECT_MS, type PanelPortLike } from '../../src/ui/lib/panel-port';
import { isPanelPortMessage, type PanelPortMessage } from '../../src/messaging/panel-port';

class FakePort implements PanelPortLike {
  posted: PanelPortMessage[] = [];
  disconnected = false;
  #onMessage: ((message: unknown) => void)[] = [];
  #onDisconnect: (() => void)[] = [];
  onMessage = { addListener: (l: (message: unknown) => void) => void this.#onMessage.push(l) };
  onDisconnect = { addListener: (l: () => void) => void this.#onDisconnect.push(l) };
  postMessage(message: PanelPortMessage) {
    if (this.disconnected) throw new Error('Attempting to use a disconnected port object');
    this.posted.push(message);
  }
  disconnect() {
    this.disconnected = true;
  }
  /** The core accepted the port. */
  ack() {
    this.#onMessage.forEach((l) => l({ served: true }));
  }
  /** The other end went away. */
  drop() {
    this.#onDisconnect.forEach((l) => l());
  }
}

function setup() {
  const ports: FakePort[] = [];
  const waits: number[] = [];
  const pending: (() => void)[] = [];
  let ensured = 0;
  /** Resolves the watch of the core that accepted a port: that core is gone. */
  const coreGone: (() => void)[] = [];
  const port = openPanelPort({
    watchCore: () => new Promise<void>((resolve) => void coreGone.push(resolve)),
    ensureCore: async () => void (ensured += 1),
    connectPort: () => {
      const p = new FakePort();
      ports.push(p);
      return p;
    },
    schedule: (run, ms) => {
      waits.push(ms);
      pending.push(run);
    },
  });
  /** Runs the scheduled reconnect and lets its `ensureCore` settle. */
  const elapse = async () => {
    pending.shift()!();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { port, ports, waits, elapse, coreGone, ensured: () => ensured };
}

describe('panel port (panel side)', () => {
  it('reconnects after a drop once a core runs, and says again which conversation it shows', async () => {
    const { port, ports, waits, elapse, ensured } = setup();
    port.show('c1');
    expect(ports[0]!.posted).toEqual([{ open: null }, { open: 'c1' }]);
    ports[0]!.drop();
    expect(waits).toEqual([RECONNECT_MS]);
    await elapse();
    expect(ensured()).toBe(1);
    expect(ports).toHaveLength(2);
    expect(ports[1]!.posted).toEqual([{ open: 'c1' }]);
  });

  it('doubles the wait while ports drop before a core accepts them (capped), and starts over after an ack', async () => {
    const { ports, waits, elapse } = setup();
    for (let i = 0; i < 10; i += 1) {
      ports.at(-1)!.drop();
      await elapse();
    }
    expect(waits).toEqual([250, 500, 1000, 2000, 4000, 8000, 16000, RECONNECT_MAX_MS, RECONNECT_MAX_MS, RECONNECT_MAX_MS]);
    ports.at(-1)!.ack();
    ports.at(-1)!.drop();
    expect(waits.at(-1)).toBe(RECONNECT_MS);
  });

  it('names the conversations it left while it had no port on the first message after reconnecting', async () => {
    const { port, ports, elapse } = setup();
    port.show('c1');
    ports[0]!.drop();
    port.show('temp'); // opened while the core was gone
    port.show('c2'); // and left
    port.show('c3');
    port.show('c2'); // shown again: not left
    await elapse();
    expect(ports[1]!.posted).toEqual([{ open: 'c2', left: ['c1', 'temp', 'c3'] }]);
    port.show(null);
    expect(ports[1]!.posted.at(-1)).toEqual({ open: null });
  });

  it('retries later when the runtime refuses to open a port', async () => {
    const waits: number[] = [];
    let calls = 0;
    openPanelPort({
      ensureCore: async () => undefined,
      connectPort: () => {
        calls += 1;
        throw new Error('Extension context invalidated.');
      },
      schedule: (_run, ms) => void waits.push(ms),
    });
    expect(calls).toBe(1);
    expect(waits).toEqual([RECONNECT_MS]);
  });
});

describe('panel port (the core gone, the port still open)', () => {
  it('watches the core once it accepts the port; when that core is gone it lets go of the port and reconnects', async () => {
    const { port, ports, waits, elapse, coreGone, ensured } = setup();
    port.show('c1');
    expect(coreGone).toHaveLength(0); // not watched before a core accepts the port
    ports[0]!.ack();
    expect(coreGone).toHaveLength(1);
    coreGone[0]!();
    await new Promise((r) => setTimeout(r, 0));
    expect(ports[0]!.disconnected).toBe(true);
    expect(waits).toEqual([RECONNECT_MS]);
    port.show('temp');
    port.show(null);
    await elapse();
    expect(ensured()).toBe(1);
    expect(ports[1]!.posted).toEqual([{ open: null, left: ['c1', 'temp'] }]);
    // A late drop of the old port changes nothing.
    ports[0]!.drop();
    expect(waits).toHaveLength(1);
  });

  it('accepts "left" only as a list of ids', () => {
    expect(isPanelPortMessage({ open: 'a', left: ['b'] })).toBe(true);
    expect(isPanelPortMessage({ open: null })).toBe(true);
    expect(isPanelPortMessage({ open: 'a', left: 'b' })).toBe(false);
    expect(isPanelPortMessage({ open: 'a', left: [1] })).toBe(false);
  });
});
