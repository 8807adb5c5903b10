/**
 * The vault lock in the built extension in real Chromium (issue 16): the panel turns the lock on
 * (Settings → Privacy), planted secrets ("my locker code is 4711", 我的储物柜密码是4711) go through
 * real turns on the fixture GGUF (wllama; the packaged fixture embedder), the background jobs run,
 * and then every raw store an extension page can read is scanned for them — every IndexedDB
 * database, table and record (keys too; typed arrays and Blobs decoded as UTF-8 and UTF-16 at both
 * alignments), Cache Storage (URLs and bodies), every OPFS file in every directory, localStorage,
 * sessionStorage and chrome.storage local/session. Random UUIDs are masked first (one can contain
 * "4711"). As a control, the same scan FINDS the secrets while the lock is off, so it can fail.
 * Then: a wrong passphrase is refused and changes no raw byte; lock → unlock screen → unlock → the
 * conversation is back; locking during a streaming reply keeps the reply; the memory core (the
 * offscreen document) closed while unlocked and while locked, and a browser restart, come back
 * locked with nothing lost; export while locked is refused with `locked`; an age-encrypted backup
 * exports and imports with the lock on; "Erase everything and start over" works while locked.
 * Below the browser, the profile's IndexedDB files on disk (LevelDB) are scanned too: with the lock
 * off they hold the secrets; after the lock went on and a restart, nothing written sealed is in
 * them, but the plain values the in-place pass overwrote still are (LevelDB keeps them until it
 * compacts; a known limit, asserted so a change shows).
 * Screenshots of the Privacy section and the unlock screen (EN + ZH) go to `RECALL_SCREENSHOTS`
 * when it is set, for a person to look at.
 *
 * Over 300 lines: one scenario on one browser profile, in order (each step starts from the
 * state the previous one left), with the raw-store scan it depends on; split, it would repeat
 * the whole set-up per file.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VaultStatus } from '../../src/model/vault';
import {
  callCore,
  FIXTURE_GGUF as GGUF,
  openMemorySection,
  loadFixtureGguf,
  startExtensionSession,
  waitForCore,
  waitForJobsIdle,
  type ExtensionSession,
} from './harness';

if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the vault test (it needs the fixture GGUF).');

const PASSPHRASE = 'correct horse battery staple';
const SECRET_EN = 'my locker code is 4711';
const SECRET_ZH = '我的储物柜密码是4711';
/**
 * What must appear nowhere while the lock is on (case-insensitive, after masking UUIDs): the
 * secrets' words, and the Chinese word's bigrams (the lexical index splits CJK text into them).
 * The bare digits are checked separately in text values only (a timestamp or random bytes can hold "4711").
 */
const NEEDLES = ['locker', '储物柜', '储物', '物柜', '柜密'];
const shots = process.env.RECALL_SCREENSHOTS;
/** What the scan of the profile's files looks for: the English secret whole, and the Chinese word. */
const FILE_NEEDLES = [SECRET_EN, '储物柜'];

/** One place a needle was found: the store and record, the needle, a short excerpt around it. */
interface ScanHit {
  where: string;
  needle: string;
  excerpt: string;
}
/** What the raw-store scan found, and how much it looked at (so a scan that read nothing cannot pass). */
interface ScanResult {
  hits: ScanHit[];
  seen: { databases: string[]; records: number; caches: string[]; files: string[]; bytes: number };
}

