/**
 * End-to-end harness: loads the built extension (`.output/chrome-mv3`, or `RECALL_OUT_DIR`) in
 * real headless Debian Chromium through Playwright, with every network request routed through a
 * local counting proxy (so a test can assert that nothing left the machine).
 *
 * A test file starts one `startExtensionSession()` in `beforeAll` (a build copy with the fixture
 * embedder packaged, a fresh profile, the proxy, the browser) and `dispose()`s it in `afterAll`;
 * the panel helpers below drive the side panel (`loadFixtureGguf`, `sendFromPanel`,
 * `waitForCore`, …) and the IndexedDB helpers seed and read the extension's database
 * (`idbPut`, `idbGetAll`, `idbCount`, `idbTableNames`). Also used outside Vitest (`npm run bench`), so it
 * imports nothing from Vitest. Over 300 lines: it is the one home of the e2e set-up, kept whole.
 */
import { chromium, type BrowserContext, type ConsoleMessage, type Page, type Worker } from 'playwright-core';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobStats } from '../../src/model/jobs';
import { writeBertFixtureModel } from '../helpers/fixture-models';

/** Root of the repository (from `import.meta.url`, so the harness also loads outside Vitest, e.g. in `npm run bench`). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
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
 * Requests Chromium itself makes, whatever the extension does, that the launch flags do not turn
 * off: IdentityManager lists the Google accounts of every profile (`ListAccounts` on
 * accounts.google.com) once the profile's network is up (see chromiumembedded/cef#4276), and the
 * browser's update client asks update.googleapis.com about its components; Chromium's GCM client
 * (Google Cloud Messaging, a browser service the extension never uses: it has no `gcm` permission)
 * checks in with android.clients.google.com now and then (seen once in CI, 2026-12-02, during the
 * PDF test). Anything else that reaches the proxy fails the "nothing leaves the machine" check.
 */
export const BROWSER_OWN_REQUESTS: readonly { method: string; target: RegExp }[] = [
  { method: 'CONNECT', target: /^accounts\.google\.com:443$/ },
  { method: 'CONNECT', target: /^android\.clients\.google\.com:443$/ },
  { method: 'CONNECT', target: /^update\.googleapis\.com:443$/ },
  { method: 'POST', target: /^http:\/\/update\.googleapis\.com\/service\/update2\/json\?/ },
];

/** Requests in `requests` that are not the browser's own (see `BROWSER_OWN_REQUESTS`). */
export function extensionRequests(requests: OutboundRequest[]): OutboundRequest[] {
  return requests.filter((r) => !BROWSER_OWN_REQUESTS.some((own) => own.method === r.method && own.target.test(r.target)));
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
    // Node's HTTP server drops its own 'error' listener from a CONNECT socket: without this one, the
    // browser resetting the socket while it closes (ECONNRESET, seen in CI after a browser restart
    // in vault.test.ts) is an uncaught exception that fails the whole run. The request is recorded.
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 503 Service Unavailable\r\n\r\n');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('error', () => undefined); // a reset by the closing browser: nothing to answer any more
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

/** Console errors seen in the extension's pages, offscreen document and service worker. */
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
 * Playwright does not see offscreen documents; this attaches to the extension's offscreen
 * document over the browser's DevTools protocol (when it appears) and records its console
 * errors, uncaught exceptions and failed loads in `log`.
 */
async function watchOffscreenConsole(context: BrowserContext, extensionId: string, log: ConsoleLog): Promise<void> {
  const cdp = await context.browser()!.newBrowserCDPSession();
  const offscreenUrl = `chrome-extension://${extensionId}/offscreen.html`;
  const attached = new Set<string>();
  let nextId = 1;
  cdp.on('Target.receivedMessageFromTarget', (event) => {
    const message = JSON.parse(event.message) as { method?: string; params?: Record<string, any> };
    if (message.method === 'Runtime.consoleAPICalled' && message.params?.type === 'error') {
      log.errors.push(`offscreen: ${(message.params.args as { value?: unknown; description?: string }[]).map((a) => a.value ?? a.description).join(' ')}`);
    } else if (message.method === 'Runtime.exceptionThrown') {
      log.errors.push(`offscreen exception: ${message.params?.exceptionDetails?.exception?.description ?? message.params?.exceptionDetails?.text}`);
    } else if (message.method === 'Log.entryAdded' && message.params?.entry?.level === 'error') {
      log.errors.push(`offscreen: ${message.params.entry.text} ${message.params.entry.url ?? ''}`);
    }
  });
  const attach = async (info: { targetId: string; type: string; url: string }) => {
    if (info.type !== 'background_page' || info.url !== offscreenUrl || attached.has(info.targetId)) return;
    attached.add(info.targetId);
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: info.targetId, flatten: false });
    for (const method of ['Runtime.enable', 'Log.enable']) {
      await cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id: nextId++, method }) });
    }
  };
  const safeAttach = (info: { targetId: string; type: string; url: string }) => void attach(info).catch(() => undefined);
  cdp.on('Target.targetCreated', ({ targetInfo }) => safeAttach(targetInfo));
  cdp.on('Target.targetInfoChanged', ({ targetInfo }) => safeAttach(targetInfo));
  await cdp.send('Target.setDiscoverTargets', { discover: true });
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
      // Experiments only (e.g. `--js-flags=--no-flush-bytecode`): space-separated extra switches.
      ...(process.env.CHROMIUM_EXTRA_ARGS ?? '').split(' ').filter(Boolean),
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
  await watchOffscreenConsole(context, extensionId, log);
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

