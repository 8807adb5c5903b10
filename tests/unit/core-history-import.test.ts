/**
 * History from other assistants through the core (`importHistoryFile`, `importSavedMemories`), as
 * the extension runs them: the panel stages the picked file in `backups/`, the core detects,
 * parses and writes it. Real Dexie (fake-indexeddb), real store, job queue and the fixture
 * embedder (tests/helpers/core-harness.ts); no chat model (extraction jobs wait for one). The
 * OPFS is the in-memory stand-in of tests/helpers/fixture-opfs.ts. Fixture tests skip with a
 * printed reason when ../shared is absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { HISTORY_EXTRACT_INTERVAL_MS } from '../../src/core/history-import';
import { DEFAULT_NAMESPACE } from '../../src/model/memory';
import { BACKUPS_DIR } from '../../src/platform/model-files';
import { stageImportFile } from '../../src/ui/lib/import-file';
import { useTestCores } from '../helpers/core-harness';
import { createFakeOpfs } from '../helpers/fixture-opfs';

const cores = useTestCores();
const FIXTURE = resolve(__dirname, '../../../shared/fixtures/chat-exports/chatgpt/chatgpt-export.json');
const HAS_SHARED = existsSync(FIXTURE);
if (!HAS_SHARED) console.warn('[core-history-import] ../shared/fixtures is absent: skipping the ChatGPT fixture test.');

async function startOnOpfs() {
  const opfs = createFakeOpfs();
  const started = await cores.start({ extra: { fileRoot: opfs.root } });
  const importBytes = async (bytes: Uint8Array<ArrayBuffer> | string, displayName: string) => {
    const fileName = await stageImportFile(new Blob([bytes]), undefined, { root: opfs.root });
    return started.core.importHistoryFile({ fileName, displayName, namespace: DEFAULT_NAMESPACE });
  };
  return { ...started, opfs, importBytes };
}

/** A ChatGPT export of conversations `ids`, each one exchange ("Question <id>" / "Answer <id>") at `t` seconds. */
function chatGptExport(ids: string[], t = 1_700_000_000) {
  return JSON.stringify(
    ids.map((id) => ({
      id,
      title: `Chat ${id}`,
      create_time: t,
      update_time: t + 10,
      current_node: 'a',
      mapping: {
        q: {
          parent: null,
          children: ['a'],
          message: { author: { role: 'user' }, create_time: t + 1, content: { content_type: 'text', parts: [`Question ${id}`] } },
        },
        a: {
          parent: 'q',
          children: [],
          message: { author: { role: 'assistant' }, create_time: t + 2, content: { content_type: 'text', parts: [`Answer ${id}`] } },
        },
      },
    })),
  );
}

