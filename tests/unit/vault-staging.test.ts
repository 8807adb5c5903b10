/**
 * Issue 16 item 2: with the vault lock on, a plain import file (a Recall JSON backup, another
 * assistant's export, a note) is sealed by the panel as it is staged in OPFS `backups/`, with a
 * one-time key the core hands out for that file (`memory.stagingKey`, `src/core/staging-keys.ts`,
 * codec `src/platform/staging-seal.ts`); the core decrypts it while importing. Real cores, real
 * embedder (fixture), WebCrypto of Node; only OPFS is the in-memory fake (it does not exist in Node).
 */
import { describe, expect, it } from 'vitest';
import type { ChatEngine } from '../../src/engines/types';
import { codedErrorOf } from '../../src/model/errors';
import { BACKUPS_DIR, openModelFile, writeFileChunks } from '../../src/platform/model-files';
import { stageImportFile } from '../../src/ui/lib/import-file';
import { noteTakingEngine } from '../helpers/core-harness';
import { createFakeOpfs, type FakeOpfs } from '../helpers/fixture-opfs';
import { findInRaw, rawRows, type TestVault } from '../helpers/vault-harness';
import { useTestVaults, VAULT_SECRETS as SECRETS } from '../helpers/vault-suite';
import { rejection } from '../helpers/rejection';

const vaults = useTestVaults();
const start = (chat: ChatEngine | null, opfs: FakeOpfs): TestVault => vaults.start(chat, { extra: { fileRoot: opfs.root } });

/** A plain JSON backup (lock off) of a store that learned both secrets, as bytes. */
async function plainBackup(): Promise<Uint8Array<ArrayBuffer>> {
  const opfs = createFakeOpfs();
  const a = start(noteTakingEngine('4711', 'The locker code is 4711 (储物柜)'), opfs);
  const core = await a.vault.core();
  const conversation = await core.conversations.create({ title: 'Locker', strategy: { kind: 'summary-buffer', maxTokens: 2000 } });
  await core.chat.send({ conversationId: conversation.id, text: 'Remember: my locker code is 4711.', requestId: 'r1' });
  await core.chat.send({ conversationId: conversation.id, text: '我的储物柜密码是4711。', requestId: 'r2' });
  await core.jobs.drain();
  const { fileName } = await core.exportToFile();
  const bytes = new Uint8Array(await (await openModelFile(fileName, { folder: BACKUPS_DIR, root: opfs.root })).arrayBuffer());
  expect(new TextDecoder().decode(bytes)).toContain('4711'); // the source really is plaintext
  return bytes;
}

/** A locked-on, unlocked core over `opfs` that records every byte written to it. */
async function lockedOnCore(opfs: FakeOpfs) {
  const t = start(null, opfs);
  await t.vault.enable('correct horse battery');
  return { t, core: await t.vault.core() };
}

/** Writes `bytes` as the staging file `name` of `opfs` (as a tampering hand would). */
async function putStaged(opfs: FakeOpfs, name: string, bytes: Uint8Array): Promise<void> {
  await writeFileChunks(
    name,
    (async function* () {
      yield bytes;
    })(),
    { folder: BACKUPS_DIR, root: opfs.root },
  );
}

const memoryTexts = async (t: TestVault) => (await (await t.vault.core()).memoryAdmin.list({ namespace: 'default' })).map((m) => m.text).sort();