/** The real fixture GGUF (stories260K), or null when `../shared` is absent. */
export const FIXTURE_GGUF = SHARED_DIR ? join(SHARED_DIR, 'fixtures/models/stories260K/stories260K.gguf') : null;
/** Id of the fixture embedding model the e2e builds ship in their package. */
export const PACKAGED_EMBEDDING_MODEL = 'test/bert-fixture';

/**
 * A copy of the build with the fixture embedding model shipped inside the package (the offline
 * install option: `/models/<id>/` + `/models/packaged.json`), so the real transformers.js path
 * runs with no download. Returns the copy's path.
 */
export async function copyBuildWithPackagedEmbedder(): Promise<string> {
  const dir = copyBuild();
  const modelsDir = join(dir, 'models');
  mkdirSync(modelsDir, { recursive: true });
  await writeBertFixtureModel(join(modelsDir, PACKAGED_EMBEDDING_MODEL), PACKAGED_EMBEDDING_MODEL);
  writeFileSync(join(modelsDir, 'packaged.json'), JSON.stringify({ embeddingModelId: PACKAGED_EMBEDDING_MODEL }));
  return dir;
}

/**
 * Resolves when the core's job queue has nothing runnable or running (jobs scheduled for later —
 * maintenance, retries after backoff — may wait). @throws Error after `timeoutMs`.
 */
export async function waitForJobsIdle(page: Page, timeoutMs = 120_000): Promise<JobStats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await callCore<JobStats>(page, 'jobs.stats');
    if (stats.running === 0 && stats.queued === 0) return stats;
    if (Date.now() > deadline) throw new Error(`jobs still busy: ${JSON.stringify(stats)}`);
    await page.waitForTimeout(100);
  }
}

/** Removes a temporary folder, ignoring errors. */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** One test file's extension in the browser: its build copy, profile, proxy and the browser running now. */
export interface ExtensionSession {
  /** The build copy loaded (fixture embedder packaged, see `copyBuildWithPackagedEmbedder`). */
  extensionDir: string;
  /** The browser profile (IndexedDB and OPFS survive `launch()` again: a browser restart). */
  profile: string;
  proxy: CountingProxy;
  /** The browser running now. @throws Error when none runs (before `launch`, after `closeBrowser`). */
  readonly browser: ExtensionBrowser;
  /** Launches the browser on the session's profile, closing the one running first (a browser restart). */
  launch(): Promise<ExtensionBrowser>;
  /** Closes the browser running now, if any (the profile stays). */
  closeBrowser(): Promise<void>;
  /** Closes the browser and the proxy and removes the build copy and the profile. Never throws. */
  dispose(): Promise<void>;
}

