/**
 * Profiles (issue 14 item 4, `src/core/profiles.ts`): records and their rules (the default one
 * always exists and stays, names unique by `profileNameKey`, English and Chinese), the active
 * profile persisted across a restart and reset by an erase, the namespace flowing through the
 * conversation requests (`CORE_HANDLERS`), and a delete that leaves nothing of one profile in any
 * table while the other keeps everything. The whole core runs; only the chat model is scripted
 * (an instruction-following LLM cannot run here: `noteTakingEngine`).
 */
import Dexie from 'dexie';
import { describe, expect, it } from 'vitest';
import { CORE_HANDLERS } from '../../src/core/handlers';
import type { Core } from '../../src/core/index';
import { RecallDB, TABLE_PROFILE_LINK } from '../../src/db/schema';
import { DEFAULT_NAMESPACE } from '../../src/model/memory';
import { ACTIVE_PROFILE_KEY, profileNameKey } from '../../src/model/profiles';
import { saveProfileEdit } from '../../src/memory/long-term/profile-summary';
import { setReviewEnabled, suggestItems } from '../../src/memory/long-term/review';
import { noteTakingEngine, useTestCores } from '../helpers/core-harness';
import { stringsOf } from '../helpers/strings-of';
import { V4_STORES } from '../helpers/published-schemas';

const cores = useTestCores();
const ctx = { startedAt: 0 };

/** Every string value (and object key) stored anywhere in `db`, one per line: typed arrays and numbers are skipped (a number can spell "4711"). */
async function storedStrings(db: RecallDB): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const table of db.tables) {
    // Rows as stored: the memories' reading hook only adds vectors back, which are skipped anyway.
    const acc = stringsOf(await table.toArray());
    out.set(table.name, acc.join('\n'));
  }
  return out;
}

const call = <K extends keyof typeof CORE_HANDLERS>(core: Core, type: K, data: Parameters<(typeof CORE_HANDLERS)[K]>[1]) =>
  Promise.resolve((CORE_HANDLERS[type] as (c: Core, d: unknown, x: typeof ctx) => unknown)(core, data, ctx)) as Promise<
    Awaited<ReturnType<(typeof CORE_HANDLERS)[K]>>
  >;

