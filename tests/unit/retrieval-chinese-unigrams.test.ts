/**
 * The lexical index's content-character unigram field (`chars`, boost `CHAR_UNIGRAM_BOOST`) and
 * the snapshot version bump that came with it: an older snapshot (MiniSearch's bare JSON, version
 * 1) is refused and the store rebuilds the index from the rows (real Dexie on fake-indexeddb).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecallDB } from '../../src/db/schema';
import { createMemoryStore } from '../../src/memory/long-term/store';
import type { LexicalManifestRecord } from '../../src/memory/long-term/retrieval/blocks/records';
import { CHAR_UNIGRAM_BOOST, LEXICAL_SNAPSHOT_VERSION, LexicalIndex, OutdatedLexicalSnapshotError } from '../../src/memory/long-term/retrieval/lexical';
import { hanUnigrams, tokenize } from '../../src/memory/long-term/retrieval/tokenize';
import { nodeVoyWasm } from '../../bench/data/node-voy';

describe('content-character unigrams', () => {
  it('are the Han characters of a text without the function characters, in order, repeated', () => {
    expect(hanUnigrams('我的猫叫小白')).toEqual(['猫', '叫', '小', '白']);
    expect(hanUnigrams('一些人们的地方得了')).toEqual(['人', '方']);
    expect(hanUnigrams('猫猫 cat')).toEqual(['猫', '猫']);
    expect(hanUnigrams('No Chinese here')).toEqual([]);
  });

  it('find a memory that shares only single characters with the question', () => {
    const index = new LexicalIndex();
    index.set('kitten', '邻居送了我一只小猫咪');
    index.set('word', '猫粮放在柜子里');
    index.set('other', '今天下雨了');
    // 猫 is a one-character word of the query; 小猫咪 is indexed as words and bigrams (小猫, 猫咪),
    // none of them 猫, so without the unigram field "kitten" did not match at all.
    expect(tokenize('邻居送了我一只小猫咪')).not.toContain('猫');
    const hits = index.search('猫', 10).map((h) => h.id);
    expect(hits).toContain('kitten');
    expect(hits).not.toContain('other');
    expect(CHAR_UNIGRAM_BOOST).toBeLessThan(1);
  });
});

describe('lexical snapshot version', () => {
  let db: RecallDB;
  afterEach(async () => db?.delete());

  it('round-trips the current version and refuses an older one', () => {
    const index = new LexicalIndex();
    index.set('a', '我的猫叫小白');
    const json = index.toJSON();
    expect(JSON.parse(json).version).toBe(LEXICAL_SNAPSHOT_VERSION);
    expect(
      LexicalIndex.fromJSON(json)
        .search('白', 5)
        .map((h) => h.id),
    ).toEqual(['a']);
    const bare = JSON.stringify(JSON.parse(json).index); // version 1: MiniSearch's JSON alone
    expect(() => LexicalIndex.fromJSON(bare)).toThrow(OutdatedLexicalSnapshotError);
    return expect(LexicalIndex.fromJSONAsync(bare)).rejects.toBeInstanceOf(OutdatedLexicalSnapshotError);
  });

  it('a store that finds an older snapshot rebuilds the index from the rows (the unigram field included)', async () => {
    db = new RecallDB(`unigrams-${crypto.randomUUID()}`);
    const open = () => createMemoryStore({ db, embedder: () => null, loadVoyWasm: nodeVoyWasm });
    const store = await open();
    const { memory } = await store.add({ namespace: 'default', kind: 'fact', text: '邻居送了我一只小猫咪' }, 'test');
    await store.flushSnapshot();
    const snapshot = (await db.memoryIndex.get('lexical')) as LexicalManifestRecord;
    await db.memoryIndex.put({ ...snapshot, version: LEXICAL_SNAPSHOT_VERSION - 1 });
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    const reopened = await open();
    await reopened.whenIndexed();
    expect(info).toHaveBeenCalledWith('[ltm] the lexical snapshot has an older format; rebuilding it from the rows');
    info.mockRestore();
    expect((await reopened.search({ text: '猫', namespace: 'default' }, { mode: 'lexical' })).map((r) => r.memory.id)).toEqual([memory.id]);
    // The rebuilt index is written back in the current version.
    await reopened.flushSnapshot();
    const written = (await db.memoryIndex.get('lexical')) as LexicalManifestRecord;
    expect(written.version).toBe(LEXICAL_SNAPSHOT_VERSION);
  });
});
