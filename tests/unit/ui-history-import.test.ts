/**
 * The panel's side of importing from other assistants: which path a picked file takes
 * (`importRouteOf`), and the memory store sending `history.import` / `memory.importSaved` against a
 * fake messaging api (tests/helpers/fake-api.ts) and a fake OPFS staging (neither runs in Node).
 */
import { describe, expect, it } from 'vitest';
import type { HistoryImportReport } from '../../src/model/history-import';
import { importRouteOf } from '../../src/ui/lib/import-file';
import { createMemoryStore } from '../../src/ui/state/memory.svelte';
import { createNoticesStore } from '../../src/ui/state/notices.svelte';
import { createFakeApi } from '../helpers/fake-api';
import { DEFAULT_NAMESPACE } from '../../src/model/memory';

function setup() {
  const api = createFakeApi();
  const staged: string[] = [];
  const memory = createMemoryStore({
    ...api,
    notices: createNoticesStore(),
    namespace: () => DEFAULT_NAMESPACE,
    refreshConversations: async () => undefined,
    beforeEraseAll: () => () => undefined,
    afterEraseAll: async () => undefined,
    files: { stage: async (file) => (staged.push(file instanceof File ? file.name : 'blob'), `staged-${staged.length}.json`), download: async () => undefined },
  });
  api.on('memory.list', () => []);
  api.on('memory.importNotice', () => null);
  return { api, memory, staged };
}

describe('importRouteOf', () => {
  it('sends Recall backups to the backup import and everything else to the history import', () => {
    expect(importRouteOf('{\n  "format": "recall-export",\n  "version": 1', 'recall.json')).toBe('backup');
    expect(importRouteOf('{"x":1}', 'x.json')).toBe('backup'); // refused by the backup check, with its reason
    expect(importRouteOf('\uFEFF [{"title":"A","mapping":{', 'conversations.json')).toBe('history');
    expect(importRouteOf('{"uuid":"u","chat_messages":[', 'claude.json')).toBe('history');
    expect(importRouteOf('{"version":4,"history":[', 'chatbot-ui.json')).toBe('history');
    expect(importRouteOf('PK\u0003\u0004\u0014\u0000', 'export.zip')).toBe('history');
    expect(importRouteOf('# Notes\nMy cat is Mochi', 'notes.md')).toBe('history');
    expect(importRouteOf('\u0000\u0001PK binary', 'photo.zip')).toBe('backup');
  });
});

describe('memory store: other assistants', () => {
  it('a ChatGPT export goes to history.import with its name and the default namespace; the report is kept', async () => {
    const { api, memory, staged } = setup();
    const report: HistoryImportReport = { format: 'chatgpt', conversations: { added: 2, skipped: 0 }, messages: 10, rounds: 5 };
    api.on('history.import', () => report);
    const file = new File(['[{"title":"A","mapping":{}}]'], 'conversations.json', { lastModified: 1_700_000_000_000 });
    await memory.importFile(file);
    expect(staged).toEqual(['conversations.json']);
    expect(api.callsOf('history.import')).toEqual([
      { fileName: 'staged-1.json', displayName: 'conversations.json', namespace: 'default', modifiedAt: 1_700_000_000_000 },
    ]);
    expect(api.callsOf('memory.import')).toEqual([]);
    expect(memory.historyReport).toEqual(report);
    expect(memory.importError).toBeNull();
  });

  it("a refused export shows the core's reason", async () => {
    const { api, memory } = setup();
    api.on('history.import', () => {
      throw new Error('conversations.json ("Budget"): This conversation has no id or no messages. Nothing was imported.');
    });
    await memory.importFile(new File(['[{"title":"Budget","mapping":{}}]'], 'conversations.json'));
    expect(memory.importError?.detail).toMatch(/"Budget"/);
    expect(memory.historyReport).toBeNull();
  });

  it('pasted saved memories are sent once, the form is cleared and the report shown', async () => {
    const { api, memory } = setup();
    api.on('memory.importSaved', () => ({ added: 3, skipped: 1 }));
    memory.pastedMemories = '- a\n- b\n- c\n- a';
    await memory.pasteSavedMemories();
    expect(api.callsOf('memory.importSaved')).toEqual([{ namespace: 'default', text: '- a\n- b\n- c\n- a' }]);
    expect(memory.savedReport).toEqual({ added: 3, skipped: 1 });
    expect(memory.pastedMemories).toBe('');
  });
});
