/**
 * Speaker and date in what the long-term indexes see (issue 11, Deliver 1): the lexical document
 * `(date) Speaker: text` with relative dates resolved against the memory's own date, the
 * embedding input (the same without the date), speakers carried from the messages into episodic
 * rounds, and the one-time re-index of an index persisted before this format (text version bump).
 * Real store over fake-indexeddb with the hashed TEST embedder, wrapped to record its inputs.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { createHashedEmbedder } from '../../bench/data/hashed-embedder';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { RecallDB } from '../../src/db/schema';
import type { Embedder } from '../../src/engines/types';
import { storeEpisodes } from '../../src/memory/long-term';
import { LexicalIndex } from '../../src/memory/long-term/retrieval/lexical';
import type { IndexHeaderRecord, LexicalSnapshotRecord } from '../../src/memory/long-term/retrieval/blocks';
import { createMemoryStore } from '../../src/memory/long-term/store';
import { embeddingInput, INDEXED_TEXT_VERSION, indexedMemoryText } from '../../src/memory/long-term/text';
import type { MessageRecord } from '../../src/model/records';
import { labelSpeakers } from '../../src/text/speakers';

/** 4 March 2025, 12:00 UTC: the same calendar day in every time zone from UTC−11 to UTC+11. */
const T = Date.UTC(2025, 2, 4, 12);
const ROUND = 'User: Last month we finally went to Peru.\nAssistant: How was it?';
const SPEAKERS = { user: 'Mia', assistant: 'Jonas' };

const dbs: RecallDB[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.delete();
});

/** The hashed test embedder, recording every text it is asked to embed. */
function recordingEmbedder(): Embedder & { inputs: string[] } {
  const inner = createHashedEmbedder();
  const inputs: string[] = [];
  return {
    modelId: inner.modelId,
    dimension: inner.dimension,
    inputs,
    embed: (texts, signal) => {
      inputs.push(...texts);
      return inner.embed(texts, signal);
    },
  };
}

async function open(db: RecallDB, embedder: Embedder) {
  return createMemoryStore({ db, embedder: () => embedder, now: () => T, loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer> });
}

function newDb(): RecallDB {
  const db = new RecallDB(`ltm-indexed-text-${crypto.randomUUID()}`);
  dbs.push(db);
  return db;
}

