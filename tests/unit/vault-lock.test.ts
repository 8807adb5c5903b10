/**
 * The vault lock (issue 16) over the whole core in Node: real Dexie on fake-indexeddb, the real
 * job queue, long-term store, extraction and fixture embedder; WebCrypto and scrypt run for real
 * (Argon2id at a test cost, `TEST_KDF_COST`). Faked boundary: the chat model is scripted
 * (tests/helpers/scripted-engine.ts; an instruction-following LLM cannot run here), and for the
 * streaming case a hand-written engine that holds its stream open until the test lets it go.
 * What a reader of the profile folder sees is read with a plain Dexie WITHOUT the vault middleware.
 */
import Dexie from 'dexie';
import { describe, expect, it, vi } from 'vitest';
import { request } from '../../src/ui/state/api';
import { codedErrorOf } from '../../src/model/errors';
import { noteTakingEngine } from '../helpers/core-harness';
import { createFakeOpfs } from '../helpers/fixture-opfs';
import { findInRaw, rawRows, TEST_KDF_COST, type TestVault } from '../helpers/vault-harness';
import { heldStreamingEngine, useTestVaults, VAULT_SECRETS as SECRETS, withPanelMessaging } from '../helpers/vault-suite';
import { rejection } from '../helpers/rejection';
import { RecallDB } from '../../src/db/schema';

const PASSPHRASE = 'correct horse battery';
const EN = 'my locker code is 4711';
const ZH = '我的储物柜密码是4711';

const { start, restart, release } = useTestVaults();

/** Two turns planting the secrets, then every job run (episodic rounds, extraction, consolidation). */
async function plantSecrets(t: TestVault, round = 1): Promise<string> {
  const core = await t.vault.core();
  const conversation = await core.conversations.create({ title: `About ${EN}`, strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
  await core.chat.send({ conversationId: conversation.id, text: `Remember (${round}): ${EN}.`, requestId: `r${round}a` });
  await core.chat.send({ conversationId: conversation.id, text: `${ZH}（${round}）。`, requestId: `r${round}b` });
  await core.jobs.drain();
  await core.store.flushSnapshot();
  return conversation.id;
}

describe('vault lock: encryption at rest', () => {
  it('with the lock on, the planted secrets (English and Chinese) are in no raw row of any table, before and after the in-place pass', async () => {
    const engine = noteTakingEngine('4711', 'The locker code is 4711');
    const t = start(engine);
    // Control: with the lock off the scan finds them (so the scan can fail).
    await plantSecrets(t);
    const before = findInRaw(await rawRows(t.db.name), SECRETS);
    expect(before.some((p) => p.startsWith('messages'))).toBe(true);
    expect(before.some((p) => p.startsWith('memories'))).toBe(true);
    expect(before.some((p) => p.startsWith('memoryIndex'))).toBe(true);

    // Turned on: the rows already written are sealed in place …
    const status = await t.vault.enable(PASSPHRASE);
    expect(status).toMatchObject({ enabled: true, locked: false, migrating: null });
    expect(findInRaw(await rawRows(t.db.name), SECRETS)).toEqual([]);
    // … and everything written afterwards is sealed as it is written.
    const memoriesBefore = (await rawRows(t.db.name)).memories!.length;
    await plantSecrets(t, 2);
    const raw = await rawRows(t.db.name);
    expect(findInRaw(raw, SECRETS)).toEqual([]);
    expect(raw.memories!.length).toBeGreaterThan(memoriesBefore);
    // Every row but the vault record holds a sealed blob.
    for (const [table, rows] of Object.entries(raw)) {
      for (const row of rows as Record<string, unknown>[]) {
        if (table === 'settings' && row.key === 'vault') continue;
        expect(row.$sealed, `${table} ${JSON.stringify(Object.keys(row))}`).toBeInstanceOf(Uint8Array);
      }
    }
    // Read through the core, the data is all there.
    const core = await t.vault.core();
    const memories = await core.memoryAdmin.list({ namespace: 'default' });
    expect(memories.some((m) => m.text.includes('4711'))).toBe(true);
    const hits = await core.store.search({ text: 'locker code', namespace: 'default', k: 5 });
    expect(hits[0]?.memory.text).toContain('4711');
  });
});

/** The raw rows of every table but the vault record, for comparing what a change touched. */
async function rawData(name: string): Promise<Record<string, unknown[]>> {
  const rows = await rawRows(name);
  rows.settings = rows.settings!.filter((r) => (r as { key: string }).key !== 'vault');
  return rows;
}

/** Every row of every table read through the middleware (plain), vault record and job bookkeeping left out. */
async function plainData(t: TestVault): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of t.db.tables) out[table.name] = await table.toArray();
  out.settings = out.settings!.filter((r) => (r as { key: string }).key !== 'vault');
  return out;
}