describe('profile records', () => {
  it('lists the default profile first even with no row, and creates, renames and refuses by the rules', async () => {
    const { core } = await cores.start();
    expect(await core.profiles.list()).toEqual({ profiles: [{ id: DEFAULT_NAMESPACE, name: '', createdAt: 0 }], activeId: DEFAULT_NAMESPACE });
    const work = await core.profiles.create('  Work  ');
    const home = await core.profiles.create('家庭');
    expect(work.name).toBe('Work');
    expect(work.id).not.toBe(DEFAULT_NAMESPACE);
    expect(home.name).toBe('家庭');
    expect((await core.profiles.list()).profiles.map((p) => p.name)).toEqual(['', 'Work', '家庭']);
    // Unique by NFKC + case + spaces: "work", full-width "ｗｏｒｋ", " WORK " are the same name; "工作" is another.
    for (const taken of ['work', 'ｗｏｒｋ', ' WORK ', '家庭 '])
      await expect(core.profiles.create(taken)).rejects.toMatchObject({ code: 'profile_name_taken' });
    expect((await core.profiles.create('工作')).name).toBe('工作');
    await expect(core.profiles.create('   ')).rejects.toMatchObject({ code: 'profile_name_empty' });
    await expect(core.profiles.create('x'.repeat(61))).rejects.toMatchObject({ code: 'profile_name_too_long', params: { chars: 61, maxChars: 60 } });
    expect((await core.profiles.create('名'.repeat(60))).name).toHaveLength(60);
    // Rename: to its own name in another case is fine, to another's is not; the default one can be renamed.
    expect((await core.profiles.rename(work.id, 'WORK')).name).toBe('WORK');
    await expect(core.profiles.rename(work.id, '家庭')).rejects.toMatchObject({ code: 'profile_name_taken' });
    expect(await core.profiles.rename(DEFAULT_NAMESPACE, 'Personal')).toEqual({ id: DEFAULT_NAMESPACE, name: 'Personal', createdAt: 0 });
    await expect(core.profiles.create('personal')).rejects.toMatchObject({ code: 'profile_name_taken' });
    await expect(core.profiles.rename('nope', 'x')).rejects.toMatchObject({ code: 'profile_not_found' });
    await expect(core.profiles.switchTo('nope')).rejects.toMatchObject({ code: 'profile_not_found' });
    await expect(core.profiles.delete(DEFAULT_NAMESPACE)).rejects.toMatchObject({ code: 'profile_default_kept' });
    expect(profileNameKey(' Ｗork  Trip ')).toBe('work trip');
  });

  it('keeps the active profile across a restart; an erase or a deleted profile makes the default one active', async () => {
    const told: string[][] = [];
    const first = await cores.start({ events: { profiles: (s) => void told.push([s.activeId, ...s.profiles.map((p) => p.name)]) } });
    const work = await first.core.profiles.create('Work');
    expect((await first.core.profiles.switchTo(work.id)).activeId).toBe(work.id);
    await first.core.profiles.rename(work.id, 'Office');
    // Every change is announced with the state after it (event.profiles).
    expect(told).toEqual([
      ['default', '', 'Work'],
      [work.id, '', 'Work'],
      [work.id, '', 'Office'],
    ]);
    await first.core.stop();
    const second = await cores.start({ db: first.db });
    expect(await second.core.profiles.activeId()).toBe(work.id);
    await second.core.eraseAll();
    expect(await second.core.profiles.list()).toEqual({ profiles: [{ id: DEFAULT_NAMESPACE, name: '', createdAt: 0 }], activeId: DEFAULT_NAMESPACE });
    // A stored id that is no profile (left by a delete cut short, or written by hand) reads as the default.
    await first.db.settings.put({ key: ACTIVE_PROFILE_KEY, value: 'profile-gone' });
    expect(await second.core.profiles.activeId()).toBe(DEFAULT_NAMESPACE);
    const trip = await second.core.profiles.create('Trip');
    await second.core.profiles.switchTo(trip.id);
    expect((await second.core.profiles.delete(trip.id)).activeId).toBe(DEFAULT_NAMESPACE);
    expect(await second.core.profiles.activeId()).toBe(DEFAULT_NAMESPACE);
  });

  it('lists a namespace used by conversations but without a row as a profile named after it', async () => {
    const { core } = await cores.start();
    await core.conversations.create({ strategy: { kind: 'full-buffer' }, namespace: 'imported' });
    expect((await core.profiles.list()).profiles).toEqual([
      { id: DEFAULT_NAMESPACE, name: '', createdAt: 0 },
      { id: 'imported', name: 'imported', createdAt: 0 },
    ]);
  });
});

describe('schema v9', () => {
  it('upgrades a v4 database with data: an empty profiles table, every row kept, its namespaces listed and deletable', async () => {
    const name = `profiles-v4-${crypto.randomUUID()}`;
    const v4 = new Dexie(name);
    v4.version(4).stores(V4_STORES);
    await v4.open();
    const conversation = (id: string, namespace: string) => ({ id, title: id, namespace, strategy: { kind: 'full-buffer' }, createdAt: 1, updatedAt: 1 });
    await v4.table('conversations').bulkAdd([conversation('c-home', DEFAULT_NAMESPACE), conversation('c-work', 'work')]);
    await v4.table('messages').bulkAdd([
      { id: 'm-home', conversationId: 'c-home', seq: 0, role: 'user', content: 'home garden note', status: 'complete', createdAt: 1 },
      { id: 'm-work', conversationId: 'c-work', seq: 0, role: 'user', content: 'work locker 4711', status: 'complete', createdAt: 1 },
    ]);
    v4.close();
    const db = cores.track(new RecallDB(name));
    const { core } = await cores.start({ db });
    expect(db.verno).toBeGreaterThanOrEqual(9);
    expect(await db.profiles.count()).toBe(0);
    expect(await db.messages.count()).toBe(2);
    expect((await core.profiles.list()).profiles.map((p) => [p.id, p.name])).toEqual([
      [DEFAULT_NAMESPACE, ''],
      ['work', 'work'],
    ]);
    expect((await core.conversations.list(DEFAULT_NAMESPACE)).map((c) => c.id)).toEqual(['c-home']);
    await core.profiles.delete('work');
    expect((await db.messages.toArray()).map((m) => m.id)).toEqual(['m-home']);
    expect((await core.profiles.list()).profiles.map((p) => p.id)).toEqual([DEFAULT_NAMESPACE]);
  });
});