describe('indexed text', () => {
  it('puts the date and the named speakers before the text and resolves relative dates against the memory’s own date', () => {
    const round = { kind: 'episodic' as const, text: ROUND, createdAt: T, speakers: SPEAKERS };
    expect(indexedMemoryText(round)).toBe('(2025-03-04) Mia: Last month (2025-02) we finally went to Peru.\nJonas: How was it?');
    expect(embeddingInput(round)).toBe('Mia: Last month (2025-02) we finally went to Peru.\nJonas: How was it?');
    // Unnamed sides keep their role labels; a fact about a named user gets the name; Chinese dates resolve too.
    expect(indexedMemoryText({ kind: 'episodic', text: ROUND, createdAt: T })).toBe(
      '(2025-03-04) User: Last month (2025-02) we finally went to Peru.\nAssistant: How was it?',
    );
    expect(indexedMemoryText({ kind: 'fact', text: '去年搬到了杭州', createdAt: T, speakers: { user: '米娅' } })).toBe(
      '(2025-03-04) 米娅: 去年（2024）搬到了杭州',
    );
    expect(labelSpeakers({ kind: 'fact', text: 'Lives in Hangzhou' })).toBe('Lives in Hangzhou');
    expect(labelSpeakers({ kind: 'episodic', text: ROUND, speakers: { assistant: 'Jonas' } })).toBe(
      'User: Last month we finally went to Peru.\nJonas: How was it?',
    );
  });

  it('indexes and embeds that text while the stored text stays the message itself', async () => {
    const db = newDb();
    const embedder = recordingEmbedder();
    const store = await open(db, embedder);
    const { memory } = await store.add({ namespace: 'default', kind: 'episodic', text: ROUND, createdAt: T, speakers: SPEAKERS }, 'test');
    expect(memory.text).toBe(ROUND);
    expect(embedder.inputs).toEqual(['Mia: Last month (2025-02) we finally went to Peru.\nJonas: How was it?']);
    // Found by who said it and by the month "last month" meant, neither of which is in the stored text.
    for (const query of ['Mia', 'Jonas', '2025-02']) {
      const hits = await store.search({ text: query, namespace: 'default', now: T }, { mode: 'lexical', timeFilters: false });
      expect(hits.map((h) => h.memory.id)).toEqual([memory.id]);
    }
  });

  it('carries the named speakers of the messages into the episodic round', async () => {
    const db = newDb();
    const store = await open(db, recordingEmbedder());
    const messages: MessageRecord[] = [
      { id: 'u1', conversationId: 'c1', seq: 0, role: 'user', content: 'I adopted a cat.', createdAt: T, status: 'complete', speaker: 'Anna' },
      {
        id: 'a1',
        conversationId: 'c1',
        seq: 1,
        role: 'assistant',
        content: 'Thanks for telling me, Anna!',
        createdAt: T + 1,
        status: 'complete',
        speaker: 'Ben',
      },
    ];
    await db.messages.bulkPut(messages);
    await storeEpisodes({ store, db }, [{ conversationId: 'c1', namespace: 'default', userMessageId: 'u1', assistantMessageId: 'a1' }]);
    const [round] = await db.memories.toArray();
    expect(round).toMatchObject({ text: 'User: I adopted a cat.\nAssistant: Thanks for telling me, Anna!', speakers: { user: 'Anna', assistant: 'Ben' } });
    const hits = await store.search({ text: 'Ben', namespace: 'default', now: T }, { mode: 'lexical', timeFilters: false });
    expect(hits.map((h) => h.memory.id)).toEqual([round!.id]);
  });

  it('re-indexes an index persisted before this text format once: lexical from the rows, every vector embedded again', async () => {
    const db = newDb();
    const embedder = recordingEmbedder();
    const store = await open(db, embedder);
    await store.addMany(
      [
        { namespace: 'default', kind: 'episodic', text: ROUND, createdAt: T, speakers: SPEAKERS },
        { namespace: 'default', kind: 'fact', text: 'Lives in Lima', createdAt: T },
      ],
      'test',
    );
    await store.whenIndexed();
    await store.flushSnapshot();
    // What the previous version left: a header without a text version and a snapshot of the bare texts.
    const header = (await db.memoryIndex.get('header')) as IndexHeaderRecord;
    expect(header.textVersion).toBe(INDEXED_TEXT_VERSION);
    const bare = new LexicalIndex();
    for (const r of await db.memories.toArray()) bare.set(r.id, r.text, r.topic);
    const { textVersion: _v, ...oldHeader } = header;
    await db.memoryIndex.bulkPut([oldHeader, { key: 'lexical', gen: header.gen, json: bare.toJSON() } satisfies LexicalSnapshotRecord]);

    const reopened = await open(db, embedder);
    expect(reopened.indexStats().open.via).toBe('blocks'); // the vectors are kept and searched meanwhile
    await reopened.whenVectorsLoaded(); // they load in the background after the metadata
    expect(reopened.staleVectors()).toBe(2);
    expect(reopened.missingVectors(embedder.modelId)).toBe(2);
    await reopened.whenIndexed();
    const byName = await reopened.search({ text: 'Jonas', namespace: 'default', now: T }, { mode: 'lexical', timeFilters: false });
    expect(byName.map((h) => h.memory.text)).toEqual([ROUND]); // the old snapshot was not used

    embedder.inputs.length = 0;
    expect(await reopened.reembed()).toEqual({ embedded: 2, remaining: 0 });
    expect(embedder.inputs.sort()).toEqual(['Lives in Lima', 'Mia: Last month (2025-02) we finally went to Peru.\nJonas: How was it?']);
    expect(reopened.staleVectors()).toBe(0);
    expect(((await db.memoryIndex.get('header')) as IndexHeaderRecord).textVersion).toBe(INDEXED_TEXT_VERSION);

    // Once: the next start finds nothing to redo.
    await reopened.flushSnapshot();
    const again = await open(db, embedder);
    await again.whenVectorsLoaded();
    expect(again.staleVectors()).toBe(0);
    expect(again.missingVectors(embedder.modelId)).toBe(0);
    expect(again.indexStats().open.via).toBe('blocks');
  });
});