describe('vault lock: passphrase', () => {
  it('refuses a weak passphrase (the rule: at least 8 characters) and turns nothing on', async () => {
    const t = start(null);
    expect(codedErrorOf(await rejection(t.vault.enable('short7!')))).toEqual({ domain: 'vault', code: 'weak_passphrase', params: { min: 8 } });
    expect(await t.vault.status()).toEqual({ enabled: false, locked: false, autoLockMinutes: null, migrating: null });
  });

  it('a wrong passphrase is refused and changes nothing; the right one unlocks', async () => {
    const t = start(noteTakingEngine('4711', 'The locker code is 4711'));
    await plantSecrets(t);
    await t.vault.enable(PASSPHRASE);
    await t.vault.lock();
    const rawBefore = await rawRows(t.db.name);
    expect(codedErrorOf(await rejection(t.vault.unlock('wrong passphrase')))).toMatchObject({ domain: 'vault', code: 'wrong_passphrase' });
    expect(await t.vault.status()).toMatchObject({ enabled: true, locked: true });
    expect(await rawRows(t.db.name)).toEqual(rawBefore);
    expect(codedErrorOf(await rejection(t.vault.core()))).toMatchObject({ domain: 'vault', code: 'locked' });
    expect(await t.vault.unlock(PASSPHRASE)).toMatchObject({ enabled: true, locked: false });
    expect((await (await t.vault.core()).memoryAdmin.list({ namespace: 'default' })).some((m) => m.text.includes('4711'))).toBe(true);
  });

  it('changing the passphrase re-wraps the data key only: data untouched, the new one unlocks, the old one is refused', async () => {
    const t = start(noteTakingEngine('4711', 'The locker code is 4711'));
    await plantSecrets(t);
    await t.vault.enable(PASSPHRASE);
    await t.vault.lock();
    const dataBefore = await rawData(t.db.name);
    const recordBefore = (await t.db.settings.get('vault'))!.value as { wrapped: unknown; kdf: unknown };
    // Changing it works while locked (the old passphrase opens the key to re-wrap).
    await t.vault.changePassphrase(PASSPHRASE, 'a new passphrase');
    const recordAfter = (await t.db.settings.get('vault'))!.value as { wrapped: unknown; kdf: unknown };
    expect(recordAfter.wrapped).not.toEqual(recordBefore.wrapped);
    expect(recordAfter.kdf).not.toEqual(recordBefore.kdf); // a fresh salt
    expect(await rawData(t.db.name)).toEqual(dataBefore); // not one sealed blob rewritten
    expect(codedErrorOf(await rejection(t.vault.unlock(PASSPHRASE)))).toMatchObject({ code: 'wrong_passphrase' });
    expect(codedErrorOf(await rejection(t.vault.changePassphrase(PASSPHRASE, 'another one!')))).toMatchObject({ code: 'wrong_passphrase' });
    await t.vault.unlock('a new passphrase');
    expect((await (await t.vault.core()).memoryAdmin.list({ namespace: 'default' })).some((m) => m.text.includes('4711'))).toBe(true);
  });
});