/** In-page raw-store scan (see the module doc); runs in an extension page, which shares the core's origin. */
async function scanRawStores(session: ExtensionSession, page: Page): Promise<ScanResult> {
  const fromPage = await page.evaluate(async (needles: string[]) => {
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
    const bareDigits = /(?<![0-9A-Za-z+/])4711(?![0-9A-Za-z+/=])/;
    const patterns = needles.map((n) => new RegExp(n, 'i'));
    const hits: { where: string; needle: string; excerpt: string }[] = [];
    const seen = { databases: [] as string[], records: 0, caches: [] as string[], files: [] as string[], bytes: 0 };
    const utf8 = new TextDecoder('utf-8');
    const utf16 = new TextDecoder('utf-16le');
    const check = (where: string, raw: string, isText: boolean) => {
      const text = raw.replace(uuid, '<uuid>');
      const found = patterns.map((p) => [p.source, p.exec(text)] as const);
      if (isText) found.push(['4711', bareDigits.exec(text)]);
      for (const [needle, m] of found) if (m) hits.push({ where, needle, excerpt: text.slice(Math.max(0, m.index - 40), m.index + 60) });
    };
    const checkBytes = (where: string, bytes: Uint8Array) => {
      seen.bytes += bytes.byteLength;
      check(`${where} (utf-8)`, utf8.decode(bytes), false);
      const even = (b: Uint8Array) => b.subarray(0, b.byteLength - (b.byteLength % 2));
      check(`${where} (utf-16)`, utf16.decode(even(bytes)), false);
      check(`${where} (utf-16, odd offset)`, utf16.decode(even(bytes.subarray(1))), false);
    };
    const walk = async (where: string, value: unknown, visited: Set<object>): Promise<void> => {
      if (value === null || value === undefined || typeof value === 'boolean' || typeof value === 'bigint') return;
      if (typeof value === 'string') return check(where, value, true);
      if (typeof value === 'number') {
        if (value === 4711) hits.push({ where, needle: '4711', excerpt: 'the number 4711' });
        return;
      }
      if (value instanceof ArrayBuffer) return checkBytes(where, new Uint8Array(value));
      if (ArrayBuffer.isView(value)) return checkBytes(where, new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      if (value instanceof Blob) return checkBytes(where, new Uint8Array(await value.arrayBuffer()));
      if (typeof value !== 'object' || value instanceof Date || visited.has(value)) return;
      visited.add(value);
      const entries: [unknown, unknown][] =
        value instanceof Map ? [...value.entries()] : value instanceof Set ? [...value].map((v) => [null, v]) : Object.entries(value);
      for (const [key, item] of entries) {
        await walk(where, key, visited);
        await walk(where, item, visited);
      }
    };

    // IndexedDB: every database, every object store, every record and its key.
    for (const info of await indexedDB.databases()) {
      if (!info.name) continue;
      seen.databases.push(info.name);
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open(info.name!);
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      for (const name of [...db.objectStoreNames]) {
        const [keys, values] = await new Promise<[IDBValidKey[], unknown[]]>((resolve, reject) => {
          const store = db.transaction(name, 'readonly').objectStore(name);
          const k = store.getAllKeys();
          const v = store.getAll();
          v.onsuccess = () => resolve([k.result, v.result]);
          v.onerror = () => reject(v.error);
        });
        for (const [i, value] of values.entries()) {
          seen.records += 1;
          const where = `idb:${info.name}/${name}[${String(JSON.stringify(keys[i]) ?? '')
            .replace(uuid, '<uuid>')
            .slice(0, 60)}]`;
          await walk(where, keys[i], new Set());
          await walk(where, value, new Set());
        }
      }
      db.close();
    }
    // Cache Storage: every cache, every request URL and response body.
    for (const name of await caches.keys()) {
      seen.caches.push(name);
      const cache = await caches.open(name);
      for (const request of await cache.keys()) {
        check(`cache:${name} ${request.url}`, request.url, true);
        const response = await cache.match(request);
        if (response) checkBytes(`cache:${name} ${request.url}`, new Uint8Array(await response.arrayBuffer()));
      }
    }
    // OPFS: every file of every directory (names too).
    const walkDir = async (dir: FileSystemDirectoryHandle, prefix: string): Promise<void> => {
      for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
        const path = `${prefix}${name}`;
        check(`opfs:${path} (name)`, name, true);
        if (handle.kind === 'directory') await walkDir(handle as FileSystemDirectoryHandle, `${path}/`);
        else {
          seen.files.push(path);
          checkBytes(`opfs:${path}`, new Uint8Array(await (await (handle as FileSystemFileHandle).getFile()).arrayBuffer()));
        }
      }
    };
    await walkDir(await navigator.storage.getDirectory(), '');
    // Web storage of the extension's origin.
    for (const [label, storage] of [
      ['localStorage', localStorage],
      ['sessionStorage', sessionStorage],
    ] as const) {
      for (let i = 0; i < storage.length; i++) {
        const key = storage.key(i)!;
        check(`${label}:${key}`, `${key}=${storage.getItem(key)}`, true);
      }
    }
    return { hits, seen };
  }, NEEDLES);
  // chrome.storage exists only with the "storage" permission; scanned from the service worker when it does.
  const extensionStorage = await session.browser.serviceWorker.evaluate(async () =>
    chrome.storage ? JSON.stringify({ local: await chrome.storage.local.get(null), session: await chrome.storage.session.get(null) }) : '',
  );
  const masked = extensionStorage.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>');
  for (const needle of [...NEEDLES, '4711'])
    if (new RegExp(needle, 'i').test(masked)) fromPage.hits.push({ where: 'chrome.storage', needle, excerpt: masked.slice(0, 120) });
  return fromPage;
}