describe('the namespace through the conversation requests', () => {
  it('creates in, lists and searches only the named profile, or the active one when the request names none', async () => {
    const { core } = await cores.start();
    const work = await core.profiles.create('Work');
    const inDefault = await call(core, 'conversations.create', { title: 'Garden plans' });
    expect(inDefault.namespace).toBe(DEFAULT_NAMESPACE);
    const inWork = await call(core, 'conversations.create', { title: 'Garden budget', namespace: work.id });
    expect(inWork.namespace).toBe(work.id);
    await core.profiles.switchTo(work.id);
    const byActive = await call(core, 'conversations.create', { title: 'Quarterly garden review' });
    expect(byActive.namespace).toBe(work.id);

    expect((await call(core, 'conversations.list', { namespace: DEFAULT_NAMESPACE })).map((c) => c.id)).toEqual([inDefault.id]);
    expect((await call(core, 'conversations.list', undefined)).map((c) => c.id).sort()).toEqual([inWork.id, byActive.id].sort());
    expect((await call(core, 'conversations.search', { query: 'garden', namespace: DEFAULT_NAMESPACE })).map((c) => c.id)).toEqual([inDefault.id]);
    expect((await call(core, 'conversations.search', { query: 'garden' })).map((c) => c.id).sort()).toEqual([inWork.id, byActive.id].sort());
    await expect(call(core, 'conversations.create', { namespace: 'profile-unknown' })).rejects.toMatchObject({ code: 'profile_not_found' });
    // Memory requests too: a panel that missed a delete writes nothing into a profile that is gone.
    expect((await call(core, 'memory.add', { namespace: work.id, kind: 'fact', text: 'Standup at nine' })).namespace).toBe(work.id);
    // Without a namespace (the service worker's "Remember this"): the active profile, Work here.
    expect((await call(core, 'memory.add', { kind: 'fact', text: 'Desk by the window' })).namespace).toBe(work.id);
    await core.memoryAdmin.delete((await core.memoryAdmin.list({ namespace: work.id, search: 'window' }))[0]!.id);
    expect((await call(core, 'memory.list', { namespace: work.id })).map((m) => m.text)).toEqual(['Standup at nine']);
    expect(await call(core, 'memory.list', { namespace: DEFAULT_NAMESPACE })).toEqual([]);
    for (const [type, data] of [
      ['memory.add', { namespace: 'profile-unknown', kind: 'fact', text: 'x' }],
      ['memory.list', { namespace: 'profile-unknown' }],
      ['memory.importSaved', { namespace: 'profile-unknown', text: '- x' }],
    ] as const) {
      await expect(call(core, type, data as never), type).rejects.toMatchObject({ code: 'profile_not_found' });
    }
    expect(await core.db.memories.count()).toBe(1);
    await expect(call(core, 'conversations.list', { namespace: 'profile-unknown' })).rejects.toMatchObject({ code: 'profile_not_found' });
  });
});