describe('vault lock: key derivation', () => {
  it('a vault made with scrypt (before Argon2id) unlocks with its stored parameters; a passphrase change re-wraps it with Argon2id', async () => {
    // The record the previous version wrote (scrypt N = 2^10, r = 8, p = 1; see vault-codec.test.ts).
    const legacy = {
      version: 1,
      kdf: { name: 'scrypt', N: 1024, r: 8, p: 1, salt: 'mBGpQlezVm/zxJ1FjldVFw==' },
      wrapped: { iv: 'PzzJELkIw/qM3mbE', data: '/wWg5xW0g0lVuQbksi2QR84kueN4JF5weoUrTfBwCeOKCKKhmMZSsO+d/RxhyVb0' },
      autoLockMinutes: 15,
      pass: null,
      createdAt: 0,
    };
    const name = `vault-${crypto.randomUUID()}`;
    const seedDb = new RecallDB(name);
    await seedDb.settings.put({ key: 'vault', value: legacy });
    seedDb.close();
    const t = start(null, { dbName: name });
    expect(await t.vault.status()).toMatchObject({ enabled: true, locked: true });
    expect(await t.vault.unlock('correct horse battery')).toMatchObject({ locked: false });
    await t.vault.changePassphrase('correct horse battery', 'a new passphrase');
    const record = (await t.db.settings.get('vault'))!.value as { kdf: { name: string; m: number; t: number } };
    expect(record.kdf).toMatchObject({ name: 'argon2id', ...TEST_KDF_COST });
    await t.vault.lock();
    expect(codedErrorOf(await rejection(t.vault.unlock('correct horse battery')))).toMatchObject({ code: 'wrong_passphrase' });
    expect(await t.vault.unlock('a new passphrase')).toMatchObject({ locked: false });
  });
});