/** Where a needle was found in the profile's IndexedDB files on disk, and how much was read. */
interface FileScan {
  hits: { file: string; needle: string; encoding: 'utf-8' | 'utf-16le' }[];
  files: string[];
  bytes: number;
}

/**
 * Reads every file of the extension's IndexedDB folders in the browser profile on disk
 * (`<profile>/Default/IndexedDB/chrome-extension_<id>_0.indexeddb.*`: LevelDB's `.ldb` tables and
 * `.log` journal, blobs) and looks for each needle's UTF-8 and UTF-16LE bytes (V8 serializes a
 * string as one-byte Latin-1 or two-byte UTF-16; the Chinese ones are always two-byte). What a
 * reader of the profile folder sees, below the browser (LevelDB keeps an overwritten value until it
 * compacts that range).
 */
function scanProfileFiles(profile: string, extensionId: string, needles: string[]): FileScan {
  const root = join(profile, 'Default', 'IndexedDB');
  const scan: FileScan = { hits: [], files: [], bytes: 0 };
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const bytes = readFileSync(path);
        scan.files.push(path.slice(root.length + 1));
        scan.bytes += bytes.byteLength;
        for (const needle of needles)
          for (const encoding of ['utf-8', 'utf-16le'] as const)
            if (bytes.includes(Buffer.from(needle, encoding === 'utf-8' ? 'utf8' : 'utf16le')))
              scan.hits.push({ file: path.slice(root.length + 1), needle, encoding });
      }
    }
  };
  for (const name of readdirSync(root)) if (name.startsWith(`chrome-extension_${extensionId}_`)) walk(join(root, name));
  return scan;
}

/** SHA-256 of every IndexedDB record of the `recall` database (keys and values, typed arrays as bytes), in key order. */
function rawDigest(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('recall');
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const parts: string[] = [];
    const encode = (value: unknown): unknown => {
      if (value instanceof ArrayBuffer) return { bytes: [...new Uint8Array(value)] };
      if (ArrayBuffer.isView(value)) return { bytes: [...new Uint8Array(value.buffer, value.byteOffset, value.byteLength)] };
      if (Array.isArray(value)) return value.map(encode);
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
      return value;
    };
    for (const name of [...db.objectStoreNames].sort()) {
      const [keys, values] = await new Promise<[IDBValidKey[], unknown[]]>((resolve, reject) => {
        const store = db.transaction(name, 'readonly').objectStore(name);
        const k = store.getAllKeys();
        const v = store.getAll();
        v.onsuccess = () => resolve([k.result, v.result]);
        v.onerror = () => reject(v.error);
      });
      parts.push(JSON.stringify([name, encode(keys), encode(values)]));
    }
    db.close();
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(parts.join('\n')));
    return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
  });
}

/** Sends one request from `page` and returns the core's error as it crosses the messaging (`domain`, `code`), or `null` when it succeeded. */
async function refusal(page: Page, type: string, data?: unknown): Promise<{ domain?: string; code?: string; message?: string } | null> {
  const reply = await page.evaluate(
    async ([t, d]) => chrome.runtime.sendMessage({ id: Math.floor(Math.random() * 1e9), type: t, data: d, timestamp: Date.now() }),
    [type, data] as const,
  );
  return reply?.err ?? null;
}

