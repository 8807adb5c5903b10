/**
 * End-to-end harness: loads the built extension (`.output/chrome-mv3`, or `RECALL_OUT_DIR`) in
 * real headless Debian Chromium through Playwright, with every network request routed through a
 * local counting proxy (so a test can assert that nothing left the machine).
 */
import { chromium, type BrowserContext, type ConsoleMessage, type Page, type Worker } from 'playwright-core';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Root of the repository. */
export const ROOT = resolve(__dirname, '../..');
/** The built extension. */
export const BUILD_DIR = resolve(ROOT, process.env.RECALL_OUT_DIR ?? '.output', 'chrome-mv3');
/** `../shared` beside the repository (fixtures), or null when absent. */
export const SHARED_DIR = existsSync(resolve(ROOT, '../shared/fixtures')) ? resolve(ROOT, '../shared') : null;
/** Debian's Chromium. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A request that reached the proxy, i.e. tried to leave the machine. */
export interface OutboundRequest {
  method: string;
  target: string;
  at: number;
}

/**
 * Requests Chromium itself makes, whatever the extension does, that no flag turns off:
 * IdentityManager lists the Google accounts of every profile (`ListAccounts`) once the profile's
 * network is up (see chromiumembedded/cef#4276). Anything else that reaches the proxy failed the
 * "nothing leaves the machine" check.
 */
export const BROWSER_OWN_REQUESTS: readonly { method: string; target: string }[] = [{ method: 'CONNECT', target: 'accounts.google.com:443' }];

/** Requests in `requests` that are not the browser's own (see `BROWSER_OWN_REQUESTS`). */
export function extensionRequests(requests: OutboundRequest[]): OutboundRequest[] {
  return requests.filter((r) => !BROWSER_OWN_REQUESTS.some((own) => own.method === r.method && own.target === r.target));
}

/** A local HTTP proxy that refuses everything and records what was attempted. */
export interface CountingProxy {
  port: number;
  requests: OutboundRequest[];
  close(): Promise<void>;
}

/** Starts the counting proxy on 127.0.0.1 (random port). Every request is answered 503 / refused. */
export async function startCountingProxy(): Promise<CountingProxy> {
  const requests: OutboundRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '?', target: req.url ?? '?', at: Date.now() });
    res.writeHead(503).end('offline test proxy');
  });
  server.on('connect', (req, socket: Socket) => {
    requests.push({ method: 'CONNECT', target: req.url ?? '?', at: Date.now() });
    socket.end('HTTP/1.1 503 Service Unavailable\r\n\r\n');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((r) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => r());
      }),
  };
}

/** Console errors seen in the extension's pages and service worker. */
export interface ConsoleLog {
  errors: string[];
}

/** A running browser with the extension loaded. */
export interface ExtensionBrowser {
  context: BrowserContext;
  extensionId: string;
  serviceWorker: Worker;
  console: ConsoleLog;
  /** Opens the side panel page in a tab (a test cannot open the real side panel; it is the same page). */
  openPanel(): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Copies the build to a temporary folder so a test can add files (e.g. packaged models) without
 * touching the real build. Returns the copy's path; delete it with `rmSync` when done.
 */
export function copyBuild(): string {
  if (!existsSync(join(BUILD_DIR, 'manifest.json'))) throw new Error(`No build at ${BUILD_DIR}: run \`npm run build\` first`);
  const dir = mkdtempSync(join(tmpdir(), 'recall-ext-'));
  cpSync(BUILD_DIR, dir, { recursive: true });
  return dir;
}

/**
 * Launches Chromium with the extension at `extensionDir` on the profile `userDataDir` (reuse
 * the same folder to simulate a browser restart: IndexedDB and OPFS survive).
 */
export async function launchExtension(options: { extensionDir: string; userDataDir: string; proxyPort: number }): Promise<ExtensionBrowser> {
  const context = await chromium.launchPersistentContext(options.userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      `--disable-extensions-except=${options.extensionDir}`,
      `--load-extension=${options.extensionDir}`,
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-default-apps',
      // Every request that would leave the machine goes to the counting proxy, loopback included.
      `--proxy-server=http://127.0.0.1:${options.proxyPort}`,
      '--proxy-bypass-list=<-loopback>',
    ],
  });
  const log: ConsoleLog = { errors: [] };
  const record = (where: string) => (m: ConsoleMessage) => {
    if (m.type() === 'error') log.errors.push(`${where}: ${m.text()}`);
  };
  context.on('console', record('page'));
  context.on('weberror', (e) => log.errors.push(`page error: ${e.error().message}`));
  const serviceWorker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
  serviceWorker.on('console', record('service worker'));
  const extensionId = new URL(serviceWorker.url()).host;
  return {
    context,
    extensionId,
    serviceWorker,
    console: log,
    async openPanel() {
      const page = await context.newPage();
      page.on('pageerror', (e) => log.errors.push(`side panel: ${e.message}`));
      await page.goto(`chrome-extension://${extensionId}/sidepanel.html`);
      return page;
    },
    close: () => context.close(),
  };
}

/**
 * Sends a protocol request from an extension page, in @webext-core/messaging's wire format
 * (`{ id, type, data, timestamp }` → `{ res }` or `{ err }`).
 * @throws Error with the core's message when the handler failed.
 */
export async function callCore<T = unknown>(page: Page, type: string, data?: unknown): Promise<T> {
  const reply = await page.evaluate(
    async ([t, d]) => chrome.runtime.sendMessage({ id: Math.floor(Math.random() * 1e9), type: t, data: d, timestamp: Date.now() }),
    [type, data] as const,
  );
  if (reply?.err) throw new Error(`${type}: ${reply.err.message ?? JSON.stringify(reply.err)}`);
  return reply?.res as T;
}

/**
 * Stops the extension's service worker, as Chrome does after 30 s idle: clicks "Stop" for the
 * extension's registration in chrome://serviceworker-internals, then waits until the browser
 * lists no running service-worker target for the extension (checked over the browser's DevTools
 * protocol). A DevTools session opened from a page cannot see extension workers, hence this route.
 * @throws Error when the worker is still running after 10 s.
 */
export async function stopServiceWorker(browser: ExtensionBrowser): Promise<void> {
  const scope = `chrome-extension://${browser.extensionId}/`;
  const internals = await browser.context.newPage();
  try {
    await internals.goto('chrome://serviceworker-internals/');
    const registration = internals.locator('.serviceworker-registration').filter({ hasText: scope });
    await registration.getByRole('button', { name: 'Stop', exact: true }).click();
    const cdp = await browser.context.browser()!.newBrowserCDPSession();
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { targetInfos } = await cdp.send('Target.getTargets');
      const running = targetInfos.some((t) => t.type === 'service_worker' && t.url.startsWith(scope));
      if (!running) break;
      if (Date.now() > deadline) throw new Error('The service worker did not stop');
      await internals.waitForTimeout(100);
    }
    await cdp.detach();
  } finally {
    await internals.close();
  }
}

/** Removes a temporary folder, ignoring errors. */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