describe('vault lock: the locked core', () => {
  it('refuses every data request with `locked` while locked, after a restart too; jobs wait and run after unlock', async () => {
    const engine = noteTakingEngine('4711', 'The locker code is 4711');
    const t = start(engine);
    await t.vault.enable(PASSPHRASE);
    const core = await t.vault.core();
    const conversation = await core.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    // A turn queues its jobs (episodic round, extraction); lock before they run.
    await core.jobs.stop();
    await core.chat.send({ conversationId: conversation.id, text: `By the way, ${EN}.`, requestId: 'r1' });
    await t.vault.lock();
    expect(t.vault.isLocked()).toBe(true);
    const queued = async () => (await rawRows(t.db.name)).jobs!.length;
    expect(await queued()).toBeGreaterThan(0);

    // A restart (the browser closed): the new core starts locked, opens no store, runs no job.
    const name = t.db.name;
    const again = await restart(t, engine);
    expect(await again.vault.status()).toMatchObject({ enabled: true, locked: true });
    expect(codedErrorOf(await rejection(again.vault.core()))).toEqual({ domain: 'vault', code: 'locked', params: {} });
    expect(again.cores).toHaveLength(0);
    const jobsWhileLocked = await queued();
    expect(jobsWhileLocked).toBeGreaterThan(0);
    // Nothing can write a plaintext row while locked: a stray write is refused, not stored in the clear.
    const stray = again.db.messages.put({ id: 'stray', conversationId: conversation.id, seq: 99, role: 'user', content: EN, createdAt: 0, status: 'complete' });
    expect(codedErrorOf(await rejection(stray))).toMatchObject({ domain: 'vault', code: 'locked' });
    expect(findInRaw(await rawRows(name), SECRETS)).toEqual([]);

    await again.vault.unlock(PASSPHRASE);
    const unlocked = await again.vault.core();
    await unlocked.jobs.drain();
    const memories = await unlocked.memoryAdmin.list({ namespace: 'default' });
    expect(memories.map((m) => m.text)).toContain('The locker code is 4711');
    expect(memories.some((m) => m.kind === 'episodic' && m.text.includes('4711'))).toBe(true);
  });

  it('through the messaging: while locked every data request is refused with `locked` (export included), core.ping says locked, vault.* answer', async () => {
    // The real path: the panel's `request` → @webext-core/messaging → WXT's in-memory fake runtime
    // (given the side panel's sender) → `registerCoreHandlers` / `registerVaultHandlers`.
    const t = start(null);
    await withPanelMessaging(t.vault, async () => {
      await request('vault.enable', { passphrase: PASSPHRASE });
      expect(await request('conversations.list', {})).toEqual([]);
      expect(await request('vault.lock')).toMatchObject({ enabled: true, locked: true });
      for (const refused of [request('memory.export', {}), request('conversations.list', {}), request('settings.get'), request('jobs.stats')]) {
        expect(codedErrorOf(await rejection(refused))).toEqual({ domain: 'vault', code: 'locked', params: {} });
      }
      expect(await request('core.ping')).toMatchObject({ ready: true, locked: true });
      expect(codedErrorOf(await rejection(request('vault.unlock', { passphrase: 'not the one' })))).toMatchObject({ code: 'wrong_passphrase' });
      expect(await request('vault.unlock', { passphrase: PASSPHRASE })).toMatchObject({ locked: false });
      expect(await request('conversations.list', {})).toEqual([]);
      expect(await request('core.ping')).not.toHaveProperty('locked');
    });
  });

  it('auto-locks after the chosen idle minutes without a request; each request restarts the wait', async () => {
    // A manual clock for the one timer (no real waiting, no race).
    const armed: { fn: () => void; ms: number; cleared: boolean }[] = [];
    const timers = {
      set: (fn: () => void, ms: number) => {
        const timer = { fn, ms, cleared: false };
        armed.push(timer);
        return timer;
      },
      clear: (timer: unknown) => void ((timer as { cleared: boolean }).cleared = true),
    };
    const t = start(null, { timers });
    await t.vault.enable(PASSPHRASE);
    expect(await t.vault.status()).toMatchObject({ autoLockMinutes: 15 });
    expect(codedErrorOf(await rejection(t.vault.setAutoLock(0)))).toMatchObject({ code: 'bad_request' });
    expect(await t.vault.setAutoLock(5)).toMatchObject({ autoLockMinutes: 5 });
    const live = () => armed.filter((timer) => !timer.cleared);
    expect(live().map((timer) => timer.ms)).toEqual([5 * 60_000]);
    const first = live()[0]!;
    await t.vault.core(); // a request: the wait starts again
    expect(first.cleared).toBe(true);
    expect(live()).toHaveLength(1);
    const due = live()[0]!;
    due.cleared = true; // it fires (a fired timer is spent)
    due.fn();
    await vi.waitFor(() => expect(t.vault.isLocked()).toBe(true));
    expect(await t.vault.status()).toMatchObject({ enabled: true, locked: true, autoLockMinutes: 5 });
    expect(live()).toHaveLength(0); // no timer while locked
    // Only when the browser closes: no timer at all.
    await t.vault.unlock(PASSPHRASE);
    await t.vault.setAutoLock(null);
    expect(live()).toHaveLength(0);
  });

  it('"Erase all data" while unlocked is starting over: the lock goes with the data (no record, nothing sealed), a restart starts unlocked', async () => {
    const engine = noteTakingEngine('4711', 'The locker code is 4711');
    const t = start(engine);
    await t.vault.enable(PASSPHRASE);
    await plantSecrets(t);
    await t.vault.eraseAll();
    expect(await t.vault.status()).toMatchObject({ enabled: false, locked: false });
    expect(t.events.at(-1)).toMatchObject({ enabled: false, locked: false });
    const raw = await rawRows(t.db.name);
    expect(raw.settings!.map((r) => (r as { key: string }).key)).not.toContain('vault');
    expect(raw.messages).toEqual([]);
    // Rows written afterwards are plain (the lock is off): the control scan finds them.
    await plantSecrets(t, 2);
    expect(findInRaw(await rawRows(t.db.name), SECRETS).some((p) => p.startsWith('messages'))).toBe(true);
    expect(
      Object.values(await rawRows(t.db.name))
        .flat()
        .some((row) => (row as Record<string, unknown>).$sealed !== undefined),
    ).toBe(false);
    const again = await restart(t, engine);
    expect(await again.vault.status()).toMatchObject({ enabled: false, locked: false });
    const memories = await (await again.vault.core()).memoryAdmin.list({ namespace: 'default' });
    expect(memories.some((m) => m.text.includes('4711'))).toBe(true);
  });

  it('"Erase all data": a write issued while the erase runs does not land sealed with the dropped key (refused; every row readable after)', async () => {
    const t = start(noteTakingEngine('4711', 'The locker code is 4711'));
    await t.vault.enable(PASSPHRASE);
    await plantSecrets(t);
    // The write is issued from inside the erase's transaction (as its first table is cleared) but
    // outside it (`ignoreTransaction`), as the stats timer or an access-batch flush would: IndexedDB
    // queues its transaction behind the erase's, so it runs after the erase committed.
    const first = t.db.tables[0]!;
    expect(await first.count()).toBeGreaterThan(0); // the hook fires only for rows that are cleared
    let queued: Promise<unknown> | null = null;
    const hook = () => {
      queued ??= Dexie.ignoreTransaction(() => t.db.settings.put({ key: 'erase-race', value: { note: EN } }));
    };
    first.hook('deleting', hook);
    try {
      await t.vault.eraseAll();
    } finally {
      first.hook('deleting').unsubscribe(hook);
    }
    expect(queued).not.toBeNull();
    const [write] = await Promise.allSettled([queued!]);
    expect(await t.vault.status()).toMatchObject({ enabled: false, locked: false });
    // No row sealed with the forgotten key: every table reads through the middleware (the lock is off).
    const raw = await rawRows(t.db.name);
    expect(
      Object.entries(raw).flatMap(([table, rows]) => rows.filter((row) => (row as Record<string, unknown>).$sealed !== undefined).map(() => table)),
    ).toEqual([]);
    for (const table of t.db.tables) await table.toArray();
    expect(await t.db.settings.get('erase-race')).toBeUndefined();
    // The write was refused (its caller sees why), not lost silently.
    expect(write.status === 'rejected' && codedErrorOf(write.reason)).toMatchObject({ domain: 'vault', code: 'busy' });
  });

  it('a forgotten passphrase: `memory.eraseAll` is answered while locked (after a restart too) and leaves the lock off with an empty store', async () => {
    const engine = noteTakingEngine('4711', 'The locker code is 4711');
    const first = start(engine);
    await first.vault.enable(PASSPHRASE);
    await plantSecrets(first);
    await first.vault.lock();
    // The browser restarts: the core starts locked.
    const name = first.db.name;
    const erasedFiles: number[] = [];
    const t = await restart(first, engine, { extra: { eraseUserFiles: async () => erasedFiles.push(1) } });
    await withPanelMessaging(t.vault, async () => {
      expect(await request('vault.status')).toMatchObject({ enabled: true, locked: true });
      expect(codedErrorOf(await rejection(request('conversations.list', {})))).toMatchObject({ code: 'locked' });
      await request('memory.eraseAll');
      expect(await request('vault.status')).toMatchObject({ enabled: false, locked: false });
      expect(erasedFiles).toEqual([1]);
      // Every sealed row and the vault record are gone; what the new core wrote at its start is plain.
      const raw = await rawRows(name);
      expect(
        Object.values(raw)
          .flat()
          .filter((row) => (row as Record<string, unknown>).$sealed !== undefined),
      ).toEqual([]);
      expect(raw.settings!.map((r) => (r as { key: string }).key)).not.toContain('vault');
      for (const table of ['conversations', 'messages', 'memories', 'memoryHistory', 'promptTraces', 'entities']) expect(raw[table], table).toEqual([]);
      expect(await request('conversations.list', {})).toEqual([]);
      expect(await request('memory.list', { namespace: 'default' })).toEqual([]);
      expect(codedErrorOf(await rejection(request('vault.unlock', { passphrase: PASSPHRASE })))).toMatchObject({ code: 'not_enabled' });
    });
  });

  it('an unlock asked while a lock is still stopping the turn waits for the lock, then unlocks (no `busy`)', async () => {
    // The turn takes its time to stop: the lock is under way until the test lets it finish.
    const { engine, streamed: started, aborted: abortSeen, letStop } = heldStreamingEngine('Half, ', 'Half, and the rest.', { holdStop: true });
    const t = start(engine);
    await t.vault.enable(PASSPHRASE);
    const core = await t.vault.core();
    const conversation = await core.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    const turn = core.chat.send({ conversationId: conversation.id, text: 'Tell me a story', requestId: 'r1' });
    await started;
    const locking = t.vault.lock();
    await abortSeen; // the lock holds the change lock now, waiting for the turn to stop
    const order: string[] = [];
    const unlocking = t.vault.unlock(PASSPHRASE).then((status) => (order.push('unlock'), status));
    void locking.then(() => order.push('lock'));
    letStop();
    expect(await locking).toMatchObject({ locked: true });
    expect(await unlocking).toMatchObject({ enabled: true, locked: false });
    expect(order).toEqual(['lock', 'unlock']);
    await turn;
    const messages = await (await t.vault.core()).conversations.messages(conversation.id);
    expect(messages.map((m) => [m.role, m.status, m.content])).toEqual([
      ['user', 'complete', 'Tell me a story'],
      ['assistant', 'aborted', 'Half, '],
    ]);
  });

  it('a temporary chat does not wait sealed on disk while locked: the lock deletes it (a `left` while locked has nothing to do); kept chats stay', async () => {
    const t = start(noteTakingEngine('4711', 'The locker code is 4711'));
    await t.vault.enable(PASSPHRASE);
    const core = await t.vault.core();
    const kept = await core.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    const temporary = await core.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 }, temporary: true });
    await core.chat.send({ conversationId: temporary.id, text: `Off the record: ${EN}`, requestId: 't1' });
    await core.chat.send({ conversationId: kept.id, text: 'Hello', requestId: 'k1' });
    await t.vault.lock();
    // Raw (no key needed: ids are clear): the temporary chat and its messages are gone while locked.
    const raw = await rawRows(t.db.name);
    expect((raw.conversations as { id: string }[]).map((c) => c.id)).toEqual([kept.id]);
    expect((raw.messages as { conversationId: string }[]).every((m) => m.conversationId === kept.id)).toBe(true);
    expect((raw.messages as unknown[]).length).toBe(2);
    await t.vault.unlock(PASSPHRASE);
    expect((await (await t.vault.core()).conversations.list()).map((c) => c.id)).toEqual([kept.id]);
  });

  it('locking during a streaming reply keeps what streamed: written sealed, shown once unlocked', async () => {
    // Holds the stream open until the lock aborts it (or the test lets it go).
    const { engine, streamed: started, release } = heldStreamingEngine('The first half of the answer, ', 'The first half of the answer, and the rest.');
    const t = start(engine);
    await t.vault.enable(PASSPHRASE);
    const core = await t.vault.core();
    const conversation = await core.conversations.create({ strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
    const turn = core.chat.send({ conversationId: conversation.id, text: `Tell me about ${EN}`, requestId: 'r1' });
    await started;
    const locked = await t.vault.lock();
    expect(locked).toMatchObject({ locked: true });
    release();
    const result = await turn;
    expect(result.assistantMessage).toMatchObject({ status: 'aborted', content: 'The first half of the answer, ' });
    expect(findInRaw(await rawRows(t.db.name), ['first half', '4711'])).toEqual([]);

    await t.vault.unlock(PASSPHRASE);
    const messages = await (await t.vault.core()).conversations.messages(conversation.id);
    expect(messages.map((m) => [m.role, m.status, m.content])).toEqual([
      ['user', 'complete', `Tell me about ${EN}`],
      ['assistant', 'aborted', 'The first half of the answer, '],
    ]);
  });
});

