/**
 * Encrypted backups (age, passphrase recipient) through the core, as the extension runs them:
 * export with a passphrase writes an age file into `backups/`, import detects it and decrypts it
 * with the passphrase before the reader sees it. Real `age-encryption`, real Dexie
 * (fake-indexeddb), the in-memory OPFS stand-in of tests/helpers/fixture-opfs.ts (Node has none),
 * no models (tests/helpers/core-harness.ts). The scrypt work factor is lowered to 2^10 for speed
 * (the format and code path are the same; the default is 18). The last test decrypts our file
 * with the real `age` command-line tool (Debian package `age`) and is skipped, saying why, when
 * it is not installed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGE_HEADER, decryptChunks, isAgeFile } from '../../src/backup/encryption';
import { ImportError } from '../../src/backup';
import type { Core } from '../../src/core/index';
import { BACKUPS_DIR, openModelFile } from '../../src/platform/model-files';
import { checkImportStart, stageImportFile } from '../../src/ui/lib/import-file';
import { useTestCores } from '../helpers/core-harness';
import { createFakeOpfs, type FakeOpfs } from '../helpers/fixture-opfs';

const cores = useTestCores({ loadEmbedder: false });
const PASSPHRASE = 'correct horse battery staple';

async function start(opfs: FakeOpfs): Promise<Core> {
  const { core } = await cores.start({ embedder: () => null, noEmbedderModel: true, extra: { fileRoot: opfs.root, scryptWorkFactor: 10 } });
  return core;
}

/** A core holding 30 memories and one conversation with one message, and its encrypted and plain exports. */
async function exported(): Promise<{ encrypted: File; plainText: string; downloadName: string }> {
  const opfs = createFakeOpfs();
  const core = await start(opfs);
  for (let i = 0; i < 30; i += 1) await core.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: `Fact number ${i}: 我喜欢第${i}本书` });
  const conversation = await core.conversations.create({ strategy: { kind: 'full-buffer' } });
  await core.conversations.append({ id: 'msg-1', conversationId: conversation.id, role: 'user', content: '你好', createdAt: 1, status: 'complete' });
  const enc = await core.exportToFile(PASSPHRASE);
  const encrypted = await openModelFile(enc.fileName, { root: opfs.root, folder: BACKUPS_DIR });
  const plain = await core.exportToFile();
  const plainText = await (await openModelFile(plain.fileName, { root: opfs.root, folder: BACKUPS_DIR })).text();
  return { encrypted, plainText, downloadName: enc.downloadName };
}

/** Plaintext of an age file as a string, through `decryptChunks`. */
async function decryptToText(file: Blob, passphrase: string): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const chunk of await decryptChunks(file, passphrase)) parts.push(chunk);
  return new TextDecoder().decode(await new Blob(parts as BlobPart[]).arrayBuffer());
}

/** Everything a refused import must leave unchanged. */
async function snapshot(core: Core) {
  return {
    memories: (await core.db.memories.toArray()).map((m) => m.text).sort(),
    conversations: await core.db.conversations.count(),
    messages: await core.db.messages.count(),
    history: await core.db.memoryHistory.count(),
  };
}

