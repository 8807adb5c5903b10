/**
 * Model files in OPFS `models/`. Faked: the Origin Private File System (absent in Node), by an
 * in-memory implementation with the browser's write/close/abort semantics
 * (tests/helpers/fixture-opfs.ts).
 */
import { describe, expect, it } from 'vitest';
import { deleteModelFile, listModelFiles, ModelFileError, openModelFile, sanitizeModelFileName, saveModelFile } from '../../src/platform/model-files';
import { createFakeOpfs } from '../helpers/fixture-opfs';

/** A File of `size` bytes with a recognizable pattern. */
function patternFile(name: string, size: number): File {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff;
  return new File([bytes], name);
}

describe('saveModelFile / openModelFile', () => {
  it('streams a file into models/ and reads back the same bytes', async () => {
    const opfs = createFakeOpfs();
    const file = patternFile('qwen2.5-0.5b-instruct-q4_k_m.gguf', 300_000);
    const progress: number[] = [];
    const saved = await saveModelFile(file, (n) => progress.push(n), { root: opfs.root, chunkBytes: 65_536 });
    expect(saved).toEqual({ fileName: 'qwen2.5-0.5b-instruct-q4_k_m.gguf', sizeBytes: 300_000 });
    expect(opfs.list(['models'])).toEqual(['qwen2.5-0.5b-instruct-q4_k_m.gguf']);
    // streamed: several chunks, progress rising to the size, no single write of the whole file
    expect(progress).toEqual([65_536, 131_072, 196_608, 262_144, 300_000]);
    expect(opfs.largestWrite).toBe(65_536);
    const back = await openModelFile(saved.fileName, { root: opfs.root });
    expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(await file.arrayBuffer()))).toBe(true);
  });

  it('replaces a file of the same name only once the new copy is complete', async () => {
    const opfs = createFakeOpfs();
    await saveModelFile(patternFile('m.gguf', 1000), undefined, { root: opfs.root });
    opfs.quotaBytes = 1500; // the second copy cannot fit beside the first
    const error = await saveModelFile(patternFile('m.gguf', 2000), undefined, { root: opfs.root }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelFileError);
    expect((error as ModelFileError).code).toBe('quota');
    expect((error as ModelFileError).message).toMatch(/storage space/);
    expect(opfs.list(['models'])).toEqual(['m.gguf']); // no partial file left, old file intact
    expect((await openModelFile('m.gguf', { root: opfs.root })).size).toBe(1000);
    opfs.quotaBytes = Number.POSITIVE_INFINITY;
    await saveModelFile(patternFile('m.gguf', 2000), undefined, { root: opfs.root });
    expect((await openModelFile('m.gguf', { root: opfs.root })).size).toBe(2000);
  });

  it('stops on abort and leaves nothing behind', async () => {
    const opfs = createFakeOpfs();
    const controller = new AbortController();
    const error = await saveModelFile(
      patternFile('big.gguf', 500_000),
      (written) => {
        if (written > 0) controller.abort();
      },
      { root: opfs.root, signal: controller.signal, chunkBytes: 65_536 },
    ).catch((e: unknown) => e);
    expect((error as ModelFileError).code).toBe('aborted');
    expect(opfs.list(['models'])).toEqual([]);
  });

  it('reports an unreadable source file as io and leaves nothing behind', async () => {
    const opfs = createFakeOpfs();
    const broken = patternFile('gone.gguf', 10);
    Object.defineProperty(broken, 'slice', {
      value: () => ({ arrayBuffer: () => Promise.reject(new DOMException('file changed', 'NotReadableError')) }),
    });
    const error = await saveModelFile(broken, undefined, { root: opfs.root }).catch((e: unknown) => e);
    expect((error as ModelFileError).code).toBe('io');
    expect((error as ModelFileError).message).toMatch(/could not be read/);
    expect(opfs.list(['models'])).toEqual([]);
  });

  it('a copy that fails midway (the source stops after two chunks) leaves no partial file, and the retry starts clean', async () => {
    const opfs = createFakeOpfs();
    const file = patternFile('stories.gguf', 300_000);
    const failing = patternFile('stories.gguf', 300_000);
    let reads = 0;
    Object.defineProperty(failing, 'slice', {
      value: (start: number, end: number) => {
        reads += 1;
        if (reads > 2) return { arrayBuffer: () => Promise.reject(new DOMException('connection lost', 'NotReadableError')) };
        return file.slice(start, end);
      },
    });
    const progress: number[] = [];
    const error = await saveModelFile(failing, (n) => progress.push(n), { root: opfs.root, chunkBytes: 65_536 }).catch((e: unknown) => e);
    expect((error as ModelFileError).code).toBe('io');
    expect(progress).toEqual([65_536, 131_072]); // it did fail midway
    expect(opfs.list(['models'])).toEqual([]); // nothing under the final name, no .partial either
    await expect(openModelFile('stories.gguf', { root: opfs.root })).rejects.toMatchObject({ code: 'not_found' });

    const saved = await saveModelFile(file, undefined, { root: opfs.root, chunkBytes: 65_536 });
    expect(saved.sizeBytes).toBe(300_000);
    expect(opfs.list(['models'])).toEqual(['stories.gguf']);
    const back = await openModelFile('stories.gguf', { root: opfs.root });
    expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(await file.arrayBuffer()))).toBe(true);
  });

  it('keeps Chinese names, strips paths and forbidden characters', async () => {
    expect(sanitizeModelFileName('C:\\models\\通义千问 1.5B.gguf')).toBe('通义千问 1.5B.gguf');
    expect(sanitizeModelFileName('a/b/c:d*e?.gguf')).toBe('c_d_e_.gguf');
    expect(sanitizeModelFileName('x.gguf.partial')).toBe('x.gguf');
    expect(sanitizeModelFileName(`${'a'.repeat(300)}.gguf`)).toBe(`${'a'.repeat(195)}.gguf`);
    expect(() => sanitizeModelFileName('  ')).toThrow(ModelFileError);
    expect(() => sanitizeModelFileName('..')).toThrow(/not a usable file name/);
  });

  it('openModelFile: not_found for missing and partial names', async () => {
    const opfs = createFakeOpfs();
    await expect(openModelFile('missing.gguf', { root: opfs.root })).rejects.toMatchObject({ code: 'not_found' });
    await expect(openModelFile('x.gguf.ab12.partial', { root: opfs.root })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('fails clearly where there is no OPFS (Node, service worker)', async () => {
    await expect(openModelFile('x.gguf')).rejects.toMatchObject({ code: 'unsupported' });
  });
});

describe('deleteModelFile / listModelFiles', () => {
  it('lists complete files with sizes, deletes idempotently', async () => {
    const opfs = createFakeOpfs();
    await saveModelFile(patternFile('b.gguf', 20), undefined, { root: opfs.root });
    await saveModelFile(patternFile('a.gguf', 10), undefined, { root: opfs.root });
    const dir = await (await opfs.root()).getDirectoryHandle('models');
    await dir.getFileHandle('c.gguf.x1.partial', { create: true }); // an interrupted copy
    expect(await listModelFiles({ root: opfs.root })).toEqual([
      { fileName: 'a.gguf', sizeBytes: 10 },
      { fileName: 'b.gguf', sizeBytes: 20 },
    ]);
    await deleteModelFile('a.gguf', { root: opfs.root });
    await deleteModelFile('a.gguf', { root: opfs.root });
    expect((await listModelFiles({ root: opfs.root })).map((f) => f.fileName)).toEqual(['b.gguf']);
  });
});