/**
 * Starts a session: copies the build with the fixture embedder packaged, makes a fresh profile,
 * starts the counting proxy and (unless `launch: false`) launches the browser.
 * @throws Error when there is no build (`npm run build` first).
 */
export async function startExtensionSession(options: { launch?: boolean } = {}): Promise<ExtensionSession> {
  const extensionDir = await copyBuildWithPackagedEmbedder();
  const profile = mkdtempSync(join(tmpdir(), 'recall-profile-'));
  const proxy = await startCountingProxy();
  let current: ExtensionBrowser | null = null;
  const closeBrowser = async () => {
    const running = current;
    current = null;
    await running?.close().catch(() => undefined); // already closed by the test: fine
  };
  const session: ExtensionSession = {
    extensionDir,
    profile,
    proxy,
    get browser() {
      if (!current) throw new Error('no browser runs in this session: call launch() first');
      return current;
    },
    async launch() {
      await closeBrowser();
      current = await launchExtension({ extensionDir, userDataDir: profile, proxyPort: proxy.port });
      return current;
    },
    closeBrowser,
    async dispose() {
      await closeBrowser();
      await proxy.close().catch(() => undefined);
      removeDir(extensionDir);
      removeDir(profile);
    },
  };
  if (options.launch !== false) await session.launch();
  return session;
}

/** Statuses a reply ends in. */
const REPLY_DONE = '[data-status="complete"], [data-status="error"], [data-status="aborted"]';

/**
 * Resolves once the core answers `core.ping` from `page` (the panel starts it; requests before
 * that go unanswered, and the database exists only then). Polls every 100 ms.
 * @throws Error after `timeoutMs` (default 60 s).
 */
export async function waitForCore(page: Page, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pong = await callCore<{ ready?: boolean } | undefined>(page, 'core.ping').catch(() => undefined);
    if (pong?.ready) return;
    if (Date.now() > deadline) throw new Error('the core did not answer');
    await page.waitForTimeout(100);
  }
}

/** Resolves once the panel's engine chip says a chat model is ready. @throws after `timeoutMs` (default 60 s). */
export async function waitForEngineReady(page: Page, timeoutMs = 60_000): Promise<void> {
  await page.locator('[data-testid="engine-status"][data-state="ready"]').waitFor({ timeout: timeoutMs });
}

/**
 * Loads the fixture GGUF (stories260K) the way a user does: the CPU engine, the file input (the
 * panel copies it into OPFS), then waits until it is ready.
 * @throws Error when `../shared` is absent (`FIXTURE_GGUF` null), or the load times out.
 */
export async function loadFixtureGguf(page: Page): Promise<void> {
  if (!FIXTURE_GGUF) throw new Error('../shared/fixtures is absent: no fixture GGUF');
  await page.getByTestId('engine-cpu').click();
  await page.getByTestId('gguf-file-input').setInputFiles(FIXTURE_GGUF);
  await waitForEngineReady(page);
}

/**
 * Opens the panel of `session`, loads the fixture GGUF (`loadFixtureGguf`) and caps replies at
 * `maxAnswerTokens` tokens (default 16: the tests read prompts, not answers). @returns the panel page.
 * @throws Error as `loadFixtureGguf` does.
 */
export async function openPanelWithFixtureModel(session: ExtensionSession, maxAnswerTokens = 16): Promise<Page> {
  const page = await session.browser.openPanel();
  await loadFixtureGguf(page);
  await callCore(page, 'settings.set', { maxAnswerTokens });
  return page;
}

/**
 * The prompt trace of the last reply of the newest conversation of the active profile (the open
 * one, after `sendFromPanel`), read with `trace.get`. `T` is the part of the trace a test reads.
 * @throws Error when there is no conversation or no reply.
 */
