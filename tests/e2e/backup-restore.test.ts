/**
 * Carry your memory out and erase it for real (issue 13, items 2, 4 and 5), in the built extension
 * in real Chromium, through the panel as a user does it: a store with conversations, messages,
 * memories (embedded by the packaged fixture embedder), an entity note, a strategy state, a
 * setting, a "not relevant here" row and a rejected suggestion is exported; "Erase… → Erase all data" leaves nothing of the user in IndexedDB, Cache
 * Storage, OPFS or extension storage (each enumerated after data was planted in it); importing
 * the file gives back the same conversations, messages, memories, feedback and rejected hashes. Then the same with a
 * passphrase: the file is an age file that Debian's `age -d` decrypts to the plain export
 * (skipped, saying why, when `age` or `script` is absent), a wrong passphrase is refused and the
 * right one restores; a cut-off file (encrypted or plain) is refused with the store unchanged.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCore, idbGetAll, openMemorySection, idbPut, startExtensionSession, waitForCore, waitForJobsIdle, type ExtensionSession } from './harness';

const PASSPHRASE = 'correct horse battery staple';
const SECRET = 'locker 4711';
const has = (tool: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const ageCli = has('age') && has('script');
if (!ageCli) console.warn('[e2e backup-restore] not decrypting with the age CLI: `age` (Debian package age) or `script` (util-linux) is not installed');

/** The user's state as the panel's core holds it: conversations, messages and memories (texts), one setting, "not relevant here" rows and rejected hashes. */
async function snapshot(page: Page) {
  const conversations = await callCore<{ id: string; title: string }[]>(page, 'conversations.list');
  const messages: string[] = [];
  for (const c of conversations) {
    for (const m of await callCore<{ id: string; content: string }[]>(page, 'messages.list', { conversationId: c.id })) messages.push(`${m.id}: ${m.content}`);
  }
  const memories = await callCore<{ text: string; kind: string }[]>(page, 'memory.list', { namespace: 'default', includeInvalid: true, limit: 1000 });
  return {
    conversations: conversations.map((c) => `${c.id}: ${c.title}`).sort(),
    messages: messages.sort(),
    memories: memories.map((m) => `${m.kind}: ${m.text}`).sort(),
    memoryTopK: (await callCore<{ memoryTopK: number }>(page, 'settings.get')).memoryTopK,
    feedback: (await idbGetAll<{ memoryId: string; messageId: string; query: string }>(page, 'feedback'))
      .map((f) => `${f.memoryId} ${f.messageId}: ${f.query}`)
      .sort(),
    rejected: (await idbGetAll<{ namespace: string; hash: string; status: string }>(page, 'suggestions'))
      .filter((r) => r.status === 'rejected')
      .map((r) => `${r.namespace}: ${r.hash}`)
      .sort(),
  };
}

/** Everything the extension's pages can store, enumerated from the panel and the service worker. */
async function storageOf(session: ExtensionSession, page: Page) {
  const fromPage = await page.evaluate(async () => {
    const databases = (await indexedDB.databases()).map((d) => d.name ?? '').sort();
    const rows: Record<string, number> = {};
    const jobTypes: string[] = [];
    if (databases.includes('recall')) {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open('recall');
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      for (const name of [...db.objectStoreNames]) {
        const store = db.transaction(name, 'readonly').objectStore(name);
        rows[name] = await new Promise<number>((r) => (store.count().onsuccess = (e) => r((e.target as IDBRequest<number>).result)));
      }
      const jobs = db.transaction('jobs', 'readonly').objectStore('jobs');
      const all = await new Promise<{ type: string }[]>((r) => (jobs.getAll().onsuccess = (e) => r((e.target as IDBRequest<{ type: string }[]>).result)));
      jobTypes.push(...all.map((j) => j.type));
      db.close();
    }
    const cacheNames = (await caches.keys()).sort();
    const opfs: string[] = [];
    const walk = async (dir: FileSystemDirectoryHandle, prefix: string) => {
      for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
        opfs.push(`${prefix}${name}`);
        if (handle.kind === 'directory') await walk(handle as FileSystemDirectoryHandle, `${prefix}${name}/`);
      }
    };
    await walk(await navigator.storage.getDirectory(), '');
    return { databases, rows, jobTypes, cacheNames, opfs: opfs.sort(), localStorage: Object.keys(localStorage) };
  });
  // chrome.storage exists only with the "storage" permission, which Recall does not ask for: then nothing can be there.
  const extensionStorage = await session.browser.serviceWorker.evaluate(async () =>
    chrome.storage ? { local: await chrome.storage.local.get(null), session: await chrome.storage.session.get(null) } : 'no storage permission',
  );
  return { ...fromPage, extensionStorage };
}