describe('vault lock: turning it on and off in place', () => {
  it('a pass killed midway leaves every row readable; it resumes after unlock and completes', async () => {
    const engine = noteTakingEngine('4711', 'The locker code is 4711');
    // "Kill" the core right after the first committed batch of the encrypt pass: the database closes under it.
    let kill = false;
    let doneAtKill = 0;
    const t = start(engine, {
      passBatchSize: 3,
      onStatus: (status, db) => {
        if (kill && status.migrating && status.migrating.done > 0) {
          kill = false;
          doneAtKill = status.migrating.done;
          db.close();
        }
      },
    });
    await plantSecrets(t);
    await plantSecrets(t, 2);
    const expected = await plainData(t);
    const name = t.db.name;
    const core = await t.vault.core();
    await core.jobs.stop();
    kill = true;
    // The pass stops at the closed database (logged); enable resolves with the lock on.
    await t.vault.enable(PASSPHRASE);
    release(t);
    const raw = await rawRows(name);
    const sealed = Object.values(raw)
      .flat()
      .filter((r) => (r as { $sealed?: unknown }).$sealed !== undefined).length;
    const all = Object.values(raw).flat().length;
    expect(doneAtKill).toBeGreaterThan(0);
    expect(sealed).toBe(doneAtKill); // exactly the first committed batch
    expect(all).toBeGreaterThan(20);

    const again = start(engine, { dbName: name, passBatchSize: 3 });
    expect(await again.vault.status()).toMatchObject({ enabled: true, locked: true });
    await again.vault.unlock(PASSPHRASE);
    // The pass resumes in the background; wait for its end.
    await vi.waitFor(async () => expect(await again.vault.status()).toMatchObject({ migrating: null }), { timeout: 10_000 });
    expect(((await again.db.settings.get('vault'))!.value as { pass: unknown }).pass).toBeNull();
    expect(findInRaw(await rawRows(name), SECRETS)).toEqual([]);
    const c = await again.vault.core();
    await c.jobs.stop();
    expect(await plainData(again)).toEqual(expected);
  });

  it('turning it off decrypts in place: plaintext back, the same data, no blob left, lock off', async () => {
    const t = start(noteTakingEngine('4711', 'The locker code is 4711'));
    await plantSecrets(t);
    const core = await t.vault.core();
    await core.jobs.stop();
    const expected = await plainData(t);
    await t.vault.enable(PASSPHRASE);
    expect(findInRaw(await rawRows(t.db.name), SECRETS)).toEqual([]);
    expect(codedErrorOf(await rejection(t.vault.disable('wrong passphrase')))).toMatchObject({ code: 'wrong_passphrase' });
    expect(await t.vault.disable(PASSPHRASE)).toEqual({ enabled: false, locked: false, autoLockMinutes: null, migrating: null });
    const raw = await rawRows(t.db.name);
    expect(
      Object.values(raw)
        .flat()
        .some((r) => (r as { $sealed?: unknown }).$sealed !== undefined),
    ).toBe(false);
    expect(raw.settings!.some((r) => (r as { key: string }).key === 'vault')).toBe(false);
    expect(findInRaw(raw, SECRETS).length).toBeGreaterThan(0);
    expect(await plainData(t)).toEqual(expected);
    // The progress went out as events, ending with the lock off.
    expect(t.events.some((e) => e.migrating?.direction === 'decrypt' && e.migrating.total > 0)).toBe(true);
    expect(t.events.at(-1)).toMatchObject({ enabled: false, migrating: null });
  });
});

