/**
 * Issue 14 item 4 in real Chromium with the real stories260K GGUF through wllama: profiles keep
 * their memories apart. A secret said in profile Work (English and Chinese) is retrieved in a
 * new Work conversation (so the check can fail) and never in profile Home (the prompt traces);
 * deleting Work from the profile picker leaves neither secret nor any id of Work in any object
 * store of the extension's IndexedDB, while Home's conversation and memories stay. The profiles
 * are created, switched and deleted through the panel's ProfilePicker.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callCore,
  FIXTURE_GGUF as GGUF,
  idbGetAll,
  idbTableNames,
  lastReplyTrace,
  openPanelWithFixtureModel,
  sendFromPanel as send,
  startExtensionSession,
  waitForJobsIdle,
  type ExtensionSession,
} from './harness';
import { stringsOf } from '../helpers/strings-of';

if (!GGUF) console.warn('[e2e] ../shared/fixtures is absent: skipping the profiles test (it needs the fixture GGUF).');

const SECRET = 'my locker code is 4711';
const SECRET_ZH = '我的储物柜密码是八二六三';
/** The secrets' values: no other text of the test contains them (Home's own questions name the locker, not the code). */
const NEEDLES = ['4711', '八二六三'];
/** Random UUIDs (row ids) masked: one can spell "4711" by chance (≈ 29 in 65,536 per id), which is no leak. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const maskIds = (text: string) => text.replace(UUID, '<uuid>');

/** Every string (values and keys) of every row of every table of the `recall` database, per table; binary data is skipped. */
async function storedStrings(page: Page): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await idbTableNames(page)) out[name] = stringsOf(await idbGetAll(page, name)).join('\n');
  return out;
}

/** The prompt (system message and every turn) of the last reply of the newest conversation of the active profile (the open one). */
async function lastPrompt(page: Page): Promise<string> {
  const trace = await lastReplyTrace<{ messages: { content: string }[] }>(page);
  return trace.messages.map((m) => m.content).join('\n');
}

/** Starts a new chat and waits until the transcript is empty (`sendFromPanel` counts the replies shown before it sends). */
async function newChat(page: Page): Promise<void> {
  await page.getByTestId('new-conversation').click();
  await expect.poll(() => page.getByTestId('message').count()).toBe(0);
}

/** Waits until a switch to profile `namespace` has opened its latest conversation (the drawer marks it current). */
async function openedLatest(page: Page, namespace: string): Promise<void> {
  const [latest] = await callCore<{ id: string }[]>(page, 'conversations.list', { namespace });
  await page.locator(`[data-testid="conversation-item"].current[data-id="${latest!.id}"]`).waitFor({ state: 'attached' });
}

async function openDrawer(page: Page): Promise<void> {
  await page.getByTestId('conversations-toggle').click();
  await page.getByTestId('profile-picker').waitFor();
}

/** Closes the drawer with Escape and waits until it is closed (pressed again if a re-render took the first key). */
async function closeDrawer(page: Page): Promise<void> {
  const drawer = page.locator('#conversation-drawer.open');
  await expect
    .poll(async () => {
      if ((await drawer.count()) > 0) await page.keyboard.press('Escape');
      return drawer.count();
    })
    .toBe(0);
}

describe.skipIf(!GGUF)('profiles keep memories apart (real extension, real model)', () => {
  let session: ExtensionSession;
  beforeAll(async () => void (session = await startExtensionSession()));
  afterAll(() => session?.dispose());

  it('a secret of Work is never retrieved in Home, and deleting Work leaves nothing of it in IndexedDB', async () => {
    const page = await openPanelWithFixtureModel(session);

    // Home (the default profile, renamed): one memory of its own.
    await openDrawer(page);
    await page.getByTestId('profile-rename').click();
    await page.locator('#profile-rename-input').fill('Home');
    await page.locator('#profile-rename-input').press('Enter');
    await page.locator('[data-testid="profile-select"] option', { hasText: 'Home' }).waitFor({ state: 'attached' });
    await closeDrawer(page);
    await send(page, 'Remember that my bike is blue');

    // Work: created from the picker, which makes it active; the secrets are said in a Work chat.
    await openDrawer(page);
    await page.getByTestId('profile-new-name').fill('Work');
    await page.getByTestId('profile-create').click();
    await page.getByTestId('profile-delete').waitFor(); // only a non-default profile can be deleted: Work is active
    await expect.poll(() => page.getByTestId('conversation-item').count()).toBe(0);
    await closeDrawer(page);
    await send(page, SECRET);
    await send(page, SECRET_ZH);
    await waitForJobsIdle(page);
    const { profiles, activeId: workId } = await callCore<{ profiles: { id: string; name: string }[]; activeId: string }>(page, 'profiles.list');
    expect(profiles.map((p) => p.name)).toEqual(['Home', 'Work']);

    // In a new Work conversation the secrets come back as memories (so the checks below can fail).
    await newChat(page);
    await send(page, 'What is my locker code?');
    expect(await lastPrompt(page)).toContain('4711');
    await send(page, '我的储物柜密码是什么？');
    expect(await lastPrompt(page)).toContain('八二六三');

    // Switched to Home: the same questions, and no prompt holds either secret.
    await openDrawer(page);
    await page.getByTestId('profile-select').selectOption('default');
    await expect.poll(() => page.getByTestId('conversation-item').count()).toBe(1);
    await openedLatest(page, 'default');
    await closeDrawer(page);
    await newChat(page);
    for (const question of ['What is my locker code?', '我的储物柜密码是什么？']) {
      await send(page, question);
      const prompt = await lastPrompt(page);
      for (const needle of NEEDLES) expect(prompt, `${needle} after "${question}"`).not.toContain(needle);
    }
    const homeMemories = await callCore<{ text: string }[]>(page, 'memory.list', { namespace: 'default' });
    expect(homeMemories.map((m) => m.text.toLowerCase()).join('\n')).toContain('my bike is blue');
    expect(homeMemories.map((m) => m.text).join('\n')).not.toContain('4711');

    // Delete Work from the picker (it asks first).
    await openDrawer(page);
    await page.getByTestId('profile-select').selectOption(workId);
    await openedLatest(page, workId);
    await page.getByTestId('profile-delete').click();
    await page.getByTestId('profile-delete-confirm').click();
    await page.locator('[data-testid="profile-select"] option', { hasText: 'Work' }).waitFor({ state: 'detached' });
    expect(await page.getByTestId('profile-select').inputValue()).toBe('default');
    await closeDrawer(page);
    await waitForJobsIdle(page);

    const stored = await storedStrings(page);
    expect(Object.keys(stored)).toEqual(
      expect.arrayContaining(['conversations', 'messages', 'memories', 'memoryHistory', 'memoryIndex', 'promptTraces', 'jobs', 'profiles']),
    );
    for (const [store, text] of Object.entries(stored)) {
      for (const needle of NEEDLES) expect(maskIds(text), `${needle} in ${store}`).not.toContain(needle);
      expect(text, `${workId} in ${store}`).not.toContain(workId);
    }
    // Home keeps its conversations and its memory.
    expect((await callCore<unknown[]>(page, 'conversations.list', { namespace: 'default' })).length).toBe(2);
    expect((await callCore<{ text: string }[]>(page, 'memory.list', { namespace: 'default' })).map((m) => m.text.toLowerCase()).join('\n')).toContain(
      'my bike is blue',
    );
    expect(stored.memories!.toLowerCase()).toContain('my bike is blue');
    expect(stored.memories).toContain('我的储物柜密码是什么'); // Home's own round about the locker stays
    expect(session.browser.console.errors).toEqual([]);
  });
});