describe('vault lock: sealed import staging files', () => {
  it('a plain backup staged with the lock on holds no plaintext byte in OPFS and imports the same as a plain staging; the key is forgotten after', async () => {
    const backup = await plainBackup();
    // Reference: the same backup staged plain into a store with the lock off.
    const plainOpfs = createFakeOpfs();
    const ref = start(null, plainOpfs);
    const refCore = await ref.vault.core();
    const refName = await stageImportFile(new Blob([backup]), undefined, { root: plainOpfs.root, stagingKey: async (n) => (await refCore.stagingKey(n)).key });
    const refReport = await refCore.importFile(refName);

    const writes: { name: string; data: Uint8Array }[] = [];
    const opfs = createFakeOpfs({ onWrite: (name, data) => writes.push({ name, data }) });
    const { t, core } = await lockedOnCore(opfs);
    const name = await stageImportFile(new Blob([backup]), undefined, { root: opfs.root, stagingKey: async (n) => (await core.stagingKey(n)).key });
    const staged = new Uint8Array(await (await openModelFile(name, { folder: BACKUPS_DIR, root: opfs.root })).arrayBuffer());
    const text = new TextDecoder();
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) for (const secret of SECRETS) expect(text.decode(w.data).includes(secret), w.name).toBe(false);

    const report = await core.importFile(name);
    expect(report).toEqual(refReport);
    expect(report.added).toBeGreaterThan(0);
    expect(await memoryTexts(t)).toEqual(await memoryTexts(ref));
    expect(findInRaw(await rawRows(t.db.name), SECRETS)).toEqual([]);
    expect(opfs.list([BACKUPS_DIR])).toEqual([]);

    // The key went with the import: the same sealed bytes under the same name are refused now.
    await putStaged(opfs, name, staged);
    expect(codedErrorOf(await rejection(core.importFile(name)))).toMatchObject({ domain: 'vault', code: 'damaged' });
  });

  it('a wrong key, a cut, reordered or changed chunk is refused as damaged and nothing is written', async () => {
    const backup = await plainBackup();
    const opfs = createFakeOpfs();
    const { t, core } = await lockedOnCore(opfs);
    const rowsBefore = await rawRows(t.db.name);
    const cases: { what: string; alter: (sealed: Uint8Array) => Uint8Array; key?: 'wrong' }[] = [
      { what: 'wrong key', alter: (s) => s, key: 'wrong' },
      { what: 'cut after the first chunk', alter: (s) => s.slice(0, 8 + 5 + (1 << 20) + 16) },
      { what: 'cut inside a chunk', alter: (s) => s.slice(0, s.byteLength - 7) },
      {
        what: 'first two chunks swapped',
        alter: (s) => {
          const one = 5 + (1 << 20) + 16;
          const out = s.slice();
          out.set(s.subarray(8 + one, 8 + 2 * one), 8);
          out.set(s.subarray(8, 8 + one), 8 + one);
          return out;
        },
      },
      {
        what: 'a changed byte',
        alter: (s) => {
          const out = s.slice();
          out[100] = (out[100] ?? 0) ^ 1;
          return out;
        },
      },
      { what: 'bytes after the last chunk', alter: (s) => new Uint8Array([...s, 0, 0, 0, 0, 0]) },
    ];
    // A backup of > 2 chunks (1 MiB each): padded with white space after the JSON object (valid JSON).
    const big = new Uint8Array(3 * (1 << 20) + 500).fill(0x20);
    big.set(backup);
    for (const c of cases) {
      const name = await stageImportFile(new Blob([big]), undefined, {
        root: opfs.root,
        stagingKey: async (n) => {
          const { key } = await core.stagingKey(n);
          if (c.key === 'wrong') await core.stagingKey(n); // a new key replaces the one the file is sealed with
          return key;
        },
      });
      const sealed = new Uint8Array(await (await openModelFile(name, { folder: BACKUPS_DIR, root: opfs.root })).arrayBuffer());
      await putStaged(opfs, name, c.alter(sealed));
      expect(codedErrorOf(await rejection(core.importFile(name))), c.what).toMatchObject({ code: 'damaged' });
    }
    expect(await rawRows(t.db.name)).toEqual(rowsBefore);
    expect(opfs.list([BACKUPS_DIR])).toEqual([]);
  });

  it('a history import (a note) staged sealed imports; locking forgets the keys of files not imported yet', async () => {
    const opfs = createFakeOpfs();
    const { t, core } = await lockedOnCore(opfs);
    const note = new TextEncoder().encode('# Locker\n\nMy locker code is 4711.\n');
    const stage = async (c: typeof core) =>
      stageImportFile(new Blob([note]), undefined, { root: opfs.root, stagingKey: async (n) => (await c.stagingKey(n)).key });
    const name = await stage(core);
    expect((await (await openModelFile(name, { folder: BACKUPS_DIR, root: opfs.root })).text()).includes('4711')).toBe(false);
    const report = await core.importHistoryFile({ fileName: name, displayName: 'locker.md', namespace: 'default' });
    expect(report).toMatchObject({ conversations: { added: 1 } });
    expect(findInRaw(await rawRows(t.db.name), ['4711'])).toEqual([]);

    const pending = await stage(core);
    const sealed = new Uint8Array(await (await openModelFile(pending, { folder: BACKUPS_DIR, root: opfs.root })).arrayBuffer());
    await t.vault.lock();
    await t.vault.unlock('correct horse battery');
    const after = await t.vault.core(); // a new core (it removed the stale staging file at its start): put the sealed bytes back
    await putStaged(opfs, pending, sealed);
    expect(codedErrorOf(await rejection(after.importHistoryFile({ fileName: pending, displayName: 'locker.md', namespace: 'default' })))).toMatchObject({
      domain: 'vault',
      code: 'damaged',
    });
  });

  it('with the lock off the core hands out no key and the file is staged plain', async () => {
    const opfs = createFakeOpfs();
    const t = start(null, opfs);
    const core = await t.vault.core();
    expect(await core.stagingKey('import-1.json')).toEqual({ key: null });
    const name = await stageImportFile(new Blob(['{"a": "4711"}']), undefined, { root: opfs.root, stagingKey: async (n) => (await core.stagingKey(n)).key });
    expect(await (await openModelFile(name, { folder: BACKUPS_DIR, root: opfs.root })).text()).toBe('{"a": "4711"}');
  });
});