export async function lastReplyTrace<T>(page: Page): Promise<T> {
  const [newest] = await callCore<{ id: string }[]>(page, 'conversations.list');
  if (!newest) throw new Error('no conversation');
  const messages = await callCore<{ id: string; role: string }[]>(page, 'messages.list', { conversationId: newest.id });
  const reply = messages.filter((m) => m.role === 'assistant').at(-1);
  if (!reply) throw new Error('no reply');
  return callCore<T>(page, 'trace.get', { messageId: reply.id });
}

/**
 * Types `text` into the panel's chat input, sends it and waits for its reply to end.
 * @returns the reply's text content. @throws Error when the reply ended other than `complete`, or after 120 s.
 */
export async function sendFromPanel(page: Page, text: string): Promise<string> {
  const replies = page.locator('[data-testid="message"][data-role="assistant"]');
  const before = await replies.count();
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('send').click();
  const reply = replies.nth(before);
  await reply.and(page.locator(REPLY_DONE)).waitFor({ timeout: 120_000 });
  const status = await reply.getAttribute('data-status');
  if (status !== 'complete') throw new Error(`the reply to "${text}" ended ${status}: ${await reply.textContent()}`);
  return (await reply.textContent()) ?? '';
}

/** The names of the tables (object stores) of the extension's IndexedDB database (`recall`), read from an extension page. */
export function idbTableNames(page: Page): Promise<string[]> {
  return page.evaluate(
    () =>
      new Promise<string[]>((resolve, reject) => {
        const open = indexedDB.open('recall');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const names = [...open.result.objectStoreNames];
          open.result.close();
          resolve(names);
        };
      }),
  );
}

/** Reads every row of one table of the extension's IndexedDB database (`recall`) from an extension page. */
export function idbGetAll<T>(page: Page, table: string): Promise<T[]> {
  return page.evaluate(
    (name) =>
      new Promise<T[]>((resolve, reject) => {
        const open = indexedDB.open('recall');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const request = open.result.transaction(name, 'readonly').objectStore(name).getAll();
          request.onsuccess = () => {
            open.result.close();
            resolve(request.result as T[]);
          };
          request.onerror = () => reject(request.error);
        };
      }),
    table,
  );
}

/** Counts the rows of one table of the extension's IndexedDB database from an extension page. */
export function idbCount(page: Page, table: string): Promise<number> {
  return page.evaluate(
    (name) =>
      new Promise<number>((resolve, reject) => {
        const open = indexedDB.open('recall');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const request = open.result.transaction(name, 'readonly').objectStore(name).count();
          request.onsuccess = () => {
            open.result.close();
            resolve(request.result);
          };
          request.onerror = () => reject(request.error);
        };
      }),
    table,
  );
}

/**
 * Writes rows straight into tables of the extension's IndexedDB database, in one transaction, as
 * an older version, an import or a crash would leave them (the core reads them as they are).
 * `rows` maps a table name to its rows (JSON data: they cross into the page as JSON).
 */
export function idbPut(page: Page, rows: Record<string, unknown[]>): Promise<void> {
  return page.evaluate(
    (tables) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('recall');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction(Object.keys(tables), 'readwrite');
          for (const [name, list] of Object.entries(tables)) for (const row of list) tx.objectStore(name).put(row);
          tx.oncomplete = () => {
            open.result.close();
            resolve();
          };
          tx.onerror = () => reject(tx.error);
        };
      }),
    rows,
  );
}

/**
 * Opens one of the Memory tab's collapsible sections (`about`, `review`, `learned`, `data`: Backup &
 * import) as a user does, by its toggle above the list; nothing when it is open already (which
 * sections are open is remembered across reloads). The Memory tab must be showing.
 */
export async function openMemorySection(page: Page, section: 'about' | 'review' | 'learned' | 'data'): Promise<void> {
  const toggle = page.getByTestId(`memory-section-${section}`);
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await page.locator(`[data-testid="memory-section-${section}"][aria-expanded="true"]`).waitFor();
}
