/**
 * Export and import through the core (`createCore`), as the extension runs them: the export is
 * written into the file store's `backups/` folder, the import reads a staged file from there, and
 * only file names and small reports cross the message boundary. Real Dexie (fake-indexeddb), real
 * store and job queue; the OPFS is the in-memory stand-in of tests/helpers/fixture-opfs.ts (Node
 * has none); no models are needed (the harness's engine stand-in, tests/helpers/core-harness.ts, with neither
 * chat model nor embedding model).
 */
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/index';
import type { TransferProgress } from '../../src/model/backup';
import { BACKUPS_DIR, openModelFile, writeFileChunks } from '../../src/platform/model-files';
import { stageImportFile } from '../../src/ui/lib/import-file';
import { useTestCores } from '../helpers/core-harness';
import { createFakeOpfs, type FakeOpfs } from '../helpers/fixture-opfs';

const cores = useTestCores({ loadEmbedder: false });

/** Starts a core on the fake OPFS with neither a chat model nor an embedding model; transfer progress goes to `progress`. */
async function start(opfs: FakeOpfs, progress: TransferProgress[] = []): Promise<Core> {
  const { core } = await cores.start({
    embedder: () => null,
    noEmbedderModel: true,
    events: { transfer: (p) => void progress.push(p) },
    extra: { fileRoot: opfs.root },
  });
  return core;
}

describe('backups through the core and the file store', () => {
  it('exports into backups/, re-imports a staged copy elsewhere, and deletes the staging file', async () => {
    const source = createFakeOpfs();
    const progress: TransferProgress[] = [];
    const a = await start(source, progress);
    for (let i = 0; i < 30; i += 1) await a.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: `Fact number ${i}: 我喜欢第${i}本书` });
    const conversation = await a.conversations.create({ strategy: { kind: 'full-buffer' } });
    await a.conversations.append({ id: 'msg-1', conversationId: conversation.id, role: 'user', content: '你好', createdAt: Date.now(), status: 'complete' });

    const reply = await a.exportToFile();
    // What crosses the message boundary is a name and a size, never the file.
    expect(JSON.stringify(reply).length).toBeLessThan(200);
    expect(reply.downloadName).toMatch(/^recall-export-\d{4}-\d\d-\d\d\.json$/);
    expect(source.list([BACKUPS_DIR])).toEqual([reply.fileName]);
    const exported = await openModelFile(reply.fileName, { root: source.root, folder: BACKUPS_DIR });
    expect(exported.size).toBe(reply.sizeBytes);
    const parsed = JSON.parse(await exported.text());
    expect(parsed.memories).toHaveLength(30);
    expect(progress.at(-1)).toEqual({ phase: 'export', done: 30 + 30 + 1 + 1, total: 62 }); // memories, ADD history rows, conversation, message

    // Another device: the panel stages the picked file, the core imports it by name.
    const target = createFakeOpfs();
    const importProgress: TransferProgress[] = [];
    const b = await start(target, importProgress);
    const staged = await stageImportFile(exported, undefined, { root: target.root });
    const report = await b.importFile(staged);
    expect(report).toMatchObject({ added: 62, updated: 0, skipped: 0, errors: [], vectorsDropped: 0 });
    expect(await b.db.memories.count()).toBe(30);
    expect(target.list([BACKUPS_DIR])).toEqual([]);
    expect(importProgress.map((p) => p.phase)).toEqual(expect.arrayContaining(['check', 'write']));
    // The check pass counts bytes of the file and the records validated; the write pass counts records (62, as exported).
    expect(importProgress.find((p) => p.phase === 'check' && p.done === exported.size)).toEqual({
      phase: 'check',
      done: exported.size,
      total: exported.size,
      records: 62,
    });
    expect(importProgress.at(-1)).toEqual({ phase: 'write', done: 62, total: 62 });
  });

  it('speaker names survive export and import (memory speakers, message speaker)', async () => {
    const source = createFakeOpfs();
    const a = await start(source);
    const added = await a.memoryAdmin.add({ namespace: 'default', kind: 'fact', text: 'Anna moved to Lisbon in May' });
    await a.db.memories.update(added.id, { speakers: { user: 'Jonas', assistant: 'Anna' } });
    const conversation = await a.conversations.create({ strategy: { kind: 'full-buffer' } });
    await a.conversations.append({
      id: 'msg-s',
      conversationId: conversation.id,
      role: 'user',
      content: 'Hi Anna',
      createdAt: Date.now(),
      status: 'complete',
      speaker: 'Jonas',
    });
    const reply = await a.exportToFile();
    const exported = await openModelFile(reply.fileName, { root: source.root, folder: BACKUPS_DIR });

    const target = createFakeOpfs();
    const b = await start(target);
    await b.importFile(await stageImportFile(exported, undefined, { root: target.root }));
    expect((await b.db.memories.get(added.id))?.speakers).toEqual({ user: 'Jonas', assistant: 'Anna' });
    expect((await b.db.messages.get('msg-s'))?.speaker).toBe('Jonas');
  });

  it('a refused file is deleted from backups/ too, and nothing is written', async () => {
    const opfs = createFakeOpfs();
    const core = await start(opfs);
    const bad = '{"format": "recall-export", "version": 1, "memories": [], "conversations": [{"id": "c"}]}';
    const staged = await stageImportFile(new Blob([bad]), undefined, { root: opfs.root });
    await expect(core.importFile(staged)).rejects.toThrow(/The export file is damaged: conversations\.0\.title/);
    expect(opfs.list([BACKUPS_DIR])).toEqual([]);
    expect(await core.db.conversations.count()).toBe(0);
  });

  it('start-up removes staging files left by an earlier run', async () => {
    const opfs = createFakeOpfs();
    async function* bytes() {
      yield new TextEncoder().encode('{}');
    }
    await writeFileChunks('export-1-recall-export-2025-01-01.json', bytes(), { root: opfs.root, folder: BACKUPS_DIR });
    await writeFileChunks('import-1-abc.json', bytes(), { root: opfs.root, folder: BACKUPS_DIR });
    expect(opfs.list([BACKUPS_DIR])).toHaveLength(2);
    await start(opfs);
    expect(opfs.list([BACKUPS_DIR])).toEqual([]);
  });
});
