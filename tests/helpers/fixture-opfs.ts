/**
 * An in-memory stand-in for the Origin Private File System (OPFS), which does not exist in Node.
 * It models the parts of `FileSystemDirectoryHandle` / `FileSystemFileHandle` /
 * `FileSystemWritableFileStream` that `src/platform/model-files.ts` uses, with the browser's
 * semantics: writes go to a swap copy that becomes visible on `close()` (discarded on
 * `abort()`), missing entries throw a `NotFoundError` DOMException, and a quota can be set to
 * make writes fail with `QuotaExceededError`.
 */
import type { DirectoryHandleLike, FileHandleLike, WritableFileLike } from '../../src/platform/model-files';

/** Test controls of the fake file system. */
export interface FakeOpfs {
  /** Pass as `root` to the model-files functions. */
  root: () => Promise<DirectoryHandleLike>;
  /** Names of the entries of a folder (sorted), `null` when the folder does not exist. */
  list(path: string[]): string[] | null;
  /** Bytes written in total across all files (to check streaming). */
  readonly bytesWritten: number;
  /** Largest single `write()` chunk seen (bytes). */
  readonly largestWrite: number;
  /** Total bytes the fake may hold; writes beyond it throw `QuotaExceededError`. */
  quotaBytes: number;
}

type Entry = { kind: 'file'; data: Uint8Array } | { kind: 'directory'; entries: Map<string, Entry> };

const notFound = (name: string) => new DOMException(`"${name}" not found`, 'NotFoundError');

/**
 * Creates an empty fake OPFS.
 * @param options.onWrite sees every chunk written, with its file's name (e.g. to scan staging files for plaintext).
 */
export function createFakeOpfs(options: { onWrite?: (fileName: string, data: Uint8Array) => void } = {}): FakeOpfs {
  const top: Entry = { kind: 'directory', entries: new Map() };
  const stats = { bytesWritten: 0, largestWrite: 0, quotaBytes: Number.POSITIVE_INFINITY };

  const usedBytes = (entry: Entry): number =>
    entry.kind === 'file' ? entry.data.byteLength : [...entry.entries.values()].reduce((sum, e) => sum + usedBytes(e), 0);

  const fileHandle = (parent: Map<string, Entry>, initialName: string): FileHandleLike => {
    let name = initialName;
    const entry = () => {
      const e = parent.get(name);
      if (!e || e.kind !== 'file') throw notFound(name);
      return e;
    };
    return {
      kind: 'file',
      get name() {
        return name;
      },
      async getFile() {
        return new File([entry().data.slice()], name);
      },
      async createWritable(): Promise<WritableFileLike> {
        entry();
        const chunks: Uint8Array[] = [];
        let pending = 0;
        let done = false;
        return {
          async write(data) {
            if (done) throw new TypeError('stream closed');
            if (usedBytes(top) + pending + data.byteLength > stats.quotaBytes) throw new DOMException('quota', 'QuotaExceededError');
            chunks.push(new Uint8Array(data));
            options.onWrite?.(name, new Uint8Array(data));
            pending += data.byteLength;
            stats.bytesWritten += data.byteLength;
            stats.largestWrite = Math.max(stats.largestWrite, data.byteLength);
          },
          async close() {
            if (done) throw new TypeError('stream closed');
            done = true;
            const out = new Uint8Array(pending);
            let at = 0;
            for (const c of chunks) {
              out.set(c, at);
              at += c.byteLength;
            }
            entry().data = out;
          },
          async abort() {
            done = true;
          },
        };
      },
      async move(newName: string) {
        const e = entry();
        parent.delete(name);
        parent.set(newName, e);
        name = newName;
      },
    };
  };

  const dirHandle = (dir: Entry & { kind: 'directory' }): DirectoryHandleLike => ({
    async getFileHandle(name, options) {
      const existing = dir.entries.get(name);
      if (existing?.kind === 'directory') throw new DOMException(name, 'TypeMismatchError');
      if (!existing) {
        if (!options?.create) throw notFound(name);
        dir.entries.set(name, { kind: 'file', data: new Uint8Array(0) });
      }
      return fileHandle(dir.entries, name);
    },
    async getDirectoryHandle(name, options) {
      let existing = dir.entries.get(name);
      if (existing?.kind === 'file') throw new DOMException(name, 'TypeMismatchError');
      if (!existing) {
        if (!options?.create) throw notFound(name);
        existing = { kind: 'directory', entries: new Map() };
        dir.entries.set(name, existing);
      }
      return dirHandle(existing);
    },
    async removeEntry(name) {
      if (!dir.entries.delete(name)) throw notFound(name);
    },
    async *entries() {
      for (const [name, e] of [...dir.entries]) {
        yield [name, e.kind === 'file' ? fileHandle(dir.entries, name) : dirHandle(e)] as [string, FileHandleLike | DirectoryHandleLike];
      }
    },
  });

  return {
    root: async () => dirHandle(top as Entry & { kind: 'directory' }),
    list(path) {
      let cur: Entry | undefined = top;
      for (const p of path) cur = cur?.kind === 'directory' ? cur.entries.get(p) : undefined;
      return cur?.kind === 'directory' ? [...cur.entries.keys()].sort() : null;
    },
    get bytesWritten() {
      return stats.bytesWritten;
    },
    get largestWrite() {
      return stats.largestWrite;
    },
    get quotaBytes() {
      return stats.quotaBytes;
    },
    set quotaBytes(v: number) {
      stats.quotaBytes = v;
    },
  };
}