/** Opens the panel on its memory tab once the core answers. */
async function openMemoryTab(session: ExtensionSession): Promise<Page> {
  const page = await session.browser.openPanel();
  await page.getByTestId('tab-memory').click();
  await waitForCore(page);
  await openMemorySection(page, 'data');
  return page;
}

/** Clicks Export and saves the download into the profile folder. @returns its path and name. */
async function exportFromPanel(page: Page, session: ExtensionSession): Promise<{ path: string; name: string }> {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), page.getByTestId('memory-export').click()]);
  const path = join(session.profile, `${Date.now()}-${download.suggestedFilename()}`);
  await download.saveAs(path);
  return { path, name: download.suggestedFilename() };
}

/** Picks `path` in the Import input; resolves with the report's counts or the error shown. */
async function importFromPanel(page: Page, path: string): Promise<{ report: { added: string | null } } | { error: string }> {
  await page.getByTestId('memory-import-input').setInputFiles(path);
  const report = page.getByTestId('import-report');
  const error = page.getByTestId('import-error');
  // One wait for either (a race of two waits would leave the loser's rejection unhandled).
  await report.or(error).first().waitFor({ timeout: 120_000 });
  if (await error.isVisible()) return { error: (await error.textContent()) ?? '' };
  return { report: { added: await report.getAttribute('data-added') } };
}

