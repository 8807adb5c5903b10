/**
 * The extension's offscreen document (the memory core) over the browser's DevTools protocol, for
 * benches: Playwright does not see offscreen documents, so this attaches through a browser CDP
 * session (`Target.attachToTarget`, messages relayed with `Target.sendMessageToTarget`).
 */
import { writeFileSync } from 'node:fs';
import type { ExtensionBrowser } from '../../tests/e2e/harness';

/** A DevTools session on the offscreen document. */
export interface OffscreenSession {
  /** Sends one DevTools method to the offscreen document. @throws Error with the protocol's message. */
  call<T>(method: string, params?: Record<string, unknown>): Promise<T>;
  detach(): Promise<void>;
}

/**
 * Attaches to the running offscreen document of `browser`.
 * @throws Error when no offscreen document is running.
 */
export async function attachOffscreen(browser: ExtensionBrowser): Promise<OffscreenSession> {
  const cdp = await browser.context.browser()!.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  const target = targetInfos.find((t) => t.type === 'background_page' && t.url === `chrome-extension://${browser.extensionId}/offscreen.html`);
  if (!target) {
    await cdp.detach().catch(() => undefined);
    throw new Error('no offscreen document is running');
  }
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: false });
  let nextId = 1;
  return {
    call: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        const onMessage = (event: { sessionId?: string; message: string }) => {
          const message = JSON.parse(event.message) as { id?: number; result?: T; error?: { message: string } };
          if (message.id !== id) return;
          cdp.off('Target.receivedMessageFromTarget', onMessage);
          if (message.error) reject(new Error(`${method}: ${message.error.message}`));
          else resolve(message.result as T);
        };
        cdp.on('Target.receivedMessageFromTarget', onMessage);
        void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
      }),
    detach: () => cdp.detach().catch(() => undefined),
  };
}

/**
 * Records a V8 CPU profile of the offscreen document while `fn` runs (sampling every
 * `intervalUs` µs) and writes it to `file` (a `.cpuprofile`, readable by Chrome DevTools).
 * @returns what `fn` returns. @throws what `fn` or the protocol throws.
 */
export async function profileOffscreen<T>(
  browser: ExtensionBrowser,
  file: string,
  fn: (session: OffscreenSession) => Promise<T>,
  intervalUs = 500,
): Promise<T & { profile: CpuProfile }> {
  const session = await attachOffscreen(browser);
  try {
    await session.call('Profiler.enable');
    await session.call('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.call('Profiler.start');
    const out = await fn(session);
    const { profile } = await session.call<{ profile: CpuProfile }>('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    return { ...out, profile };
  } finally {
    await session.detach();
  }
}

/** The parts of a V8 CPU profile (`Profiler.stop`) read here; timestamps in µs. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Page script (source text) for \`Runtime.evaluate\` while profiling: spins about 2 ms inside a
 * function named \`__profileAnchor\` and returns the \`performance.now()\` it started at. Its
 * first sample in the profile ties the profile's clock to the page's (\`anchorOffsetUs\`).
 */
export const PROFILE_ANCHOR = `(function __profileAnchor() { const t = performance.now(); while (performance.now() - t < 2); return t; })()`;

/**
 * The profile timestamp (µs) minus the page's \`performance.now()\` (µs) at the same instant, from
 * the first sample inside \`__profileAnchor\` that started at page time \`anchorMs\` (error: one
 * sampling interval). @throws Error when the profile has no such sample.
 */
export function anchorOffsetUs(profile: CpuProfile, anchorMs: number): number {
  const anchorNodes = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '__profileAnchor').map((n) => n.id));
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    if (anchorNodes.has(profile.samples[i]!) && t >= profile.startTime) return t - anchorMs * 1000;
  }
  throw new Error('the profile has no __profileAnchor sample');
}

/**
 * Self time (ms) by function (\`name file:line\`) of the samples inside \`windows\` ([start, end],
 * profile µs), idle and the anchor left out, most first.
 */
export function selfTimeIn(profile: CpuProfile, windows: readonly [number, number][]): [string, number][] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i]!;
    t += dt;
    if (!windows.some(([a, b]) => t >= a && t <= b)) continue;
    const f = byId.get(profile.samples[i]!)!.callFrame;
    if (f.functionName === '(idle)' || f.functionName === '__profileAnchor') continue;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt / 1000);
  }
  return [...self].sort((a, b) => b[1] - a[1]);
}

/**
 * Profile time (µs) of the first sample after \`afterUs\` whose stack holds a frame of the
 * extension's own code (a \`chrome-extension://\` script): where a message handler starts.
 * \`null\` when there is none.
 */
export function firstExtensionSampleAfter(profile: CpuProfile, afterUs: number): number | null {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const own = (id: number | undefined): boolean => {
    for (; id !== undefined; id = parent.get(id)) if (byId.get(id)!.callFrame.url.startsWith('chrome-extension://')) return true;
    return false;
  };
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    if (t > afterUs && byId.get(profile.samples[i]!)!.callFrame.functionName !== '__profileAnchor' && own(profile.samples[i])) return t;
  }
  return null;
}