/** What the store holds that must survive: every conversation with its messages (id, role, status, content), and the memories' ids. */
async function storedState(page: Page): Promise<{ conversations: unknown[]; memories: string[] }> {
  const list = await callCore<{ id: string; title: string }[]>(page, 'conversations.list');
  const conversations = [];
  for (const c of list) {
    const messages = await callCore<{ id: string; role: string; status: string; content: string }[]>(page, 'messages.list', { conversationId: c.id });
    conversations.push({ id: c.id, title: c.title, messages: messages.map((m) => [m.id, m.role, m.status, m.content]) });
  }
  const memories = await callCore<{ id: string }[]>(page, 'memory.list', { namespace: 'default' });
  return { conversations, memories: memories.map((m) => m.id).sort() };
}

/** Types `text` into the chat input and sends it; resolves once its reply has ended (complete, error or aborted). */
async function sendAndWait(page: Page, text: string): Promise<void> {
  const replies = page.locator('[data-testid="message"][data-role="assistant"]');
  const before = await replies.count();
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('send').click();
  await replies.nth(before).and(page.locator('[data-status="complete"], [data-status="error"], [data-status="aborted"]')).waitFor({ timeout: 120_000 });
  expect(await replies.nth(before).getAttribute('data-status')).toBe('complete');
}

/** Unlocks from the unlock screen shown in `page` (Enter submits) and waits until the panel is back. */
async function unlockFromPanel(page: Page, passphrase = PASSPHRASE): Promise<void> {
  await page.getByTestId('unlock-screen').waitFor({ timeout: 60_000 });
  await page.getByTestId('unlock-passphrase').fill(passphrase);
  await page.getByTestId('unlock-passphrase').press('Enter');
  await page.getByTestId('tab-chat').or(page.getByTestId('unlock-error')).waitFor({ timeout: 60_000 });
  if (await page.getByTestId('unlock-error').count()) throw new Error(`the unlock failed: ${await page.getByTestId('unlock-error').textContent()}`);
}

/** Writes a file scan to `RECALL_SCREENSHOTS/<name>.json` when set (beside the screenshots, for a person to read). */
function keepScan(name: string, scan: FileScan): void {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  writeFileSync(join(shots, `${name}.json`), JSON.stringify(scan, null, 1));
}

async function shoot(page: Page, name: string, selector?: string): Promise<void> {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  if (selector) await page.locator(selector).screenshot({ path: join(shots, `${name}.png`) });
  else await page.screenshot({ path: join(shots, `${name}.png`) });
}