describe('history import through the core', () => {
  it.skipIf(!HAS_SHARED)('imports the ChatGPT fixture: titles, dates, messages, dated episodic rounds; a second import adds nothing', async () => {
    const { core, db, opfs, importBytes } = await startOnOpfs();
    const bytes = new Uint8Array(readFileSync(FIXTURE));
    const enqueue = vi.spyOn(core.jobs, 'enqueue');
    const report = await importBytes(bytes, 'conversations.json');
    expect(report).toEqual({ format: 'chatgpt', conversations: { added: 2, skipped: 0 }, messages: 10, rounds: 5 });
    expect(opfs.list([BACKUPS_DIR])).toEqual([]);

    const list = await core.conversations.list();
    expect(list.map((c) => [c.title, c.messageCount]).sort()).toEqual([
      ['Conversation 1. Web Search', 6],
      ['Conversation 2', 4],
    ]);
    const web = await db.conversations.get('import:chatgpt:d6523d1e-7ec3-474f-a363-0e9dffdb3d93');
    expect(web?.createdAt).toBe(1704629915775);
    expect(web?.updatedAt).toBe(1704717442442); // update_time 1704717442.442471 s
    const messages = await core.conversations.messages(web!.id);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(messages[2]).toMatchObject({ seq: 2, content: 'What about 10 year old model', createdAt: 1704629961278, status: 'complete' });

    // Extraction is queued at a bounded rate: one every HISTORY_EXTRACT_INTERVAL_MS.
    const delays = enqueue.mock.calls.filter(([type]) => type === 'ltm.extract').map(([, , options]) => options?.delayMs);
    expect(delays).toEqual([0, 1, 2, 3, 4].map((i) => i * HISTORY_EXTRACT_INTERVAL_MS));
    expect(enqueue.mock.calls.filter(([type]) => type === 'ltm.episodic')).toHaveLength(5);

    await core.jobs.drain();
    const rounds = (await db.memories.toArray()).filter((m) => m.kind === 'episodic');
    expect(rounds).toHaveLength(5);
    const third = rounds.find((m) => m.text.startsWith('User: What about 10 year old model'));
    expect(third?.createdAt).toBe(1704629961278); // dated when it was said, not at the import
    expect(third?.sourceMessageIds).toEqual([messages[2]!.id, messages[3]!.id]);

    const again = await importBytes(bytes, 'conversations.json');
    expect(again).toEqual({ format: 'chatgpt', conversations: { added: 0, skipped: 2 }, messages: 0, rounds: 0 });
    expect(await db.messages.count()).toBe(10);
  });

  it('a file that fails while it is written leaves nothing of it behind', async () => {
    const { core, db, importBytes } = await startOnOpfs();
    // The second conversation's first message id is taken: its transaction fails after the first one committed.
    await db.messages.add({ id: 'import:chatgpt:two#0', conversationId: 'elsewhere', seq: 0, role: 'user', content: 'x', createdAt: 1, status: 'complete' });
    await expect(importBytes(chatGptExport(['one', 'two']), 'conversations.json')).rejects.toThrow();
    expect(await db.conversations.count()).toBe(0);
    expect(await db.messages.count()).toBe(1);
    expect(await db.jobs.where('type').anyOf(['ltm.episodic', 'ltm.extract']).count()).toBe(0);
    expect(await db.settings.where('key').startsWith('state.import').count()).toBe(0);
    // The store is usable again at once (no import left "busy").
    await db.messages.delete('import:chatgpt:two#0');
    expect((await importBytes(chatGptExport(['one', 'two']), 'conversations.json')).conversations.added).toBe(2);
    expect((await core.conversations.list()).length).toBe(2);
  });

  it('a refused file names the file and the place, and writes nothing', async () => {
    const { db, importBytes } = await startOnOpfs();
    const error = await importBytes(JSON.stringify([{ title: 'Budget', mapping: {} }]), 'my-export.json').catch((e: unknown) => e);
    expect(error).toMatchObject({ domain: 'historyImport', code: 'bad_conversation', params: { file: 'my-export.json', place: '"Budget"' } });
    expect(await db.conversations.count()).toBe(0);
  });

  it('pasted saved memories become pinned memories; duplicates (of the store or the paste) are skipped', async () => {
    const { core, db } = await startOnOpfs();
    await core.memoryAdmin.add({ namespace: DEFAULT_NAMESPACE, kind: 'fact', text: 'Has a cat named Mochi' });
    const pasted = '- Lives in Hangzhou\n- Prefers tea over coffee\n- Has a cat named Mochi\n- Lives in Hangzhou\n- 喜欢爬山';
    expect(await core.importSavedMemories({ namespace: DEFAULT_NAMESPACE, text: pasted })).toEqual({ added: 3, skipped: 2 });
    const rows = await db.memories.toArray();
    expect(rows.map((m) => m.text).sort()).toEqual(['Has a cat named Mochi', 'Lives in Hangzhou', 'Prefers tea over coffee', '喜欢爬山'].sort());
    expect(rows.every((m) => m.pinned)).toBe(true);
    expect(await core.importSavedMemories({ namespace: DEFAULT_NAMESPACE, text: pasted })).toEqual({ added: 0, skipped: 5 });
  });
});