/** Records every phase the transfer progress bar shows (in `window.phases`). */
async function watchPhases(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen = new Set<string>();
    (window as unknown as { phases: Set<string> }).phases = seen;
    new MutationObserver(() => {
      const bar = document.querySelector('[data-testid="transfer-progress"]');
      if (bar) seen.add(bar.getAttribute('data-phase') ?? '');
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  return () => page.evaluate(() => [...(window as unknown as { phases: Set<string> }).phases]);
}

describe('export, erase all data, import — plain and encrypted', () => {
  let session: ExtensionSession;
  let page: Page;
  let before: Awaited<ReturnType<typeof snapshot>>;
  let plainFile: string;
  beforeAll(async () => {
    session = await startExtensionSession();
    page = await openMemoryTab(session);
  });
  afterAll(() => session?.dispose());

  it('export → erase all data (nothing of the user left anywhere) → import gives the same conversations, messages and memories', async () => {
    await callCore(page, 'settings.set', { memoryTopK: 5 });
    for (const text of [`My ${SECRET}`, 'I live in Lisbon', '我喜欢喝乌龙茶']) await callCore(page, 'memory.add', { namespace: 'default', kind: 'fact', text });
    const { id } = await callCore<{ id: string }>(page, 'conversations.create', { title: 'Gym plans' });
    await idbPut(page, {
      messages: [
        { id: `${id}#0`, conversationId: id, seq: 0, role: 'user', content: `Remember my ${SECRET}`, createdAt: 1, status: 'complete' },
        { id: `${id}#1`, conversationId: id, seq: 1, role: 'assistant', content: 'Noted, I will remember it.', createdAt: 2, status: 'complete' },
      ],
      entities: [{ id: 'e-1', conversationId: id, key: 'locker', name: 'Locker', summary: SECRET, updatedAt: 3, lastSeenSeq: 0 }],
      strategyState: [{ conversationId: id, strategy: 'summary-buffer', state: { summary: SECRET, foldedThroughSeq: 0 }, updatedAt: 3 }],
    });
    await waitForJobsIdle(page); // the memories are embedded
    // "Not relevant here" on a memory under the reply, and a rejected suggestion (its hash only).
    const [lisbon] = (await callCore<{ id: string; text: string }[]>(page, 'memory.list', { namespace: 'default' })).filter(
      (m) => m.text === 'I live in Lisbon',
    );
    await idbPut(page, {
      feedback: [
        {
          id: 'f-1',
          memoryId: lisbon!.id,
          namespace: 'default',
          query: 'Where is my gym?',
          terms: ['gym'],
          embedding: null,
          embeddingModel: null,
          messageId: `${id}#1`,
          conversationId: id,
          createdAt: 4,
        },
      ],
      suggestions: [
        {
          id: 's-1',
          namespace: 'default',
          hash: '0123abcd',
          status: 'rejected',
          kind: 'fact',
          text: '',
          importance: 0.5,
          validFrom: null,
          validUntil: null,
          sourceConversationId: id,
          sourceMessageIds: [],
          messageTime: 1,
          createdAt: 5,
        },
      ],
    });
    before = await snapshot(page);
    expect([before.feedback.length, before.rejected.length]).toEqual([1, 1]);
    expect(before.messages).toHaveLength(2);
    expect(before.memories).toHaveLength(3);

    const exported = await exportFromPanel(page, session);
    expect(exported.name).toMatch(/^recall-export-\d{4}-\d\d-\d\d\.json$/);
    plainFile = exported.path;
    const file = JSON.parse(readFileSync(plainFile, 'utf8'));
    expect([file.version, file.entities.length, file.strategyState.length, file.profiles]).toEqual([2, 1, 1, [{ namespace: 'default' }]]);

    // Plant the user's traces where an extension page can put them, beyond what the core wrote.
    await page.evaluate(async (secret) => {
      localStorage.setItem('recall.e2e.note', secret);
      await (await caches.open('e2e-user-cache')).put('https://example.com/note', new Response(secret));
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('e2e-notes', { create: true });
      const writable = await (await dir.getFileHandle('note.txt', { create: true })).createWritable();
      await writable.write(secret);
      await writable.close();
    }, SECRET);
    const planted = await storageOf(session, page);
    expect(planted.rows.memories).toBe(3);
    expect(planted.cacheNames).toContain('e2e-user-cache');
    expect(planted.opfs).toContain('e2e-notes/note.txt');
    expect(planted.localStorage).toContain('recall.e2e.note');

    await page.getByTestId('erase-all').click();
    await page.getByTestId('erase-all-confirm').click();
    // The erase's own notice (the export above left an info notice of its own: "Downloaded …").
    await expect
      .poll(() => page.locator('[data-testid="notice"][data-kind="info"]', { hasText: 'Everything was erased' }).count(), { timeout: 60_000 })
      .toBeGreaterThan(0);

    const after = await storageOf(session, page);
    // IndexedDB: only Recall's database, every table empty but the daily maintenance job (no user data) and the model list.
    expect(after.databases).toEqual(['recall']);
    for (const [table, count] of Object.entries(after.rows)) expect(count, table).toBe(table === 'jobs' ? after.jobTypes.length : 0);
    expect(after.jobTypes).toEqual(['ltm.maintenance']);
    // Cache Storage: no cache but the engines' model caches (none were downloaded here).
    expect(after.cacheNames.filter((name) => !['webllm/model', 'webllm/config', 'webllm/wasm', 'transformers-cache'].includes(name))).toEqual([]);
    // OPFS: only the model folders (if any), with no file of the user.
    expect(after.opfs.filter((path) => !/^(models|cache)(\/|$)/.test(path))).toEqual([]);
    expect(after.localStorage).toEqual([]);
    expect(after.extensionStorage).toSatisfy((s: unknown) => s === 'no storage permission' || JSON.stringify(s) === '{"local":{},"session":{}}');
    expect((await snapshot(page)).memoryTopK).toBe(8); // the default again

    const imported = await importFromPanel(page, plainFile);
    expect(imported).toEqual({ report: { added: expect.any(String) } });
    expect(await snapshot(page)).toEqual(before);
  });

  it('an encrypted export decrypts with `age -d`; a wrong passphrase is refused and the right one restores', async () => {
    await page.getByTestId('backup-passphrase').fill(PASSPHRASE);
    const encrypted = await exportFromPanel(page, session);
    expect(encrypted.name).toMatch(/\.json\.age$/);
    expect(readFileSync(encrypted.path).subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    if (ageCli) {
      const out = `${encrypted.path}.json`;
      // age reads a passphrase only from a terminal: `script` gives it one whose input is our stdin.
      execFileSync('script', ['-qec', `age -d -o '${out}' '${encrypted.path}'`, '/dev/null'], {
        input: `${PASSPHRASE}\n`,
        timeout: 30_000,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      const plain = JSON.parse(readFileSync(out, 'utf8'));
      expect([plain.format, plain.version, plain.memories.length, plain.messages.length]).toEqual(['recall-export', 2, 3, 2]);
    }

    await callCore(page, 'memory.eraseAll');
    const empty = await snapshot(page);
    expect([empty.conversations, empty.memories]).toEqual([[], []]);
    await page.getByTestId('backup-passphrase').fill('not the passphrase');
    const refused = await importFromPanel(page, encrypted.path);
    expect(refused).toEqual({ error: expect.stringContaining('The passphrase does not open this backup') });
    expect(await snapshot(page)).toEqual(empty);

    await page.getByTestId('backup-passphrase').fill(PASSPHRASE);
    const phases = await watchPhases(page);
    expect(await importFromPanel(page, encrypted.path)).toEqual({ report: { added: expect.any(String) } });
    expect(await phases()).toEqual(expect.arrayContaining(['upload', 'decrypt']));
    expect(await snapshot(page)).toEqual(before);

    // A cut-off file — encrypted (right passphrase) or plain — is refused and the store stays as it is.
    const cutEncrypted = `${encrypted.path}.cut.age`;
    const bytes = readFileSync(encrypted.path);
    writeFileSync(cutEncrypted, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    expect(await importFromPanel(page, cutEncrypted)).toEqual({ error: expect.stringContaining('cut off or damaged') });
    expect(await snapshot(page)).toEqual(before);
    await page.getByTestId('backup-passphrase').fill('');
    const cutPlain = `${plainFile}.cut.json`;
    const text = readFileSync(plainFile, 'utf8');
    writeFileSync(cutPlain, text.slice(0, Math.floor(text.length * 0.6)));
    expect(await importFromPanel(page, cutPlain)).toEqual({ error: expect.stringMatching(/cut off|not valid JSON/) });
    expect(await snapshot(page)).toEqual(before);
  });

  it('Erase… lists the downloaded models with their sizes and deletes one after its own question; "all memories" keeps the conversations', async () => {
    const hf = 'https://huggingface.co/Xenova/paraphrase-multilingual-MiniLM-L12-v2/resolve/main';
    await page.evaluate(async (base) => {
      const cache = await caches.open('transformers-cache');
      await cache.put(`${base}/onnx/model_quantized.onnx`, new Response(new Uint8Array(3000), { headers: { 'content-length': '3000' } }));
      await cache.put(`${base}/tokenizer.json`, new Response(new Uint8Array(500)));
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('cache', { create: true });
      const writable = await (await dir.getFileHandle(`${'c'.repeat(40)}_stories.gguf`, { create: true })).createWritable();
      await writable.write(new Uint8Array(1200));
      await writable.close();
    }, hf);
    await page.getByTestId('erase-all').click();
    const rows = page.getByTestId('downloaded-model');
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(2);
    expect(await rows.evaluateAll((els) => els.map((e) => [e.getAttribute('data-id'), e.getAttribute('data-size')]))).toEqual([
      ['transformers:Xenova/paraphrase-multilingual-MiniLM-L12-v2', '3500'],
      [`wllama:${'c'.repeat(40)}_stories.gguf`, '1200'],
    ]);
    const first = rows.first();
    await first.getByTestId('model-delete').click();
    await first.getByTestId('model-delete-confirm').click();
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(1);
    expect(await page.evaluate(async () => (await (await caches.open('transformers-cache')).keys()).length)).toBe(0);

    await page.getByTestId('erase-memories-confirm').click();
    await expect.poll(async () => (await snapshot(page)).memories, { timeout: 30_000 }).toEqual([]);
    const left = await snapshot(page);
    expect([left.conversations, left.messages, left.memoryTopK]).toEqual([before.conversations, before.messages, before.memoryTopK]);
  });
});