describe.skipIf(!GGUF)('the vault lock in a real browser', () => {
  let session: ExtensionSession;
  let page: Page;

  beforeAll(async () => {
    session = await startExtensionSession();
    page = await session.browser.openPanel();
    await page.setViewportSize({ width: 400, height: 760 });
    await waitForCore(page);
    await loadFixtureGguf(page);
    await callCore(page, 'settings.set', { maxAnswerTokens: 24 });
    await page.getByTestId('tab-chat').click();
  });
  afterAll(() => session?.dispose());

  it('control: with the lock off, the same raw-store scan finds the planted secrets', async () => {
    await sendAndWait(page, SECRET_EN);
    await sendAndWait(page, SECRET_ZH);
    await waitForJobsIdle(page);
    const { hits, seen } = await scanRawStores(session, page);
    expect(seen.databases).toContain('recall');
    const places = (needle: string) => [...new Set(hits.filter((h) => h.needle === needle).map((h) => h.where.replace(/\[.*$/, '')))];
    expect(places('locker')).toContain('idb:recall/messages');
    expect(places('储物柜')).toContain('idb:recall/messages');
    expect(places('4711')).toContain('idb:recall/messages');
    // The secrets are in the messages, the memories, the index blocks, the prompt traces and the title.
    expect(places('locker')).toEqual(
      expect.arrayContaining(['idb:recall/memories', 'idb:recall/memoryIndex', 'idb:recall/promptTraces', 'idb:recall/conversations']),
    );
    expect(places('物柜')).toEqual(expect.arrayContaining(['idb:recall/memories', 'idb:recall/memoryIndex', 'idb:recall/promptTraces']));
    // Below the browser: the profile's IndexedDB files hold them too (the file scan can fail).
    const files = scanProfileFiles(session.profile, session.browser.extensionId, FILE_NEEDLES);
    keepScan('disk-lock-off', files);
    expect(files.hits.map((h) => h.needle)).toEqual(expect.arrayContaining(FILE_NEEDLES));
  });

  it('Settings → Privacy turns the lock on; afterwards the secrets (old rows and new turns) are in no raw store', async () => {
    await page.getByTestId('tab-settings').click();
    await page.getByTestId('vault-setup-open').click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('vault-passphrase');
    await page.getByTestId('vault-passphrase').fill(PASSPHRASE);
    await page.getByTestId('vault-passphrase-repeat').fill(`${PASSPHRASE}!`);
    await page.getByTestId('vault-enable').click();
    await expect.poll(() => page.getByTestId('vault-error').getAttribute('data-code')).toBe('mismatch');
    await page.getByTestId('vault-passphrase').fill('short');
    await page.getByTestId('vault-passphrase-repeat').fill('short');
    await page.getByTestId('vault-enable').click();
    await expect.poll(() => page.getByTestId('vault-error').getAttribute('data-code')).toBe('weak_passphrase');
    await page.getByTestId('vault-passphrase').fill(PASSPHRASE);
    await page.getByTestId('vault-passphrase-repeat').fill(PASSPHRASE);
    await shoot(page, 'privacy-setup-en', '[data-testid="vault-settings"]');
    await page.getByTestId('vault-enable').click();
    await page.locator('[data-testid="vault-settings"][data-enabled="true"]').waitFor({ timeout: 120_000 });
    await expect.poll(async () => (await callCore<VaultStatus>(page, 'vault.status')).migrating, { timeout: 120_000 }).toBeNull();
    await shoot(page, 'privacy-on-en', '[data-testid="vault-settings"]');

    // New turns under the lock, and their background jobs (extraction, episodic memory, summaries).
    await page.getByTestId('tab-chat').click();
    await sendAndWait(page, `Remember: ${SECRET_EN}`);
    await sendAndWait(page, `记住：${SECRET_ZH}`);
    await waitForJobsIdle(page);
    const { hits, seen } = await scanRawStores(session, page);
    expect(seen.databases).toContain('recall');
    expect(seen.records).toBeGreaterThan(20);
    expect(hits).toEqual([]);
    await shoot(page, 'chat-locked-on-en');
  });

  it('a wrong passphrase is refused and changes no raw byte; lock → unlock screen → unlock → the conversation is back', async () => {
    const shown = async () => (await page.locator('[data-testid="message"]').allTextContents()).join('\n');
    const before = await shown();
    expect(before).toContain(SECRET_EN);
    await page.getByTestId('header-lock').click();
    await page.getByTestId('unlock-screen').waitFor();
    expect(await page.getByTestId('tab-chat').count()).toBe(0); // no tabs, no chat, no memory while locked
    expect(await page.locator('[data-testid="message"]').count()).toBe(0);
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('unlock-passphrase');
    const digest = await rawDigest(page);
    await page.getByTestId('unlock-passphrase').fill('not the passphrase');
    await page.getByTestId('unlock-passphrase').press('Enter');
    await expect.poll(() => page.getByTestId('unlock-error').getAttribute('data-code')).toBe('wrong_passphrase');
    await shoot(page, 'unlock-wrong-en');
    expect(await rawDigest(page)).toBe(digest);
    expect((await callCore<VaultStatus>(page, 'vault.status')).locked).toBe(true);
    expect((await refusal(page, 'conversations.list'))?.code).toBe('locked');
    await unlockFromPanel(page);
    await expect.poll(shown).toBe(before);
  });

  it('locking while a reply streams keeps the reply: it shows once unlocked, as stored', async () => {
    await callCore(page, 'settings.set', { maxAnswerTokens: 256 });
    await page.evaluate(() => {
      const g = globalThis as { __lockedAt?: number };
      chrome.runtime.onMessage.addListener((m: { type?: string }) => {
        if (m?.type !== 'event.chatDelta' || g.__lockedAt !== undefined) return;
        g.__lockedAt = Date.now();
        void chrome.runtime.sendMessage({ id: 1, type: 'vault.lock', timestamp: Date.now() });
      });
    });
    const assistants = page.locator('[data-testid="message"][data-role="assistant"]');
    const count = await assistants.count();
    await page.getByTestId('chat-input').fill('Tell me a long story about a locker room.');
    await page.getByTestId('send').click();
    await page.getByTestId('unlock-screen').waitFor({ timeout: 60_000 });
    expect(await page.evaluate(() => (globalThis as { __lockedAt?: number }).__lockedAt)).toBeGreaterThan(0);
    // The lock is done once a second `vault.lock` is no longer refused as `busy` (an unlock sent while the
    // lock still stops the turn and the core is refused with `busy` today: the core's part, see the report).
    await expect.poll(async () => (await refusal(page, 'vault.lock'))?.code ?? 'done', { timeout: 30_000 }).toBe('done');
    await unlockFromPanel(page);
    const reply = assistants.nth(count);
    await reply.and(page.locator('[data-status="complete"], [data-status="aborted"]')).waitFor({ timeout: 60_000 });
    const [conversation] = await callCore<{ id: string }[]>(page, 'conversations.list');
    const stored = await callCore<{ role: string; status: string; content: string }[]>(page, 'messages.list', { conversationId: conversation!.id });
    const last = stored.at(-1)!;
    expect(last.role).toBe('assistant');
    expect(last.content.length).toBeGreaterThan(0);
    expect(await reply.getAttribute('data-status')).toBe(last.status);
    await callCore(page, 'settings.set', { maxAnswerTokens: 24 });
    await waitForJobsIdle(page);
  });

  it('the memory core closed while unlocked and while locked, and a browser restart: locked at restart, nothing lost', async () => {
    const before = await storedState(page);
    expect(before.conversations.length).toBeGreaterThan(0);
    // Closed while unlocked: the key was only in its memory.
    await page.evaluate(() => chrome.offscreen.closeDocument());
    await page.reload();
    await unlockFromPanel(page);
    expect(await storedState(page)).toEqual(before);
    // Closed while locked.
    await callCore(page, 'vault.lock');
    await page.getByTestId('unlock-screen').waitFor();
    await page.evaluate(() => chrome.offscreen.closeDocument());
    await page.reload();
    await unlockFromPanel(page);
    expect(await storedState(page)).toEqual(before);
    // The browser closed and started again.
    await session.launch();
    page = await session.browser.openPanel();
    await page.setViewportSize({ width: 400, height: 760 });
    await unlockFromPanel(page);
    expect(await storedState(page)).toEqual(before);
  });

  it('on disk after the lock went on and a browser restart: what was written sealed is in no IndexedDB file; the plain values written before stay (LevelDB)', async () => {
    // Texts only the turns made after the lock went on contain: written sealed, never plain.
    const sealedOnly = [`Remember: ${SECRET_EN}`, `记住：${SECRET_ZH}`];
    const files = scanProfileFiles(session.profile, session.browser.extensionId, [...FILE_NEEDLES, ...sealedOnly]);
    keepScan('disk-lock-on-restarted', files);
    expect(files.files.some((f) => f.endsWith('.log') || f.endsWith('.ldb'))).toBe(true);
    expect(files.hits.filter((h) => sealedOnly.includes(h.needle))).toEqual([]);
    // A known limit, stated in README: the rows the in-place pass overwrote keep their old plain
    // values in LevelDB's files (here its journal, `*.log`) until LevelDB compacts them, which a page
    // cannot ask for (deleting the database, or every database of the origin, left them too when
    // probed). When this fails, the platform dropped them: turn it into "no hit at all".
    expect(files.hits.map((h) => h.needle)).toEqual(expect.arrayContaining(FILE_NEEDLES));
  });

  it('export while locked is refused with `locked` (the panel asks to unlock); an age backup exports and imports with the lock on', async () => {
    await callCore(page, 'vault.lock');
    await page.getByTestId('unlock-screen').waitFor();
    expect(await refusal(page, 'memory.export', { passphrase: 'backup passphrase' })).toMatchObject({ domain: 'vault', code: 'locked' });
    await unlockFromPanel(page);

    // A new chat open, so the conversation removed below is not the one on screen.
    await page.getByTestId('tab-chat').click();
    // The click only asks the core to create the chat: wait for it to be stored before the snapshot.
    const countBefore = (await callCore<unknown[]>(page, 'conversations.list')).length;
    await page.getByTestId('new-conversation').click();
    await expect.poll(async () => (await callCore<unknown[]>(page, 'conversations.list')).length).toBe(countBefore + 1);
    const before = await storedState(page);
    const removed = before.conversations.find((c) => (c as { messages: unknown[] }).messages.length > 0) as { id: string };
    await page.getByTestId('tab-memory').click();
    // With the lock on only encrypted backups are written: Export waits for a backup passphrase.
    await openMemorySection(page, 'data');
    await page.getByTestId('backup-needs-passphrase').waitFor();
    expect(await page.getByTestId('memory-export').isDisabled()).toBe(true);
    await page.getByTestId('backup-passphrase').fill('backup passphrase');
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), page.getByTestId('memory-export').click()]);
    const path = join(session.profile, `vault-${download.suggestedFilename()}`);
    await download.saveAs(path);
    expect(readFileSync(path).subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    // Remove the conversation with the secrets, then restore it from the encrypted backup.
    await callCore(page, 'conversations.delete', { id: removed.id });
    expect((await storedState(page)).conversations).toHaveLength(before.conversations.length - 1);
    await page.getByTestId('memory-import-input').setInputFiles(path);
    await page.getByTestId('import-report').waitFor({ timeout: 120_000 });
    await waitForJobsIdle(page);
    expect(await storedState(page)).toEqual(before);
    // The import's staging files held plaintext for a moment at most: nothing of the secrets is left.
    expect((await scanRawStores(session, page)).hits).toEqual([]);
  });

  it('a plain file imported with the lock on is sealed as the panel stages it: no plaintext byte of it is written to OPFS', async () => {
    // Every chunk the panel writes to an OPFS file is recorded (decoded as UTF-8) before it is written.
    await page.evaluate(() => {
      const seen: string[] = [];
      (globalThis as { __opfsWrites?: string[] }).__opfsWrites = seen;
      const proto = FileSystemWritableFileStream.prototype;
      const write = proto.write;
      proto.write = function (this: FileSystemWritableFileStream, data: FileSystemWriteChunkType) {
        if (ArrayBuffer.isView(data) || data instanceof ArrayBuffer) seen.push(new TextDecoder().decode(data));
        return write.call(this, data);
      };
    });
    const path = join(session.profile, 'vault-locker-note.md');
    writeFileSync(path, `# Locker\n\n${SECRET_EN}. ${SECRET_ZH}.\n`);
    await page.getByTestId('memory-import-input').setInputFiles(path);
    await page.getByTestId('history-report').waitFor({ timeout: 120_000 });
    const writes = await page.evaluate(() => (globalThis as { __opfsWrites?: string[] }).__opfsWrites ?? []);
    expect(writes.length).toBeGreaterThan(0); // the file was staged through OPFS
    for (const secret of ['4711', '储物柜']) expect(writes.some((w) => w.includes(secret))).toBe(false);
    await waitForJobsIdle(page);
    expect((await scanRawStores(session, page)).hits).toEqual([]);
  });

  it('the Privacy section and the unlock screen in Chinese', async () => {
    await callCore(page, 'settings.set', { locale: 'zh_CN' });
    await page.getByTestId('tab-settings').click();
    await page.getByTestId('vault-settings').waitFor();
    await shoot(page, 'privacy-on-zh', '[data-testid="vault-settings"]');
    await page.getByTestId('vault-change-open').click();
    await shoot(page, 'privacy-change-zh', '[data-testid="vault-settings"]');
    await page.getByTestId('header-lock').click();
    await page.getByTestId('unlock-forgot').click();
    await shoot(page, 'unlock-forgot-zh');
    expect(await page.getByTestId('unlock-screen').textContent()).toContain('Recall 已锁定');
    await page.getByTestId('unlock-passphrase').fill(PASSPHRASE);
    await page.getByTestId('unlock-submit').click();
    await page.getByTestId('tab-chat').waitFor();
    await callCore(page, 'settings.set', { locale: 'en' });
  });

  it('Settings: the auto-lock choice is saved; changing the passphrase makes the old one wrong and the new one unlock; turning the lock off decrypts in place', async () => {
    await page.getByTestId('tab-settings').click();
    await page.getByTestId('vault-auto-lock').selectOption('60');
    await page.locator('[data-testid="vault-done"][data-action="autoLock"]').waitFor();
    expect((await callCore<VaultStatus>(page, 'vault.status')).autoLockMinutes).toBe(60);
    await page.getByTestId('vault-auto-lock').selectOption('browser');
    await expect.poll(async () => (await callCore<VaultStatus>(page, 'vault.status')).autoLockMinutes).toBeNull();

    const next = 'a brand new passphrase';
    await page.getByTestId('vault-change-open').click();
    await page.getByTestId('vault-change-current').fill('not the passphrase');
    await page.getByTestId('vault-change-next').fill(next);
    await page.getByTestId('vault-change-repeat').fill(next);
    await page.getByTestId('vault-change-submit').click();
    await expect.poll(() => page.locator('[data-testid="vault-error"][data-action="change"]').getAttribute('data-code')).toBe('wrong_passphrase');
    await page.getByTestId('vault-change-current').fill(PASSPHRASE);
    await page.getByTestId('vault-change-submit').click();
    await page.locator('[data-testid="vault-done"][data-action="change"]').waitFor({ timeout: 30_000 });
    await page.getByTestId('vault-lock-now').click();
    await page.getByTestId('unlock-screen').waitFor();
    await page.getByTestId('unlock-passphrase').fill(PASSPHRASE);
    await page.getByTestId('unlock-submit').click();
    await expect.poll(() => page.getByTestId('unlock-error').getAttribute('data-code')).toBe('wrong_passphrase');
    await unlockFromPanel(page, next);

    // Turning the lock off asks the passphrase and decrypts in place: the same data, readable again.
    const before = await storedState(page);
    await page.getByTestId('tab-settings').click();
    await page.getByTestId('vault-disable-open').click();
    await page.getByTestId('vault-disable-passphrase').fill(PASSPHRASE);
    await page.getByTestId('vault-disable-submit').click();
    await expect.poll(() => page.locator('[data-testid="vault-error"][data-action="disable"]').getAttribute('data-code')).toBe('wrong_passphrase');
    await page.getByTestId('vault-disable-passphrase').fill(next);
    await page.getByTestId('vault-disable-submit').click();
    await page.locator('[data-testid="vault-settings"][data-enabled="false"]').waitFor({ timeout: 120_000 });
    expect(await callCore<VaultStatus>(page, 'vault.status')).toMatchObject({ enabled: false, locked: false, migrating: null });
    expect(await page.getByTestId('header-lock').count()).toBe(0);
    expect(await storedState(page)).toEqual(before);
    expect((await scanRawStores(session, page)).hits.map((h) => h.where.replace(/\[.*$/, ''))).toContain('idb:recall/messages');
  });

  it('a forgotten passphrase: "Erase everything and start over" works while locked and leaves the lock off', async () => {
    await callCore(page, 'vault.enable', { passphrase: PASSPHRASE });
    await expect.poll(async () => (await callCore<VaultStatus>(page, 'vault.status')).migrating, { timeout: 120_000 }).toBeNull();
    await callCore(page, 'vault.lock');
    await page.getByTestId('unlock-screen').waitFor();
    await page.getByTestId('unlock-forgot').click();
    await shoot(page, 'unlock-forgot-en');
    await page.getByTestId('unlock-erase').click();
    await page.getByTestId('unlock-erase-confirm').click();
    // The core must answer `memory.eraseAll` while locked (the data cannot be read, so it can only go).
    await page.getByTestId('tab-chat').or(page.getByTestId('unlock-erase-error')).waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('unlock-erase-error').count(), 'Erase everything was refused while locked').toBe(0);
    expect(await callCore<VaultStatus>(page, 'vault.status')).toMatchObject({ enabled: false, locked: false });
    expect(await storedState(page)).toEqual({ conversations: [], memories: [] });
    expect(session.browser.console.errors).toEqual([]);
  });
});