describe('vault lock: backups and staging files', () => {
  it('with the lock on an export needs a passphrase; the age export imports into another locked store; no staging file holds plaintext', async () => {
    const writes: { name: string; data: Uint8Array }[] = [];
    const opfs = createFakeOpfs({ onWrite: (name, data) => writes.push({ name, data }) });
    const extra = { fileRoot: opfs.root, scryptWorkFactor: 10 };
    // The importing core starts first: a core deletes the staging files it finds at its start.
    const b = start(null, { extra });
    await b.vault.enable('another vault pass');
    await b.vault.core();
    const a = start(noteTakingEngine('4711', 'The locker code is 4711'), { extra });
    await plantSecrets(a);
    await a.vault.enable(PASSPHRASE);
    const core = await a.vault.core();
    expect(codedErrorOf(await rejection(core.exportToFile()))).toMatchObject({ domain: 'backup', code: 'passphrase_required' });
    const exported = await core.exportToFile('backup passphrase');
    expect(exported.downloadName.endsWith('.json.age')).toBe(true);

    const report = await (await b.vault.core()).importFile(exported.fileName, 'backup passphrase');
    expect(report.added).toBeGreaterThan(0);
    const imported = await (await b.vault.core()).memoryAdmin.list({ namespace: 'default' });
    expect(imported.some((m) => m.text.includes('4711'))).toBe(true);
    // The decrypted copy was staged too (`<name>.plain`), sealed; every staged byte is ciphertext.
    expect(writes.some((w) => w.name.includes('.plain.'))).toBe(true);
    const text = new TextDecoder();
    for (const w of writes) for (const secret of SECRETS) expect(text.decode(w.data).includes(secret), w.name).toBe(false);
    expect(findInRaw(await rawRows(b.db.name), SECRETS)).toEqual([]);
    // Both staging files are deleted after the import.
    expect(opfs.list(['backups'])).toEqual([]);
  });
});