describe('deleting a profile', () => {
  it('leaves no row of it in any table, and every row of the other profile', async () => {
    const WORK_SECRET = 'my locker code is 4711';
    const WORK_SECRET_ZH = '我的储物柜密码是八二六三';
    const chat = noteTakingEngine('locker', `Locker code ${WORK_SECRET}`);
    const { core, db } = await cores.start({ chat: () => chat });
    expect(Object.keys(TABLE_PROFILE_LINK).sort()).toEqual(db.tables.map((t) => t.name).sort());

    const work = await core.profiles.create('Work');
    const home = DEFAULT_NAMESPACE;
    const w = await core.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 }, namespace: work.id });
    await core.chat.send({ conversationId: w.id, text: `Note: ${WORK_SECRET}`, requestId: 'w1' });
    await core.chat.send({ conversationId: w.id, text: WORK_SECRET_ZH, requestId: 'w2' });
    await core.chat.send({ conversationId: w.id, text: 'remember that my badge pin is 4711-badge', requestId: 'w3' });
    // A manual memory the user then deletes: a tombstone and a DELETE history entry that outlives it.
    const doomed = await core.memoryAdmin.add({ namespace: work.id, kind: 'fact', text: 'Work desk code 4711-desk' });
    await core.memoryAdmin.delete(doomed.id);
    const h = await core.conversations.create({ strategy: { kind: 'full-buffer' } });
    await core.chat.send({ conversationId: h.id, text: 'My garden has tomatoes', requestId: 'h1' });
    await core.memoryAdmin.add({ namespace: home, kind: 'fact', text: 'Home wifi is called Meadow' });
    await core.jobs.drain();
    // Jobs of Work still queued at delete time (a re-queued extraction) go with it.
    await db.jobs.add({
      id: 'queued-work-job',
      type: 'ltm.extract',
      payload: { conversationId: w.id, namespace: work.id, userMessageId: 'x', assistantMessageId: 'y' },
      status: 'queued',
      attempts: 0,
      maxAttempts: 3,
      runAfter: Date.now() + 3_600_000,
      createdAt: Date.now(),
      updatedAt: Date.now(),
    });
    // Review (issue 14 item 2) and the "about me" profile, keyed by namespace: a pending suggestion,
    // the review switch and an edited profile line of Work.
    await setReviewEnabled(db, work.id, true);
    await suggestItems(db, [{ kind: 'fact', text: 'Gym locker 4711-gym', importance: 0.5, validFrom: null, validUntil: null }], {
      namespace: work.id,
      conversationId: w.id,
      sourceMessageIds: [],
      messageTime: Date.now(),
    });
    await saveProfileEdit(db, work.id, [{ text: 'Locker 4711-about', pinned: true }]);
    await core.store.flushSnapshot();

    const before = await storedStrings(db);
    const planted = [...before.entries()].filter(([, text]) => text.includes('4711')).map(([name]) => name);
    // So the scan below could fail: the secret was in these tables.
    expect(planted).toEqual(
      expect.arrayContaining(['conversations', 'messages', 'memories', 'memoryHistory', 'promptTraces', 'memoryIndex', 'suggestions', 'settings']),
    );
    expect(before.get('jobs')).toContain(w.id);
    expect(await db.tombstones.where('[namespace+hash]').between([work.id, ''], [work.id, '\uffff']).count()).toBe(1);
    const homeMemories = (await db.memories.toArray())
      .filter((m) => m.namespace === home)
      .map((m) => m.text)
      .sort();
    expect(homeMemories.length).toBeGreaterThanOrEqual(2);
    const homeMessages = (await core.conversations.messages(h.id)).map((m) => m.content);

    await core.profiles.switchTo(work.id); // deleted while active: its id must not stay as the active-profile setting
    const report = await core.profiles.delete(work.id);
    expect(report.removed).toMatchObject({ conversations: 1, messages: 6, tombstones: 1, profiles: 1, suggestions: 1, settings: 3, jobs: expect.any(Number) });
    expect(report.activeId).toBe(home);
    expect(report.removed.memories).toBeGreaterThanOrEqual(4);

    const after = await storedStrings(db);
    for (const [name, text] of after) {
      // Random UUIDs (row ids) masked for the secrets: one can spell "4711" by chance, which is no leak.
      const masked = text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>');
      for (const needle of ['4711', '储物柜', '八二六三']) expect(masked, `${needle} in ${name}`).not.toContain(needle);
      for (const needle of [work.id, w.id]) expect(text, `${needle} in ${name}`).not.toContain(needle);
    }
    expect(await db.tombstones.count()).toBe(0);
    // Home keeps every memory, message and its conversation, and stays searchable after the rebuild.
    expect((await db.memories.toArray()).map((m) => m.text).sort()).toEqual(homeMemories);
    expect((await core.conversations.messages(h.id)).map((m) => m.content)).toEqual(homeMessages);
    expect((await core.store.search({ text: 'wifi Meadow', namespace: home, k: 5 })).map((r) => r.memory.text)).toContain('Home wifi is called Meadow');
    expect((await core.profiles.list()).profiles.map((p) => p.id)).toEqual([home]);
    // A restart opens the index without finding anything to repair or replay of the deleted profile.
    await core.stop();
    const again = await cores.start({ db });
    expect(again.core.store.indexStats().memories).toBe(homeMemories.length);
    expect(await again.core.store.search({ text: 'locker code 4711', namespace: work.id, k: 5 })).toEqual([]);
  });
});
