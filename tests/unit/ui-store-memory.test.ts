/**
 * Memory store (src/ui/state/memory.svelte.ts) against a fake messaging api
 * (tests/helpers/fake-api.ts) and fake file boundaries (OPFS staging and the browser download
 * cannot run in Node); the store, the import-file check and the notices are the real ones.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_NAMESPACE, MAX_MEMORY_TEXT_CHARS } from '../../src/model/memory';
import type { MemoryView } from '../../src/model/records';
import type { ImportReport } from '../../src/model/backup';
import { createMemoryItemStore } from '../../src/ui/state/memory-item.svelte';
import { createMemoryStore, MEMORY_PAGE_SIZE } from '../../src/ui/state/memory.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createFakeApi, deferred } from '../helpers/fake-api';
import { createFakeOpfs } from '../helpers/fixture-opfs';
import { BACKUPS_DIR, writeFileChunks, type DirectoryHandleLike } from '../../src/platform/model-files';
import { saveStagedFileToFolder } from '../../src/ui/lib/save-to-folder';

const view = (id: string, text: string, over: Partial<MemoryView> = {}): MemoryView =>
  ({
    id,
    text,
    namespace: 'default',
    kind: 'fact',
    pinned: 0,
    current: 1,
    importance: 0.5,
    sourceConversationId: null,
    sourceMessageIds: [],
    ...over,
  }) as unknown as MemoryView;
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));
afterEach(() => vi.useRealTimers());

function setup() {
  const api = createFakeApi();
  const notices = createNoticesStore();
  const events: string[] = [];
  const staged: { file: Blob; progress: (bytes: number) => void }[] = [];
  const stageGate = deferred<void>();
  const memory = createMemoryStore({
    ...api,
    notices,
    namespace: () => DEFAULT_NAMESPACE,
    refreshConversations: async () => void events.push('refreshConversations'),
    beforeEraseAll: () => {
      events.push('beforeEraseAll');
      return () => void events.push('undo beforeEraseAll');
    },
    afterEraseAll: async () => void events.push('afterEraseAll'),
    files: {
      stage: async (file, progress) => {
        staged.push({ file, progress });
        await stageGate.promise;
        return 'staged-1.json';
      },
      download: async (fileName, downloadName) => void events.push(`download ${fileName} as ${downloadName}`),
    },
  });
  let listed: MemoryView[] = [view('m1', 'My cat is called Mochi')];
  api.on('memory.list', () => listed);
  return { api, notices, memory, events, staged, stageGate, setListed: (list: MemoryView[]) => (listed = list) };
}

describe('memory store', () => {
  it('lists with the filters: trimmed search, kind, past included, the default namespace', async () => {
    const { api, memory } = setup();
    memory.search = '  cat ';
    memory.kind = 'profile';
    memory.includePast = true;
    expect(await memory.load()).toHaveLength(1);
    expect(api.callsOf('memory.list')).toEqual([{ namespace: 'default', search: 'cat', includeInvalid: true, kinds: ['profile'], limit: 51 }]);
    expect(memory.memories?.map((m) => m.id)).toEqual(['m1']);
  });

  it('lists a first page of 50 (one more asked, to know there are more); "Show more" lists 50 more; a filter change goes back to the first page', async () => {
    const { api, memory, setListed } = setup();
    expect(MEMORY_PAGE_SIZE).toBe(50);
    const all = Array.from({ length: 120 }, (_, i) => view(`m${i}`, `memory ${i}`));
    setListed(all);
    api.on('memory.list', ({ limit }) => all.slice(0, limit)); // the core honours the limit
    expect(await memory.load()).toHaveLength(50);
    expect(memory.memories?.map((m) => m.id)).toEqual(all.slice(0, 50).map((m) => m.id));
    expect(memory.hasMore).toBe(true);
    expect((await memory.showMore())?.length).toBe(100);
    expect(memory.hasMore).toBe(true);
    expect((await memory.showMore())?.length).toBe(120);
    expect(memory.hasMore).toBe(false); // 151 asked, 120 there: no "Show more"
    expect(api.callsOf('memory.list').map((q) => q.limit)).toEqual([51, 101, 151]);
    await memory.load(); // an edit or pin reloads the same length
    expect(memory.memories).toHaveLength(120);
    vi.useFakeTimers();
    memory.kind = 'profile';
    memory.loadSoon();
    await vi.runAllTimersAsync();
    expect(api.callsOf('memory.list').at(-1)).toMatchObject({ kinds: ['profile'], limit: 51 });
    expect(memory.memories).toHaveLength(50);
  });

  it('delete returns rounds → the removal is offered → remove calls memory.delete for each, then reloads', async () => {
    const { api, memory } = setup();
    const rounds = [view('r1', 'User: my cat is Mochi', { kind: 'episodic' }), view('r2', 'User: Mochi is 3', { kind: 'episodic' })];
    api.on('memory.delete', ({ id }) => ({ rounds: id === 'm1' ? rounds : [] }));
    await memory.remove('m1');
    expect(memory.staleRounds?.map((r) => r.id)).toEqual(['r1', 'r2']);
    await memory.removeStaleRounds();
    expect(api.callsOf('memory.delete')).toEqual([{ id: 'm1' }, { id: 'r1' }, { id: 'r2' }]);
    expect(memory.staleRounds).toBeNull();
    expect(api.callsOf('memory.list')).toHaveLength(2); // after the delete, after the rounds
  });

  it('keeping the rounds deletes nothing more; a delete without rounds offers nothing', async () => {
    const { api, memory } = setup();
    api.on('memory.delete', ({ id }) => ({ rounds: id === 'm1' ? [view('r1', 'round')] : [] }));
    await memory.remove('m1');
    memory.keepStaleRounds();
    expect(memory.staleRounds).toBeNull();
    await memory.remove('m2');
    expect(memory.staleRounds).toBeNull();
    expect(api.callsOf('memory.delete')).toEqual([{ id: 'm1' }, { id: 'm2' }]);
  });

  it('a failed delete becomes a notice and offers nothing', async () => {
    const { api, memory, notices } = setup();
    api.on('memory.delete', () => {
      throw new Error('db locked');
    });
    expect(await memory.remove('m1')).toBe(false);
    expect(memory.staleRounds).toBeNull();
    expect(notices.list.map((n) => [n.kind, n.detail])).toEqual([['error', 'db locked']]);
  });

  it("add sends a pinned memory with trimmed text; a failure keeps the caller's text (returns false) with a notice", async () => {
    const { api, memory, notices } = setup();
    api.on('memory.add', (data) => view('m2', data.text));
    expect(await memory.add('preference', '  I like tea ')).toBe(true);
    expect(api.callsOf('memory.add')).toEqual([{ namespace: 'default', kind: 'preference', text: 'I like tea', pinned: true }]);
    api.on('memory.add', () => {
      throw new Error('too long');
    });
    expect(await memory.add('fact', 'x')).toBe(false);
    expect(notices.list.at(-1)?.detail).toBe('too long');
    expect(await memory.add('fact', '   ')).toBe(false);
    expect(api.callsOf('memory.add')).toHaveLength(2);
  });

  it('edit says "saved", or that the memory left the filtered list; pin sends the flag', async () => {
    const { api, memory, notices, setListed } = setup();
    api.on('memory.update', (data) => view(data.id, data.text ?? ''));
    await memory.edit('m1', ' My cat is called Mochi Chan ');
    expect(api.callsOf('memory.update')).toEqual([{ id: 'm1', text: 'My cat is called Mochi Chan' }]);
    setListed([]); // no longer matches the search
    await memory.edit('m1', 'Dog');
    expect(notices.list.map((n) => n.text)).toEqual([
      'Memory saved.',
      'Memory saved. It no longer matches the current search or filter, so it is not in the list.',
    ]);
    await memory.setPinned('m1', true);
    expect(api.callsOf('memory.update').at(-1)).toEqual({ id: 'm1', pinned: true });
  });

  it("import: upload progress, then the core's check/write progress, then the report and reloads", async () => {
    const { api, memory, staged, stageGate, events } = setup();
    memory.listen();
    const report: ImportReport = { added: 2, updated: 1, skipped: 0, errors: [] };
    const importing = deferred<ImportReport>();
    api.on('memory.import', () => importing.promise);
    const file = new File(['{"format":"recall-export","version":1}'], 'backup.json', { type: 'application/json' });
    const run = memory.importFile(file);
    await flush();
    expect(memory.importing).toBe(true);
    staged[0]!.progress(file.size / 2);
    expect(memory.transfer).toEqual({ phase: 'upload', fraction: 0.5, records: null });
    stageGate.resolve();
    await flush();
    expect(api.callsOf('memory.import')).toEqual([{ fileName: 'staged-1.json' }]);
    // Check pass: bytes of the file (the bar) and records validated so far (their total is not known yet).
    api.emit('event.transfer', { phase: 'check', done: 25, total: 100, records: 7 });
    expect(memory.transfer).toEqual({ phase: 'check', fraction: 0.25, records: { done: 7, total: null } });
    // Write pass: records written of the file's total.
    api.emit('event.transfer', { phase: 'write', done: 30, total: 40 });
    expect(memory.transfer).toEqual({ phase: 'write', fraction: 0.75, records: { done: 30, total: 40 } });
    api.emit('event.transfer', { phase: 'write', done: 150, total: 100 });
    expect(memory.transfer).toEqual({ phase: 'write', fraction: 1, records: { done: 100, total: 100 } });
    importing.resolve(report);
    await run;
    expect(memory.importReport).toEqual(report);
    expect(memory.importing).toBe(false);
    expect(memory.transfer).toBeNull();
    expect(events).toEqual(['refreshConversations']);
    // Progress of someone else's transfer is not shown while this panel runs none.
    api.emit('event.transfer', { phase: 'write', done: 1, total: 2 });
    expect(memory.transfer).toBeNull();
  });

  it('a file that is not JSON is refused before anything is copied', async () => {
    const { api, memory, staged } = setup();
    await memory.importFile(new File(['\x00\x01PK binary'], 'photo.zip'));
    expect(staged).toEqual([]);
    expect(api.callsOf('memory.import')).toEqual([]);
    expect(memory.importError?.title).toMatch(/photo\.zip/);
    expect(memory.importing).toBe(false);
  });

  it("a refused import shows the core's reason, and a later import clears it", async () => {
    const { api, memory, stageGate } = setup();
    stageGate.resolve();
    api.on('memory.importNotice', () => null);
    api.on('memory.import', () => {
      throw new Error('Not a Recall export: missing "format"');
    });
    const file = new File(['{"x":1}'], 'x.json');
    await memory.importFile(file);
    expect(memory.importError?.detail).toBe('Not a Recall export: missing "format"');
    api.on('memory.import', () => ({ added: 0, updated: 0, skipped: 3, errors: [] }));
    await memory.importFile(file);
    expect(memory.importError).toBeNull();
    expect(memory.importReport?.skipped).toBe(3);
  });

  it('export downloads the staged file; erase clears the import result, tells the app and says so', async () => {
    const { api, memory, notices, events } = setup();
    api.on('memory.export', () => ({ fileName: 'exp-1.json', downloadName: 'recall-2026-12-01.json', sizeBytes: 10 }));
    await memory.exportAll();
    expect(events).toEqual(['download exp-1.json as recall-2026-12-01.json']);
    expect(memory.exporting).toBe(false);
    // The browser's download indicator is outside the panel: the panel says the file was downloaded, by name.
    expect(notices.list.map((n) => [n.kind, n.text])).toEqual([
      ['info', 'Downloaded recall-2026-12-01.json: your browser saved it with your other downloads.'],
    ]);
    notices.list = [];
    memory.importReport = { added: 1, updated: 0, skipped: 0, errors: [] };
    api.on('memory.eraseAll', () => undefined);
    expect(await memory.eraseAll()).toBe(true);
    expect(memory.importReport).toBeNull();
    expect(events.at(-1)).toBe('afterEraseAll');
    expect(notices.list.map((n) => n.kind)).toEqual(['info']);
  });
});

describe("the manager's own forms", () => {
  it('filters reload at once, a typed search 250 ms after the last change (a newer change cancels the older)', () => {
    vi.useFakeTimers();
    const { api, memory } = setup();
    memory.loadSoon();
    vi.advanceTimersByTime(0);
    expect(api.callsOf('memory.list')).toHaveLength(1);
    memory.search = 'ca';
    const cancel = memory.loadSoon();
    vi.advanceTimersByTime(200);
    cancel(); // typed on
    memory.search = 'cat';
    memory.loadSoon();
    vi.advanceTimersByTime(249);
    expect(api.callsOf('memory.list')).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(api.callsOf('memory.list').map((q) => q.search)).toEqual([undefined, 'cat']);
  });

  it('the new-memory form: too long (trimmed) cannot be added; once added it is emptied and closed, on failure kept', async () => {
    const { api, memory } = setup();
    memory.adding = true;
    memory.newKind = 'preference';
    memory.newText = ` ${'x'.repeat(MAX_MEMORY_TEXT_CHARS)} `;
    expect([memory.newTextTooLong, memory.canAddNew]).toEqual([false, true]);
    memory.newText += 'y';
    expect([memory.newTextTooLong, memory.canAddNew]).toEqual([true, false]);
    api.on('memory.add', () => {
      throw new Error('offline');
    });
    memory.newText = ' I like tea ';
    await memory.addNew();
    expect([memory.adding, memory.newText]).toEqual([true, ' I like tea ']);
    api.on('memory.add', (data) => view('m2', data.text));
    await memory.addNew();
    expect([memory.adding, memory.newText]).toEqual([false, '']);
    expect(api.callsOf('memory.add').at(-1)).toEqual({ namespace: 'default', kind: 'preference', text: 'I like tea', pinned: true });
  });

  it('the erase question closes once everything was erased, stays open when the erase failed', async () => {
    const { api, memory } = setup();
    memory.eraseAsked = true;
    api.on('memory.eraseAll', () => {
      throw new Error('busy');
    });
    await memory.eraseAll();
    expect(memory.eraseAsked).toBe(true);
    api.on('memory.eraseAll', () => undefined);
    await memory.eraseAll();
    expect(memory.eraseAsked).toBe(false);
  });
});

describe('export options and the other erase choices', () => {
  it('the export sends the passphrase and, when unticked, leaves the embeddings out', async () => {
    const { api, memory } = setup();
    api.on('memory.export', () => ({ fileName: 'exp.json', downloadName: 'recall.json', sizeBytes: 1 }));
    await memory.exportAll();
    memory.includeEmbeddings = false;
    memory.passphrase = 'pass';
    await memory.exportAll();
    expect(api.callsOf('memory.export')).toEqual([undefined, { passphrase: 'pass', includeEmbeddings: false }]);
  });

  it('erasing all memories reloads the list, closes the question and says so; a failure keeps it open with a notice', async () => {
    const { api, memory, notices, events, setListed } = setup();
    memory.eraseAsked = true;
    api.on('memory.eraseMemories', () => {
      throw new Error('busy');
    });
    expect(await memory.eraseMemories()).toBe(false);
    expect(memory.eraseAsked).toBe(true);
    expect(notices.list.map((n) => n.kind)).toEqual(['error']);
    api.on('memory.eraseMemories', () => undefined);
    setListed([]);
    expect(await memory.eraseMemories()).toBe(true);
    expect([memory.eraseAsked, memory.memories]).toEqual([false, []]);
    expect(notices.list.at(-1)?.text).toBe('All memories were erased.');
    // Within the active profile only.
    expect(api.callsOf('memory.eraseMemories').at(-1)).toEqual({ namespace: DEFAULT_NAMESPACE });
    // Not "erase all data": the conversations are not touched.
    expect(events).toEqual([]);
    expect(api.callsOf('memory.eraseAll')).toHaveLength(0);
  });
});

describe('memory item store', () => {
  it('edit: the editor opens on the text, closes once saved, stays open on failure; too long (as typed) cannot be saved', async () => {
    const { api, memory } = setup();
    const item = createMemoryItemStore({ store: memory, memoryId: 'm1' });
    item.startEdit('My cat is called Mochi');
    expect([item.editing, item.editText, item.canSave]).toEqual([true, 'My cat is called Mochi', true]);
    item.editText = 'x'.repeat(MAX_MEMORY_TEXT_CHARS + 1);
    expect([item.editTooLong, item.canSave]).toEqual([true, false]);
    api.on('memory.update', () => {
      throw new Error('locked');
    });
    item.editText = 'Mochi is a cat';
    await item.save();
    expect(item.editing).toBe(true);
    api.on('memory.update', (data) => view(data.id, data.text ?? ''));
    await item.save();
    expect([item.editing, item.saving]).toEqual([false, false]);
    expect(api.callsOf('memory.update').at(-1)).toEqual({ id: 'm1', text: 'Mochi is a cat' });
  });

  it('history opens and reads, is read again after a change that worked, says why a read failed; busy while a change runs', async () => {
    const { api, memory } = setup();
    const item = createMemoryItemStore({ store: memory, memoryId: 'm1' });
    let version = 1;
    api.on('memory.history', () => [{ id: version, memoryId: 'm1', event: 'ADD', oldText: null, newText: `v${version}`, at: 1, source: 'user' }] as never);
    await item.toggleHistory();
    expect(item.history?.map((h) => h.newText)).toEqual(['v1']);
    const reply = deferred<MemoryView>();
    api.on('memory.update', () => reply.promise);
    const pin = item.setPinned(true);
    expect(item.saving).toBe(true);
    version = 2;
    reply.resolve(view('m1', 'x'));
    await pin;
    expect([item.saving, item.history?.map((h) => h.newText)]).toEqual([false, ['v2']]);
    api.on('memory.history', () => {
      throw new Error('core restarted');
    });
    await item.loadHistory();
    expect(item.historyError).toBe('core restarted');
    await item.toggleHistory();
    expect(item.historyOpen).toBe(false);
    api.on('memory.delete', () => ({ rounds: [] }));
    await item.remove();
    expect(api.callsOf('memory.history')).toHaveLength(3); // closed: not read again after the delete
  });
});

describe('back up to a folder', () => {
  it('writes the export into the picked folder under its download name; a cancelled picker does nothing', async () => {
    const opfs = createFakeOpfs();
    // The core's staged export, in the (fake) OPFS `backups/` folder.
    await writeFileChunks(
      'exp-9.json',
      (async function* () {
        yield new TextEncoder().encode('{"format":"recall-export"}');
      })(),
      { root: opfs.root, folder: BACKUPS_DIR },
    );
    const picked = createFakeOpfs();
    const folder = await picked.root();
    let pick: DirectoryHandleLike | null = null;
    const api = createFakeApi();
    const notices = createNoticesStore();
    const memory = createMemoryStore({
      ...api,
      notices,
      refreshConversations: async () => undefined,
      beforeEraseAll: () => () => undefined,
      afterEraseAll: async () => undefined,
      namespace: () => DEFAULT_NAMESPACE,
      files: { pickFolder: async () => pick, saveToFolder: (f, name, dir) => saveStagedFileToFolder(f, name, dir, { root: opfs.root }) },
    });
    api.on('memory.export', () => ({ fileName: 'exp-9.json', downloadName: 'recall-export-2026-12-01.json.age', sizeBytes: 26 }));

    expect(await memory.exportToFolder()).toBeNull(); // cancelled: nothing asked of the core
    expect(api.callsOf('memory.export')).toHaveLength(0);

    pick = folder;
    memory.passphrase = 'pass';
    expect(await memory.exportToFolder()).toBe('recall-export-2026-12-01.json.age');
    expect(api.callsOf('memory.export')).toEqual([{ passphrase: 'pass' }]);
    expect(picked.list([])).toEqual(['recall-export-2026-12-01.json.age']);
    const saved = await (await folder.getFileHandle('recall-export-2026-12-01.json.age')).getFile();
    expect(await saved.text()).toBe('{"format":"recall-export"}');
    expect(opfs.list([BACKUPS_DIR])).toEqual([]); // the staging copy is gone
    expect(notices.list.map((n) => [n.kind, n.text])).toEqual([['info', 'Saved recall-export-2026-12-01.json.age in the chosen folder.']]);
  });
});