/** The `ImportError` code `promise` rejects with. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  return (error as ImportError).code;
}

describe('encrypted backups (age, passphrase)', () => {
  it('exports an age file that decrypts to the plain export and imports with the right passphrase', async () => {
    const { encrypted, plainText, downloadName } = await exported();
    expect(downloadName).toMatch(/^recall-export-\d{4}-\d\d-\d\d\.json\.age$/);
    expect(new TextDecoder().decode(await encrypted.slice(0, AGE_HEADER.length).arrayBuffer())).toBe('age-encryption.org/v1');
    expect(await isAgeFile(encrypted)).toBe(true);
    expect(await isAgeFile(new Blob([plainText]))).toBe(false);
    expect(await encrypted.text()).not.toContain('Fact number');

    const decrypted = await decryptToText(encrypted, PASSPHRASE);
    // Same content as the unencrypted export (only `exportedAt` may differ: two exports, two times).
    const withoutTime = (s: string) => s.replace(/"exportedAt": \d+/, '');
    expect(withoutTime(decrypted)).toBe(withoutTime(plainText));

    const target = createFakeOpfs();
    const b = await start(target);
    const staged = await stageImportFile(encrypted, undefined, { root: target.root });
    const report = await b.importFile(staged, PASSPHRASE);
    expect(report).toMatchObject({ added: 62, updated: 0, skipped: 0, errors: [] }); // 30 memories, 30 ADD history rows, 1 conversation, 1 message
    expect((await b.db.memories.toArray()).map((m) => m.text).sort()).toEqual(
      JSON.parse(plainText)
        .memories.map((m: { text: string }) => m.text)
        .sort(),
    );
    expect(await b.db.messages.count()).toBe(1);
    // Both staging files (the age file and its decrypted copy) are gone.
    expect(target.list([BACKUPS_DIR])).toEqual([]);
  });

  it('refuses a wrong or missing passphrase with its own code and changes nothing', async () => {
    const { encrypted } = await exported();
    const target = createFakeOpfs();
    const b = await start(target);
    await b.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'Already here' });
    const before = await snapshot(b);

    const staged = await stageImportFile(encrypted, undefined, { root: target.root });
    expect(await codeOf(b.importFile(staged, 'wrong horse'))).toBe('wrong_passphrase');
    expect(target.list([BACKUPS_DIR])).toEqual([]);
    const again = await stageImportFile(encrypted, undefined, { root: target.root });
    expect(await codeOf(b.importFile(again))).toBe('passphrase_required');
    expect(target.list([BACKUPS_DIR])).toEqual([]);
    expect(await snapshot(b)).toEqual(before);
  });

  it('the panel recognises an age file by its first line (before copying it into OPFS)', async () => {
    const { encrypted } = await exported();
    const head = new TextDecoder().decode(await encrypted.slice(0, 4096).arrayBuffer());
    expect(checkImportStart(head, encrypted.size)).toEqual({ ok: true, encrypted: true });
    expect(checkImportStart('age-encryption.org/v2\n', 30)).toMatchObject({ ok: false, reason: 'not_json' });
  });

  it('refuses a cut-off age file (right passphrase) and changes nothing', async () => {
    const { encrypted } = await exported();
    const target = createFakeOpfs();
    const b = await start(target);
    await b.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'Already here' });
    const before = await snapshot(b);

    const cut = encrypted.slice(0, Math.floor(encrypted.size / 2));
    const staged = await stageImportFile(cut, undefined, { root: target.root });
    expect(await codeOf(b.importFile(staged, PASSPHRASE))).toBe('encrypted_damaged');
    expect(target.list([BACKUPS_DIR])).toEqual([]);
    expect(await snapshot(b)).toEqual(before);
  });
});

/** Whether a command is on PATH. */
function has(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const ageCli = has('age') && has('script');
if (!ageCli) console.warn('[backup-encryption] skipping the age CLI test: `age` (Debian package age) or `script` (util-linux) is not installed');

describe.skipIf(!ageCli)('encrypted backups and the age command-line tool', () => {
  it('`age -d` with the passphrase decrypts our export to the plain JSON', async () => {
    const { encrypted, plainText } = await exported();
    const dir = mkdtempSync(join(tmpdir(), 'recall-age-'));
    try {
      writeFileSync(join(dir, 'backup.json.age'), new Uint8Array(await encrypted.arrayBuffer()));
      // age reads a passphrase only from a terminal: `script` gives it a pseudo-terminal whose
      // input is our stdin (util-linux; no interactive session needed).
      execFileSync('script', ['-qec', 'age -d -o backup.json backup.json.age', '/dev/null'], {
        cwd: dir,
        input: `${PASSPHRASE}\n`,
        timeout: 20_000,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      const out = readFileSync(join(dir, 'backup.json'), 'utf8');
      const withoutTime = (s: string) => s.replace(/"exportedAt": \d+/, '');
      expect(withoutTime(out)).toBe(withoutTime(plainText));
      expect(JSON.parse(out).memories).toHaveLength(30);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
